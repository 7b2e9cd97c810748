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
//! Not here: the extension source (`[browser] source = "extension"`): its
//! relay handshake is being rebuilt (issue 34, item 3), and its gate is the
//! extension's own (`extension/gate.js`), tested in `extension*.rs`.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use engine::config::Rule;
use engine::{ActionError, ActionOutput, Config, Engine, Session};
use serde_json::{json, Value};
use testkit::chromium::UsersChrome;
use testkit::{DeniedServer, TestSite};

/// Rows whose attack spells the denied host another way (`0.0.0.0`,
/// `[::1]`, `[::ffff:127.0.0.1]`): the egress gate judges addresses, not
/// only names, once the `gate` branch (issue 34, item 5) is merged. Until
/// then these rows run and print but are not asserted; the lead sets this
/// to `true` at that merge (done: the gate judges addresses).
const ASSERT_SPELLINGS: bool = true;

/// Cells seen open on the `sources` branch (issue 34), printed and not
/// asserted until fixed: a worker's fetch of a path-denied URL (the tab's
/// gate does not see it), a shared worker's on launched and Grid, STUN
/// over UDP on browsers cdpilot did not start (no flag of cdpilot's), a
/// popup's iframe under auto-connect. Remove an entry when its fix lands.
const KNOWN_OPEN: &[&str] = &[
    "launched: path worker",
    "launched: path sharedworker",
    "attached (cdp_url): the denied server saw",
    "attached (cdp_url): host webrtc",
    "attached (cdp_url): path worker",
    "endpoint fleet: the denied server saw",
    "endpoint fleet: host webrtc",
    "endpoint fleet: path worker",
    "Selenium Grid: path worker",
    "Selenium Grid: path sharedworker",
    "auto-connect: the denied server saw",
    "auto-connect: host webrtc",
    "auto-connect: path popupiframe",
    "auto-connect: path worker",
    "auto-connect: path sharedworker",
];

/// What the rules deny, for one source's run.
struct Targets {
    /// The denied server (host-level rules: `127.0.0.1:P` and `localhost:P`).
    denied: DeniedServer,
    /// A second denied server, for the spelling rows only (so that a
    /// spelling the gate does not hold yet cannot hide a real leak in the
    /// totals of the first).
    spelled: DeniedServer,
    /// The allowed site; `/secret/*` on it is denied (path-level).
    site: TestSite,
}

impl Targets {
    async fn start() -> Targets {
        Targets {
            denied: DeniedServer::start().await,
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

/// A source, started: the engine, the session the attacks run in, and
/// whatever must live as long (the Chromium or Grid the test started).
struct Running {
    engine: Engine,
    /// A serve session (`Engine::new_session`); `None`: the default
    /// session, stdio's.
    session: Option<Session>,
    _keep: Vec<Box<dyn std::any::Any + Send>>,
}

impl Running {
    fn session(&self) -> &Session {
        self.session.as_ref().unwrap_or_else(|| self.engine.session())
    }

    async fn call(&self, tool: &str, args: Value) -> Result<ActionOutput, ActionError> {
        engine::dispatch::call(self.session(), tool, args, Default::default()).await
    }
}

type Start = for<'a> fn(&'a Targets) -> Pin<Box<dyn Future<Output = Running> + 'a>>;

/// Every browser source the test can start, by name.
const SOURCES: &[(&str, Start)] = &[
    ("launched", |t| Box::pin(launched(t))),
    ("attached (cdp_url)", |t| Box::pin(attached(t))),
    ("endpoint fleet", |t| Box::pin(endpoint(t))),
    ("Selenium Grid", |t| Box::pin(grid(t))),
    ("auto-connect", |t| Box::pin(auto_connect(t))),
];

/// A Chromium cdpilot launches (stdio's default session).
async fn launched(targets: &Targets) -> Running {
    Running {
        engine: Engine::start(config(targets)).expect("config"),
        session: None,
        _keep: Vec::new(),
    }
}

/// A Chromium someone else started, attached through `cdp_url` (stdio's
/// default session).
async fn attached(targets: &Targets) -> Running {
    let chrome = UsersChrome::start().await;
    let mut config = config(targets);
    config.browser.cdp_url = chrome.ws_url().to_owned();
    Running {
        engine: Engine::start(config).expect("config"),
        session: None,
        _keep: vec![Box::new(chrome)],
    }
}

/// `[browser] endpoints`: a serve session placed on a Chromium someone
/// else started.
async fn endpoint(targets: &Targets) -> Running {
    let chrome = UsersChrome::start().await;
    let mut config = config(targets);
    config.browser.endpoints = vec![chrome.ws_url().to_owned()];
    let engine = Engine::start(config).expect("config");
    let session = engine.new_session();
    Running {
        engine,
        session: Some(session),
        _keep: vec![Box::new(chrome)],
    }
}

/// `[browser] grid`: a real Selenium Grid 4 (standalone), stdio's default
/// session.
async fn grid(targets: &Targets) -> Running {
    let grid = testkit::grid::Grid::standalone().await;
    let mut config = config(targets);
    config.browser.grid = grid.url().to_owned();
    // Chromium on the node runs as this user (root in CI): no sandbox.
    config.browser.args.push("--no-sandbox".into());
    Running {
        engine: Engine::start(config).expect("config"),
        session: None,
        _keep: vec![Box::new(grid)],
    }
}

/// `--auto-connect`: the user's running Chrome, found through its
/// `DevToolsActivePort` (stdio's default session).
async fn auto_connect(targets: &Targets) -> Running {
    let chrome = UsersChrome::start().await;
    let mut config = config(targets);
    config.browser.source = engine::config::Source::AutoConnect;
    config.browser.user_data_dir = chrome.profile.display().to_string();
    Running {
        engine: Engine::start(config).expect("config"),
        session: None,
        _keep: vec![Box::new(chrome)],
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
        "sharedworker",
        "speculation",
        "popupiframe",
        "webrtc",
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
        Aim::Host => format!("http://127.0.0.1:{}/{m}", targets.denied.port),
        Aim::Path => format!("{}/secret/{m}", targets.site.a),
        Aim::Spelling(host) => format!("http://{host}:{}/{m}", targets.spelled.port),
    }
}

/// One cell: whether the attack was held, and what got through if not.
struct Cell {
    held: bool,
    leak: String,
}

/// Runs every attack in `running`'s session; the column of cells.
async fn run_attacks(running: &Running, targets: &Targets, attacks: &[Attack]) -> Vec<Cell> {
    let page = targets.site.url("/matrix.html");
    let go = |url: String| json!({"url": url, "timeout_ms": 120000});
    running
        .call("browser_navigate", go(page.clone()))
        .await
        .unwrap_or_else(|e| panic!("the matrix page did not load: {e}"));
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
            "webrtc" => {
                let expression = format!("attack.webrtc({})", targets.denied.port);
                let _ = running
                    .call(
                        "browser_evaluate",
                        json!({"expression": expression, "timeout_ms": 20000}),
                    )
                    .await;
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
    attacks
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
                    .chain(
                        (attack.door == "webrtc" && !denied.datagrams.is_empty())
                            .then(|| format!("{} UDP datagram(s)", denied.datagrams.len())),
                    )
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
        .collect()
}

/// Issue 34, item 10: every attack against every source, held.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_attack_is_held_on_every_browser_source() {
    let attacks = attacks();
    let mut columns = Vec::new();
    let mut failures = Vec::new();
    for (name, start) in SOURCES {
        let targets = Targets::start().await;
        let running = start(&targets).await;
        let cells = run_attacks(&running, &targets, &attacks).await;
        running.engine.shutdown().await;
        // Whatever reached the denied server must be attributed to a row
        // (a bare connection, a datagram outside the WebRTC row is a leak
        // no row shows).
        let seen = targets.denied.seen();
        if seen.connections != 0 || !seen.datagrams.is_empty() {
            failures.push(format!(
                "{name}: the denied server saw {} connection(s) and {} datagram(s): {:?}",
                seen.connections,
                seen.datagrams.len(),
                seen.requests
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
