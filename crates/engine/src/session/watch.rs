//! What a watcher (the serve dashboard, the session's trace) sees of a
//! session without taking part in it: its tabs and pending dialogs as the
//! supervisors know them (no browser round trip), a small JPEG of the
//! active tab after a page action, a live screencast of one tab, and for
//! the trace what a call's refs were shown as, the console and the
//! requests since the last call.
//!
//! Owns nothing: it reads the session's current context and tabs and never
//! opens a context (watching a session that has none shows nothing).

use std::collections::BTreeMap;
use std::sync::Arc;

use cdp::protocol::page;
use serde::Serialize;
use serde_json::Value;

use super::{Context, Session};
use crate::tab::Tab;
use crate::trace::{target, RequestRecord, Target, TargetBox, Viewport};
use crate::Budget;

/// Where a finished request's response body can be asked for (the CDP
/// session that reported it, the browser's id for it).
pub(crate) struct BodySource {
    session: cdp::Session,
    cdp_id: String,
}

/// The width of an audit thumbnail, in pixels.
const THUMBNAIL_WIDTH: f64 = 240.0;
/// JPEG quality of thumbnails and a trace's screenshots.
const JPEG_QUALITY: u8 = 50;
/// The width of a trace's screenshot, in pixels (about 30 KB a shot).
const TRACE_SHOT_WIDTH: f64 = 640.0;
/// How long a trace's screenshot may take (it never holds up a call for
/// long: a page that cannot paint gets none).
const TRACE_SHOT_BUDGET: std::time::Duration = std::time::Duration::from_secs(2);

/// A session as the supervisors know it now.
#[derive(Debug, Default, Serialize)]
pub struct Overview {
    /// Its tabs, in order.
    pub tabs: Vec<TabView>,
    /// Dialogs waiting for an answer, each with `tab` naming its tab.
    pub dialogs: Vec<Value>,
}

/// One tab as the overview shows it.
#[derive(Debug, Serialize)]
pub struct TabView {
    /// `t1`, `t2`, … as `browser_tabs` names it.
    pub id: String,
    /// The main frame's URL as the tab's event reader last saw it.
    pub url: String,
    /// The session's active tab.
    pub active: bool,
}

impl Session {
    /// Whether the session holds pages now (its browser context is open):
    /// false before its first call and after it ended (idle, closed).
    pub fn has_pages(&self) -> bool {
        self.context.lock().unwrap().is_some()
    }

    fn current_context(&self) -> Option<Arc<Context>> {
        self.context.lock().unwrap().clone()
    }

    pub(super) fn tab_now(&self, id: Option<&str>) -> Option<Arc<Tab>> {
        let context = self.current_context()?;
        context
            .tabs_now()
            .into_iter()
            .find(|(tab_id, _, active)| id.map_or(*active, |id| id == tab_id))
            .map(|(_, tab, _)| tab)
    }

    /// Its tabs and pending dialogs, from the supervisors' picture.
    pub fn overview(&self) -> Overview {
        let Some(context) = self.current_context() else {
            return Overview::default();
        };
        let mut overview = Overview::default();
        for (id, tab, active) in context.tabs_now() {
            // Redacted here, once for every watcher (the dashboard's state,
            // `cdpilot sessions`): a URL after a GET form, a dialog that
            // echoes a typed value.
            for dialog in tab.dialogs().pending() {
                let mut value = serde_json::to_value(&dialog).unwrap_or_default();
                value["tab"] = id.clone().into();
                overview.dialogs.push(self.secrets.redact_value(value));
            }
            overview.tabs.push(TabView {
                url: self.secrets.redact(&tab.state(|s| s.url().to_owned())),
                id,
                active,
            });
        }
        overview
    }

    /// A small JPEG (base64, 240 px wide) of the active tab's viewport, or
    /// `None` when there is no tab or a dialog blocks it (Chrome cannot
    /// paint under a native dialog).
    pub async fn thumbnail(&self, budget: &Budget) -> Option<String> {
        Some(self.viewport_jpeg(None, THUMBNAIL_WIDTH, budget).await?.0)
    }

    /// A JPEG (base64, at most `width` px wide) of tab `tab`'s viewport
    /// (default the active tab).
    /// With it, the viewport's size in CSS px (what the JPEG shows, before
    /// scaling).
    async fn viewport_jpeg(
        &self,
        tab: Option<&str>,
        width: f64,
        budget: &Budget,
    ) -> Option<(String, Viewport)> {
        let tab = self.tab_now(tab)?;
        tab_jpeg(&tab, width, budget).await
    }

    /// The trace's screenshot after a call that acts in tab `tab`: a JPEG
    /// at most [`TRACE_SHOT_WIDTH`] px wide, within its own short budget.
    /// With it, the viewport's size in CSS px (what a step's `box` is
    /// measured against). The tab is found now, the picture taken when
    /// the future runs (after the call has answered: the door's deferred
    /// step).
    pub(crate) fn trace_shot(
        &self,
        tab: Option<&str>,
    ) -> impl std::future::Future<Output = Option<(Vec<u8>, Viewport)>> + Send + 'static {
        let tab = self.tab_now(tab);
        async move {
            use base64::Engine as _;
            let budget = Budget::with_timeout(TRACE_SHOT_BUDGET);
            let tab = tab?;
            let (shot, size) = tab_jpeg(&tab, TRACE_SHOT_WIDTH, &budget).await?;
            let jpeg = base64::engine::general_purpose::STANDARD.decode(shot).ok()?;
            Some((jpeg, size))
        }
    }

    /// Takes the box the last acting tool aimed at in tab `tab` (default
    /// the active tab), as the tab noted it: for a traced call's step.
    pub(crate) fn trace_aimed(&self, tab: Option<&str>) -> Option<TargetBox> {
        let (x, y, width, height) = self.tab_now(tab)?.state(|s| s.take_aimed())?;
        Some(TargetBox { x, y, width, height })
    }

    /// What each ref a call's `arguments` name was shown as in its tab's
    /// latest snapshot (the one the agent read), by JSON pointer.
    pub(crate) fn trace_targets(&self, arguments: &Value) -> BTreeMap<String, Target> {
        let refs = target::refs_in(arguments);
        let mut targets = BTreeMap::new();
        if refs.is_empty() {
            return targets;
        }
        let Some(tab) = self.tab_now(arguments.get("tab").and_then(Value::as_str)) else {
            return targets;
        };
        tab.state(|s| {
            let Some(tree) = s.latest_tree() else { return };
            for (path, reference) in refs {
                if let Some(mut found) = target::identify(tree, &reference) {
                    found.name = self.secrets.redact(&found.name);
                    targets.insert(path, found);
                }
            }
        });
        targets
    }

    /// The session's console messages (every tab's) after `after`
    /// (seconds since the epoch), redacted.
    pub(crate) fn trace_console(&self, after: f64) -> Vec<crate::ConsoleMessage> {
        let Some(context) = self.current_context() else {
            return Vec::new();
        };
        let mut messages = Vec::new();
        for (_, tab, _) in context.tabs_now() {
            tab.state(|s| {
                for message in s.console().messages().iter().filter(|m| m.at > after) {
                    let mut message = message.clone();
                    message.text = self.secrets.redact(&message.text);
                    message.url = self.secrets.redact(&message.url);
                    messages.push(message);
                }
            });
        }
        messages.sort_by(|a, b| a.at.total_cmp(&b.at));
        messages
    }

    /// The session's finished requests (every tab's) that `seen` says are
    /// not in the trace yet, redacted, each with where its response's body
    /// can be asked for (none for a failed request or a redirect's hop).
    pub(crate) fn trace_requests(
        &self,
        seen: impl Fn(&str, &str) -> bool,
    ) -> Vec<(RequestRecord, Option<BodySource>)> {
        let Some(context) = self.current_context() else {
            return Vec::new();
        };
        let mut records = Vec::new();
        let redact = |map: serde_json::Map<String, Value>| match self.secrets.redact_value(Value::Object(map))
        {
            Value::Object(map) => map,
            _ => serde_json::Map::new(),
        };
        for (id, tab, _) in context.tabs_now() {
            tab.state(|s| {
                for r in s.network().list() {
                    let finished = r.failed.is_some() || r.bytes.is_some();
                    if !finished || seen(&id, &r.id) {
                        continue;
                    }
                    let redirect = r.status.is_some_and(|s| (300..400).contains(&s));
                    let source = (r.failed.is_none() && !redirect).then(|| BodySource {
                        session: tab.session.connection().session(r.session.clone()),
                        cdp_id: r.cdp_id.clone(),
                    });
                    let routed = tab.gate().answered(&r.cdp_id);
                    let record = RequestRecord {
                        routed: routed.as_ref().map(|r| r.answer.to_owned()),
                        route: routed.as_ref().map(|r| r.route.clone()),
                        pattern: routed.map(|r| self.secrets.redact(&r.pattern)),
                        tab: id.clone(),
                        id: r.id.clone(),
                        method: r.method.clone(),
                        url: self.secrets.redact(&r.url),
                        kind: r.kind.clone(),
                        status: r.status,
                        failed: r.failed.clone(),
                        started: r.wall_started,
                        ms: r.ms(),
                        bytes: r.bytes,
                        request_headers: redact(r.request_headers.map()),
                        response_headers: redact(r.response_headers.map()),
                        mime_type: r.mime_type.clone(),
                        post_data: r
                            .post_data
                            .as_ref()
                            .filter(|b| b.len() <= crate::trace::POST_DATA_KEPT)
                            .map(|b| self.secrets.redact(b)),
                        body_dropped: redirect.then(|| "redirect".to_owned()),
                        ..RequestRecord::default()
                    };
                    records.push((record, source));
                }
            });
        }
        records
    }

    /// Fills in the responses' bodies of `requests` (at most
    /// [`crate::trace::RESPONSE_BODY_KEPT`] bytes each, within
    /// [`crate::trace::BODIES_BUDGET_MS`] for them all), redacted: a text
    /// body as any page text, a binary one dropped whole when a secret is
    /// in it. `keep` false (the trace's budget): each says `budget`.
    pub(crate) async fn trace_bodies(
        &self,
        requests: &mut [(RequestRecord, Option<BodySource>)],
        keep: bool,
    ) {
        use crate::trace::RESPONSE_BODY_KEPT;
        let budget = Budget::with_timeout(std::time::Duration::from_millis(crate::trace::BODIES_BUDGET_MS));
        let mut asked = Vec::new();
        for (at, (record, source)) in requests.iter_mut().enumerate() {
            let Some(source) = source.take() else { continue };
            if !keep {
                record.body_dropped = Some("budget".into());
            } else if record.bytes.is_some_and(|b| b as usize > RESPONSE_BODY_KEPT) {
                // Bytes received are at most the decoded size (or compressed).
                record.body_dropped = Some("too_large".into());
            } else {
                asked.push((at, source));
            }
        }
        // All of a step's bodies at once: each is one round trip the
        // browser answers from memory.
        let bodies = futures_util::future::join_all(asked.into_iter().map(|(at, source)| {
            let budget = &budget;
            async move {
                let asked = cdp::protocol::network::GetResponseBody {
                    request_id: source.cdp_id,
                };
                let body = budget
                    .cdp("reading a response body for the trace", &source.session, asked)
                    .await;
                (at, body)
            }
        }))
        .await;
        for (at, body) in bodies {
            let record = &mut requests[at].0;
            match body {
                Ok(body) => self.keep_body(record, body),
                Err(_) => record.body_dropped = Some("unavailable".into()),
            }
        }
    }

    /// `body` into `record` if it is within the limit and holds no secret
    /// it cannot be redacted of.
    fn keep_body(&self, record: &mut RequestRecord, body: cdp::protocol::network::ResponseBody) {
        use crate::trace::RESPONSE_BODY_KEPT;
        use base64::Engine as _;
        if !body.base64_encoded {
            if body.body.len() > RESPONSE_BODY_KEPT {
                record.body_dropped = Some("too_large".into());
            } else {
                record.body = Some(self.secrets.redact(&body.body));
            }
            return;
        }
        let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(&body.body) else {
            record.body_dropped = Some("unavailable".into());
            return;
        };
        if bytes.len() > RESPONSE_BODY_KEPT {
            record.body_dropped = Some("too_large".into());
            return;
        }
        // A binary body cannot be redacted in place: one holding a secret
        // (in any spelling redaction knows) is not kept.
        let lossy = String::from_utf8_lossy(&bytes);
        if self.secrets.redact(&lossy) != lossy || self.secrets.redact(&body.body) != body.body {
            record.body_dropped = Some("secret".into());
            return;
        }
        record.body = Some(body.body);
        record.body_base64 = true;
    }

    /// Re-finds `target` in tab `tab`'s latest snapshot (default the
    /// active tab), as `cdpilot replay` does before a step that names a
    /// ref: `None` when the tab has no snapshot of its current page.
    pub fn refind(&self, tab: Option<&str>, target: &Target) -> Option<target::Found> {
        let tab = self.tab_now(tab)?;
        tab.state(|s| s.latest_tree().map(|tree| target::refind(tree, target)))
    }

    /// Joins the screencast of tab `tab` (default the active one): the tab
    /// keeps one for all its viewers (this and a hand-off page), stopped
    /// when the last one leaves. Errors name what was missing.
    pub fn watch(&self, tab: Option<&str>) -> Result<crate::tab::screencast::Viewer, String> {
        let tab = self
            .tab_now(tab)
            .ok_or_else(|| "the session has no such tab (yet)".to_owned())?;
        Ok(tab.watch())
    }
}

/// A JPEG (base64, at most `width` px wide) of `tab`'s viewport, and the
/// viewport's size in CSS px (what the JPEG shows, before scaling); `None`
/// when a dialog blocks it (Chrome cannot paint under a native dialog).
async fn tab_jpeg(tab: &Tab, width: f64, budget: &Budget) -> Option<(String, Viewport)> {
    if tab.dialogs().is_blocked() {
        return None;
    }
    let metrics = budget
        .cdp("measuring the viewport", &tab.session, page::GetLayoutMetrics {})
        .await
        .ok()?;
    let viewport = metrics.css_visual_viewport;
    if viewport.client_width < 1.0 || viewport.client_height < 1.0 {
        return None;
    }
    let shot = budget
        .cdp(
            "capturing a thumbnail",
            &tab.session,
            page::CaptureScreenshot {
                format: "jpeg".into(),
                quality: Some(JPEG_QUALITY),
                clip: Some(page::Viewport {
                    x: viewport.page_x,
                    y: viewport.page_y,
                    width: viewport.client_width,
                    height: viewport.client_height,
                    scale: (width / viewport.client_width).min(1.0),
                }),
                capture_beyond_viewport: false,
                // The trace's shots are many: speed over size.
                optimize_for_speed: width == TRACE_SHOT_WIDTH,
            },
        )
        .await
        .ok()?;
    let size = Viewport {
        width: viewport.client_width,
        height: viewport.client_height,
    };
    Some((shot.data, size))
}
