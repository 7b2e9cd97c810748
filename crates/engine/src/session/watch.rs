//! What a watcher (the serve dashboard) sees of a session without taking
//! part in it: its tabs and pending dialogs as the supervisors know them (no
//! browser round trip), a small JPEG of the active tab after a page action,
//! and a live screencast of one tab.
//!
//! Owns nothing: it reads the session's current context and tabs and never
//! opens a context (watching a session that has none shows nothing).

use std::sync::Arc;

use cdp::protocol::page;
use serde::Serialize;
use serde_json::Value;

use super::{Context, Session};
use crate::tab::Tab;
use crate::Budget;

/// The width of an audit thumbnail, in pixels.
const THUMBNAIL_WIDTH: f64 = 240.0;
/// JPEG quality of thumbnails.
const JPEG_QUALITY: u8 = 50;

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

    fn tab_now(&self, id: Option<&str>) -> Option<Arc<Tab>> {
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
        let tab = self.tab_now(None)?;
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
                        scale: (THUMBNAIL_WIDTH / viewport.client_width).min(1.0),
                    }),
                    capture_beyond_viewport: false,
                    optimize_for_speed: false,
                },
            )
            .await
            .ok()?;
        Some(shot.data)
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
