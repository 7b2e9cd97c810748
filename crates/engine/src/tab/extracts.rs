//! The Markdown of the documents `browser_extract` read in this tab, by the
//! reader's key (a random id per document world + its mutation count +
//! selector + links), so a later `start_char` page of an unchanged document
//! costs only the slice. Bounded ([`KEPT`] documents, [`BYTES_KEPT`]) and dropped with the
//! tab. Its own lock, held for microseconds; `tab_tools/extract.rs` fills it.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// How many documents' Markdown a tab keeps.
pub const KEPT: usize = 8;

/// How many bytes of Markdown a tab keeps at most: a document's Markdown
/// can be megabytes (from up to 2,000,000 chars of HTML), so 8 of them are
/// not pinned; older ones go first, the newest is always kept (issue 24).
pub const BYTES_KEPT: usize = 4 << 20;

/// One document's Markdown, as the cache holds it.
#[derive(Debug)]
pub struct Converted {
    /// The document's Markdown.
    pub markdown: String,
    /// The page's HTML was cut before it was converted.
    pub input_truncated: bool,
    /// The reader found no main content and took the whole body.
    pub fallback: bool,
}

/// The tab's extract cache.
#[derive(Default)]
pub struct Extracts {
    /// Oldest first; at most [`KEPT`].
    kept: Mutex<VecDeque<(String, Arc<Converted>)>>,
}

impl Extracts {
    /// The Markdown kept under `key`.
    pub fn get(&self, key: &str) -> Option<Arc<Converted>> {
        let kept = self.kept.lock().unwrap();
        kept.iter().find(|(k, _)| k == key).map(|(_, c)| c.clone())
    }

    /// The keys kept (the page answers `unchanged` for one of them).
    pub fn keys(&self) -> Vec<String> {
        self.kept.lock().unwrap().iter().map(|(k, _)| k.clone()).collect()
    }

    /// Keeps `converted` under `key`, dropping the oldest beyond [`KEPT`]
    /// documents or [`BYTES_KEPT`] bytes.
    pub fn keep(&self, key: String, converted: Arc<Converted>) {
        let mut kept = self.kept.lock().unwrap();
        kept.retain(|(k, _)| *k != key);
        kept.push_back((key, converted));
        let bytes = |kept: &VecDeque<(String, Arc<Converted>)>| -> usize {
            kept.iter().map(|(k, c)| k.len() + c.markdown.len()).sum()
        };
        while kept.len() > KEPT || (kept.len() > 1 && bytes(&kept) > BYTES_KEPT) {
            kept.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_is_bounded_and_a_key_kept_again_is_the_newest() {
        let extracts = Extracts::default();
        let converted = |text: &str| {
            Arc::new(Converted {
                markdown: text.into(),
                input_truncated: false,
                fallback: false,
            })
        };
        for i in 0..KEPT + 3 {
            extracts.keep(format!("k{i}"), converted(&format!("doc {i}")));
        }
        assert_eq!(extracts.keys().len(), KEPT);
        assert!(extracts.get("k0").is_none(), "the oldest went first");
        extracts.keep("k3".into(), converted("again"));
        assert_eq!(extracts.keys().last().map(String::as_str), Some("k3"));
        assert_eq!(extracts.get("k3").unwrap().markdown, "again");
    }

    /// Issue 24: documents of megabytes push older ones out: the cache
    /// stays under [`BYTES_KEPT`] and keeps the newest, even alone.
    #[test]
    fn large_documents_keep_the_cache_under_its_bytes() {
        let extracts = Extracts::default();
        let converted = |size: usize| {
            Arc::new(Converted {
                markdown: "m".repeat(size),
                input_truncated: false,
                fallback: false,
            })
        };
        for i in 0..KEPT {
            extracts.keep(format!("k{i}"), converted(1 << 20));
        }
        let keys = extracts.keys();
        assert_eq!(keys.len(), 3, "{keys:?}");
        assert_eq!(keys.last().map(String::as_str), Some("k7"));
        extracts.keep("huge".into(), converted(BYTES_KEPT + 1));
        assert_eq!(extracts.keys(), ["huge"]);
    }
}
