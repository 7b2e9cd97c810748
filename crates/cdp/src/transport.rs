//! Opening the WebSocket to a browser endpoint, with the frame and message
//! size limits lifted: a full accessibility tree reached 36 MB in one
//! response, past tungstenite's 16 MiB frame default. `wss://` endpoints
//! (remote browsers) go through rustls with the webpki roots.

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

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn wss_endpoints_are_supported() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        let error = super::open(&format!("wss://127.0.0.1:{port}/devtools/browser/x"))
            .await
            .err()
            .expect("nothing listens");
        let message = error.to_string();
        assert!(!message.contains("TLS support not compiled in"), "{message}");
        assert!(message.contains("refused"), "{message}");
        // The call tungstenite makes for a handshake: it panics when no
        // crypto provider was compiled in.
        let _ = rustls::ClientConfig::builder()
            .with_root_certificates(rustls::RootCertStore::empty())
            .with_no_client_auth();
    }
}
