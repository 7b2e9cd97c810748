//! Offering a hand-off's link through MCP elicitation (`browser_handoff`):
//! URL mode when the client declared it (the client opens the link), else
//! form mode with the link in the message and nothing to fill in. Declining
//! ends the hand-off as `handoff_declined`; accepting or cancelling leaves
//! it waiting for the person. A client that declared no elicitation can
//! show no link to a person: [`ToCaller`] hands the link to the caller in
//! the call's result at once (the model then holds it and passes it on),
//! rather than the call waiting out its budget for a person nobody told.

use std::time::Duration;

use engine::handoff::{Offer, Offered, Pending};
use rmcp::model::{ElicitRequestParams, ElicitationAction};
use rmcp::service::{ElicitationMode, Peer};
use rmcp::RoleServer;

/// How long the offer itself may wait for the client (the hand-off's
/// budget ends the waiting call first).
const OFFER_TIMEOUT: Duration = Duration::from_secs(600);

/// The offer for one MCP client that can elicit.
pub struct ElicitedLink {
    peer: Peer<RoleServer>,
    url_mode: bool,
}

impl ElicitedLink {
    /// The offer for this client, if it declared elicitation.
    pub fn for_client(peer: &Peer<RoleServer>) -> Option<ElicitedLink> {
        let modes = peer.supported_elicitation_modes();
        let url_mode = modes.contains(&ElicitationMode::Url);
        (url_mode || modes.contains(&ElicitationMode::Form)).then(|| ElicitedLink {
            peer: peer.clone(),
            url_mode,
        })
    }
}

impl Offer for ElicitedLink {
    fn offer<'a>(&'a self, message: &'a str, url: &'a str, id: &'a str) -> Pending<'a, Offered> {
        Box::pin(async move {
            let params = if self.url_mode {
                ElicitRequestParams::UrlElicitationParams {
                    meta: None,
                    message: message.to_owned(),
                    url: url.to_owned(),
                    elicitation_id: id.to_owned(),
                }
            } else {
                let schema = serde_json::json!({"type": "object", "properties": {}});
                let Ok(requested_schema) = serde_json::from_value(schema) else {
                    return Offered::Shown;
                };
                ElicitRequestParams::FormElicitationParams {
                    meta: None,
                    message: format!("{message} {url}"),
                    requested_schema,
                }
            };
            match self
                .peer
                .create_elicitation_with_timeout(params, Some(OFFER_TIMEOUT))
                .await
            {
                Ok(result) if result.action == ElicitationAction::Decline => Offered::Declined,
                Ok(_) => Offered::Shown,
                Err(e) => {
                    tracing::debug!("offering the hand-off link: {e}");
                    Offered::Shown
                }
            }
        })
    }
}

/// The offer for an MCP client that cannot elicit: the link goes to the
/// caller in the result (`Offered::ToCaller`).
pub struct ToCaller;

impl Offer for ToCaller {
    fn offer<'a>(&'a self, _message: &'a str, _url: &'a str, _id: &'a str) -> Pending<'a, Offered> {
        Box::pin(async { Offered::ToCaller })
    }
}
