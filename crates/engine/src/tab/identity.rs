//! The browser's one identity, as every page of a session sees it: the
//! user agent a headless Chrome announces (`HeadlessChrome/…`) made the
//! `Chrome/…` a person's Chromium announces, with the client hints that go
//! with it. Chrome sends no `sec-ch-ua` headers and an empty
//! `navigator.userAgentData` for a user agent overridden without its
//! metadata, so the metadata is the browser's own, read once when the
//! browser is opened: `navigator.userAgentData`'s high-entropy values in a
//! hidden page (no tab, no window) on `chrome://version` (a secure
//! context, which `about:blank` is not), closed at once. Where that page
//! cannot be made (an older Chrome without hidden targets) they are
//! derived from `Browser.getVersion` and the user agent string.
//!
//! A headless browser cdpilot launches is given a person's user agent as a
//! switch (`cdp::agent`), which every realm says, shared and service
//! workers included; the override then carries the same string with the
//! browser's hints (so `browser_emulate` can restore both). On a browser
//! cdpilot did not start, the override reaches pages, frames, popups and
//! dedicated workers; a shared or service worker's `navigator.userAgent` is
//! made in the browser process before it can be attached, so it is given
//! the session's by a script before it runs ([`WORKER_SCRIPT`]).
//!
//! A browser whose user agent does not say `HeadlessChrome` (a person's
//! Chrome, headed) keeps its own: nothing is overridden.

use cdp::protocol::browser::Version;
use cdp::protocol::network::{Brand, UserAgentMetadata};
use cdp::protocol::{page, runtime, target};
use cdp::Connection;
use tokio::time::Instant;

/// The user agent every page, frame and dedicated worker of the browser
/// announces, with its client hints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserAgent {
    pub string: String,
    pub metadata: UserAgentMetadata,
}

/// Run in a shared or service worker before it starts, on a browser
/// cdpilot did not start (`{UA}` is the session's user agent, as a JSON
/// string): its `navigator.userAgent` and `appVersion` say what the
/// page's do. Getters on `WorkerNavigator.prototype`, as Chrome's own are
/// (not native code: the one trace, as `navigator.webdriver`'s script on
/// such a browser); the client hints are the browser's own already.
pub const WORKER_SCRIPT: &str = r#"(() => {
  const ua = {UA};
  const own = { get userAgent() { return ua; }, get appVersion() { return ua.replace(/^Mozilla\//, ''); } };
  for (const name of ['userAgent', 'appVersion']) {
    const get = Object.getOwnPropertyDescriptor(own, name).get;
    Object.defineProperty(WorkerNavigator.prototype, name, { get, configurable: true, enumerable: true });
  }
})()"#;

/// [`WORKER_SCRIPT`] for `user_agent`.
pub fn worker_script(user_agent: &str) -> String {
    WORKER_SCRIPT.replace("{UA}", &serde_json::to_string(user_agent).unwrap_or_default())
}

/// How long reading the browser's own client hints may take (one hidden
/// page's load).
const PROBE_BUDGET: std::time::Duration = std::time::Duration::from_secs(5);

/// The high-entropy values, in the page's own words.
const HINTS: &str = "navigator.userAgentData.getHighEntropyValues(['architecture', 'bitness', 'model', 'platformVersion', 'fullVersionList', 'wow64'])";

/// The identity to give every page, `None` when the browser's own is a
/// person's already. `switched`: the user agent the launch gave the
/// browser as a switch (then the browser's own, kept with its hints).
pub async fn of(conn: &Connection, version: &Version, switched: Option<&str>) -> Option<UserAgent> {
    let ours = switched.is_some_and(|ua| ua == version.user_agent);
    if !version.user_agent.contains("HeadlessChrome") && !ours {
        return None;
    }
    if ours {
        let major = |s: &str| {
            s.split_once("Chrome/")
                .map(|(_, v)| v.split('.').next().unwrap_or("").to_owned())
        };
        if major(&version.user_agent) != major(&version.product) {
            tracing::warn!(
                "the launched browser is {} but was given the user agent {} (its --version said otherwise)",
                version.product,
                version.user_agent
            );
        }
    }
    let string = version.user_agent.replace("HeadlessChrome", "Chrome");
    let metadata = match read(conn).await {
        Ok(read) if ours => completed(unheadless(read), version),
        Ok(read) => unheadless(read),
        Err(error) => {
            tracing::debug!("reading the browser's client hints failed ({error}); derived from its version");
            derived(version)
        }
    };
    Some(UserAgent { string, metadata })
}

/// The browser's own high-entropy values, from a hidden page.
async fn read(conn: &Connection) -> Result<UserAgentMetadata, String> {
    let deadline = Instant::now() + PROBE_BUDGET;
    let root = conn.browser();
    let created = root
        .call(
            target::CreateHiddenTarget {
                url: "about:blank".into(),
                background: true,
                hidden: true,
            },
            deadline,
        )
        .await
        .map_err(|e| e.to_string())?;
    let target_id = created.target_id;
    let read = async {
        let attached = root
            .call(
                target::AttachToTarget {
                    target_id: target_id.clone(),
                    flatten: true,
                },
                deadline,
            )
            .await
            .map_err(|e| e.to_string())?;
        let page = conn.session(attached.session_id);
        // Answered once the new document has committed: the evaluation
        // below runs in it.
        page.call(
            page::Navigate {
                url: "chrome://version/".into(),
            },
            deadline,
        )
        .await
        .map_err(|e| e.to_string())?;
        let evaluated = page
            .call(
                runtime::Evaluate {
                    expression: HINTS.into(),
                    context_id: None,
                    return_by_value: true,
                    await_promise: true,
                    user_gesture: false,
                    repl_mode: false,
                },
                deadline,
            )
            .await
            .map_err(|e| e.to_string())?;
        if let Some(exception) = evaluated.exception_details {
            return Err(exception.message());
        }
        let value = evaluated.result.value.ok_or("no value")?;
        serde_json::from_value::<UserAgentMetadata>(value).map_err(|e| e.to_string())
    };
    let result = read.await;
    let close = target::CloseTarget { target_id };
    if let Err(error) = root.call(close, Instant::now() + PROBE_BUDGET).await {
        tracing::debug!("closing the client hints page failed: {error}");
    }
    result
}

/// Chrome answers a browser given `--user-agent` with its high-entropy
/// values empty (no full version list, architecture or bitness), which a
/// person's Chrome never does: they are filled in from its brands, its
/// version (`Browser.getVersion`'s product) and this machine, as that
/// Chrome would give them.
fn completed(mut metadata: UserAgentMetadata, version: &Version) -> UserAgentMetadata {
    let full = version
        .product
        .split_once('/')
        .map(|(_, v)| v.to_owned())
        .unwrap_or_default();
    if metadata.full_version_list.is_empty() {
        metadata.full_version_list = metadata
            .brands
            .iter()
            .map(|b| Brand {
                brand: b.brand.clone(),
                version: match full.split('.').next() == Some(b.version.as_str()) {
                    true => full.clone(),
                    false => format!("{}.0.0.0", b.version),
                },
            })
            .collect();
    }
    let (architecture, bitness) = match std::env::consts::ARCH {
        "x86_64" => ("x86", "64"),
        "x86" => ("x86", "32"),
        "aarch64" => ("arm", "64"),
        "arm" => ("arm", "32"),
        _ => ("", ""),
    };
    if metadata.architecture.is_empty() {
        metadata.architecture = architecture.into();
    }
    if metadata.bitness.is_empty() {
        metadata.bitness = bitness.into();
    }
    metadata
}

/// A headless brand, if an older headless Chrome lists one, is the
/// Chromium it is.
fn unheadless(mut metadata: UserAgentMetadata) -> UserAgentMetadata {
    for list in [&mut metadata.brands, &mut metadata.full_version_list] {
        let has_chromium = list.iter().any(|b| b.brand == "Chromium");
        list.retain(|b| !(b.brand == "HeadlessChrome" && has_chromium));
        for brand in list.iter_mut().filter(|b| b.brand == "HeadlessChrome") {
            brand.brand = "Chromium".into();
        }
    }
    metadata
}

/// The hints a user agent string and a version say (no GREASE brand: only
/// the browser knows its own).
fn derived(version: &Version) -> UserAgentMetadata {
    let full = version
        .product
        .split_once('/')
        .map(|(_, v)| v.to_owned())
        .unwrap_or_default();
    let major = full.split('.').next().unwrap_or_default().to_owned();
    hints_for(&version.user_agent, &major, &full)
}

/// The client hints of a Chrome user agent string (`browser_emulate`'s
/// `user_agent`): `None` where it names no Chrome version (another
/// browser sends none).
pub fn hints_of(user_agent: &str) -> Option<UserAgentMetadata> {
    if ["Firefox/", "Edg/", "OPR/", "SamsungBrowser/"]
        .iter()
        .any(|other| user_agent.contains(other))
    {
        return None;
    }
    let after = user_agent.split_once("Chrome/")?.1;
    let full: String = after
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let major = full.split('.').next().filter(|m| !m.is_empty())?.to_owned();
    Some(hints_for(user_agent, &major, &full))
}

fn hints_for(user_agent: &str, major: &str, full: &str) -> UserAgentMetadata {
    let platform = [
        ("Android", "Android"),
        ("CrOS", "Chrome OS"),
        ("Windows", "Windows"),
        ("Macintosh", "macOS"),
        ("iPhone", "iOS"),
        ("Linux", "Linux"),
    ]
    .iter()
    .find(|(word, _)| user_agent.contains(word))
    .map(|(_, name)| (*name).to_owned())
    .unwrap_or_default();
    let brand = |version: &str| Brand {
        brand: "Chromium".into(),
        version: version.to_owned(),
    };
    UserAgentMetadata {
        brands: vec![brand(major)],
        full_version_list: vec![brand(full)],
        mobile: user_agent.contains("Mobile"),
        platform,
        ..UserAgentMetadata::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chrome_user_agent_has_its_hints_another_browser_none() {
        let phone = "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.6723.58 Mobile Safari/537.36";
        let hints = hints_of(phone).unwrap();
        assert_eq!(hints.brands[0].version, "130");
        assert_eq!(hints.full_version_list[0].version, "130.0.6723.58");
        assert_eq!(hints.platform, "Android");
        assert!(hints.mobile);
        let firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";
        assert_eq!(hints_of(firefox), None);
        assert_eq!(hints_of("curl/8"), None);
    }

    #[test]
    fn a_headless_brand_is_chromium() {
        let brand = |b: &str| Brand {
            brand: b.into(),
            version: "156".into(),
        };
        let metadata = unheadless(UserAgentMetadata {
            brands: vec![brand("Not:A-Brand"), brand("HeadlessChrome")],
            ..UserAgentMetadata::default()
        });
        assert_eq!(metadata.brands, [brand("Not:A-Brand"), brand("Chromium")]);
    }
}
