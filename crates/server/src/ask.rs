//! Asking the user through MCP elicitation: the [`Asker`] an MCP server
//! installs in its session when the client declared it can elicit (form
//! mode). The user picks "once" or "always" and accepts, or declines.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use engine::policy::{Answer, Asker, Verdict};
use rmcp::model::{ElicitRequestParams, ElicitationAction};
use rmcp::service::{ElicitationMode, Peer};
use rmcp::RoleServer;
use serde_json::json;

/// How long one question may wait for the user (the call's budget usually
/// ends it first).
const ASK_TIMEOUT: Duration = Duration::from_secs(300);

pub struct Elicitation {
    peer: Peer<RoleServer>,
}

impl Elicitation {
    /// The asker for this client, if it declared form elicitation.
    pub fn for_client(peer: &Peer<RoleServer>) -> Option<Elicitation> {
        peer.supported_elicitation_modes()
            .contains(&ElicitationMode::Form)
            .then(|| Elicitation { peer: peer.clone() })
    }
}

impl Asker for Elicitation {
    fn ask<'a>(&'a self, verdict: &'a Verdict) -> Pin<Box<dyn Future<Output = Answer> + Send + 'a>> {
        Box::pin(async move {
            let schema = json!({
                "type": "object",
                "properties": {
                    "allow": {
                        "type": "string",
                        "title": "Allow",
                        "description": "once: this time only; always: this origin for the rest of the session",
                        "enum": ["once", "always"],
                        "enumNames": ["Allow once", "Allow this origin for the session"]
                    }
                },
                "required": ["allow"]
            });
            let requested_schema = match serde_json::from_value(schema) {
                Ok(schema) => schema,
                Err(e) => return Answer::Failed(format!("building the question: {e}")),
            };
            let params = ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: format!(
                    "The browser agent wants to open {} ({}). Allow it? Decline to refuse.",
                    verdict.url, verdict.rule
                ),
                requested_schema,
            };
            match self
                .peer
                .create_elicitation_with_timeout(params, Some(ASK_TIMEOUT))
                .await
            {
                Ok(result) => match result.action {
                    ElicitationAction::Accept => {
                        let choice = result
                            .content
                            .as_ref()
                            .and_then(|c| c.get("allow"))
                            .and_then(|v| v.as_str());
                        match choice {
                            Some("always") => Answer::Always,
                            Some("once") => Answer::Once,
                            other => Answer::Failed(format!(
                                "the answer \"{}\" is neither once nor always",
                                other.unwrap_or("")
                            )),
                        }
                    }
                    _ => Answer::Deny,
                },
                Err(e) => Answer::Failed(format!("the client did not answer the question: {e}")),
            }
        })
    }
}
