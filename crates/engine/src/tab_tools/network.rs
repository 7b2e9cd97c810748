//! `browser_network`: the tab's last 500 requests (its iframes', cross-
//! origin ones included) from the request log the event reader keeps
//! (`crate::network`), and one request in detail. A response body is asked
//! of the session that saw the request, only when wanted, and capped.
//!
//! It also shapes the session's traffic, inside the URL rules: routes
//! (`route`, `unroute`, `routes`, `har`: the session's table is
//! `crate::policy::routes`, answered by each tab's request stage) and the
//! tab's network conditions (`conditions`: offline, throttled; the same
//! state `browser_emulate offline` sets).

use base64::Engine as _;
use cdp::protocol::network;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::args::Common;
use crate::network::Request;
use crate::tab::Tab;
use crate::tool::{Declaration, DefaultBudget, Effect, Group, Scope, TabCall, TabTool, Tool};
use crate::{ActionError, ActionOutput, Budget};

// What `browser_network` does.
#[allow(missing_docs)] // schema-visible: see `crate::tool`
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum NetworkAction {
    List,
    Get,
    Route,
    Unroute,
    Routes,
    Conditions,
    Har,
}

// What a route does with the requests it matches.
#[allow(missing_docs)] // schema-visible: see `crate::tool`
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RouteAnswer {
    Abort,
    Fulfill,
    Continue,
    Delay,
}

// What a HAR does with a request it holds no answer for.
#[allow(missing_docs)] // schema-visible: see `crate::tool`
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NotFound {
    Fallback,
    Fail,
}

/// Arguments of `browser_network`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct NetworkArgs {
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    pub action: NetworkAction,
    /// list: URL substring.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<String>,
    /// list, route: document, xhr, fetch, script, image… (route: comma list).
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// list: only failed ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<bool>,
    /// get: request id (r3); unroute: route id (none: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// get: include the response body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<bool>,
    /// route, har: URLPattern as the URL rules (:* for any port).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<RouteAnswer>,
    /// abort: a Network.ErrorReason (default Failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<i64>,
    /// fulfill: response's; continue: request's, set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<Map<String, Value>>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json: Option<Value>,
    /// fulfill: body file; har: HAR file (under the output directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub post_data: Option<String>,
    /// delay: ms (max 60000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<u64>,
    /// har: default fallback (to the network).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_found: Option<NotFound>,
    /// conditions: Slow 3G, Fast 3G, Slow 4G, Fast 4G; none clears.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offline: Option<bool>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<f64>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub download_kbps: Option<f64>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upload_kbps: Option<f64>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(flatten)]
    pub common: Common,
}

/// `browser_network`: its declaration and checks (see `crate::tool`).
impl Tool for NetworkArgs {
    const TOOL: Declaration = Declaration {
        name: "browser_network",
        verb: "network",
        group: Group::Network,
        description: "The tab's last 500 requests, iframes too: list (filter by URL, type, failed), get one by id (headers, post data, with body the response up to 64 KB). Shape them inside the URL rules: route, unroute, routes, har (answer from a HAR file), conditions (the tab's network).",
        scope: Scope::Tab,
        runs_during_dialog: true,
        budget: DefaultBudget::Action,
        changes_page: false,
        switch: None,
        effect: Effect::Acts,
    };

    /// Checks the arguments before anything touches the browser.
    fn check(&self) -> Result<(), ActionError> {
        if !matches!(self.action, NetworkAction::List | NetworkAction::Get) {
            return shaping::check(self);
        }
        let list_only = self.filter.is_some() || self.kind.is_some() || self.failed.is_some();
        let get_only = self.id.is_some() || self.body.is_some();
        match self.action {
            NetworkAction::List if get_only => Err(ActionError::invalid(
                "id and body are for action get",
                "Use action get with id, or leave them out to list.",
            )),
            NetworkAction::Get if list_only => Err(ActionError::invalid(
                "filter, type and failed are for action list",
                "Use action list to filter, then get one request by id.",
            )),
            NetworkAction::Get if self.id.is_none() => Err(ActionError::invalid(
                "action get needs id",
                "List the requests with action list and pass one's id (r3).",
            )),
            _ => match &self.kind {
                Some(kind) if !TYPES.contains(&kind.to_ascii_lowercase().as_str()) => {
                    Err(ActionError::invalid(
                        format!("type \"{kind}\" is not a resource type"),
                        format!("Use one of: {}.", TYPES.join(", ")),
                    ))
                }
                _ => shaping::check(self),
            },
        }
    }
}

impl TabTool for NetworkArgs {
    /// Runs the tool in the call's tab.
    async fn perform(&self, call: &TabCall<'_>) -> Result<ActionOutput, ActionError> {
        match self.action {
            NetworkAction::List | NetworkAction::Get => run(call.tab, self, call.budget).await,
            _ => shaping::run(call.tab, self, call.config, call.budget).await,
        }
    }
}


mod shaping;

/// The longest text body returned, in bytes.
const BODY_MAX: usize = 64 * 1024;

/// The resource types `type` may name (Chrome's, lowercased).
pub(crate) const TYPES: &[&str] = &[
    "document",
    "stylesheet",
    "image",
    "media",
    "font",
    "script",
    "texttrack",
    "xhr",
    "fetch",
    "prefetch",
    "eventsource",
    "websocket",
    "manifest",
    "signedexchange",
    "ping",
    "cspviolationreport",
    "preflight",
    "other",
];

pub async fn run(tab: &Tab, args: &NetworkArgs, budget: &Budget) -> Result<ActionOutput, ActionError> {
    match args.action {
        NetworkAction::List => Ok(list(tab, args)),
        NetworkAction::Get => get(tab, args, budget).await,
        _ => Err(ActionError::internal("a shaping action reached the reading path")),
    }
}

fn list(tab: &Tab, args: &NetworkArgs) -> ActionOutput {
    let kind = args.kind.as_deref().map(str::to_ascii_lowercase);
    let wanted = |r: &Request| {
        args.filter.as_ref().is_none_or(|f| r.url.contains(f.as_str()))
            && kind.as_ref().is_none_or(|k| &r.kind == k)
            && (args.failed != Some(true) || r.failed.is_some() || r.status.is_some_and(|s| s >= 400))
    };
    let requests: Vec<Request> = tab.state(|s| s.network().list().filter(|r| wanted(r)).cloned().collect());
    let mut text = match requests.len() {
        0 => "No requests match.".to_owned(),
        n => format!("{n} request(s), oldest first (get one by id for details):"),
    };
    let mut listed = Vec::new();
    for r in &requests {
        let outcome = match (&r.failed, r.status) {
            (Some(why), _) => format!("failed {why}"),
            (None, Some(status)) => status.to_string(),
            (None, None) => "pending".to_owned(),
        };
        let ms = r.ms().map(|ms| format!(" {ms}ms")).unwrap_or_default();
        let bytes = r.bytes.map(|b| format!(" {b}B")).unwrap_or_default();
        let routed = tab.gate().answered(&r.cdp_id);
        let by = routed.as_ref().map(|r| format!(" (by {})", r.how())).unwrap_or_default();
        text += &format!(
            "\n{} {} {} {} {}{ms}{bytes}{by}",
            r.id, r.method, outcome, r.kind, r.url
        );
        let mut entry = json!({
            "id": r.id, "method": r.method, "url": r.url, "type": r.kind,
            "status": r.status, "ms": r.ms(), "bytes": r.bytes,
        });
        if let Some(why) = &r.failed {
            entry["failed"] = json!(why);
        }
        if let Some(r) = routed {
            entry["routed"] = json!(r.answer);
            entry["route"] = json!(r.route);
            entry["pattern"] = json!(r.pattern);
        }
        listed.push(entry);
    }
    ActionOutput::new(text, json!({ "requests": listed }))
}

async fn get(tab: &Tab, args: &NetworkArgs, budget: &Budget) -> Result<ActionOutput, ActionError> {
    let id = args.id.as_deref().unwrap_or_default();
    let Some(r) = tab.state(|s| s.network().get(id).cloned()) else {
        return Err(ActionError::invalid(
            format!(
                "there is no request \"{id}\" among this tab's last {}",
                crate::network::KEPT
            ),
            "List the requests with action list and use one of their ids.",
        ));
    };
    let session = tab.session.connection().session(r.session.clone());
    let mut post_data = r.post_data.clone();
    if post_data.is_none() && r.has_post_data {
        let asked = network::GetRequestPostData {
            request_id: r.cdp_id.clone(),
        };
        post_data = budget
            .cdp("reading the request's body", &session, asked)
            .await
            .ok()
            .map(|p| p.post_data);
    }
    let mut request = json!({ "method": r.method, "url": r.url, "headers": r.request_headers.map() });
    if let Some(data) = &post_data {
        request["post_data"] = json!(data);
    }
    let mut response = json!({
        "status": r.status, "headers": r.response_headers.map(), "body_truncated": false,
    });
    let mut text = format!(
        "{} {} {}\nrequest headers:{}",
        r.method,
        r.url,
        r.status
            .map(|s| s.to_string())
            .unwrap_or_else(|| "(no response)".into()),
        headers_text(&r.request_headers.map())
    );
    if let Some(data) = &post_data {
        text += &format!("\npost_data: {}", crate::content::page(cut(data, BODY_MAX).0));
    }
    text += &format!("\nresponse headers:{}", headers_text(&r.response_headers.map()));
    if args.body == Some(true) {
        let asked = network::GetResponseBody {
            request_id: r.cdp_id.clone(),
        };
        match budget.cdp("reading the response body", &session, asked).await {
            Ok(body) if body.base64_encoded => {
                let size = base64::engine::general_purpose::STANDARD
                    .decode(&body.body)
                    .map(|b| b.len())
                    .unwrap_or(body.body.len() * 3 / 4);
                response["body_bytes"] = json!(size);
                text += &format!("\nbody: binary, {size} bytes ({})", r.mime_type);
            }
            Ok(body) if body.body.is_empty() && declared_length(&r.response_headers.map()) > 0 => {
                // Chrome answers "" for a body the page read as a stream or
                // a blob: it kept no copy.
                let why = "the browser kept no copy of this body (the page read it as a stream or blob)";
                response["body_unavailable"] = json!(why);
                text += &format!("\nbody: unavailable ({why})");
            }
            Ok(body) => {
                let (shown, truncated) = cut(&body.body, BODY_MAX);
                response["body"] = json!(shown);
                response["body_truncated"] = json!(truncated);
                let more = if truncated { " (first 64 KB)" } else { "" };
                text += &format!("\nbody{more}:\n{}", crate::content::page(shown));
            }
            Err(e) if e.failure.ends_the_call() => return Err(e),
            Err(e) => {
                // Not finished yet, a redirect hop, or evicted from the
                // browser's buffer: say so, keep the rest.
                response["body_unavailable"] = json!(e.message);
                text += &format!("\nbody: unavailable ({})", e.message);
            }
        }
    }
    Ok(ActionOutput::new(
        text,
        json!({ "id": r.id, "request": request, "response": response }),
    ))
}

/// The `Content-Length` a response declared (0 when it declared none).
fn declared_length(headers: &Map<String, Value>) -> u64 {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.as_str()?.trim().parse().ok())
        .unwrap_or(0)
}

fn headers_text(headers: &Map<String, Value>) -> String {
    headers
        .iter()
        .map(|(k, v)| {
            format!(
                "\n  {k}: {}",
                v.as_str().map(str::to_owned).unwrap_or_else(|| v.to_string())
            )
        })
        .collect()
}

/// `text` cut to at most `max` bytes at a character boundary.
fn cut(text: &str, max: usize) -> (&str, bool) {
    if text.len() <= max {
        return (text, false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (&text[..end], true)
}
