//! The browser's tabs: short ids (`t1`, `t2`, …) for page targets, which
//! one is active, and keeping the set in step with the browser: tabs the
//! page opened (`target=_blank`, `window.open`) are attached when first
//! seen, closed ones dropped.
//!
//! Owns only the bookkeeping; CDP work is done by `Browser`, outside the
//! lock (held for microseconds).

use std::sync::Arc;

use crate::tab::Tab;

#[derive(Default)]
pub struct TabSet {
    /// In the order they were first seen.
    entries: Vec<Entry>,
    /// Short id of the active tab.
    active: String,
    /// Tabs ever seen; ids are `t{N}`.
    seen: u32,
    /// Targets we closed: Chrome may still list them for a moment, and
    /// they must not come back as "new" tabs.
    closed: Vec<String>,
}

struct Entry {
    id: String,
    tab: Arc<Tab>,
}

impl TabSet {
    /// Adds an attached tab; returns its short id. The first tab becomes
    /// active.
    pub fn add(&mut self, tab: Arc<Tab>) -> String {
        if let Some(existing) = self.entries.iter().find(|e| e.tab.target_id == tab.target_id) {
            return existing.id.clone();
        }
        self.seen += 1;
        let id = format!("t{}", self.seen);
        self.entries.push(Entry { id: id.clone(), tab });
        if self.active.is_empty() {
            self.active = id.clone();
        }
        id
    }

    pub fn get(&self, id: &str) -> Option<Arc<Tab>> {
        self.entries.iter().find(|e| e.id == id).map(|e| e.tab.clone())
    }

    pub fn active(&self) -> Option<Arc<Tab>> {
        self.get(&self.active)
    }

    pub fn active_id(&self) -> &str {
        &self.active
    }

    pub fn select(&mut self, id: &str) -> bool {
        let known = self.entries.iter().any(|e| e.id == id);
        if known {
            self.active = id.to_owned();
        }
        known
    }

    /// Whether `target_id` is a tab we know, or one we closed.
    pub fn has_target(&self, target_id: &str) -> bool {
        self.entries.iter().any(|e| e.tab.target_id == target_id)
            || self.closed.iter().any(|c| c == target_id)
    }

    /// Forgets tab `id` because we closed it.
    pub fn remove(&mut self, id: &str) {
        if let Some(i) = self.entries.iter().position(|e| e.id == id) {
            let entry = self.entries.remove(i);
            self.closed.push(entry.tab.target_id.clone());
            if self.closed.len() > 64 {
                self.closed.remove(0);
            }
        }
        if self.active == id {
            self.active = self.entries.last().map(|e| e.id.clone()).unwrap_or_default();
        }
    }

    /// Drops tabs whose targets are gone; if the active one went, the most
    /// recently seen remaining tab becomes active.
    pub fn retain_targets(&mut self, alive: &[String]) {
        self.entries.retain(|e| alive.contains(&e.tab.target_id));
        if !self.entries.iter().any(|e| e.id == self.active) {
            self.active = self.entries.last().map(|e| e.id.clone()).unwrap_or_default();
        }
    }

    /// The same tabs under the same ids, each replaced by its re-attached
    /// self (tabs that could not be re-attached are dropped).
    pub fn rebuilt(&self, replacements: Vec<(String, Arc<Tab>)>) -> TabSet {
        let entries: Vec<Entry> = replacements
            .into_iter()
            .map(|(id, tab)| Entry { id, tab })
            .collect();
        let active = if entries.iter().any(|e| e.id == self.active) {
            self.active.clone()
        } else {
            entries.last().map(|e| e.id.clone()).unwrap_or_default()
        };
        TabSet {
            entries,
            active,
            seen: self.seen,
            closed: self.closed.clone(),
        }
    }

    /// `(id, tab)` in order.
    pub fn list(&self) -> Vec<(String, Arc<Tab>)> {
        self.entries
            .iter()
            .map(|e| (e.id.clone(), e.tab.clone()))
            .collect()
    }
}
