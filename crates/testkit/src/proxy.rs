//! A loopback TCP proxy a test can cut: every connection through it is
//! dropped at once, while it keeps accepting new ones. Stands between
//! cdpilot and Chromium to show what happens when the socket dies.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

pub struct TcpProxy {
    pub addr: SocketAddr,
    /// One task per proxied connection; aborting it drops both sockets.
    links: Arc<Mutex<Vec<JoinHandle<()>>>>,
    accept: JoinHandle<()>,
}

impl Drop for TcpProxy {
    fn drop(&mut self) {
        self.accept.abort();
        self.cut();
    }
}

impl TcpProxy {
    /// Forwards connections made to the returned address to `upstream`.
    pub async fn start(upstream: SocketAddr) -> TcpProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let addr = listener.local_addr().expect("proxy addr");
        let links: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let accepted = links.clone();
        let accept = tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                let link = tokio::spawn(async move {
                    if let Ok(mut server) = TcpStream::connect(upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
                accepted.lock().unwrap().push(link);
            }
        });
        TcpProxy { addr, links, accept }
    }

    /// Drops every connection currently going through the proxy.
    pub fn cut(&self) {
        for link in self.links.lock().unwrap().drain(..) {
            link.abort();
        }
    }

    /// How many connections have been made through the proxy and not cut.
    pub fn open_links(&self) -> usize {
        self.links
            .lock()
            .unwrap()
            .iter()
            .filter(|l| !l.is_finished())
            .count()
    }
}
