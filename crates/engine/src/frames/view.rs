//! The `frame_tree` section of a snapshot: `{top, children, truncated}` as
//! the contract shows it, capped at 30 frames and OOPIF depth 2.

use serde_json::{json, Value};

use super::{Frame, FrameTree};

/// At most this many frames (the top one included) are listed.
pub const MAX_FRAMES: usize = 30;
/// Frames behind more cross-origin boundaries than this are not listed.
pub const MAX_OOPIF_DEPTH: usize = 2;

impl FrameTree {
    /// How many OOPIF boundaries lie between `frame` and the top.
    fn oopif_depth(&self, frame: &Frame) -> usize {
        let mut depth = 0;
        let mut current = Some(frame);
        // Bounded: a parent chain never loops, but a bug must not hang us.
        for _ in 0..64 {
            let Some(f) = current else { break };
            if f.is_oopif() {
                depth += 1;
            }
            current = f.parent().and_then(|p| self.get(p));
        }
        depth
    }

    /// `{top, children, truncated}`.
    pub fn view(&self) -> Value {
        let Some(top) = self.main() else {
            return json!({ "top": null, "children": [], "truncated": false });
        };
        let mut children = Vec::new();
        let mut truncated = false;
        for f in self.children() {
            if children.len() + 1 >= MAX_FRAMES || self.oopif_depth(f) > MAX_OOPIF_DEPTH {
                truncated = true;
                continue;
            }
            let mut child = json!({
                "frame_id": f.id(),
                "url": f.url(),
                "origin": f.origin(),
                "is_oopif": f.is_oopif(),
            });
            if let Some(parent) = f.parent() {
                child["parent"] = json!(parent);
            }
            if let Some(session) = &f.session {
                child["session"] = json!(session);
            }
            children.push(child);
        }
        json!({
            "top": { "frame_id": top.id(), "url": top.url(), "origin": top.origin() },
            "children": children,
            "truncated": truncated,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_oopifs_swaps_and_detaches() {
        let mut t = FrameTree::default();
        t.main_navigated("M", "http://a/x", "http://a");
        t.frame_attached("S", "M");
        t.frame_navigated("S", Some("M"), "http://a/x", "http://a");
        t.frame_attached("O", "M");
        t.oopif_attached("O", Some("M"), "http://b/x", "SESSION");
        t.frame_detached("O", true);
        let view = t.view();
        assert_eq!(view["top"]["frame_id"], "M");
        assert_eq!(view["children"].as_array().unwrap().len(), 2);
        assert_eq!(view["children"][1]["is_oopif"], true);
        assert_eq!(view["children"][1]["session"], "SESSION");
        t.oopif_detached("SESSION");
        assert!(t.get("O").is_some(), "the record stays");
        assert_eq!(t.view()["children"][1].get("session"), None, "the session goes");
        t.frame_detached("S", false);
        assert!(t.get("S").is_none());
        t.main_navigated("M", "http://a/next", "http://a");
        assert_eq!(t.child_count(), 0, "a new main document drops the old frames");
    }

    #[test]
    fn capped_at_thirty_frames_and_oopif_depth_two() {
        let mut t = FrameTree::default();
        t.main_navigated("M", "http://a/x", "http://a");
        for i in 0..40 {
            t.frame_attached(&format!("F{i}"), "M");
        }
        let view = t.view();
        assert_eq!(view["truncated"], true);
        assert_eq!(view["children"].as_array().unwrap().len(), MAX_FRAMES - 1);

        let mut deep = FrameTree::default();
        deep.main_navigated("M", "http://a/x", "http://a");
        deep.oopif_attached("O1", Some("M"), "http://b/", "S1");
        deep.oopif_attached("O2", Some("O1"), "http://c/", "S2");
        deep.oopif_attached("O3", Some("O2"), "http://d/", "S3");
        let view = deep.view();
        assert_eq!(view["children"].as_array().unwrap().len(), 2);
        assert_eq!(view["truncated"], true);
    }
}
