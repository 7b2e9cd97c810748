//! One frame's record: what the supervisor knows about it, changed only by
//! [`super::FrameTree`] (fields are private to the `frames` module; readers
//! use the accessors).

/// A script context of a frame's current document. Context ids are only
/// meaningful on the session that reported them, so the session is kept
/// with the id (`None`: the tab's own session).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Context {
    pub session: Option<String>,
    pub id: i64,
}

/// One frame of the tab (the main frame or any iframe, at any depth).
#[derive(Debug, Clone)]
pub struct Frame {
    pub(super) id: String,
    /// `None` for the main frame (and for a frame whose parent is unknown).
    pub(super) parent: Option<String>,
    pub(super) url: String,
    pub(super) origin: String,
    /// The flattened session of the frame's own target while it is a
    /// cross-origin frame with a process of its own (an OOPIF). `None`: the
    /// frame lives in its parent's process, on its parent's session (or, for
    /// an OOPIF, between a reconnect and its re-attach).
    pub(super) session: Option<String>,
    /// The frame is an OOPIF: it has a target of its own (attached or not).
    pub(super) oopif: bool,
    /// cdpilot's isolated world in the current document, once known.
    pub(super) world: Option<Context>,
    /// The page's own (default) script context in the current document.
    pub(super) page_context: Option<Context>,
    /// `fN` in refs, given when a snapshot first meets the frame; `None` for
    /// the main frame and for frames no snapshot has shown.
    pub(super) number: Option<u32>,
    /// The serializer's next ref number in this frame. It carries on across
    /// the frame's documents, so a new document never reissues a ref.
    pub(super) next_ref: u64,
    /// The `<iframe>` element in the parent's document (its backend node
    /// id), learned by a snapshot: where the frame sits in its parent.
    pub(super) owner_node: Option<i64>,
}

impl Frame {
    pub(super) fn new(id: &str) -> Frame {
        Frame {
            id: id.to_owned(),
            parent: None,
            url: String::new(),
            origin: String::new(),
            session: None,
            oopif: false,
            world: None,
            page_context: None,
            number: None,
            next_ref: 1,
            owner_node: None,
        }
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn parent(&self) -> Option<&str> {
        self.parent.as_deref()
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn origin(&self) -> &str {
        &self.origin
    }

    pub fn number(&self) -> Option<u32> {
        self.number
    }

    pub fn is_oopif(&self) -> bool {
        self.oopif
    }

    /// The `<iframe>` element holding the frame, in its parent's document.
    pub fn owner_node(&self) -> Option<i64> {
        self.owner_node
    }

    /// The document changed (or its process did): its contexts are gone.
    pub(super) fn forget_contexts(&mut self) {
        self.world = None;
        self.page_context = None;
    }

    /// Forgets every context that `session` reported with id `context`
    /// (`None` id: all of that session's contexts).
    pub(super) fn forget_contexts_of(&mut self, session: Option<&str>, context: Option<i64>) {
        let dead = |c: &Option<Context>| {
            c.as_ref()
                .is_some_and(|c| c.session.as_deref() == session && context.is_none_or(|id| id == c.id))
        };
        if dead(&self.world) {
            self.world = None;
        }
        if dead(&self.page_context) {
            self.page_context = None;
        }
    }
}
