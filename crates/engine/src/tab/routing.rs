//! The tab's side of the session's routes and of its network conditions:
//! arming the one `Fetch.enable` of each of its sessions (the tab's and its
//! cross-origin frames') for what the routes need, and setting the
//! conditions there. The routes themselves are the session's
//! (`crate::policy::routes`), judged by the tab's gate.

use cdp::protocol::{fetch, network};

use super::Tab;
use crate::{ActionError, Budget};

impl Tab {
    /// Arms the tab's request stage for its session's routes as they are
    /// now, when it was armed for an older set: every request pauses while
    /// a route is set, only documents (or nothing) once none is. Its
    /// dedicated workers' requests pause in their frame's session.
    pub async fn arm_routes(&self, budget: &Budget) -> Result<(), ActionError> {
        let Some(generation) = self.gate.unarmed() else {
            return Ok(());
        };
        let patterns = self.setup.fetch_patterns(self.gate.routed());
        for session in self.sessions() {
            let step = "arming the request stage for the routes";
            let armed = if patterns.is_empty() {
                budget.cdp(step, &session, fetch::Disable {}).await
            } else {
                let enable = fetch::Enable {
                    patterns: patterns.clone(),
                };
                budget.cdp(step, &session, enable).await
            };
            match armed {
                Ok(_) => {}
                // A frame that went away meanwhile has nothing to arm.
                Err(e) if session.id() != self.session.id() && !e.failure.ends_the_call() => {}
                Err(e) => return Err(e),
            }
        }
        self.gate.armed_for(generation);
        Ok(())
    }

    /// Sets the tab's network conditions (offline, throttled; `None` the
    /// browser's own) in its session and its cross-origin frames', and
    /// keeps them for frames that attach later and for whoever reports them.
    pub async fn set_network(
        &self,
        conditions: Option<network::EmulateNetworkConditions>,
        budget: &Budget,
    ) -> Result<(), ActionError> {
        let sent = conditions.unwrap_or(network::EmulateNetworkConditions {
            offline: false,
            latency: 0.0,
            download_throughput: -1.0,
            upload_throughput: -1.0,
        });
        for session in self.sessions() {
            match budget.cdp("setting the network conditions", &session, sent).await {
                Ok(_) => {}
                Err(e) if session.id() != self.session.id() && !e.failure.ends_the_call() => {}
                Err(e) => return Err(e),
            }
        }
        self.state(|s| s.emulated_network(conditions));
        Ok(())
    }

    /// The tab's session and its cross-origin frames' sessions now.
    fn sessions(&self) -> Vec<cdp::Session> {
        let children = self.state(|s| s.frames.oopif_sessions());
        let conn = self.session.connection();
        std::iter::once(self.session.clone())
            .chain(children.into_iter().map(|id| conn.session(id)))
            .collect()
    }
}
