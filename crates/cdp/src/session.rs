//! A handle for one flattened CDP session: the browser session (`""`), a
//! page, or a cross-origin iframe. Cheap to clone; all state lives in the
//! [`Connection`].

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use tokio::time::Instant;

use crate::{CdpError, Connection, EventStream};

/// A typed CDP command: its method name and the shape of its answer.
pub trait Command: Serialize {
    const METHOD: &'static str;
    type Response: DeserializeOwned;
}

#[derive(Clone)]
pub struct Session {
    conn: Connection,
    id: String,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Session({:?})", self.id)
    }
}

/// A connection's sessions, made here (a session is a handle on its
/// connection: the connection below does not know this type).
impl Connection {
    /// The browser-level session (routed as `""`).
    pub fn browser(&self) -> Session {
        Session::new(self.clone(), String::new())
    }

    /// A handle for a flattened session id returned by `Target.attachToTarget`
    /// or announced by `Target.attachedToTarget`.
    pub fn session(&self, session_id: impl Into<String>) -> Session {
        Session::new(self.clone(), session_id.into())
    }
}

impl Session {
    pub(crate) fn new(conn: Connection, id: String) -> Session {
        Session { conn, id }
    }

    /// The session id (`""` for the browser session).
    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// Raw command that must be answered before `deadline`. There is no
    /// default: every caller says how long it can wait.
    pub async fn send(&self, method: &str, params: Value, deadline: Instant) -> Result<Value, CdpError> {
        let raw = self.conn.call_raw(&self.id, method, params, deadline).await?;
        serde_json::from_str(raw.get()).map_err(|e| CdpError::Decode {
            method: method.to_owned(),
            detail: e.to_string(),
        })
    }

    /// Typed command that must be answered before `deadline`.
    pub async fn call<C: Command>(&self, command: C, deadline: Instant) -> Result<C::Response, CdpError> {
        let params = serde_json::to_value(&command).map_err(|e| CdpError::Decode {
            method: C::METHOD.to_owned(),
            detail: e.to_string(),
        })?;
        let raw = self.conn.call_raw(&self.id, C::METHOD, params, deadline).await?;
        serde_json::from_str(raw.get()).map_err(|e| CdpError::Decode {
            method: C::METHOD.to_owned(),
            detail: e.to_string(),
        })
    }

    /// Sends a typed command without waiting for its answer: for input a
    /// later event supersedes (a mouse move), so the next one is not held
    /// up by its round trip. Fails only when it cannot be sent.
    pub fn post<C: Command>(&self, command: C) -> Result<(), CdpError> {
        let params = serde_json::to_value(&command).map_err(|e| CdpError::Decode {
            method: C::METHOD.to_owned(),
            detail: e.to_string(),
        })?;
        self.conn.post_raw(&self.id, C::METHOD, params)
    }

    /// Events of this session only. Subscribe before the command whose
    /// events you are waiting for.
    pub fn events(&self) -> EventStream {
        self.conn.events(Some(&self.id))
    }
}
