//! The obstacle probe: gathers the signals of the tab's current page (one
//! evaluate in cdpilot's world) and hands them to the pure detection in
//! `crate::obstacle`.

use super::Tab;
use crate::obstacle::{detect, Obstacle, Signals, SIGNALS};
use crate::{ActionError, Budget};

impl Tab {
    /// The obstacle the tab's current page shows, if any; `status` is the
    /// HTTP status of its document, when known.
    pub async fn obstacle(
        &self,
        budget: &Budget,
        status: Option<u16>,
    ) -> Result<Option<Obstacle>, ActionError> {
        let value = self
            .evaluate_in_world(budget, "checking for obstacles", SIGNALS, true)
            .await?
            .value
            .unwrap_or_default();
        let mut signals: Signals = serde_json::from_value(value).unwrap_or_default();
        signals.status = status;
        Ok(detect(&signals))
    }
}
