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
        Ok(self.probe(budget, status).await?.1)
    }

    /// The page's signals (its `location.href` and title among them) and
    /// the obstacle they show. A navigate reads the new document's address
    /// from them: one evaluate, which waits behind the renderer's first
    /// layout of a big page, instead of two.
    pub async fn probe(
        &self,
        budget: &Budget,
        status: Option<u16>,
    ) -> Result<(Signals, Option<Obstacle>), ActionError> {
        let value = self
            .evaluate_in_world(budget, "checking for obstacles", SIGNALS, true)
            .await?
            .value
            .unwrap_or_default();
        let mut signals: Signals = serde_json::from_value(value).unwrap_or_default();
        signals.status = status;
        let obstacle = detect(&signals);
        Ok((signals, obstacle))
    }
}
