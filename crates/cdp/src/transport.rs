//! Opening the WebSocket to a browser endpoint, with the frame and message
//! size limits lifted: a full accessibility tree reached 36 MB in one
//! response, past tungstenite's 16 MiB frame default.

use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::CdpError;

pub(crate) type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

pub(crate) async fn open(url: &str) -> Result<Socket, CdpError> {
    let config = WebSocketConfig::default()
        .max_frame_size(None)
        .max_message_size(None);
    let (socket, _response) = tokio_tungstenite::connect_async_with_config(url, Some(config), true)
        .await
        .map_err(|e| CdpError::Connect(format!("cannot open {url}: {e}")))?;
    Ok(socket)
}
