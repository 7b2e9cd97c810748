//! The WebSocket upgrade of `cdpilot serve` (`/v1/ws`, the dashboard's
//! screencast), done with hyper's upgrade and the tokio-tungstenite the CDP
//! client already builds (axum's `ws` feature would compile a second
//! tungstenite). Knows nothing of what runs on the socket.

use axum::extract::Request;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use hyper_util::rt::TokioIo;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};
use tokio_tungstenite::WebSocketStream;

pub type Socket = WebSocketStream<TokioIo<hyper::upgrade::Upgraded>>;

/// The largest message a client may send; a bigger one closes the
/// connection with 1009.
pub const MAX_MESSAGE: usize = 16 << 20;

/// Answers the upgrade request with 101 and hands the socket to `serve`
/// once hyper has switched protocols; anything that is not an upgrade
/// gets 400.
pub fn accept<F, Fut>(mut request: Request, serve: F) -> Response
where
    F: FnOnce(Socket) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let Some(key) = websocket_key(request.headers()) else {
        return (
            StatusCode::BAD_REQUEST,
            "expected a WebSocket upgrade (GET with Upgrade: websocket, Sec-WebSocket-Version: 13)\n",
        )
            .into_response();
    };
    let accept = derive_accept_key(key.as_bytes());
    let upgrading = hyper::upgrade::on(&mut request);
    tokio::spawn(async move {
        match upgrading.await {
            Ok(upgraded) => {
                let config = WebSocketConfig::default()
                    .max_message_size(Some(MAX_MESSAGE))
                    .max_frame_size(Some(MAX_MESSAGE));
                let socket =
                    WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, Some(config))
                        .await;
                serve(socket).await;
            }
            Err(e) => tracing::debug!("WebSocket upgrade failed: {e}"),
        }
    });
    let mut response = StatusCode::SWITCHING_PROTOCOLS.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
    headers.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    headers.insert(
        header::SEC_WEBSOCKET_ACCEPT,
        HeaderValue::from_str(&accept).expect("base64 is a valid header value"),
    );
    response
}

fn websocket_key(headers: &HeaderMap) -> Option<String> {
    let has = |name: header::HeaderName, token: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.split(',').any(|p| p.trim().eq_ignore_ascii_case(token)))
    };
    if !has(header::CONNECTION, "upgrade")
        || !has(header::UPGRADE, "websocket")
        || !has(header::SEC_WEBSOCKET_VERSION, "13")
    {
        return None;
    }
    headers
        .get(header::SEC_WEBSOCKET_KEY)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}
