//! The door matrix (issue 34): the same attacks, by a hostile page of the
//! agent's, against every browser source cdpilot can run sessions on here,
//! each source in the session a client gets (stdio's default session, or a
//! serve session where that is the only way onto the source). A "denied"
//! server that logs every TCP connection (on `127.0.0.1` and `[::1]`) and
//! every UDP datagram must log nothing, and no path-denied document of the
//! allowed site may be fetched. The test prints the source × attack table.
//!
//! Adding a source is one entry in [`SOURCES`] (a name and how to start
//! it); adding an attack is one entry in [`attacks`] (and, for a new door,
//! a function in `testkit/site/matrix.html`).
//!
//! The extension source (the user's Chrome through the cdpilot extension,
//! headless Chromium with it loaded and paired, driven over serve's MCP)
//! aims its host rows at names (`denied.test`, mapped to the denied
//! server's loopback by `--host-resolver-rules`): its gate is the user's
//! blocklist of hosts (`extension/gate.js`), which cannot tell two ports
//! of `127.0.0.1` apart. What it cannot hold by design (it has no egress
//! gate) is listed in [`KNOWN_OPEN`] with its reason, as in the threat
//! model.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

mod support;

use engine::config::Rule;
use engine::{Config, Engine, Session};
use serde_json::{json, Value};
use testkit::chromium::UsersChrome;
use testkit::{DeniedServer, TestSite};

/// Rows whose attack spells the denied host another way (`0.0.0.0`,
/// `[::1]`, `[::ffff:127.0.0.1]`): the egress gate judges addresses, not
/// only names, once the `gate` branch (issue 34, item 5) is merged. Until
/// then these rows run and print but are not asserted; the lead sets this
/// to `true` at that merge (done: the gate judges addresses).
const ASSERT_SPELLINGS: bool = true;

/// Cells known to be open, printed and not asserted (an entry is
/// `"SOURCE: ROW"`, with its reason written in the threat model). Only
/// the extension's, which it cannot hold by design: it has no egress gate
/// (cdpilot's rules judge its documents at the request stage; its own
/// blocklist holds hosts as the user typed them, on requests Chrome ties
/// to the agent's tabs), so sub-resources aimed at a host by another
/// spelling or address go out; a shared worker belongs to no tab; a
/// popup's first requests leave before the extension hears of the popup.
const KNOWN_OPEN: &[&str] = &[
    "extension: host sharedworker",
    "extension: path sharedworker",
    "extension: path popupiframe",
    "extension: 0.0.0.0 image",
    "extension: 0.0.0.0 fetch",
    "extension: 0.0.0.0 websocket",
    "extension: [::1] image",
    "extension: [::1] fetch",
    "extension: [::1] websocket",
    "extension: [::ffff:127.0.0.1] image",
    "extension: [::ffff:127.0.0.1] fetch",
    "extension: [::ffff:127.0.0.1] websocket",
    "extension: localhost image",
    "extension: localhost fetch",
    "extension: localhost websocket",
];

/// What the rules deny, for one source's run.
struct Targets {
    /// The denied server (host-level rules: `127.0.0.1:P` and `localhost:P`).
    denied: DeniedServer,
    /// The name host rows aim at: `127.0.0.1`, or for the extension
    /// `denied.test` (its blocklist holds hosts, not ports).
    denied_host: &'static str,
    /// A second denied server, for the spelling rows only (so that a
    /// spelling the gate does not hold yet cannot hide a real leak in the
    /// totals of the first).
    spelled: DeniedServer,
    /// The allowed site; `/secret/*` on it is denied (path-level).
    site: TestSite,
}

impl Targets {
    async fn start(denied_host: &'static str) -> Targets {
        Targets {
            denied: DeniedServer::start().await,
            denied_host,
            spelled: DeniedServer::start().await,
            site: TestSite::start().await,
        }
    }

    /// Every rule the run denies by.
    fn rules(&self) -> Vec<Rule> {
        let deny = |pattern: String| Rule {
            pattern,
            action: "deny".into(),
            origin: None,
        };
        let mut rules = Vec::new();
        for port in [self.denied.port, self.spelled.port] {
            rules.push(deny(format!("http://127.0.0.1:{port}/*")));
            rules.push(deny(format!("http://localhost:{port}/*")));
        }
        if self.denied_host != "127.0.0.1" {
            rules.push(deny(format!(
                "http://{}:{}/*",
                self.denied_host, self.denied.port
            )));
        }
        rules.push(deny(format!("{}/secret/*", self.site.a)));
        rules
    }
}

/// A base configuration for `targets`: the test browser, its flags, the
/// rules.
fn config(targets: &Targets) -> Config {
    let mut config = Config::default();
    config.files.output_dir = std::env::temp_dir()
        .join(format!("cdpilot-matrix-output-{}", std::process::id()))
        .display()
        .to_string();
    config.browser.executable = testkit::chromium::executable().display().to_string();
    config.browser.args = testkit::chromium::TEST_FLAGS
        .iter()
        .map(|s| s.to_string())
        .collect();
    config.policy.rules = targets.rules();
    config
}

/// A source, started: how its session is driven, and whatever must live
/// as long (the Chromium, Grid or serve the test started).
struct Running {
    driver: Driver,
    _keep: Vec<Box<dyn std::any::Any + Send>>,
}

/// Where the attacks' calls go.
enum Driver {
    /// In this process: the engine, and a serve session
    /// (`Engine::new_session`) or `None`, the default session (stdio's).
    Engine(Engine, Option<Session>),
    /// A `cdpilot serve` over MCP (the extension source).
    Mcp(tokio::sync::Mutex<testkit::McpHttpClient>),
}

impl Running {
    fn engine(engine: Engine, session: Option<Session>, keep: Vec<Box<dyn std::any::Any + Send>>) -> Running {
        Running {
            driver: Driver::Engine(engine, session),
            _keep: keep,
        }
    }

    /// One tool call; `Err` with the error's text.
    async fn call(&self, tool: &str, args: Value) -> Result<(), String> {
        match &self.driver {
            Driver::Engine(engine, session) => {
                let session = session.as_ref().unwrap_or_else(|| engine.session());
                engine::dispatch::call(session, tool, args, Default::default())
                    .await
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            }
            Driver::Mcp(mcp) => {
                let answer = mcp.lock().await.call(tool, args).await;
                match answer["isError"].as_bool() {
                    Some(false) => Ok(()),
                    _ => Err(support::text_of(&answer)),
                }
            }
        }
    }

    async fn shutdown(self) {
        if let Driver::Engine(engine, _) = self.driver {
            engine.shutdown().await;
        }
    }
}

type Start = for<'a> fn(&'a Targets) -> Pin<Box<dyn Future<Output = Running> + 'a>>;

/// Every browser source the test can start, by name.
/// and the name its host rows aim at.
const SOURCES: &[(&str, Start, &str)] = &[
    ("launched", |t| Box::pin(launched(t)), "127.0.0.1"),
    ("attached (cdp_url)", |t| Box::pin(attached(t)), "127.0.0.1"),
    ("endpoint fleet", |t| Box::pin(endpoint(t)), "127.0.0.1"),
    ("Selenium Grid", |t| Box::pin(grid(t)), "127.0.0.1"),
    ("auto-connect", |t| Box::pin(auto_connect(t)), "127.0.0.1"),
    ("extension", |t| Box::pin(extension(t)), "denied.test"),
];

/// A Chromium cdpilot launches (stdio's default session).
async fn launched(targets: &Targets) -> Running {
    Running::engine(Engine::start(config(targets)).expect("config"), None, Vec::new())
}

/// A Chromium someone else started, attached through `cdp_url` (stdio's
/// default session).
async fn attached(targets: &Targets) -> Running {
    let chrome = UsersChrome::start().await;
    let mut config = config(targets);
    config.browser.cdp_url = chrome.ws_url().to_owned();
    Running::engine(
        Engine::start(config).expect("config"),
        None,
        vec![Box::new(chrome)],
    )
}

/// `[browser] endpoints`: a serve session placed on a Chromium someone
/// else started.
async fn endpoint(targets: &Targets) -> Running {
    let chrome = UsersChrome::start().await;
    let mut config = config(targets);
    config.browser.endpoints = vec![chrome.ws_url().to_owned()];
    let engine = Engine::start(config).expect("config");
    let session = engine.new_session();
    Running::engine(engine, Some(session), vec![Box::new(chrome)])
}

/// `[browser] grid`: a real Selenium Grid 4 (standalone), stdio's default
/// session.
async fn grid(targets: &Targets) -> Running {
    let grid = testkit::grid::Grid::standalone().await;
    let mut config = config(targets);
    config.browser.grid = grid.url().to_owned();
    // Chromium on the node runs as this user (root in CI): no sandbox.
    config.browser.args.push("--no-sandbox".into());
    Running::engine(Engine::start(config).expect("config"), None, vec![Box::new(grid)])
}

/// `--auto-connect`: the user's running Chrome, found through its
/// `DevToolsActivePort` (stdio's default session).
async fn auto_connect(targets: &Targets) -> Running {
    let chrome = UsersChrome::start().await;
    let mut config = config(targets);
    config.browser.source = engine::config::Source::AutoConnect;
    config.browser.user_data_dir = chrome.profile.display().to_string();
    Running::engine(
        Engine::start(config).expect("config"),
        None,
        vec![Box::new(chrome)],
    )
}

/// `[browser] source = "extension"`: the user's Chrome (headless, the
/// extension loaded and paired with a `cdpilot serve --extension` given
/// the run's rules), its blocklist naming the denied host as a user would
/// type it; driven over serve's MCP.
async fn extension(targets: &Targets) -> Running {
    use support::extension::{paired_with, UserChrome};
    let rules: String = targets
        .rules()
        .iter()
        .map(|r| format!("[[policy.rules]]\npattern = {:?}\naction = \"deny\"\n", r.pattern))
        .collect();
    let (serve, chrome) = paired_with(
        &rules,
        &[&format!(
            "--host-resolver-rules=MAP {} 127.0.0.1",
            targets.denied_host
        )],
    )
    .await;
    let options = chrome.extension_page("options.html").await;
    let saved = format!(
        "(async () => {{ document.getElementById('blocklist').value = '{}'; document.getElementById('save-blocklist').click(); while (!document.getElementById('saved').textContent) await new Promise(r => setTimeout(r, 50)); return true; }})()",
        targets.denied_host
    );
    assert_eq!(UserChrome::eval(&options, &saved).await, true);
    // The worker has read it.
    let worker = chrome.worker().await;
    let read = format!(
        "(async () => {{ while (globalThis.cdpilot.blockedBy('http://{0}/') !== '{0}') await new Promise(r => setTimeout(r, 50)); return true; }})()",
        targets.denied_host
    );
    assert_eq!(UserChrome::eval(&worker, &read).await, true);
    let mut mcp = serve.mcp_client();
    assert_eq!(mcp.initialize().await.status, 200);
    Running {
        driver: Driver::Mcp(tokio::sync::Mutex::new(mcp)),
        _keep: vec![Box::new(serve), Box::new(chrome)],
    }
}

/// Where an attack aims.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Aim {
    /// The denied server, by the name its rule uses.
    Host,
    /// The allowed site's denied `/secret/` path.
    Path,
    /// The second denied server, spelled another way.
    Spelling(&'static str),
}

/// One row of the matrix.
struct Attack {
    /// Its name in the table (and the path it uses on the target).
    name: String,
    /// The door (a function of `matrix.html`, or `navigate`).
    door: &'static str,
    aim: Aim,
}

/// Every attack, in table order.
fn attacks() -> Vec<Attack> {
    let mut rows = Vec::new();
    let host_doors = [
        "navigate",
        "iframe",
        "image",
        "fetch",
        "xhr",
        "eventsource",
        "beacon",
        "websocket",
        "worker",
        "nestedworker",
        "sharedworker",
        "speculation",
        "popupiframe",
        "webrtc",
        "webrtcframe",
        "webrtcsrcdoc",
        "webrtcpopup",
    ];
    for door in host_doors {
        rows.push(Attack {
            name: format!("host {door}"),
            door,
            aim: Aim::Host,
        });
    }
    // Path rules hold for documents (sub-resources are judged by host,
    // `[policy] resources = false`) and for every request of a worker.
    for door in [
        "navigate",
        "iframe",
        "speculation",
        "popupiframe",
        "worker",
        "nestedworker",
        "sharedworker",
    ] {
        rows.push(Attack {
            name: format!("path {door}"),
            door,
            aim: Aim::Path,
        });
    }
    for spelling in ["0.0.0.0", "[::1]", "[::ffff:127.0.0.1]", "localhost"] {
        for door in ["navigate", "iframe", "image", "fetch", "websocket"] {
            rows.push(Attack {
                name: format!("{spelling} {door}"),
                door,
                aim: Aim::Spelling(spelling),
            });
        }
    }
    rows
}

/// The row's own path segment, so what reached a target names its row.
fn marker(row: usize) -> String {
    format!("m{row:02}")
}

/// The URL an attack's door appends its own path to.
fn base(targets: &Targets, attack: &Attack, row: usize) -> String {
    let m = marker(row);
    match attack.aim {
        Aim::Host => format!("http://{}:{}/{m}", targets.denied_host, targets.denied.port),
        Aim::Path => format!("{}/secret/{m}", targets.site.a),
        Aim::Spelling(host) => format!("http://{host}:{}/{m}", targets.spelled.port),
    }
}

/// One cell: whether the attack was held, and what got through if not.
struct Cell {
    held: bool,
    leak: String,
}

/// Runs every attack in `running`'s session; the column of cells, and how
/// many of the denied server's datagrams the WebRTC rows account for.
async fn run_attacks(running: &Running, targets: &Targets, attacks: &[Attack]) -> (Vec<Cell>, usize) {
    let page = targets.site.url("/matrix.html");
    let go = |url: String| json!({"url": url, "timeout_ms": 120000});
    running
        .call("browser_navigate", go(page.clone()))
        .await
        .unwrap_or_else(|e| panic!("the matrix page did not load: {e}"));
    // The datagrams each WebRTC row's gathering sent (STUN names no row:
    // counted before and after the row, whose call returns once gathering
    // completed or failed).
    let mut datagrams = vec![0; attacks.len()];
    for (row, attack) in attacks.iter().enumerate() {
        let base = base(targets, attack, row);
        match attack.door {
            "navigate" => {
                // Refused (`permission_denied`) or not: what reached the
                // target is what the table shows.
                let _ = running
                    .call("browser_navigate", json!({"url": format!("{base}/navigate")}))
                    .await;
                running
                    .call("browser_navigate", go(page.clone()))
                    .await
                    .unwrap_or_else(|e| panic!("back to the matrix page: {e}"));
            }
            door if door.starts_with("webrtc") => {
                let before = targets.denied.seen().datagrams.len();
                let expression = format!("attack.{door}({})", targets.denied.port);
                let _ = running
                    .call(
                        "browser_evaluate",
                        json!({"expression": expression, "timeout_ms": 20000}),
                    )
                    .await;
                datagrams[row] = targets.denied.seen().datagrams.len() - before;
            }
            door => {
                let expression = format!("attack.{door}({base:?})");
                let _ = running
                    .call(
                        "browser_evaluate",
                        json!({"expression": expression, "timeout_ms": 20000}),
                    )
                    .await;
            }
        }
    }
    // Speculation and a popup's frames have no "it did not happen" to
    // await: a quiet period, then one more call (what the page started
    // meanwhile is reported, or would have reached a target).
    tokio::time::sleep(Duration::from_secs(2)).await;
    let _ = running.call("browser_tabs", json!({"action": "list"})).await;
    let denied = targets.denied.seen();
    let spelled = targets.spelled.seen();
    let site = targets.site.received();
    let cells = attacks
        .iter()
        .enumerate()
        .map(|(row, attack)| {
            let m = format!("/{}", marker(row));
            let leak: Vec<String> = match attack.aim {
                Aim::Host => denied
                    .requests
                    .iter()
                    .filter(|r| r.contains(&m))
                    .cloned()
                    .chain((datagrams[row] > 0).then(|| format!("{} UDP datagram(s)", datagrams[row])))
                    .collect(),
                Aim::Path => site
                    .iter()
                    .filter(|r| r.path.starts_with(&format!("/secret{m}")))
                    .map(|r| r.path.clone())
                    .collect(),
                Aim::Spelling(_) => spelled
                    .requests
                    .iter()
                    .filter(|r| r.contains(&m))
                    .cloned()
                    .collect(),
            };
            Cell {
                held: leak.is_empty(),
                leak: leak.join(", "),
            }
        })
        .collect();
    (cells, datagrams.iter().sum())
}

/// Issue 34, item 10: every attack against every source, held.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_attack_is_held_on_every_browser_source() {
    let attacks = attacks();
    let mut columns = Vec::new();
    let mut failures = Vec::new();
    for (name, start, denied_host) in SOURCES {
        let targets = Targets::start(denied_host).await;
        let running = start(&targets).await;
        let (cells, attributed) = run_attacks(&running, &targets, &attacks).await;
        running.shutdown().await;
        // Whatever reached the denied server must be attributed to a row
        // (a request naming no row, a connection that sent no request, a
        // datagram outside the WebRTC rows is a leak no row shows).
        let seen = targets.denied.seen();
        let unnamed: Vec<&String> = seen
            .requests
            .iter()
            .filter(|r| !(0..attacks.len()).any(|row| r.contains(&format!("/{}/", marker(row)))))
            .collect();
        if !unnamed.is_empty() || seen.connections > seen.requests.len() || seen.datagrams.len() > attributed
        {
            failures.push(format!(
                "{name}: the denied server saw what no row shows: {} connection(s), {} datagram(s) ({attributed} of the WebRTC rows'), requests {unnamed:?}",
                seen.connections,
                seen.datagrams.len(),
            ));
        }
        for (attack, cell) in attacks.iter().zip(&cells) {
            let asserted = ASSERT_SPELLINGS || !matches!(attack.aim, Aim::Spelling(_));
            if asserted && !cell.held {
                failures.push(format!(
                    "{name}: {} reached its target: {}",
                    attack.name, cell.leak
                ));
            }
        }
        columns.push((*name, cells));
    }
    print_table(&attacks, &columns);
    let known = |f: &String| KNOWN_OPEN.iter().any(|k| f.starts_with(*k));
    let still: Vec<String> = failures.iter().filter(|f| known(f)).cloned().collect();
    println!("known open on this branch (issue 34):\n{}", still.join("\n"));
    let open: Vec<String> = failures.iter().filter(|f| !known(f)).cloned().collect();
    assert!(open.is_empty(), "doors left open:\n{}", open.join("\n"));
}

/// The source × attack table, as the note shows it.
fn print_table(attacks: &[Attack], columns: &[(&str, Vec<Cell>)]) {
    let mut out = String::from("\n| attack |");
    for (name, _) in columns {
        out.push_str(&format!(" {name} |"));
    }
    out.push_str("\n|---|");
    for _ in columns {
        out.push_str("---|");
    }
    for (row, attack) in attacks.iter().enumerate() {
        let pending = matches!(attack.aim, Aim::Spelling(_)) && !ASSERT_SPELLINGS;
        out.push_str(&format!(
            "\n| {}{} |",
            attack.name,
            if pending { " (gate branch)" } else { "" }
        ));
        for (_, cells) in columns {
            let cell = &cells[row];
            out.push_str(if cell.held { " held |" } else { " REACHED |" });
        }
    }
    println!("{out}\n");
}
