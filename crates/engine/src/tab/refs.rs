//! A tab's refs, one record: the document generation the current refs
//! were issued for, and the latest snapshot tree (the base of the next
//! `diff`, the refs `browser_screenshot annotate` draws). Kept in the tab's
//! state and written only through its methods (`TabState::refs_issued`,
//! `TabState::remember_snapshot`). Each frame's ref counter stays in the
//! frame's record (`crate::frames`), which ends with the frame. What each
//! ref was shown as (its role and name) is kept beside its element, in
//! cdpilot's world of the frame (`scripts/serializer.js`, `target`).

pub use crate::validate::split_tab;

/// A ref's frame number (`None`: the main frame's) and element number,
/// its tab part aside: `f2e7` → `(Some(2), 7)`, `t3e7` → `(None, 7)`.
pub fn parse(reference: &str) -> Option<(Option<u32>, u64)> {
    let (_, reference) = split_tab(reference);
    let (frame, element) = match reference.strip_prefix('f') {
        Some(rest) => {
            let at = rest.find('e')?;
            (Some(rest[..at].parse().ok()?), &rest[at..])
        }
        None => (None, reference),
    };
    Some((frame, element.strip_prefix('e')?.parse().ok()?))
}

/// The tab's latest snapshot tree and what it was a snapshot of.
#[derive(Debug, Clone)]
pub struct Previous {
    key: Key,
    tree: String,
}

/// What a snapshot showed: which document, which frame, which selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key {
    /// The document generation.
    pub document: u64,
    /// The frame the snapshot started at.
    pub frame: String,
    /// The selector it was scoped to, if any.
    pub selector: Option<String>,
}

impl Previous {
    /// A tree to remember.
    pub fn new(key: Key, tree: String) -> Previous {
        Previous { key, tree }
    }

    /// The tree, if it is a snapshot of `document` (any scope).
    pub fn of_document(&self, document: u64) -> Option<&str> {
        (self.key.document == document).then_some(self.tree.as_str())
    }

    /// The tree, if it is a snapshot of exactly `key`.
    pub fn of(&self, key: &Key) -> Option<&str> {
        (&self.key == key).then_some(self.tree.as_str())
    }
}

/// The refs' record: which document they belong to, the latest tree.
#[derive(Debug, Default)]
pub struct Refs {
    /// The document generation the current refs were issued for.
    document: Option<u64>,
    /// The tab's latest snapshot tree.
    last: Option<Previous>,
    /// The tab part of its refs (`t2`), `None` for the session's first tab.
    tab: Option<String>,
}

impl Refs {
    /// The document generation the current refs were issued for.
    pub fn document(&self) -> Option<u64> {
        self.document
    }

    /// The latest snapshot tree, if it is of `document`.
    pub fn tree_of(&self, document: u64) -> Option<&str> {
        self.last.as_ref()?.of_document(document)
    }

    /// The tab part of the tab's refs (`t2`), if they carry one.
    pub fn tab(&self) -> Option<&str> {
        self.tab.as_deref()
    }

    pub(super) fn name_tab(&mut self, id: &str) {
        self.tab = (id != "t1").then(|| id.to_owned());
    }

    pub(super) fn issued_for(&mut self, document: u64) {
        self.document = Some(document);
    }

    pub(super) fn forget_document(&mut self) {
        self.document = None;
    }

    /// Remembers `tree` as the latest; returns the one before it if it was
    /// of exactly the same `key`.
    pub(super) fn remember(&mut self, key: Key, tree: String) -> Option<String> {
        let previous = self.last.as_ref().and_then(|p| p.of(&key)).map(str::to_owned);
        self.last = Some(Previous::new(key, tree));
        previous
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn refs_parse_into_frame_and_number() {
        assert_eq!(super::parse("e7"), Some((None, 7)));
        assert_eq!(super::parse("f2e17"), Some((Some(2), 17)));
        assert_eq!(super::parse("f2"), None);
        assert_eq!(super::parse("x1"), None);
        assert_eq!(super::parse("t2f3e7"), Some((Some(3), 7)));
        assert_eq!(super::split_tab("t12e4"), (Some("t12"), "e4"));
        assert_eq!(super::split_tab("e4"), (None, "e4"));
        assert_eq!(super::split_tab("te4"), (None, "te4"));
    }
}
