//! The timeline: a trace read by a person (issue 43; the format is
//! `docs/src/spec/trace.md`). The steps as a list (tool, the target's role
//! and name, outcome, time), the screenshot and the snapshot of the
//! selected step, the console and the requests up to it, scrubbed with the
//! keyboard. Served by `cdpilot serve` (for the traces of its sessions,
//! live ones included: a trace is written per call, so reading it again
//! shows the new steps) and by `cdpilot trace view DIR` on loopback, both
//! behind the one guard.
//!
//! Routes (each declared with its credential in [`routes`]):
//! - `GET /timeline`, `/dashboard/timeline.js`, `/dashboard/timeline.css`:
//!   the page (static; it takes the token as the dashboard does);
//! - `GET /v1/timeline/traces`: the traces on the shelf, newest first;
//! - `GET /v1/timeline/traces/{name}`: one trace, read (steps, chapters,
//!   end, whether it is still being written);
//! - `GET /v1/timeline/traces/{name}/shots/{n}`: step n's screenshot.
//!
//! Owns the shelf (where traces are looked for). Page text reaches the
//! page only as JSON the script puts in text nodes (never markup); a
//! trace's name is one the shelf listed, and a screenshot is read from the
//! path the step's number makes, never from a path the trace names.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path as FsPath, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

use crate::serve::auth::{random_hex, Guard};
use crate::serve::routes::{Credential, Routes};

const PAGE: &str = include_str!("timeline.html");
const SCRIPT: &str = include_str!("timeline.js");
const STYLE: &str = include_str!("timeline.css");

/// How many traces the list shows (the newest; a name starts with its time).
const LISTED: usize = 200;
/// The largest screenshot served (a trace's are tens of KB).
const SHOT_MAX_BYTES: u64 = 8 << 20;

/// Where traces are looked for: each root is a trace directory itself
/// (`cdpilot trace view DIR`) or a directory of them (`[trace] dir`).
pub struct Shelf {
    roots: Vec<PathBuf>,
    /// Applied to every trace served (serve's secrets in force now; a
    /// trace was redacted as it was written, this is a second pass).
    redact: Box<dyn Fn(Value) -> Value + Send + Sync>,
    /// Each listed trace's line in the list, by directory, with the size
    /// and time of its `trace.jsonl` it was read at: the list is asked
    /// every few seconds, and a trace is read again only once it changed.
    /// Bounded by the shelf's traces (entries of traces gone are dropped).
    summaries: Mutex<HashMap<PathBuf, (u64, SystemTime, Value)>>,
}

/// One trace on the shelf.
#[derive(Debug, Clone)]
pub struct Shelved {
    /// Its directory's name: how the routes name it.
    pub name: String,
    pub dir: PathBuf,
}

impl Shelf {
    /// A shelf over `roots`, serving traces through `redact`.
    pub fn new(roots: Vec<PathBuf>, redact: impl Fn(Value) -> Value + Send + Sync + 'static) -> Shelf {
        Shelf {
            roots,
            redact: Box::new(redact),
            summaries: Mutex::default(),
        }
    }

    /// `cdpilot serve`'s shelf: `[trace] dir` and where `browser_trace
    /// start` writes without it (`<[files] output_dir>/traces`).
    pub fn of_engine(engine: &Arc<engine::Engine>) -> Shelf {
        let config = engine.config();
        let mut roots = Vec::new();
        if !config.trace.dir.is_empty() {
            roots.push(PathBuf::from(&config.trace.dir));
        }
        roots.push(config.files.output_dir().join("traces"));
        let secrets = engine.secrets().clone();
        Shelf::new(roots, move |value| secrets.redact_value(value))
    }

    /// The traces, newest first (at most [`LISTED`]); a name seen in an
    /// earlier root hides a later one.
    pub fn list(&self) -> Vec<Shelved> {
        let mut found: Vec<Shelved> = Vec::new();
        for root in &self.roots {
            let mut add = |dir: PathBuf| {
                let Some(name) = dir.file_name().and_then(|n| n.to_str()).map(str::to_owned) else {
                    return;
                };
                if plain_name(&name) && !found.iter().any(|s| s.name == name) {
                    found.push(Shelved { name, dir });
                }
            };
            if is_trace(root) {
                add(root.clone());
                continue;
            }
            let Ok(entries) = std::fs::read_dir(root) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                // Not through a link: the shelf is what is in its roots.
                let real_dir = entry.file_type().is_ok_and(|t| t.is_dir());
                if real_dir && is_trace(&path) {
                    add(path);
                }
            }
        }
        found.sort_by(|a, b| b.name.cmp(&a.name));
        found.truncate(LISTED);
        found
    }

    /// The trace named `name`, if the shelf lists it.
    pub fn find(&self, name: &str) -> Option<Shelved> {
        if !plain_name(name) {
            return None;
        }
        self.list().into_iter().find(|s| s.name == name)
    }

    /// The list's lines, each trace read again only if its file changed
    /// (the lock is not held while reading).
    fn summaries(&self) -> Vec<Value> {
        let listed = self.list();
        let mut kept = self.summaries.lock().unwrap().clone();
        kept.retain(|dir, _| listed.iter().any(|s| &s.dir == dir));
        let mut lines = Vec::with_capacity(listed.len());
        for shelved in &listed {
            let stamp = std::fs::metadata(shelved.dir.join("trace.jsonl"))
                .ok()
                .map(|m| (m.len(), m.modified().unwrap_or(SystemTime::UNIX_EPOCH)));
            let cached = kept
                .get(&shelved.dir)
                .filter(|(len, at, _)| stamp == Some((*len, *at)))
                .map(|(_, _, line)| line.clone());
            let line = cached.unwrap_or_else(|| {
                let line = summary(shelved);
                if let Some((len, at)) = stamp {
                    kept.insert(shelved.dir.clone(), (len, at, line.clone()));
                }
                line
            });
            lines.push(line);
        }
        *self.summaries.lock().unwrap() = kept;
        lines
    }
}

fn is_trace(dir: &FsPath) -> bool {
    dir.join("trace.jsonl").is_file()
}

/// A directory name as the trace writer makes them: nothing a path could
/// climb out with.
fn plain_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 120
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// The timeline's routes over `shelf`, guarded by `guard`.
pub fn routes(shelf: Arc<Shelf>, guard: Arc<Guard>) -> Routes {
    use Credential::{Bearer, Public};
    Routes::<Arc<Shelf>>::new(guard)
        .get("/timeline", Public, || async {
            page("text/html; charset=utf-8", PAGE)
        })
        .get("/dashboard/timeline.js", Public, || async {
            page("text/javascript", SCRIPT)
        })
        .get("/dashboard/timeline.css", Public, || async {
            page("text/css", STYLE)
        })
        .get("/v1/timeline/traces", Bearer, traces)
        .get("/v1/timeline/traces/{name}", Bearer, trace)
        .get("/v1/timeline/traces/{name}/shots/{n}", Bearer, shot)
        .with_state(shelf)
}

fn page(mime: &'static str, body: &'static str) -> Response {
    (
        [(header::CONTENT_TYPE, mime), (header::CACHE_CONTROL, "no-store")],
        body,
    )
        .into_response()
}

fn json_response(status: StatusCode, value: Value) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        value.to_string(),
    )
        .into_response()
}

fn no_such_trace(name: &str) -> Response {
    json_response(
        StatusCode::NOT_FOUND,
        json!({"error": {"code": "invalid_argument", "message": format!("no trace {name:?} on this server's shelf"), "next_step": "Pick one of GET /v1/timeline/traces."}}),
    )
}

/// `GET /v1/timeline/traces`.
async fn traces(State(shelf): State<Arc<Shelf>>) -> Response {
    let listed = tokio::task::spawn_blocking(move || shelf.summaries())
        .await
        .unwrap_or_default();
    json_response(StatusCode::OK, json!({"traces": listed}))
}

/// A trace's line in the list: its header's session and start, its steps,
/// whether it is still being written.
fn summary(shelved: &Shelved) -> Value {
    match engine::trace::read::read(&shelved.dir) {
        Ok(read) => json!({
            "name": shelved.name,
            "session": read.header.session,
            "started": read.header.started,
            "steps": read.steps.len(),
            "live": read.end.is_none() && read.cut.is_none(),
            "end": read.end.as_ref().map(|e| e.reason.clone()),
        }),
        Err(e) => json!({"name": shelved.name, "error": e.to_string()}),
    }
}

/// `?from=N`: only the steps from the N-th on (a live timeline asks for
/// what it has not read yet, its last step again).
#[derive(serde::Deserialize)]
struct Since {
    from: Option<usize>,
}

/// `GET /v1/timeline/traces/{name}[?from=N]`.
async fn trace(
    State(shelf): State<Arc<Shelf>>,
    Path(name): Path<String>,
    since: Result<Query<Since>, QueryRejection>,
) -> Response {
    let Ok(Query(since)) = since else {
        return json_response(
            StatusCode::BAD_REQUEST,
            json!({"error": {"code": "invalid_argument", "message": "from must be a step number (0 or more)", "next_step": "Ask ?from=N with N the number of steps already read, or leave it out for the whole trace."}}),
        );
    };
    let read = tokio::task::spawn_blocking(move || {
        let shelved = shelf.find(&name).ok_or(name)?;
        Ok::<_, String>((shelf.clone(), read_trace(&shelved, since.from.unwrap_or(0))))
    })
    .await;
    match read {
        Ok(Ok((shelf, Ok(value)))) => json_response(StatusCode::OK, (shelf.redact)(value)),
        Ok(Ok((_, Err(e)))) => json_response(
            StatusCode::UNPROCESSABLE_ENTITY,
            json!({"error": {"code": "invalid_argument", "message": e.to_string(), "next_step": "The trace cannot be read: see the file and line named."}}),
        ),
        Ok(Err(name)) => no_such_trace(&name),
        Err(_) => json_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            json!({"error": {"code": "internal"}}),
        ),
    }
}

/// One trace as the page reads it, its steps from the `from`-th on
/// (`from`: where they start, `total`: how many there are).
pub fn read_trace(shelved: &Shelved, from: usize) -> Result<Value, engine::trace::read::ReadError> {
    let read = engine::trace::read::read(&shelved.dir)?;
    let from = from.min(read.steps.len());
    Ok(json!({
        "name": shelved.name,
        "header": read.header,
        "from": from,
        "total": read.steps.len(),
        "steps": &read.steps[from..],
        "chapters": read.chapters,
        "end": read.end,
        "cut": read.cut.as_ref().map(ToString::to_string),
        "live": read.end.is_none() && read.cut.is_none(),
    }))
}

/// `GET /v1/timeline/traces/{name}/shots/{n}`: `shots/NNNN.jpg` of the
/// trace, a regular file (not a link a hand-edited trace put there).
async fn shot(State(shelf): State<Arc<Shelf>>, Path((name, n)): Path<(String, u64)>) -> Response {
    let jpeg = tokio::task::spawn_blocking(move || {
        let shelved = shelf.find(&name)?;
        let path = shelved.dir.join("shots").join(format!("{n:04}.jpg"));
        let meta = std::fs::symlink_metadata(&path).ok()?;
        (meta.is_file() && meta.len() <= SHOT_MAX_BYTES).then_some(())?;
        std::fs::read(&path).ok()
    })
    .await
    .ok()
    .flatten();
    match jpeg {
        Some(jpeg) => (
            [
                (header::CONTENT_TYPE, "image/jpeg"),
                (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            ],
            jpeg,
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "no such screenshot\n").into_response(),
    }
}

/// `cdpilot trace view DIR`: serves the timeline of `dir` (a trace, or a
/// directory of traces) on `listen`, a loopback address, behind the guard
/// with a token of its own, until `stop` completes. Prints the link (with
/// its token) on stderr once listening; `on_listening` gets it too.
pub async fn view(
    dir: PathBuf,
    listen: &str,
    stop: impl std::future::Future<Output = ()>,
    on_listening: impl FnOnce(&str),
) -> Result<(), String> {
    if !dir.is_dir() {
        return Err(format!(
            "{}: not a trace directory (it does not exist, or is not a directory)",
            dir.display()
        ));
    }
    let address: SocketAddr = listen
        .parse()
        .map_err(|e| format!("--listen {listen:?}: {e} (an address such as 127.0.0.1:0)"))?;
    if !address.ip().is_loopback() {
        return Err(format!(
            "--listen {address}: the timeline is served on loopback only (127.0.0.1 or [::1])"
        ));
    }
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .map_err(|e| format!("cannot listen on {address}: {e}"))?;
    let local = listener
        .local_addr()
        .map_err(|e| format!("cannot read the listening address: {e}"))?;
    let token = random_hex(24);
    let guard = Arc::new(Guard::new(token.clone(), local, Vec::new()));
    let shelf = Arc::new(Shelf::new(vec![dir], |value| value));
    let router = routes(shelf, guard).into_router();
    let link = format!("http://{local}/timeline#token={token}");
    eprintln!("cdpilot trace view: open {link}");
    on_listening(&link);
    tokio::select! {
        served = std::future::IntoFuture::into_future(axum::serve(listener, router)) => {
            served.map_err(|e| format!("the HTTP server failed: {e}"))
        }
        () = stop => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace_in(base: &FsPath, name: &str) -> PathBuf {
        let dir = base.join(name);
        std::fs::create_dir_all(dir.join("shots")).unwrap();
        std::fs::write(dir.join("trace.jsonl"), "{}\n").unwrap();
        dir
    }

    #[test]
    fn the_shelf_lists_only_the_traces_in_its_roots() {
        let base = std::env::temp_dir().join(format!("cdpilot-shelf-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        trace_in(&base, "20260101T000000Z-a");
        let single = trace_in(&base, "20260102T000000Z-b");
        std::fs::create_dir_all(base.join("not-a-trace")).unwrap();
        // A link to a trace elsewhere is not on the shelf.
        let elsewhere = trace_in(&base.join("x"), "far");
        std::os::unix::fs::symlink(&elsewhere, base.join("linked")).unwrap();
        let shelf = Shelf::new(vec![base.clone()], |v| v);
        let names: Vec<String> = shelf.list().into_iter().map(|s| s.name).collect();
        assert_eq!(names, ["20260102T000000Z-b", "20260101T000000Z-a"]);
        assert!(shelf.find("..").is_none());
        assert!(shelf.find("../x/far").is_none());
        assert!(shelf.find("linked").is_none());
        let one = Shelf::new(vec![single.clone()], |v| v);
        assert_eq!(one.list().len(), 1);
        // The list reads a trace again once it grew (a live session's).
        let header = r#"{"kind":"header","format":"cdpilot-trace","version":1,"session":"s","started":"x","cdpilot":"0","max_bytes":1}"#;
        let step = |n: u64| {
            format!(
                r#"{{"kind":"step","step":{n},"at":"x","ms":1,"tool":"browser_snapshot","arguments":{{}},"outcome":"ok"}}"#
            )
        };
        std::fs::write(single.join("trace.jsonl"), format!("{header}\n{}\n", step(1))).unwrap();
        assert_eq!(one.summaries()[0]["steps"], 1);
        assert_eq!(one.summaries()[0]["live"], true);
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(single.join("trace.jsonl"))
            .unwrap();
        std::io::Write::write_all(&mut file, format!("{}\n", step(2)).as_bytes()).unwrap();
        assert_eq!(one.summaries()[0]["steps"], 2);
        let _ = std::fs::remove_dir_all(&base);
    }
}
