//! `[browser] upstream_proxy`: the user's own HTTP proxy, which the egress
//! gate connects through once it has let a connection pass. A tunnel
//! (`CONNECT host:port`) for what the browser tunnels; plain-http requests
//! are forwarded to it in absolute form, as a browser would.
//!
//! Owns parsing the setting and opening a tunnel through it.

use base64::Engine as _;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The user's proxy: where it is and how to authenticate to it.
#[derive(Debug, Clone)]
pub struct Upstream {
    /// `host:port`.
    pub address: String,
    /// `Basic …` for `Proxy-Authorization`, when the URL has credentials.
    pub authorization: Option<String>,
}

/// The longest response head a tunnel's answer may have.
const MAX_HEAD: usize = 16 * 1024;

impl Upstream {
    /// `http://[user:password@]host:port`; empty: none. An error names the
    /// key and what is allowed.
    pub fn parse(text: &str) -> Result<Option<Upstream>, String> {
        if text.is_empty() {
            return Ok(None);
        }
        let bad = |why: &str| {
            format!("browser.upstream_proxy = {text:?}: {why}; allowed is http://[user:password@]host:port")
        };
        let url = url::Url::parse(text).map_err(|e| bad(&e.to_string()))?;
        if url.scheme() != "http" {
            return Err(bad("only an http:// proxy is supported"));
        }
        let host = url.host_str().ok_or_else(|| bad("no host"))?;
        if !matches!(url.path(), "" | "/") || url.query().is_some() {
            return Err(bad("a proxy URL has no path or query"));
        }
        let port = url.port_or_known_default().unwrap_or(80);
        let authorization = (!url.username().is_empty()).then(|| {
            let decode = |s: &str| {
                url::form_urlencoded::parse(format!("x={s}").as_bytes())
                    .next()
                    .map(|(_, v)| v.into_owned())
                    .unwrap_or_default()
            };
            let pair = format!(
                "{}:{}",
                decode(url.username()),
                decode(url.password().unwrap_or_default())
            );
            format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(pair))
        });
        Ok(Some(Upstream {
            address: format!("{host}:{port}"),
            authorization,
        }))
    }

    /// A connection to the proxy itself (for absolute-form requests).
    pub async fn connect(&self) -> std::io::Result<TcpStream> {
        let stream = TcpStream::connect(&self.address).await?;
        let _ = stream.set_nodelay(true);
        Ok(stream)
    }

    /// A tunnel through the proxy to `host:port`.
    pub async fn tunnel(&self, host: &str, port: u16) -> std::io::Result<TcpStream> {
        let mut stream = self.connect().await?;
        let target = match host.contains(':') {
            true => format!("[{host}]:{port}"),
            false => format!("{host}:{port}"),
        };
        let mut head = format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n");
        if let Some(auth) = &self.authorization {
            head += &format!("Proxy-Authorization: {auth}\r\n");
        }
        head += "\r\n";
        stream.write_all(head.as_bytes()).await?;
        // Read the answer's head byte by byte: whatever follows it belongs
        // to the tunnel, so nothing past the blank line may be consumed.
        let mut answer = Vec::with_capacity(256);
        while !answer.ends_with(b"\r\n\r\n") {
            if answer.len() >= MAX_HEAD {
                return Err(std::io::Error::other("the upstream proxy's answer is too long"));
            }
            let byte = stream.read_u8().await?;
            answer.push(byte);
        }
        let status_line = String::from_utf8_lossy(&answer);
        let status = status_line.split_whitespace().nth(1).unwrap_or_default();
        if !status.starts_with('2') {
            return Err(std::io::Error::other(format!(
                "the upstream proxy {} refused CONNECT {target}: {}",
                self.address,
                status_line.lines().next().unwrap_or_default()
            )));
        }
        Ok(stream)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_setting_parses_or_names_the_key() {
        assert!(Upstream::parse("").unwrap().is_none());
        let u = Upstream::parse("http://proxy.example:3128").unwrap().unwrap();
        assert_eq!(u.address, "proxy.example:3128");
        assert!(u.authorization.is_none());
        let u = Upstream::parse("http://me:p%40ss@10.0.0.1:8080/")
            .unwrap()
            .unwrap();
        assert_eq!(u.authorization.as_deref(), Some("Basic bWU6cEBzcw=="));
        for bad in ["socks5://x:1", "proxy:3128", "http://x:1/path"] {
            let e = Upstream::parse(bad).unwrap_err();
            assert!(e.starts_with("browser.upstream_proxy"), "{e}");
        }
    }
}
