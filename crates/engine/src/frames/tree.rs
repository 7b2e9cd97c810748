//! [`FrameTree`]: the one owner of a tab's frame records. Applies what the
//! event reader saw (frames attached, navigated, detached; cross-origin
//! frames' targets attached and detached; script contexts created and
//! destroyed) and answers snapshots and ref resolution: which session owns a
//! frame now, its worlds, its number, its ref counter.
//!
//! Numbers (`f1`, `f2`, …) are given in the order snapshots first meet
//! frames and last as long as the main document: a new main document drops
//! every subframe record and starts numbering over. A frame detached
//! because it moved to another process (reason `swap`) keeps its record.

use super::record::{Context, Frame};

/// Who answers for a frame's document now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Owner {
    /// The tab's own session (the main frame and frames in its process).
    Tab,
    /// A cross-origin frame's target session: the frame's own, or that of
    /// the nearest ancestor with a process of its own.
    Target(String),
    /// The frame (or the ancestor whose process it lives in) is a
    /// cross-origin frame whose target is not attached right now.
    Detached,
}

/// Frames deeper than this are not followed (a guard against a parent
/// chain that loops, which Chrome never reports but a bug could build).
const MAX_CHAIN: usize = 64;

#[derive(Debug, Default)]
pub struct FrameTree {
    /// In order of first sight; the main frame first once it is known.
    frames: Vec<Frame>,
    /// The main frame's id (empty until the first main-frame event).
    main: String,
    /// The last number given to a frame in the current main document.
    last_number: u32,
}

impl FrameTree {
    fn find(&self, id: &str) -> Option<usize> {
        self.frames.iter().position(|f| f.id == id)
    }

    fn entry(&mut self, id: &str) -> &mut Frame {
        let i = match self.find(id) {
            Some(i) => i,
            None => {
                self.frames.push(Frame::new(id));
                self.frames.len() - 1
            }
        };
        &mut self.frames[i]
    }

    pub fn get(&self, id: &str) -> Option<&Frame> {
        self.find(id).map(|i| &self.frames[i])
    }

    /// The record of the main frame, once known.
    pub fn main(&self) -> Option<&Frame> {
        self.get(&self.main)
    }

    /// Subframes, in order of first sight.
    pub fn children(&self) -> impl Iterator<Item = &Frame> {
        let main = self.main.clone();
        self.frames.iter().filter(move |f| f.id != main)
    }

    pub fn child_count(&self) -> usize {
        self.children().count()
    }

    // ---- what the event reader saw ----

    /// The main frame committed a new document (`url`, `origin`): the old
    /// document's frames, numbers, worlds and refs are gone.
    pub fn main_navigated(&mut self, id: &str, url: &str, origin: &str) {
        let mut main = self
            .find(id)
            .map(|i| self.frames.remove(i))
            .unwrap_or_else(|| Frame::new(id));
        main.parent = None;
        main.url = url.to_owned();
        main.origin = origin.to_owned();
        main.forget_contexts();
        main.next_ref = 1;
        self.frames = vec![main];
        self.main = id.to_owned();
        self.last_number = 0;
    }

    /// A subframe appeared under `parent`.
    pub fn frame_attached(&mut self, id: &str, parent: &str) {
        self.entry(id).parent = Some(parent.to_owned());
    }

    /// A subframe committed a new document. Its number and ref counter
    /// carry on; its contexts are reported anew by the session hosting it.
    pub fn frame_navigated(&mut self, id: &str, parent: Option<&str>, url: &str, origin: &str) {
        if id == self.main {
            // Reported by a session other than the tab's; the tab's own
            // event (main_navigated) is the one that resets the document.
            let main = self.entry(id);
            main.url = url.to_owned();
            main.origin = origin.to_owned();
            return;
        }
        let frame = self.entry(id);
        if let Some(parent) = parent {
            frame.parent = Some(parent.to_owned());
        }
        frame.url = url.to_owned();
        frame.origin = origin.to_owned();
    }

    /// A frame's document changed its URL without being replaced (history
    /// API, a fragment): its record follows, so what is judged by the
    /// frame's URL (its page tools) sees where it is now.
    pub fn moved_within(&mut self, id: &str, url: &str) {
        if let Some(i) = self.find(id) {
            self.frames[i].url = url.to_owned();
        }
    }

    /// A frame went away (`swapped`: it only moved to another process, and
    /// its record stays).
    pub fn frame_detached(&mut self, id: &str, swapped: bool) {
        if swapped || id == self.main {
            return;
        }
        let mut doomed = vec![id.to_owned()];
        let mut i = 0;
        while i < doomed.len() {
            let parent = doomed[i].clone();
            doomed.extend(
                self.frames
                    .iter()
                    .filter(|f| f.parent.as_deref() == Some(&parent))
                    .map(|f| f.id.clone()),
            );
            i += 1;
        }
        self.frames.retain(|f| !doomed.contains(&f.id));
    }

    /// A cross-origin frame's target attached on `session`: from now on its
    /// document (and its same-process descendants) are answered there.
    pub fn oopif_attached(&mut self, id: &str, parent: Option<&str>, url: &str, session: &str) {
        let frame = self.entry(id);
        frame.oopif = true;
        frame.session = Some(session.to_owned());
        // A new process: whatever contexts we knew belong to the old one.
        frame.forget_contexts();
        if let Some(parent) = parent {
            frame.parent = Some(parent.to_owned());
        }
        if frame.url.is_empty() {
            frame.url = url.to_owned();
        }
    }

    /// A cross-origin frame's target detached. If the frame is still there
    /// (it came back into its parent's process), its record stays and it
    /// is answered by its parent's session again; contexts of the session
    /// that went away are forgotten everywhere.
    pub fn oopif_detached(&mut self, session: &str) {
        for frame in &mut self.frames {
            if frame.session.as_deref() == Some(session) {
                frame.session = None;
                frame.oopif = false;
                frame.forget_contexts();
            }
            frame.forget_contexts_of(Some(session), None);
        }
    }

    /// `session` (None: the tab's) reported a script context in `frame`:
    /// cdpilot's isolated world (`world`), or the page's own (`default`).
    pub fn context_created(
        &mut self,
        session: Option<&str>,
        frame: &str,
        id: i64,
        world: bool,
        default: bool,
    ) {
        let Some(i) = self.find(frame) else { return };
        let context = Some(Context {
            session: session.map(str::to_owned),
            id,
        });
        if world {
            self.frames[i].world = context;
        } else if default {
            self.frames[i].page_context = context;
        }
    }

    /// A context of `session` was destroyed (its document went away).
    pub fn context_destroyed(&mut self, session: Option<&str>, id: i64) {
        for frame in &mut self.frames {
            frame.forget_contexts_of(session, Some(id));
        }
    }

    /// Every context of `session` is gone (`Runtime.executionContextsCleared`).
    pub fn contexts_cleared(&mut self, session: Option<&str>) {
        for frame in &mut self.frames {
            frame.forget_contexts_of(session, None);
        }
    }

    /// The connection was replaced: records, numbers and ref counters stay
    /// (cross-origin frames are attached again under new sessions), every
    /// session and context of the old connection goes.
    pub fn forget_sessions(&mut self) {
        for frame in &mut self.frames {
            frame.session = None;
            frame.forget_contexts();
        }
    }

    // ---- what snapshots and refs ask ----

    /// Who answers for `id`'s document now: its own target's session, else
    /// its parent's owner. `None` when there is no such frame.
    pub fn owner(&self, id: &str) -> Option<Owner> {
        let mut frame = self.get(id)?;
        for _ in 0..MAX_CHAIN {
            if let Some(session) = &frame.session {
                return Some(Owner::Target(session.clone()));
            }
            if frame.oopif {
                return Some(Owner::Detached);
            }
            match frame.parent.as_deref().and_then(|p| self.get(p)) {
                Some(parent) => frame = parent,
                None => return Some(Owner::Tab),
            }
        }
        Some(Owner::Tab)
    }

    /// The sessions of the cross-origin frames attached now.
    pub fn oopif_sessions(&self) -> Vec<String> {
        self.frames.iter().filter_map(|f| f.session.clone()).collect()
    }

    /// The frame whose own target is `session` (a cross-origin frame).
    pub fn rooted_in(&self, session: &str) -> Option<&Frame> {
        self.frames.iter().find(|f| f.session.as_deref() == Some(session))
    }

    /// The frame a snapshot met inside `parent`'s `<iframe>` element
    /// `owner_node`: its number, given now if it has none.
    pub fn met(&mut self, id: &str, parent: &str, owner_node: i64) -> u32 {
        let mut last = self.last_number;
        let frame = self.entry(id);
        frame.parent.get_or_insert_with(|| parent.to_owned());
        frame.owner_node = Some(owner_node);
        let number = *frame.number.get_or_insert_with(|| {
            last += 1;
            last
        });
        self.last_number = last;
        number
    }

    /// The number of a known subframe, given now if it has none (a frame
    /// whose page tools are listed before any snapshot met it). `None`
    /// for the main frame and a frame not known.
    pub fn number_now(&mut self, id: &str) -> Option<u32> {
        let i = self.find(id)?;
        self.frames[i].parent.as_ref()?;
        let mut last = self.last_number;
        let number = *self.frames[i].number.get_or_insert_with(|| {
            last += 1;
            last
        });
        self.last_number = last;
        Some(number)
    }

    /// The frame numbered `n` in the current main document.
    pub fn by_number(&self, n: u32) -> Option<&Frame> {
        self.frames.iter().find(|f| f.number == Some(n))
    }

    /// `f{n}` was given out in this main document (the frame may be gone).
    pub fn was_numbered(&self, n: u32) -> bool {
        n >= 1 && n <= self.last_number
    }

    /// cdpilot's isolated world in `id`'s current document, if it is known
    /// on `session` (None: the tab's). Callers pass the session they are
    /// about to use, which is the frame's owner when they resolved it.
    pub fn world(&self, id: &str, session: Option<&str>) -> Option<i64> {
        let world = self.get(id)?.world.as_ref()?;
        (world.session.as_deref() == session).then_some(world.id)
    }

    /// cdpilot made its world in `id` on `session` (None: the tab's).
    pub fn set_world(&mut self, id: &str, session: Option<&str>, context: i64) {
        self.context_created(session, id, context, true, false);
    }

    /// The page's own script context in `id`'s current document, if known
    /// on `session` (None: the tab's).
    pub fn page_context(&self, id: &str, session: Option<&str>) -> Option<i64> {
        let context = self.get(id)?.page_context.as_ref()?;
        (context.session.as_deref() == session).then_some(context.id)
    }

    /// The serializer's next ref number in `id`.
    pub fn next_ref(&self, id: &str) -> u64 {
        self.get(id).map_or(1, |f| f.next_ref)
    }

    /// A snapshot of `id` issued refs up to `next` (never goes back).
    pub fn refs_issued(&mut self, id: &str, next: u64) {
        if let Some(i) = self.find(id) {
            let frame = &mut self.frames[i];
            frame.next_ref = frame.next_ref.max(next);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A main document with a same-origin frame S and a cross-origin frame
    /// O (on session OS) inside it, and N nested in O.
    fn page() -> FrameTree {
        let mut t = FrameTree::default();
        t.main_navigated("M", "http://a/", "http://a");
        t.frame_attached("S", "M");
        t.frame_navigated("S", Some("M"), "http://a/s", "http://a");
        t.frame_attached("O", "M");
        t.oopif_attached("O", Some("M"), "http://b/", "OS");
        t.frame_navigated("O", Some("M"), "http://b/", "http://b");
        t.frame_attached("N", "O");
        t
    }

    #[test]
    fn owners_follow_the_targets_at_use_time() {
        let mut t = page();
        assert_eq!(t.owner("M"), Some(Owner::Tab));
        assert_eq!(t.owner("S"), Some(Owner::Tab));
        assert_eq!(t.owner("O"), Some(Owner::Target("OS".into())));
        assert_eq!(
            t.owner("N"),
            Some(Owner::Target("OS".into())),
            "nested frames live in O's process"
        );
        assert_eq!(t.owner("X"), None);
        assert_eq!(t.rooted_in("OS").map(Frame::id), Some("O"));

        // O moves back into the page's process: its old target goes.
        t.frame_detached("O", true);
        t.oopif_detached("OS");
        assert_eq!(t.owner("O"), Some(Owner::Tab));
        assert!(!t.get("O").unwrap().is_oopif());
        // …and out again, on a new target: asked afresh, never copied.
        t.oopif_attached("O", Some("M"), "http://b/again", "OS2");
        assert_eq!(t.owner("N"), Some(Owner::Target("OS2".into())));
        // A new target attached before the old one's detach arrived: the
        // late detach of the old session changes nothing.
        t.oopif_detached("OS");
        assert_eq!(t.owner("O"), Some(Owner::Target("OS2".into())));

        // After a reconnect the frame is known but not reachable until its
        // target is attached again.
        t.forget_sessions();
        assert_eq!(t.owner("O"), Some(Owner::Detached));
        assert_eq!(t.owner("N"), Some(Owner::Detached));
        t.oopif_attached("O", Some("M"), "", "OS3");
        assert_eq!(t.owner("O"), Some(Owner::Target("OS3".into())));
    }

    #[test]
    fn numbers_last_as_long_as_the_main_document() {
        let mut t = page();
        assert_eq!(t.met("O", "M", 10), 1);
        assert_eq!(t.met("S", "M", 11), 2);
        assert_eq!(t.met("O", "M", 10), 1, "the same frame keeps its number");
        assert_eq!(t.by_number(2).map(Frame::id), Some("S"));
        assert_eq!(t.get("O").unwrap().owner_node(), Some(10));

        // A frame's navigation keeps its number and its counter.
        t.refs_issued("O", 9);
        t.refs_issued("O", 4);
        t.frame_navigated("O", Some("M"), "http://b/next", "http://b");
        assert_eq!((t.by_number(1).map(Frame::id), t.next_ref("O")), (Some("O"), 9));

        // A removed frame takes its descendants and its number with it; the
        // number is remembered as given out.
        t.frame_detached("O", false);
        assert!(t.get("N").is_none() && t.by_number(1).is_none());
        assert!(t.was_numbered(1) && !t.was_numbered(3));

        // A new main document starts over.
        t.refs_issued("M", 7);
        t.main_navigated("M", "http://a/next", "http://a");
        assert_eq!(
            (t.child_count(), t.next_ref("M"), t.was_numbered(1)),
            (0, 1, false)
        );
        t.frame_attached("S2", "M");
        assert_eq!(t.met("S2", "M", 3), 1);
    }

    #[test]
    fn worlds_belong_to_the_session_that_made_them() {
        let mut t = page();
        t.set_world("O", Some("OS"), 5);
        t.context_created(Some("OS"), "O", 6, false, true);
        t.set_world("S", None, 5);
        t.context_created(None, "S", 3, false, true);
        let os = Some("OS");
        assert_eq!((t.world("O", os), t.page_context("O", os)), (Some(5), Some(6)));
        assert_eq!(
            (t.world("S", None), t.page_context("S", None)),
            (Some(5), Some(3))
        );
        assert_eq!(t.world("O", None), None, "O's world is not on the tab's session");

        // Context ids are per session: destroying the tab's 5 leaves O's 5.
        t.context_destroyed(None, 5);
        assert_eq!((t.world("O", os), t.world("S", None)), (Some(5), None));

        // O's target goes (it came back into the page's process): its old
        // contexts are gone, whichever session asks.
        t.oopif_detached("OS");
        assert_eq!((t.world("O", os), t.page_context("O", os)), (None, None));
        t.context_created(None, "O", 8, false, true);
        assert_eq!(t.page_context("O", None), Some(8));
        // …and out again: contexts of the tab's session are not O's any more.
        t.oopif_attached("O", Some("M"), "", "OS2");
        assert_eq!(t.page_context("O", None), None);

        t.set_world("O", Some("OS2"), 2);
        t.contexts_cleared(Some("OS2"));
        assert_eq!(t.world("O", Some("OS2")), None);
        t.set_world("M", None, 4);
        assert_eq!(t.world("M", None), Some(4));
        t.forget_sessions();
        assert_eq!(t.world("M", None), None);
    }
}
