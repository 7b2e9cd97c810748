//! The supervisor's picture of a tab's frames, fed by `Page.frame*` events
//! of every session and by cross-origin iframes attaching as targets.
//!
//! A frame detached because it moved to another process (reason `swap`)
//! stays; when an OOPIF's target detaches, its record stays and only its
//! session is cleared. Shown in snapshots as `frame_tree`, capped at 30
//! frames and OOPIF depth 2.

use serde::Serialize;
use serde_json::{json, Value};

pub const MAX_FRAMES: usize = 30;
pub const MAX_OOPIF_DEPTH: usize = 2;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FrameRecord {
    pub frame_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    pub url: String,
    pub origin: String,
    pub is_oopif: bool,
    /// The flattened session of an OOPIF's target (None once detached).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
}

#[derive(Debug, Default)]
pub struct FrameTree {
    /// In order of first sight; the main frame first.
    frames: Vec<FrameRecord>,
}

impl FrameTree {
    fn entry(&mut self, frame_id: &str) -> &mut FrameRecord {
        if let Some(i) = self.frames.iter().position(|f| f.frame_id == frame_id) {
            return &mut self.frames[i];
        }
        self.frames.push(FrameRecord {
            frame_id: frame_id.to_owned(),
            parent: None,
            url: String::new(),
            origin: String::new(),
            is_oopif: false,
            session: None,
        });
        self.frames.last_mut().expect("just pushed")
    }

    /// Applies one event; returns nothing, changes only the records.
    pub fn apply(&mut self, method: &str, params: &Value) {
        match method {
            "Page.frameAttached" => {
                let id = params["frameId"].as_str().unwrap_or_default();
                let parent = params["parentFrameId"].as_str().map(str::to_owned);
                self.entry(id).parent = parent;
            }
            "Page.frameNavigated" => {
                let frame = &params["frame"];
                let id = frame["id"].as_str().unwrap_or_default();
                let parent = frame["parentId"].as_str().map(str::to_owned);
                if parent.is_none() && !self.frames.is_empty() && self.frames[0].frame_id == id {
                    // A new main document: its old subframes are gone.
                    self.frames.truncate(1);
                }
                let record = self.entry(id);
                if parent.is_some() {
                    record.parent = parent;
                }
                record.url = frame["url"].as_str().unwrap_or_default().to_owned();
                record.origin = frame["securityOrigin"].as_str().unwrap_or_default().to_owned();
            }
            "Page.frameDetached" => {
                if params["reason"] == "swap" {
                    return; // it moved to another process, it did not go away
                }
                let id = params["frameId"].as_str().unwrap_or_default().to_owned();
                self.remove_with_descendants(&id);
            }
            _ => {}
        }
    }

    /// A cross-origin iframe's target attached on `session`.
    pub fn oopif_attached(&mut self, frame_id: &str, parent: Option<&str>, url: &str, session: &str) {
        let record = self.entry(frame_id);
        record.is_oopif = true;
        record.session = Some(session.to_owned());
        if let Some(parent) = parent {
            record.parent = Some(parent.to_owned());
        }
        if record.url.is_empty() {
            record.url = url.to_owned();
        }
    }

    /// An OOPIF's target detached: keep the frame, forget its session.
    pub fn oopif_detached(&mut self, session: &str) {
        for record in &mut self.frames {
            if record.session.as_deref() == Some(session) {
                record.session = None;
            }
        }
    }

    /// The connection was replaced: OOPIF records stay, their sessions go.
    pub fn forget_sessions(&mut self) {
        for record in &mut self.frames {
            record.session = None;
        }
    }

    fn remove_with_descendants(&mut self, id: &str) {
        let mut doomed = vec![id.to_owned()];
        let mut i = 0;
        while i < doomed.len() {
            let parent = doomed[i].clone();
            doomed.extend(
                self.frames
                    .iter()
                    .filter(|f| f.parent.as_deref() == Some(&parent))
                    .map(|f| f.frame_id.clone()),
            );
            i += 1;
        }
        self.frames.retain(|f| !doomed.contains(&f.frame_id));
    }

    /// The flattened session of a cross-origin frame's own target, while
    /// attached (`None` for frames living in their parent's process).
    pub fn session_of(&self, frame_id: &str) -> Option<&str> {
        self.get(frame_id).and_then(|f| f.session.as_deref())
    }

    pub fn get(&self, frame_id: &str) -> Option<&FrameRecord> {
        self.frames.iter().find(|f| f.frame_id == frame_id)
    }

    /// How many OOPIF boundaries lie between `frame_id` and the top.
    fn oopif_depth(&self, frame_id: &str) -> usize {
        let mut depth = 0;
        let mut current = self.get(frame_id);
        let mut guard = 0;
        while let Some(f) = current {
            if f.is_oopif {
                depth += 1;
            }
            current = f.parent.as_deref().and_then(|p| self.get(p));
            guard += 1;
            if guard > 64 {
                break;
            }
        }
        depth
    }

    /// `{top, children, truncated}` as the contract shows it.
    pub fn view(&self) -> Value {
        let Some(top) = self.frames.iter().find(|f| f.parent.is_none()) else {
            return json!({ "top": null, "children": [], "truncated": false });
        };
        let mut children = Vec::new();
        let mut truncated = false;
        for f in self.frames.iter().filter(|f| f.frame_id != top.frame_id) {
            if children.len() + 1 >= MAX_FRAMES || self.oopif_depth(&f.frame_id) > MAX_OOPIF_DEPTH {
                truncated = true;
                continue;
            }
            children.push(json!(f));
        }
        json!({
            "top": { "frame_id": top.frame_id, "url": top.url, "origin": top.origin },
            "children": children,
            "truncated": truncated,
        })
    }

    pub fn child_count(&self) -> usize {
        self.frames.len().saturating_sub(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn navigated(id: &str, parent: Option<&str>, url: &str) -> Value {
        json!({"frame": {"id": id, "parentId": parent, "url": url, "securityOrigin": url.trim_end_matches("/x")}})
    }

    #[test]
    fn frames_oopifs_swaps_and_detaches() {
        let mut t = FrameTree::default();
        t.apply("Page.frameNavigated", &navigated("M", None, "http://a/x"));
        t.apply(
            "Page.frameAttached",
            &json!({"frameId": "S", "parentFrameId": "M"}),
        );
        t.apply("Page.frameNavigated", &navigated("S", Some("M"), "http://a/x"));
        t.apply(
            "Page.frameAttached",
            &json!({"frameId": "O", "parentFrameId": "M"}),
        );
        t.oopif_attached("O", Some("M"), "http://b/x", "SESSION");
        t.apply("Page.frameDetached", &json!({"frameId": "O", "reason": "swap"}));
        let view = t.view();
        assert_eq!(view["top"]["frame_id"], "M");
        assert_eq!(view["children"].as_array().unwrap().len(), 2);
        assert_eq!(view["children"][1]["is_oopif"], true);
        assert_eq!(view["children"][1]["session"], "SESSION");
        t.oopif_detached("SESSION");
        assert_eq!(
            t.get("O").unwrap().session,
            None,
            "the record stays, the session goes"
        );
        t.apply("Page.frameDetached", &json!({"frameId": "S", "reason": "remove"}));
        assert!(t.get("S").is_none());
        t.apply("Page.frameNavigated", &navigated("M", None, "http://a/next"));
        assert_eq!(t.child_count(), 0, "a new main document drops the old frames");
    }

    #[test]
    fn capped_at_thirty_frames_and_oopif_depth_two() {
        let mut t = FrameTree::default();
        t.apply("Page.frameNavigated", &navigated("M", None, "http://a/x"));
        for i in 0..40 {
            t.apply(
                "Page.frameAttached",
                &json!({"frameId": format!("F{i}"), "parentFrameId": "M"}),
            );
        }
        let view = t.view();
        assert_eq!(view["truncated"], true);
        assert_eq!(view["children"].as_array().unwrap().len(), MAX_FRAMES - 1);

        let mut deep = FrameTree::default();
        deep.apply("Page.frameNavigated", &navigated("M", None, "http://a/x"));
        deep.oopif_attached("O1", Some("M"), "http://b/", "S1");
        deep.oopif_attached("O2", Some("O1"), "http://c/", "S2");
        deep.oopif_attached("O3", Some("O2"), "http://d/", "S3");
        let view = deep.view();
        assert_eq!(view["children"].as_array().unwrap().len(), 2);
        assert_eq!(view["truncated"], true);
    }
}
