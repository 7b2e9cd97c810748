//! Which [`ProxyPort`] each browser context's connections go through, by
//! context id: the browser's own door for its default context, a door of
//! its own for each context a session created. Whatever is refused in a
//! context outside the gate (a worker's request its own request gate
//! failed, `browser/adopt.rs`) is recorded in that context's door, so the
//! session owning the context reports it with the gate's refusals.
//!
//! Owns the map only: the doors are their sessions' (held weakly here; a
//! door closes when its session's context drops).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use super::ProxyPort;

/// The doors of one browser's contexts (none by default: a browser
/// without them, in unit tests).
#[derive(Default)]
pub struct ContextPorts {
    /// The launched browser's door (its default context's connections);
    /// `None` for a browser cdpilot did not launch (attached, an endpoint,
    /// a Grid node's, the user's own), whose default context no door
    /// covers: no session runs there (`session::Context::open` gives the
    /// default session a context of its own instead).
    default: Option<Arc<ProxyPort>>,
    /// Contexts sessions created, with their doors. Locked for
    /// microseconds.
    created: Mutex<HashMap<String, Weak<ProxyPort>>>,
}

impl std::fmt::Debug for ContextPorts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContextPorts")
            .field("default", &self.default.is_some())
            .field("created", &self.count())
            .finish()
    }
}

impl ContextPorts {
    pub fn new(default: Option<Arc<ProxyPort>>) -> ContextPorts {
        ContextPorts {
            default,
            created: Mutex::default(),
        }
    }

    /// The default context's door.
    pub fn default_door(&self) -> Option<&Arc<ProxyPort>> {
        self.default.as_ref()
    }

    /// A context a session created, and its door.
    pub fn add(&self, context: String, door: &Arc<ProxyPort>) {
        self.created.lock().unwrap().insert(context, Arc::downgrade(door));
    }

    /// A context disposed of.
    pub fn remove(&self, context: &str) {
        self.created.lock().unwrap().remove(context);
    }

    /// Whether a session created `context` (and has not disposed of it).
    pub fn created(&self, context: &str) -> bool {
        self.created.lock().unwrap().contains_key(context)
    }

    /// How many contexts sessions created.
    pub fn count(&self) -> usize {
        self.created.lock().unwrap().len()
    }

    /// The door of the context a target is in (`None`: Chrome did not
    /// say, which is the default context): a created context's while its
    /// session holds it, else the default context's.
    pub fn of(&self, context: Option<&str>) -> Option<Arc<ProxyPort>> {
        if let Some(id) = context {
            if let Some(door) = self.created.lock().unwrap().get(id) {
                return door.upgrade();
            }
        }
        self.default.clone()
    }
}
