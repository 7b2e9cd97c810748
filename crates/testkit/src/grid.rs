//! A real Selenium Grid 4 on loopback: a hub and nodes (each with two
//! Chromium slots, through Debian's chromedriver), or one standalone
//! server. Installed by `scripts/ensure-grid` (Java, chromedriver, the
//! jar in `~/.cache/cdpilot/grid`, or `$CDPILOT_GRID_JAR`).
//!
//! Each Java process leads a process group of its own (chromedriver and
//! the Chromiums it starts are in it); dropping the [`Grid`] kills every
//! group by id, so a test that panics leaves no Java or Chromium behind.
//! Starting takes seconds: share one Grid per test binary where you can.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The Grid version `scripts/ensure-grid` installs.
pub const VERSION: &str = "4.48.0";

/// How long the hub and its nodes may take to come up.
const START_LIMIT: Duration = Duration::from_secs(120);

/// The node configuration: Chromium only (no driver detection, no
/// downloads), `slots` sessions at a time.
fn node_toml(slots: usize) -> String {
    format!(
        r#"[node]
detect-drivers = false
selenium-manager = false
max-sessions = {slots}
override-max-sessions = true

[[node.driver-configuration]]
display-name = "chrome"
stereotype = '{{"browserName": "chrome", "platformName": "linux"}}'
max-sessions = {slots}
"#
    )
}

/// A running Grid; dropped, it is killed.
pub struct Grid {
    /// The hub's (or standalone's) address, `http://127.0.0.1:P`.
    url: String,
    /// The hub or standalone server.
    hub: Option<Child>,
    /// The nodes, in start order; `None` once killed.
    nodes: Vec<Option<Child>>,
    /// Their addresses (`/status` names nodes by these).
    node_urls: Vec<String>,
    /// Configuration and logs.
    dir: PathBuf,
}

/// The Grid jar: `$CDPILOT_GRID_JAR`, else where `scripts/ensure-grid`
/// puts it. Panics with the command to run when it is missing.
pub fn jar() -> PathBuf {
    let path = std::env::var_os("CDPILOT_GRID_JAR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let home = std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| "/root".into());
            home.join(format!(".cache/cdpilot/grid/selenium-server-{VERSION}.jar"))
        });
    assert!(
        path.exists(),
        "the Selenium Grid jar is not at {}: run scripts/ensure-grid (or set CDPILOT_GRID_JAR)",
        path.display()
    );
    path
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Grid {
    /// A hub and `nodes` nodes with two Chromium slots each, every node
    /// registered and up.
    pub async fn hub_and_nodes(nodes: usize) -> Grid {
        Grid::hub_and_nodes_with_slots(nodes, 2).await
    }

    /// [`Grid::hub_and_nodes`] with `slots` Chromium slots per node (the
    /// load bench's 8 sessions on two nodes).
    pub async fn hub_and_nodes_with_slots(nodes: usize, slots: usize) -> Grid {
        let mut grid = Grid::empty("hub", slots);
        let (port, publish, subscribe) = (free_port(), free_port(), free_port());
        grid.url = format!("http://127.0.0.1:{port}");
        let bus = [
            "--publish-events".to_owned(),
            format!("tcp://127.0.0.1:{publish}"),
            "--subscribe-events".to_owned(),
            format!("tcp://127.0.0.1:{subscribe}"),
        ];
        // A request no node could serve is refused at once rather than
        // queued until the Grid's request timeout.
        let mut args = vec![
            "hub".to_owned(),
            "--host".into(),
            "127.0.0.1".into(),
            "--port".into(),
            port.to_string(),
            "--reject-unsupported-caps".into(),
            "true".into(),
        ];
        args.extend(bus.iter().cloned());
        grid.hub = Some(grid.java("hub", &args));
        for n in 0..nodes {
            let port = free_port();
            let mut args = vec![
                "node".to_owned(),
                "--config".into(),
                grid.dir.join("node.toml").display().to_string(),
                "--host".into(),
                "127.0.0.1".into(),
                "--port".into(),
                port.to_string(),
                "--hub".into(),
                grid.url.clone(),
            ];
            args.extend(bus.iter().cloned());
            let child = grid.java(&format!("node{n}"), &args);
            grid.nodes.push(Some(child));
            grid.node_urls.push(format!("http://127.0.0.1:{port}"));
        }
        grid.wait_ready(nodes).await;
        grid
    }

    /// One standalone server (hub and node in one process, two slots).
    pub async fn standalone() -> Grid {
        Grid::standalone_with(&[]).await
    }

    /// [`Grid::standalone`] with more server flags (`--enable-cdp false`).
    pub async fn standalone_with(flags: &[&str]) -> Grid {
        let mut grid = Grid::empty("standalone", 2);
        let port = free_port();
        grid.url = format!("http://127.0.0.1:{port}");
        let mut args = vec![
            "standalone".to_owned(),
            "--config".into(),
            grid.dir.join("node.toml").display().to_string(),
            "--host".into(),
            "127.0.0.1".into(),
            "--port".into(),
            port.to_string(),
        ];
        args.extend(flags.iter().map(|f| f.to_string()));
        grid.hub = Some(grid.java("standalone", &args));
        grid.node_urls.push(grid.url.clone());
        grid.wait_ready(1).await;
        grid
    }

    fn empty(kind: &str, slots: usize) -> Grid {
        let dir = std::env::temp_dir().join(format!(
            "cdpilot-grid-{kind}-{}-{}",
            std::process::id(),
            free_port()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("node.toml"), node_toml(slots)).unwrap();
        Grid {
            url: String::new(),
            hub: None,
            nodes: Vec::new(),
            node_urls: Vec::new(),
            dir,
        }
    }

    /// Starts `java -jar … args` in a process group of its own, logging to
    /// `<dir>/<name>.log`.
    fn java(&self, name: &str, args: &[String]) -> Child {
        use std::os::unix::process::CommandExt;
        let log = std::fs::File::create(self.dir.join(format!("{name}.log"))).unwrap();
        Command::new("java")
            .arg("-jar")
            .arg(jar())
            .args(args)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .process_group(0)
            .spawn()
            .expect("java is installed (scripts/ensure-grid)")
    }

    /// Waits until `/status` says ready with `nodes` nodes up.
    async fn wait_ready(&self, nodes: usize) {
        let started = std::time::Instant::now();
        loop {
            if let Some(status) = self.try_status().await {
                let up = status["nodes"]
                    .as_array()
                    .map_or(0, |n| n.iter().filter(|n| n["availability"] == "UP").count());
                if status["ready"] == true && up >= nodes {
                    return;
                }
            }
            assert!(
                started.elapsed() < START_LIMIT,
                "the Grid did not come up within {START_LIMIT:?}; logs in {}",
                self.dir.display()
            );
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// The hub's address (`http://127.0.0.1:P`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Node `n`'s address as `/status` names it.
    pub fn node_url(&self, n: usize) -> &str {
        &self.node_urls[n]
    }

    /// Where the Java processes log.
    pub fn log_dir(&self) -> &std::path::Path {
        &self.dir
    }

    /// The hub's `/status` `value`.
    pub async fn status(&self) -> Value {
        self.try_status().await.expect("the hub answers /status")
    }

    async fn try_status(&self) -> Option<Value> {
        let body = self.get("/status").await?;
        serde_json::from_str::<Value>(&body)
            .ok()
            .map(|v| v["value"].clone())
    }

    /// Each node's address and the ids of the sessions it runs.
    pub async fn sessions(&self) -> Vec<(String, Vec<String>)> {
        let status = self.status().await;
        status["nodes"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|node| {
                let ids = node["slots"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|s| s["session"]["sessionId"].as_str().map(str::to_owned))
                    .collect();
                (node["uri"].as_str().unwrap_or_default().to_owned(), ids)
            })
            .collect()
    }

    /// Sessions running on the whole Grid.
    pub async fn session_count(&self) -> usize {
        self.sessions().await.iter().map(|(_, s)| s.len()).sum()
    }

    /// New-session requests waiting in the Grid's queue.
    pub async fn queued(&self) -> usize {
        let body = self
            .get("/se/grid/newsessionqueue/queue")
            .await
            .unwrap_or_default();
        serde_json::from_str::<Value>(&body)
            .ok()
            .and_then(|v| v["value"].as_array().map(Vec::len))
            .unwrap_or(0)
    }

    /// Kills node `n` and everything it started (chromedriver, Chromium),
    /// as a machine dying would.
    pub fn kill_node(&mut self, n: usize) {
        if let Some(child) = self.nodes[n].take() {
            kill_group(child);
        }
    }

    /// One GET to the hub; the body, or `None` if it did not answer.
    async fn get(&self, path: &str) -> Option<String> {
        let host = self.url.trim_start_matches("http://");
        let mut stream = tokio::net::TcpStream::connect(host).await.ok()?;
        let request = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await.ok()?;
        let mut answer = Vec::new();
        tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer))
            .await
            .ok()?
            .ok()?;
        let answer = String::from_utf8_lossy(&answer);
        let (head, body) = answer.split_once("\r\n\r\n")?;
        if head.to_ascii_lowercase().contains("transfer-encoding: chunked") {
            Some(dechunk(body))
        } else {
            Some(body.to_owned())
        }
    }
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}

/// SIGKILL to the child's process group (it leads one), then reaps it.
fn kill_group(mut child: Child) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .status();
    let _ = child.kill();
    let _ = child.wait();
}

impl Drop for Grid {
    fn drop(&mut self) {
        for node in self.nodes.iter_mut() {
            if let Some(child) = node.take() {
                kill_group(child);
            }
        }
        if let Some(hub) = self.hub.take() {
            kill_group(hub);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
