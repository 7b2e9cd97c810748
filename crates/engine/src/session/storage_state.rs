//! Saved storage states: a session's cookies and the localStorage of the
//! origins its tabs loaded, as one JSON file
//! (`{cookies, origins: [{origin, local_storage: [{name, value}]}]}`),
//! written by `browser_storage save` and read by `load` and by
//! `[browser] storage_state` for every new session.
//!
//! Cookies go through the `Storage` domain with the session's browser
//! context. localStorage can only be reached from a document of its origin,
//! so a scratch page of the context visits each origin, its document
//! answered by us (an empty page, never fetched from the site), reads or
//! writes the items, and is closed.

use std::path::Path;

use base64::Engine as _;
use cdp::protocol::fetch::{self, RequestPaused};
use cdp::protocol::{page, runtime, storage, target};
use cdp::{EventStream, Session};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::session::Context;
use crate::{ActionError, Budget};

/// A saved state, as the file holds it.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct State {
    /// Cookies as Chrome reports them (`Network.Cookie`).
    pub cookies: Vec<Value>,
    /// localStorage, per origin.
    pub origins: Vec<OriginStorage>,
}

/// One origin's localStorage.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OriginStorage {
    /// `http://host:port`.
    pub origin: String,
    /// Its items.
    pub local_storage: Vec<Item>,
}

/// One localStorage item.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Item {
    /// The key.
    pub name: String,
    /// The value.
    pub value: String,
}

/// Reads a saved state; anything else is `invalid_argument` (without
/// quoting the file: it may be a file that is not ours to show).
pub fn read(path: &Path) -> Result<State, ActionError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        ActionError::invalid(
            format!(
                "cannot read {}: {}",
                path.display(),
                std::io::Error::from(e.kind())
            ),
            "Pass the path of a file written by browser_storage save.",
        )
    })?;
    parse(path, &text)
}

/// Parses the text of the saved state at `path`. Errors say where and what
/// kind of fault, never a value from the file (serde's messages quote
/// them: the file may hold anything, a key or a password included).
pub fn parse(path: &Path, text: &str) -> Result<State, ActionError> {
    let state: State = serde_json::from_str(text).map_err(|e| {
        let kind = match e.classify() {
            serde_json::error::Category::Syntax | serde_json::error::Category::Eof => "not valid JSON",
            _ => "JSON of another shape",
        };
        ActionError::invalid(
            format!(
                "{} is not a saved storage state ({{cookies, origins}} as browser_storage save writes it): {kind} at line {}, column {}",
                path.display(),
                e.line(),
                e.column()
            ),
            "Pass a file written by browser_storage save.",
        )
    })?;
    for cookie in &state.cookies {
        let named = cookie["name"].is_string() && cookie["value"].is_string();
        if !named || !(cookie["domain"].is_string() || cookie["url"].is_string()) {
            return Err(ActionError::invalid(
                format!(
                    "{} is not a saved storage state: a cookie lacks name, value or domain",
                    path.display()
                ),
                "Pass a file written by browser_storage save.",
            ));
        }
    }
    if let Some(bad) = state
        .origins
        .iter()
        .position(|o| crate::network::web_origin(&o.origin).as_deref() != Some(o.origin.as_str()))
    {
        return Err(ActionError::invalid(
            format!(
                "{} is not a saved storage state: origins[{bad}] is not an http(s) origin",
                path.display(),
            ),
            "Pass a file written by browser_storage save.",
        ));
    }
    Ok(state)
}

/// The session's cookies and the localStorage of the origins its tabs loaded.
pub async fn capture(context: &Context, budget: &Budget) -> Result<State, ActionError> {
    let cookies = cookies(context, budget).await?;
    let mut origins: Vec<String> = context
        .tabs()
        .iter()
        .flat_map(|tab| tab.state(|s| s.network().origins().cloned().collect::<Vec<_>>()))
        .collect();
    origins.sort();
    origins.dedup();
    let mut state = State {
        cookies,
        origins: Vec::new(),
    };
    if origins.is_empty() {
        return Ok(state);
    }
    let mut scratch = Scratch::open(context, budget).await?;
    let read = async {
        for origin in origins {
            scratch.visit(&origin, budget).await?;
            let items = scratch.evaluate("Object.entries(localStorage)", budget).await?;
            let local_storage: Vec<Item> = items
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|pair| {
                    Some(Item {
                        name: pair[0].as_str()?.to_owned(),
                        value: pair[1].as_str()?.to_owned(),
                    })
                })
                .collect();
            if !local_storage.is_empty() {
                state.origins.push(OriginStorage {
                    origin,
                    local_storage,
                });
            }
        }
        Ok::<_, ActionError>(())
    };
    let result = read.await;
    scratch.close(budget).await;
    result.map(|_| state)
}

/// Puts a saved state's cookies and localStorage into the session.
pub async fn apply(context: &Context, state: &State, budget: &Budget) -> Result<(), ActionError> {
    if !state.cookies.is_empty() {
        let set = storage::SetCookies {
            cookies: state.cookies.iter().map(cookie_param).collect(),
            browser_context_id: context.id.clone(),
        };
        budget
            .cdp(
                "setting the saved cookies",
                &context.browser.connection().browser(),
                set,
            )
            .await
            .map_err(|e| {
                if e.failure.ends_the_call() {
                    e
                } else {
                    ActionError::invalid(
                        format!("Chrome refused the saved cookies: {}", e.message),
                        "Save the state again with browser_storage save.",
                    )
                }
            })?;
    }
    let origins: Vec<&OriginStorage> = state
        .origins
        .iter()
        .filter(|o| !o.local_storage.is_empty())
        .collect();
    if origins.is_empty() {
        return Ok(());
    }
    let mut scratch = Scratch::open(context, budget).await?;
    let write = async {
        for origin in origins {
            scratch.visit(&origin.origin, budget).await?;
            let pairs: Vec<(&str, &str)> = origin
                .local_storage
                .iter()
                .map(|i| (i.name.as_str(), i.value.as_str()))
                .collect();
            let script = format!(
                "(() => {{ for (const [k, v] of {}) localStorage.setItem(k, v); return localStorage.length; }})()",
                json!(pairs)
            );
            scratch.evaluate(&script, budget).await?;
        }
        Ok::<_, ActionError>(())
    };
    let result = write.await;
    scratch.close(budget).await;
    result
}

/// Loads the state file at `path` into the session.
pub async fn load_file(context: &Context, path: &Path, budget: &Budget) -> Result<State, ActionError> {
    let state = read(path)?;
    apply(context, &state, budget).await?;
    Ok(state)
}

/// Loads a state already read (from `path`) into the session.
pub async fn load_text(
    context: &Context,
    path: &Path,
    text: &str,
    budget: &Budget,
) -> Result<State, ActionError> {
    let state = parse(path, text)?;
    apply(context, &state, budget).await?;
    Ok(state)
}

/// Every cookie of the session's browser context.
pub async fn cookies(context: &Context, budget: &Budget) -> Result<Vec<Value>, ActionError> {
    let got = budget
        .cdp(
            "reading the cookies",
            &context.browser.connection().browser(),
            storage::GetCookies {
                browser_context_id: context.id.clone(),
            },
        )
        .await?;
    Ok(got.cookies)
}

/// A saved cookie as `Storage.setCookies` takes it (only the fields it knows).
fn cookie_param(cookie: &Value) -> Value {
    let mut param = serde_json::Map::new();
    for key in [
        "name", "value", "url", "domain", "path", "httpOnly", "secure", "sameSite", "priority",
    ] {
        if let Some(v) = cookie.get(key).filter(|v| !v.is_null()) {
            param.insert(key.into(), v.clone());
        }
    }
    let session = cookie["session"].as_bool().unwrap_or(false);
    if let Some(expires) = cookie["expires"].as_f64().filter(|e| *e > 0.0 && !session) {
        param.insert("expires".into(), json!(expires));
    }
    Value::Object(param)
}

/// A page of the session's context that no tab shows, whose documents we
/// answer ourselves.
struct Scratch {
    browser: Session,
    target_id: String,
    session: Session,
    events: EventStream,
}

/// The document every visited origin gets: empty, with no script.
const EMPTY_PAGE: &str = "<!doctype html><title>cdpilot storage</title>";

impl Scratch {
    async fn open(context: &Context, budget: &Budget) -> Result<Scratch, ActionError> {
        let browser = context.browser.connection().browser();
        let created = budget
            .cdp(
                "opening a page for localStorage",
                &browser,
                target::CreateTarget {
                    url: "about:blank".into(),
                    browser_context_id: context.id.clone(),
                },
            )
            .await?;
        let target_id = created.target_id;
        let attached = budget
            .cdp(
                "attaching to the storage page",
                &browser,
                target::AttachToTarget {
                    target_id: target_id.clone(),
                    flatten: true,
                },
            )
            .await;
        let session = match attached {
            Ok(a) => browser.connection().session(a.session_id),
            Err(e) => {
                let close = target::CloseTarget { target_id };
                let _ = budget.cdp("closing the storage page", &browser, close).await;
                return Err(e);
            }
        };
        let scratch = Scratch {
            events: session.events(),
            browser,
            target_id,
            session,
        };
        let step = "preparing the storage page";
        let every_request = fetch::RequestPattern {
            url_pattern: "*".into(),
            resource_type: None,
            request_stage: "Request".into(),
        };
        let prepared = tokio::try_join!(
            budget.cdp(step, &scratch.session, page::Enable {}),
            budget.cdp(
                step,
                &scratch.session,
                fetch::Enable {
                    patterns: vec![every_request]
                }
            ),
        );
        if let Err(e) = prepared {
            scratch.close(budget).await;
            return Err(e);
        }
        Ok(scratch)
    }

    /// Shows an empty document of `origin` (answered here, not fetched).
    async fn visit(&mut self, origin: &str, budget: &Budget) -> Result<(), ActionError> {
        let step = "visiting an origin for its localStorage";
        let url = format!("{origin}/");
        let navigate = budget.cdp(step, &self.session, page::Navigate { url });
        let session = &self.session;
        let events = &mut self.events;
        let serve = async {
            let mut arrived = false;
            while let Some(event) = events.recv().await {
                if let Some(paused) = event.decode::<RequestPaused>() {
                    if paused.resource_type == "Document" {
                        let answer = fetch::FulfillRequest {
                            request_id: paused.request_id,
                            response_code: 200,
                            response_headers: vec![fetch::HeaderEntry {
                                name: "Content-Type".into(),
                                value: "text/html".into(),
                            }],
                            body: Some(base64::engine::general_purpose::STANDARD.encode(EMPTY_PAGE)),
                        };
                        budget.cdp(step, session, answer).await?;
                    } else {
                        let refuse = fetch::FailRequest {
                            request_id: paused.request_id,
                            error_reason: "Aborted".into(),
                        };
                        budget.cdp(step, session, refuse).await?;
                    }
                } else if let Some(navigated) = event.decode::<page::FrameNavigated>() {
                    arrived |= navigated.frame.parent_id.is_none() && navigated.frame.url.starts_with(origin);
                } else if arrived && event.is::<page::LoadEventFired>() {
                    return Ok(());
                }
            }
            Err(ActionError::internal("the storage page's events ended"))
        };
        let (navigated, served) = tokio::join!(navigate, budget.run(step, serve));
        let navigated = navigated?;
        if let Some(error) = navigated.error_text.filter(|e| !e.is_empty()) {
            return Err(ActionError::internal(format!("{step}: {origin}: {error}")));
        }
        served
    }

    /// Evaluates in the scratch page's document; returns the value.
    async fn evaluate(&self, expression: &str, budget: &Budget) -> Result<Value, ActionError> {
        let step = "reading or writing localStorage";
        let evaluated = budget
            .cdp(
                step,
                &self.session,
                runtime::Evaluate {
                    expression: expression.to_owned(),
                    context_id: None,
                    return_by_value: true,
                    await_promise: false,
                    user_gesture: false,
                    repl_mode: false,
                },
            )
            .await?;
        if let Some(exception) = evaluated.exception_details {
            return Err(ActionError::internal(format!("{step}: {}", exception.message())));
        }
        Ok(evaluated.result.value.unwrap_or(Value::Null))
    }

    /// Closes the page (with a budget of its own: it must not be left open
    /// because the call's budget ran out).
    async fn close(self, _budget: &Budget) {
        let budget = Budget::with_timeout(std::time::Duration::from_secs(5));
        let close = target::CloseTarget {
            target_id: self.target_id,
        };
        if let Err(e) = budget.cdp("closing the storage page", &self.browser, close).await {
            tracing::debug!("closing the storage page: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_saved_states_are_read() {
        let dir = std::env::temp_dir().join(format!("cdpilot-state-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.json");
        std::fs::write(
            &good,
            r#"{"cookies":[{"name":"a","value":"1","domain":"127.0.0.1","path":"/"}],"origins":[{"origin":"http://127.0.0.1:8080","local_storage":[{"name":"k","value":"v"}]}]}"#,
        )
        .unwrap();
        let state = read(&good).unwrap();
        assert_eq!(state.origins[0].local_storage[0].value, "v");
        for (name, text) in [
            ("list.json", "[1, 2]"),
            ("other.json", r#"{"user": "ada"}"#),
            ("key.txt", "-----BEGIN OPENSSH PRIVATE KEY-----"),
            (
                "badorigin.json",
                r#"{"cookies":[],"origins":[{"origin":"file:///etc/hunter2","local_storage":[]}]}"#,
            ),
            // Issue 20, finding 13: serde's messages quote what they read.
            ("field.json", r#"{"cookies":[],"origins":[],"hunter2":1}"#),
            ("typed.json", r#"{"cookies":"hunter2-pass","origins":[]}"#),
            (
                "variant.json",
                r#"{"cookies":[],"origins":[{"origin":7,"hunter2":[]}]}"#,
            ),
        ] {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap();
            let e = read(&path).unwrap_err();
            assert_eq!(e.code, crate::ErrorCode::InvalidArgument, "{name}");
            assert!(
                e.message.contains("not a saved storage state"),
                "{name}: {}",
                e.message
            );
            assert!(!e.message.contains("OPENSSH"), "the file is not quoted");
            assert!(
                !e.message.contains("hunter2"),
                "{name}: the file is quoted: {}",
                e.message
            );
        }
        assert!(read(&dir.join("missing.json")).is_err());
        let param = cookie_param(
            &json!({"name": "a", "value": "1", "domain": "x", "size": 2, "session": true, "expires": -1}),
        );
        assert_eq!(param, json!({"name": "a", "value": "1", "domain": "x"}));
    }
}
