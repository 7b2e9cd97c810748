//! `browser_storage`: the session's cookies (read, set, cleared) and saved
//! storage states (`crate::storage_state`), always in the session's own
//! browser context, never another session's.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::args::Common;
use crate::config::FilesConfig;
use crate::session::{storage_state, Context, SessionCall, SessionTool};
use crate::tool::{Declaration, DefaultBudget, Effect, Group, Scope, Tool};
use crate::{files, ActionError, ActionOutput, Budget};

// What `browser_storage` does.
#[allow(missing_docs)] // schema-visible: see `crate::tool`
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StorageAction {
    Cookies,
    SetCookie,
    ClearCookies,
    Save,
    Load,
}

// A cookie's SameSite attribute.
#[allow(missing_docs)] // schema-visible: see `crate::tool`
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum SameSite {
    Strict,
    Lax,
    None,
}

/// A cookie to set: `url`, or `domain` (with `path`), says where it goes.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct CookieArg {
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    pub name: String,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    pub value: String,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Unix seconds; default: a session cookie.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<f64>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_only: Option<bool>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secure: Option<bool>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_site: Option<SameSite>,
}

/// Arguments of `browser_storage`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct StorageArgs {
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    pub action: StorageAction,
    /// cookies: only those sent to this URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cookie: Option<CookieArg>,
    /// save/load: JSON file in the output directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(flatten)]
    pub common: Common,
}

/// `browser_storage`: its declaration and checks (see `crate::tool`).
impl Tool for StorageArgs {
    const TOOL: Declaration = Declaration {
        name: "browser_storage",
        verb: "storage",
        group: Group::Storage,
        description: "This session's cookies: list, set_cookie, clear_cookies. save/load writes or reads cookies + localStorage as one JSON file, to reuse a logged-in state.",
        scope: Scope::Session,
        runs_during_dialog: true,
        budget: DefaultBudget::Action,
        changes_page: false,
        switch: None,
        effect: Effect::Acts,
    };

    /// Checks that each action gets the arguments it needs and no others.
    fn check(&self) -> Result<(), ActionError> {
        let wrong = |arg: &str, action: &str| {
            Err(ActionError::invalid(
                format!("{arg} is not an argument of action {action}"),
                "cookies takes url; set_cookie takes cookie; save and load take path.",
            ))
        };
        let name = match self.action {
            StorageAction::Cookies => "cookies",
            StorageAction::SetCookie => "set_cookie",
            StorageAction::ClearCookies => "clear_cookies",
            StorageAction::Save => "save",
            StorageAction::Load => "load",
        };
        if self.url.is_some() && self.action != StorageAction::Cookies {
            return wrong("url", name);
        }
        if self.cookie.is_some() && self.action != StorageAction::SetCookie {
            return wrong("cookie", name);
        }
        let file_action = matches!(self.action, StorageAction::Save | StorageAction::Load);
        if self.path.is_some() && !file_action {
            return wrong("path", name);
        }
        if let Some(url) = &self.url {
            web_url(url)?;
        }
        match (self.action, &self.cookie, &self.path) {
            (StorageAction::SetCookie, None, _) => Err(ActionError::invalid(
                "set_cookie needs cookie",
                "Pass cookie: {name, value, url} (or domain instead of url).",
            )),
            (StorageAction::SetCookie, Some(c), _) => {
                crate::validate::non_empty("cookie.name", &c.name)?;
                match (&c.url, &c.domain) {
                    (None, None) => Err(ActionError::invalid(
                        "the cookie needs url or domain",
                        "Add url (http://host/) or domain (host) to the cookie.",
                    )),
                    (Some(url), _) => web_url(url).map(|_| ()),
                    (None, Some(domain)) => crate::validate::non_empty("cookie.domain", domain),
                }
            }
            (_, _, None) if file_action => Err(ActionError::invalid(
                format!("{name} needs path"),
                "Pass a file name such as state.json (kept in the output directory).",
            )),
            (_, _, Some(path)) => crate::validate::non_empty("path", path),
            _ => Ok(()),
        }
    }
}

impl SessionTool for StorageArgs {
    /// Runs the tool on the session's context.
    async fn perform(&self, call: &SessionCall<'_>) -> Result<ActionOutput, ActionError> {
        run(call.context, self, &call.config.files, call.budget).await
    }
}

fn web_url(text: &str) -> Result<url::Url, ActionError> {
    url::Url::parse(text)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .ok_or_else(|| {
            ActionError::invalid(
                format!("\"{text}\" is not an http(s) URL"),
                "Pass a full URL such as https://example.com/.",
            )
        })
}

pub async fn run(
    context: &Context,
    args: &StorageArgs,
    output: &FilesConfig,
    budget: &Budget,
) -> Result<ActionOutput, ActionError> {
    match args.action {
        StorageAction::Cookies => {
            let mut cookies = storage_state::cookies(context, budget).await?;
            if let Some(url) = &args.url {
                let url = web_url(url)?;
                cookies.retain(|c| sent_to(c, &url));
            }
            let mut text = match cookies.len() {
                0 => "No cookies.".to_owned(),
                n => format!("{n} cookie(s):"),
            };
            for c in &cookies {
                text += &format!(
                    "\n{}={} domain={} path={}{}{}",
                    c["name"].as_str().unwrap_or_default(),
                    c["value"].as_str().unwrap_or_default(),
                    c["domain"].as_str().unwrap_or_default(),
                    c["path"].as_str().unwrap_or_default(),
                    if c["httpOnly"] == true { " httpOnly" } else { "" },
                    if c["secure"] == true { " secure" } else { "" },
                );
            }
            Ok(ActionOutput::new(text, json!({ "cookies": cookies })))
        }
        StorageAction::SetCookie => {
            let cookie = args.cookie.as_ref().expect("checked: set_cookie has a cookie");
            let mut param = json!({ "name": cookie.name, "value": cookie.value });
            let optional = [
                ("url", cookie.url.as_ref().map(|v| json!(v))),
                ("domain", cookie.domain.as_ref().map(|v| json!(v))),
                ("path", cookie.path.as_ref().map(|v| json!(v))),
                ("expires", cookie.expires.map(|v| json!(v))),
                ("httpOnly", cookie.http_only.map(|v| json!(v))),
                ("secure", cookie.secure.map(|v| json!(v))),
                (
                    "sameSite",
                    cookie.same_site.map(|v| {
                        json!(match v {
                            SameSite::Strict => "Strict",
                            SameSite::Lax => "Lax",
                            SameSite::None => "None",
                        })
                    }),
                ),
            ];
            for (key, value) in optional {
                if let Some(value) = value {
                    param[key] = value;
                }
            }
            if cookie.domain.is_some() && cookie.path.is_none() {
                param["path"] = json!("/");
            }
            let set = cdp::protocol::storage::SetCookies {
                cookies: vec![param],
                browser_context_id: context.id.clone(),
            };
            let browser = context.browser.connection().browser();
            budget
                .cdp("setting the cookie", &browser, set)
                .await
                .map_err(|e| {
                    if e.failure.ends_the_call() {
                        e
                    } else {
                        ActionError::invalid(
                            format!("Chrome refused the cookie: {}", e.message),
                            "Check the cookie's url or domain; same_site None needs secure.",
                        )
                    }
                })?;
            let kept = storage_state::cookies(context, budget)
                .await?
                .into_iter()
                .any(|c| c["name"] == json!(cookie.name));
            if !kept {
                return Err(ActionError::invalid(
                    format!("Chrome did not keep the cookie \"{}\"", cookie.name),
                    "Check its url or domain and path; a secure cookie needs an https url, same_site None needs secure.",
                ));
            }
            Ok(ActionOutput::new(
                format!("Set cookie {}.", cookie.name),
                json!({ "ok": true }),
            ))
        }
        StorageAction::ClearCookies => {
            let clear = cdp::protocol::storage::ClearCookies {
                browser_context_id: context.id.clone(),
            };
            let browser = context.browser.connection().browser();
            budget.cdp("clearing the cookies", &browser, clear).await?;
            Ok(ActionOutput::new(
                "Cleared this session's cookies.",
                json!({ "ok": true }),
            ))
        }
        StorageAction::Save => {
            let path = files::output_path(output, args.path.as_deref(), "state.json")?;
            let state = storage_state::capture(context, budget).await?;
            let text = serde_json::to_string_pretty(&state).expect("a state serializes");
            files::write(&path, text.as_bytes())?;
            Ok(summary("Saved", &path, &state))
        }
        StorageAction::Load => {
            let (path, text) = files::read_inside(output, args.path.as_deref().unwrap_or_default())?;
            let state = storage_state::load_text(context, &path, &text, budget).await?;
            Ok(summary("Loaded", &path, &state))
        }
    }
}

fn summary(done: &str, path: &std::path::Path, state: &storage_state::State) -> ActionOutput {
    let origins: Vec<&str> = state.origins.iter().map(|o| o.origin.as_str()).collect();
    let shown = path.display().to_string();
    ActionOutput::new(
        format!(
            "{done} {shown}: {} cookie(s), localStorage of {} origin(s){}.",
            state.cookies.len(),
            origins.len(),
            if origins.is_empty() {
                String::new()
            } else {
                format!(" ({})", origins.join(", "))
            }
        ),
        json!({ "ok": true, "path": shown, "cookies": state.cookies.len(), "origins": origins }),
    )
}

/// Whether the browser would send `cookie` with a request to `url`.
fn sent_to(cookie: &Value, url: &url::Url) -> bool {
    let host = url.host_str().unwrap_or_default();
    let domain = cookie["domain"].as_str().unwrap_or_default();
    let bare = domain.trim_start_matches('.');
    let host_ok = host.eq_ignore_ascii_case(bare)
        || (domain.starts_with('.')
            && host
                .to_ascii_lowercase()
                .ends_with(&format!(".{}", bare.to_ascii_lowercase())));
    let path_ok = url.path().starts_with(cookie["path"].as_str().unwrap_or("/"));
    let secure_ok = cookie["secure"] != true || url.scheme() == "https";
    host_ok && path_ok && secure_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookies_are_matched_to_urls_as_the_browser_sends_them() {
        let url = url::Url::parse("http://shop.example.com/cart/1").unwrap();
        let c = |domain: &str, path: &str, secure: bool| json!({"domain": domain, "path": path, "secure": secure});
        assert!(sent_to(&c(".example.com", "/", false), &url));
        assert!(sent_to(&c("shop.example.com", "/cart", false), &url));
        assert!(!sent_to(&c("example.com", "/", false), &url));
        assert!(!sent_to(&c("shop.example.com", "/account", false), &url));
        assert!(!sent_to(&c("shop.example.com", "/", true), &url));
    }
}
