//! The frames of a tab's current main document that snapshots have shown:
//! their short numbers (`f2` in ref `f2e7`), CDP frame ids, the session
//! that owns each (the tab's, or a cross-origin iframe's own), where each
//! frame's element sits in its parent, cdpilot's isolated world in each,
//! and how far each frame's ref counter has gone.
//!
//! Numbers are stable for the main document's lifetime; a main-frame
//! navigation starts over. Pure bookkeeping under the tab's state lock.

use std::collections::HashMap;

#[derive(Debug, Clone)]
pub struct FrameInfo {
    pub number: u32,
    pub frame_id: String,
    /// Session that owns the frame's document.
    pub session_id: String,
    /// Session of the parent frame's document (where the owner element is).
    pub parent_session_id: String,
    /// The `<iframe>` element in the parent document.
    pub owner_backend_node: i64,
}

#[derive(Debug, Default)]
pub struct FrameRegistry {
    by_number: HashMap<u32, FrameInfo>,
    numbers: HashMap<String, u32>,
    /// cdpilot's isolated world per frame id (child frames only).
    worlds: HashMap<String, (String, i64)>,
    /// Next ref number per frame number (0 is the main frame), so a frame's
    /// new document never reissues a ref its old document used.
    next_ref: HashMap<u32, u64>,
    last: u32,
}

impl FrameRegistry {
    /// The frame's number, assigning the next one on first sight.
    pub fn register(&mut self, frame_id: &str, session_id: &str, parent_session_id: &str, owner: i64) -> u32 {
        let number = match self.numbers.get(frame_id) {
            Some(n) => *n,
            None => {
                self.last += 1;
                self.numbers.insert(frame_id.to_owned(), self.last);
                self.last
            }
        };
        self.by_number.insert(
            number,
            FrameInfo {
                number,
                frame_id: frame_id.to_owned(),
                session_id: session_id.to_owned(),
                parent_session_id: parent_session_id.to_owned(),
                owner_backend_node: owner,
            },
        );
        number
    }

    pub fn get(&self, number: u32) -> Option<&FrameInfo> {
        self.by_number.get(&number)
    }

    pub fn by_frame_id(&self, frame_id: &str) -> Option<&FrameInfo> {
        self.numbers.get(frame_id).and_then(|n| self.by_number.get(n))
    }

    /// The frame whose document is the root of `session_id` (an OOPIF's).
    pub fn rooted_in(&self, session_id: &str) -> Option<&FrameInfo> {
        self.by_number
            .values()
            .find(|f| f.session_id == session_id && f.parent_session_id != session_id)
    }

    pub fn world(&self, frame_id: &str) -> Option<i64> {
        self.worlds.get(frame_id).map(|(_, id)| *id)
    }

    pub fn set_world(&mut self, frame_id: &str, session_id: &str, context: i64) {
        self.worlds
            .insert(frame_id.to_owned(), (session_id.to_owned(), context));
    }

    /// A world was destroyed (its frame navigated or went away).
    pub fn forget_world(&mut self, session_id: &str, context: i64) {
        self.worlds
            .retain(|_, (s, c)| !(s == session_id && *c == context));
    }

    /// All worlds of a session are gone (`Runtime.executionContextsCleared`).
    pub fn forget_session_worlds(&mut self, session_id: &str) {
        self.worlds.retain(|_, (s, _)| s != session_id);
    }

    pub fn next_ref(&self, number: u32) -> u64 {
        self.next_ref.get(&number).copied().unwrap_or(1)
    }

    pub fn set_next_ref(&mut self, number: u32, next: u64) {
        let entry = self.next_ref.entry(number).or_insert(1);
        *entry = (*entry).max(next);
    }

    pub fn count(&self) -> usize {
        self.by_number.len()
    }

    /// The main document changed: every number and world starts over.
    pub fn reset(&mut self) {
        *self = FrameRegistry::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_stable_and_reset_with_the_document() {
        let mut r = FrameRegistry::default();
        assert_eq!(r.register("A", "S", "S", 10), 1);
        assert_eq!(r.register("B", "CHILD", "S", 11), 2);
        assert_eq!(r.register("A", "S", "S", 10), 1);
        assert_eq!(r.get(2).unwrap().frame_id, "B");
        assert_eq!(r.rooted_in("CHILD").unwrap().number, 2);
        r.set_world("B", "CHILD", 7);
        r.forget_session_worlds("CHILD");
        assert_eq!(r.world("B"), None);
        r.set_next_ref(2, 9);
        r.set_next_ref(2, 4);
        assert_eq!(r.next_ref(2), 9);
        r.reset();
        assert_eq!(r.count(), 0);
        assert_eq!(r.register("C", "S", "S", 12), 1);
    }
}
