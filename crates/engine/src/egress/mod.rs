//! The egress gate: cdpilot's own forward proxy on loopback, which every
//! connection of every browser context cdpilot uses goes through, judged
//! by host and port before anything leaves: documents, sub-resources,
//! workers, WebSockets, EventSource, beacons, preconnects, speculation. A
//! host the rules deny gets no connection at all (the browser hears 403).
//! A plain-http request shows its whole URL: it is also judged by the
//! rules that refuse by path, in every spelling (issue 41: a worker's
//! blocklist takes patterns as written, and no request stage sees a
//! prefetch).
//!
//! Owns the engine's [`Egress`] (the rules read at the connection level,
//! `[policy] block_private_networks`, `[browser] upstream_proxy`) and its
//! [`ProxyPort`]s: one listening port per browser context, so a refusal can be
//! reported to the session that owns the connection (a `CONNECT` does not
//! say which tab asked). The launched browser's flags name the browser's
//! door (the default context's); each isolated context is created with a
//! door of its own (`Target.createBrowserContext`'s `proxyServer`). The
//! doors are served on the gate's own thread and runtime, started with the
//! engine, so a busy engine runtime never delays the browser's traffic.
//! Serving one connection is `proxy.rs`; resolving a name and judging its
//! addresses `resolve.rs`; the user's upstream proxy `upstream.rs`; a
//! worker's request gate (paths, which no `CONNECT` shows) `workers.rs`;
//! who may knock on a door (cdpilot's own user only) `cdp::peer`.
//!
//! An `ask` host passes a door only for an origin the user granted in
//! the consent of a session the door serves ([`ProxyPort::serves`]).

mod contexts;
mod proxy;
pub mod workers;

pub use contexts::ContextPorts;
pub use proxy::GATE_ERROR_HEADER;
mod resolve;
mod upstream;

use std::collections::HashSet;
use std::sync::{Arc, Mutex, Weak};

use tokio::net::TcpListener;

use crate::config::Config;
use crate::policy::connection::ConnectionRules;
use crate::policy::{Consent, Policy};

use upstream::Upstream;

/// Flags the gate needs the browser to have; a user's `[browser] args`
/// naming one of them could route connections around it.
pub(crate) const PROXY_FLAGS: [&str; 6] = [
    "--webrtc-ip-handling-policy",
    "--proxy-server",
    "--proxy-bypass-list",
    "--no-proxy-server",
    "--proxy-pac-url",
    "--proxy-auto-detect",
];

/// Configuration checks: the upstream proxy parses, and no browser flag
/// routes connections around the gate.
pub fn check_config(config: &Config) -> Result<(), String> {
    Upstream::parse(&config.browser.upstream_proxy)?;
    for arg in &config.browser.args {
        let name = arg.split('=').next().unwrap_or_default();
        if PROXY_FLAGS.contains(&name) {
            return Err(format!(
                "browser.args: {name:?} would route the browser around cdpilot's egress gate; \
                 set [browser] upstream_proxy to use a proxy of your own"
            ));
        }
    }
    Ok(())
}

/// What every door judges by and connects through.
struct Judge {
    rules: ConnectionRules,
    /// The URL rules, for the rules that refuse by path: a plain-http
    /// request shows the gate its whole URL, judged in every spelling
    /// ([`Policy::refused_by_path`]).
    paths: Policy,
    /// The addresses of the names host-level denies write.
    denied_names: resolve::DeniedNames,
    /// `[policy] block_private_networks`.
    block_private: bool,
    /// `[browser] upstream_proxy`, if set.
    upstream: Option<Upstream>,
    /// Doors open now (each a listening port): one per live isolated
    /// context plus the browser's; a door closes when dropped.
    doors: std::sync::atomic::AtomicUsize,
}

/// The engine's egress gate: the browser's door, and new doors for
/// isolated contexts.
pub struct Egress {
    judge: Arc<Judge>,
    /// The launched browser's door (its default context): bound at start.
    browser_door: Arc<ProxyPort>,
    /// The gate's own runtime, on a thread of its own: the browser's
    /// connections never wait behind the engine's work (parsing a burst of
    /// CDP events, a snapshot) on the engine's runtime. Ends when the
    /// `Egress` is dropped.
    runtime: tokio::runtime::Handle,
    /// Dropped with the `Egress`: the gate's thread then ends its runtime
    /// (every door's tasks with it).
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl Egress {
    /// Binds the browser's door on `127.0.0.1:0`. An error names what
    /// failed: the gate failing to start is a start-up error, never a
    /// browser without it.
    pub fn start(config: &Config) -> Result<Egress, String> {
        let policy = Policy::from_config(&config.policy)?;
        let rules = policy.connection_rules();
        let judge = Arc::new(Judge {
            denied_names: resolve::DeniedNames::new(rules.denied_names()),
            rules,
            paths: policy,
            block_private: config.policy.block_private_networks,
            upstream: Upstream::parse(&config.browser.upstream_proxy)?,
            doors: Default::default(),
        });
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cdpilot's egress gate cannot start its runtime: {e}"))?;
        let handle = runtime.handle().clone();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        std::thread::Builder::new()
            .name("cdpilot-egress".into())
            .spawn(move || {
                // Ends when the Egress (and so the sender) is dropped.
                let _ = runtime.block_on(stopped);
            })
            .map_err(|e| format!("cdpilot's egress gate cannot start its thread: {e}"))?;
        let browser_door = Arc::new(ProxyPort::open(judge.clone(), &handle)?);
        Ok(Egress {
            judge,
            browser_door,
            runtime: handle,
            _stop: stop,
        })
    }

    /// The launched browser's door: its flags name it, and the default
    /// context's refusals are recorded there.
    pub fn browser_door(&self) -> Result<Arc<ProxyPort>, String> {
        Ok(self.browser_door.clone())
    }

    /// How many doors (listening ports) are open now.
    pub fn doors(&self) -> usize {
        self.judge.doors.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// A door of its own for a new isolated browser context.
    pub fn new_door(&self) -> Result<Arc<ProxyPort>, String> {
        Ok(Arc::new(ProxyPort::open(self.judge.clone(), &self.runtime)?))
    }
}

/// The flags that send every connection of a launched browser through
/// `door`: loopback included (Chromium bypasses the proxy for loopback
/// unless told `<-loopback>`), and WebRTC kept off UDP that would not go
/// through the proxy (STUN/TURN and peer traffic would otherwise reach any
/// host directly).
pub fn launch_flags(door: &ProxyPort) -> [String; 3] {
    [
        format!("--proxy-server={}", door.proxy_server()),
        format!("--proxy-bypass-list={}", BYPASS_NOTHING),
        "--webrtc-ip-handling-policy=disable_non_proxied_udp".into(),
    ]
}

/// The bypass list that takes loopback out of Chromium's implicit bypass.
pub const BYPASS_NOTHING: &str = "<-loopback>";

/// One listening port of the gate, and what was refused through it.
pub struct ProxyPort {
    port: u16,
    shared: Arc<Shared>,
    /// The accept loop (on the gate's runtime), stopped when the door is
    /// dropped.
    task: tokio::task::JoinHandle<()>,
}

/// What a door's connections share.
struct Shared {
    judge: Arc<Judge>,
    refusals: Refusals,
    /// The consents of the sessions whose contexts use this door: an
    /// `ask` host passes only for an origin one of them granted.
    consents: Mutex<Vec<Weak<Consent>>>,
}

impl Shared {
    /// Whether a session this door serves granted an origin on `host` and
    /// `port` (always, or once for a call still running).
    fn granted(&self, host: &str, port: u16) -> bool {
        let mut consents = self.consents.lock().unwrap();
        consents.retain(|c| c.strong_count() > 0);
        consents
            .iter()
            .filter_map(Weak::upgrade)
            .any(|c| c.grants_connection(host, port))
    }
}

impl Drop for ProxyPort {
    fn drop(&mut self) {
        self.shared
            .judge
            .doors
            .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        self.task.abort();
    }
}

impl ProxyPort {
    /// Binds `127.0.0.1:0` and serves it on the gate's `runtime`.
    fn open(judge: Arc<Judge>, runtime: &tokio::runtime::Handle) -> Result<ProxyPort, String> {
        let cannot = |e: std::io::Error| format!("cdpilot's egress gate cannot listen on 127.0.0.1: {e}");
        let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(cannot)?;
        listener.set_nonblocking(true).map_err(cannot)?;
        let address = listener.local_addr().map_err(cannot)?;
        let port = address.port();
        let listener = {
            // Registered with the gate's runtime, whichever runtime (if
            // any) the caller is on.
            let _entered = runtime.enter();
            TcpListener::from_std(listener).map_err(cannot)?
        };
        let shared = Arc::new(Shared {
            judge,
            refusals: Refusals::default(),
            consents: Mutex::default(),
        });
        let serving = shared.clone();
        let task = runtime.spawn(async move {
            loop {
                match listener.accept().await {
                    Ok((stream, peer)) => {
                        let _ = stream.set_nodelay(true);
                        let serving = serving.clone();
                        tokio::spawn(async move {
                            // Another local user's connection gets nothing
                            // (issue 34, finding 5): closed unanswered.
                            match cdp::peer::is_ours(peer, address) {
                                Ok(()) => proxy::serve(stream, serving).await,
                                Err(why) => tracing::warn!(
                                    "egress gate: refused a connection to 127.0.0.1:{port} from {why}: \
                                     a door serves only cdpilot's own user's browsers"
                                ),
                            }
                        });
                    }
                    Err(e) => {
                        // Out of file descriptors and the like: the
                        // browser's connections fail meanwhile (closed,
                        // never open).
                        tracing::warn!("egress gate: accepting a connection failed: {e}");
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    }
                }
            }
        });
        shared
            .judge
            .doors
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(ProxyPort { port, shared, task })
    }

    /// Lets `ask` hosts through this door for the origins `consent` grants
    /// (the session whose context uses the door; the default context's
    /// door serves every session on it).
    pub fn serves(&self, consent: &Arc<Consent>) {
        self.shared.consents.lock().unwrap().push(Arc::downgrade(consent));
    }

    /// `http://127.0.0.1:PORT`, for `--proxy-server` and `proxyServer`.
    pub fn proxy_server(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// What was refused through this door since the last take, each host
    /// and port once, oldest first.
    pub fn take_refusals(&self) -> Vec<Refusal> {
        self.shared.refusals.take()
    }

    /// Records a request a worker of this door's context made that its own
    /// request gate or its blocklist refused (`workers.rs`, `tab/pump.rs`)
    /// before any connection was tried, so the session that owns the
    /// context reports it with the gate's refusals: `kind` is the worker's target type
    /// (`shared_worker`, `service_worker`, `worker`), `resource` the
    /// request's type (`Fetch`, `Script`…). Each URL once until taken.
    pub fn record_worker_block(&self, url: &str, rule: &str, resource: &str, kind: &str) {
        self.shared.refusals.record(Refusal {
            url: url.to_owned(),
            host: url.to_owned(),
            rule: rule.to_owned(),
            blocked: Blocked::Request {
                resource: resource.to_owned(),
                worker: kind.to_owned(),
            },
            at: std::time::Instant::now(),
        });
    }
}

/// A connection the gate refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// `host:port`, as the browser asked for it (or the whole URL of a
    /// plain-http request).
    pub url: String,
    /// `host:port`, canonical: what "once per host" counts.
    pub host: String,
    /// The rule or setting that refused it.
    pub rule: String,
    /// What was refused: a connection (the gate's own refusals) or a
    /// worker's request its request gate or blocklist failed.
    pub blocked: Blocked,
    /// When it was last refused (a host refused again while its first
    /// refusal waits is recorded once, at its latest time).
    pub at: std::time::Instant,
}

/// What a [`Refusal`] refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Blocked {
    /// A connection through the gate (`url` is `host:port`, or the whole
    /// URL of a plain-http request).
    Connection,
    /// A worker's request, refused at its request stage or by its
    /// blocklist before any connection (`url` is the whole URL).
    Request {
        /// The request's type as Chrome names it (`Fetch`, `Script`…).
        resource: String,
        /// The worker's target type: `shared_worker`, `service_worker`,
        /// `worker` (a dedicated one).
        worker: String,
    },
}

/// A door's refusals not yet reported. Each host and port is recorded once
/// until taken: a page retrying a refused host (a WebSocket reconnecting,
/// a preconnect per link) reports it once per call, not once per try.
#[derive(Default)]
struct Refusals {
    /// Locked for microseconds.
    state: Mutex<RefusalState>,
}

#[derive(Default)]
struct RefusalState {
    pending: Vec<Refusal>,
    hosts: HashSet<String>,
}

/// At most this many refusals wait for a result (a page could try
/// thousands of hosts).
const KEPT: usize = 50;

impl Refusals {
    fn record(&self, refusal: Refusal) {
        let mut state = self.state.lock().unwrap();
        if state.hosts.contains(&refusal.host) {
            if let Some(waiting) = state.pending.iter_mut().find(|r| r.host == refusal.host) {
                waiting.at = refusal.at;
            }
            return;
        }
        if state.pending.len() < KEPT && state.hosts.insert(refusal.host.clone()) {
            match &refusal.blocked {
                Blocked::Connection => {
                    tracing::info!(url = %refusal.url, rule = %refusal.rule, "egress gate refused a connection")
                }
                Blocked::Request { worker, .. } => {
                    tracing::info!(url = %refusal.url, rule = %refusal.rule, "a {worker}'s request blocked")
                }
            }
            state.pending.push(refusal);
        }
    }

    fn take(&self) -> Vec<Refusal> {
        let mut state = self.state.lock().unwrap();
        state.hosts.clear();
        std::mem::take(&mut state.pending)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(host: &str) -> Refusal {
        Refusal {
            url: host.into(),
            host: host.into(),
            rule: "default deny".into(),
            blocked: Blocked::Connection,
            at: std::time::Instant::now(),
        }
    }

    /// Issue 24: a page trying thousands of hosts leaves at most 50
    /// refusals waiting for the next result, each host once; taking them
    /// empties the record.
    #[test]
    fn refusals_wait_once_per_host_and_at_most_fifty() {
        let refusals = Refusals::default();
        refusals.record(refused("a.test:443"));
        refusals.record(refused("a.test:443"));
        for i in 0..1000 {
            refusals.record(refused(&format!("h{i}.test:443")));
        }
        let taken = refusals.take();
        assert_eq!(taken.len(), KEPT);
        assert_eq!(taken[0].host, "a.test:443");
        assert_eq!(taken.iter().filter(|r| r.host == "a.test:443").count(), 1);
        assert!(refusals.state.lock().unwrap().hosts.is_empty());
        assert!(refusals.take().is_empty());
    }

    /// A host refused again while its refusal waits stays one entry, at its
    /// latest time: the session tells a refusal during its call from one
    /// before it by that time (`session/refusals.rs`).
    #[test]
    fn a_host_refused_again_keeps_its_latest_time() {
        let refusals = Refusals::default();
        let first = refused("a.test:443");
        let mut again = refused("a.test:443");
        again.at = first.at + std::time::Duration::from_secs(1);
        refusals.record(first.clone());
        refusals.record(again.clone());
        let taken = refusals.take();
        assert_eq!(taken.len(), 1);
        assert_eq!(taken[0].at, again.at);
    }

    /// Issue 24: the browser's idle keep-alive connections were held open
    /// for hyper's default 30 s (854 at a soak's peak, about 20 KB each).
    #[tokio::test]
    async fn an_idle_browser_connection_is_closed_by_the_gate_after_its_idle_bound() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let egress = Egress::start(&Config::default()).expect("the gate starts");
        let door = egress.new_door().expect("a door");
        let address = door.proxy_server().trim_start_matches("http://").to_owned();
        let mut browser = tokio::net::TcpStream::connect(&address).await.expect("connect");
        // A request the gate answers itself (no upstream): it stays open
        // for the next one, as keep-alive.
        browser
            .write_all(b"GET / HTTP/1.1\r\nHost: gate\r\n\r\n")
            .await
            .unwrap();
        let mut head = [0u8; 12];
        browser.read_exact(&mut head).await.expect("an answer");
        assert_eq!(&head, b"HTTP/1.1 400");
        let opened = std::time::Instant::now();
        // Then it idles: the gate closes it (EOF) well before hyper's 30 s.
        let mut rest = Vec::new();
        let closed = tokio::time::timeout(proxy::IDLE_KEPT * 3, browser.read_to_end(&mut rest)).await;
        assert!(
            matches!(closed, Ok(Ok(_))),
            "still open {:?} after its answer: {closed:?}",
            opened.elapsed()
        );
    }
}
