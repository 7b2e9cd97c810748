//! A session traced (issue 43), through MCP stdio in a real Chromium: the
//! trace's files read back (lines, screenshots, modes), a typed secret
//! searched in every file (raw, URL-encoded, base64), its HAR's required
//! fields, and Chrome DevTools' own HAR import reads it; then `cdpilot replay` runs it again to the same end, stops at
//! the step whose button was renamed, refuses an edited trace's denied URL
//! (the denied server sees nothing) and an unknown tool, and names the
//! file and line of a trace it cannot read.

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use serde_json::{json, Value};
use support::{ref_on_line, spawn_cdpilot_with, text_of};
use testkit::DeniedServer;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const SECRET: &str = "s3cr3t pass&word";

/// A page whose button's label the test changes between runs.
struct PageServer {
    port: u16,
    label: Arc<Mutex<String>>,
}

impl PageServer {
    async fn start() -> PageServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let label = Arc::new(Mutex::new("Add".to_owned()));
        let shared = label.clone();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let label = shared.clone();
                tokio::spawn(async move {
                    let mut buffer = vec![0u8; 8192];
                    let mut read = 0;
                    while !buffer[..read].windows(4).any(|w| w == b"\r\n\r\n") {
                        match stream.read(&mut buffer[read..]).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => read += n,
                        }
                    }
                    let head = String::from_utf8_lossy(&buffer[..read]).to_string();
                    let (status, kind, body) = if head.starts_with("GET /page") {
                        // The query echoed in the body (HTML-escaped): a
                        // submitted secret comes back in a response body.
                        let query = head
                            .lines()
                            .next()
                            .and_then(|l| l.split(' ').nth(1))
                            .and_then(|p| p.split_once('?'))
                            .map(|(_, q)| q.replace('&', "&amp;").replace('<', "&lt;"))
                            .unwrap_or_default();
                        let page = page(&label.lock().unwrap(), port) + &format!("<!-- {query} -->");
                        ("200 OK", "text/html", page.into_bytes())
                    } else if head.starts_with("GET /frame") {
                        ("200 OK", "text/html", FRAME.as_bytes().to_vec())
                    } else if head.starts_with("GET /dot.png") {
                        {
                            use base64::Engine as _;
                            let png = base64::engine::general_purpose::STANDARD.decode(DOT).unwrap();
                            ("200 OK", "image/png", png)
                        }
                    } else {
                        ("404 Not Found", "text/html", Vec::new())
                    };
                    let head = format!(
                        "HTTP/1.1 {status}\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                        body.len()
                    );
                    let _ = stream.write_all(&[head.into_bytes(), body].concat()).await;
                });
            }
        });
        PageServer { port, label }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/page", self.port)
    }
}

/// The page's cross-origin frame (`localhost`, the page is on `127.0.0.1`).
const FRAME: &str = "<!doctype html><p>In the frame</p>";

/// The page's image, a 1×1 PNG: a binary body, as base64.
const DOT: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

fn page(label: &str, port: u16) -> String {
    format!(
        "<!doctype html><title>Trace</title>\
         <button onclick=\"n++; out.textContent = 'Clicked ' + n + ' times'\">{label}</button>\
         <p id=out>Clicked 0 times</p>\
         <form action=/page method=get><input name=pw aria-label=Password></form>\
         <img src=/dot.png alt=dot><p id=framed>Frame loading</p>\
         <iframe src=\"http://localhost:{port}/frame\" title=Frame onload=\"framed.textContent = 'Frame loaded'\"></iframe>\
         <script>let n = 0; console.log('page ready')</script>"
    )
}

fn config(dir: &Path) -> PathBuf {
    config_with(dir, "")
}

/// [`config`] and `more` lines.
fn config_with(dir: &Path, more: &str) -> PathBuf {
    let path = dir.join("cdpilot.toml");
    let out = dir.join("out");
    std::fs::write(
        &path,
        format!(
            "[secrets]\nPW = {{ env = \"CDPILOT_TEST_TRACE_SECRET\" }}\n[files]\noutput_dir = \"{}\"\n{more}",
            out.display()
        ),
    )
    .unwrap();
    path
}

/// `cdpilot replay DIR --json` (and `more` flags): its exit code and report.
async fn replay(tmp: &Path, dir: &Path, more: &[&str]) -> (i32, Value) {
    let mut args = vec![
        "replay".to_owned(),
        dir.display().to_string(),
        "--json".into(),
        "--config".into(),
        config(tmp).display().to_string(),
    ];
    args.extend(more.iter().map(|s| s.to_string()));
    let tmp = tmp.to_owned();
    let output = tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_cdpilot"))
            .args(&args)
            .env("TMPDIR", &tmp)
            .env("CDPILOT_CHROME", testkit::chromium::executable())
            .env("CDPILOT_CONFIG", "")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let report = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|_| json!({"unparsed": stdout, "stderr": String::from_utf8_lossy(&output.stderr)}));
    (output.status.code().unwrap_or(-1), report)
}

/// `har` through Chrome DevTools' own HAR import (what the Network
/// panel's import runs: `HARRoot`, then `Importer.requestsFromHARLog`), in
/// the DevTools frontend this Chromium bundles: each request as DevTools
/// made it (`{url, status, type, body}`).
async fn devtools_import(har: &Value) -> Vec<Value> {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    let options = testkit::chromium::launch_options(cdp::launch::Debugging::Port);
    let chromium = cdp::launch::launch(&options, std::time::Duration::from_secs(30))
        .await
        .expect("launch");
    let (mut socket, _) = tokio_tungstenite::connect_async(chromium.ws_url()).await.unwrap();
    let send = |id: u64, method: &str, params: Value, session: Option<&str>| {
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = session.into();
        }
        Message::text(message.to_string())
    };
    let create = json!({"url": "devtools://devtools/bundled/devtools_app.html"});
    socket
        .send(send(1, "Target.createTarget", create, None))
        .await
        .unwrap();
    let expression = format!(
        "(async () => {{ const HAR = await import('./models/har/har.js');            const root = new HAR.HARFormat.HARRoot({har});            const out = [];            for (const r of HAR.Importer.Importer.requestsFromHARLog(root.log)) {{              const c = await r.requestContentData();              out.push({{url: r.url(), status: r.statusCode, type: r.resourceType().name(),                         body: c.isTextContent ? c.text : null}}); }}            return out; }})()"
    );
    let read = async {
        let mut session = String::new();
        while let Some(Ok(message)) = socket.next().await {
            let Message::Text(text) = message else { continue };
            let said: Value = serde_json::from_str(text.as_str()).unwrap();
            if said["id"] == 1 {
                let attach = json!({"targetId": said["result"]["targetId"], "flatten": true});
                socket
                    .send(send(2, "Target.attachToTarget", attach, None))
                    .await
                    .unwrap();
            }
            if said["id"] == 2 {
                session = said["result"]["sessionId"].as_str().unwrap().to_owned();
                socket
                    .send(send(3, "Runtime.enable", json!({}), Some(&session)))
                    .await
                    .unwrap();
            }
            // The frontend's own page (not the blank one before it) is up.
            if said["method"] == "Runtime.executionContextCreated"
                && said["params"]["context"]["origin"] == "devtools://devtools"
                && said["params"]["context"]["auxData"]["isDefault"] == true
            {
                let evaluate = json!({"expression": expression, "contextId": said["params"]["context"]["id"],
                    "awaitPromise": true, "returnByValue": true});
                socket
                    .send(send(4, "Runtime.evaluate", evaluate, Some(&session)))
                    .await
                    .unwrap();
            }
            if said["id"] == 4 {
                return said;
            }
        }
        panic!("the DevTools page's socket closed");
    };
    let said = tokio::time::timeout(std::time::Duration::from_secs(30), read)
        .await
        .expect("DevTools' HAR import answers");
    chromium.shutdown(std::time::Duration::from_secs(5)).await;
    said["result"]["result"]["value"]
        .as_array()
        .unwrap_or_else(|| panic!("DevTools' HAR import refused it: {said:#}"))
        .clone()
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            files.push(path);
        }
    }
    files
}

fn lines(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("trace.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// cdpilot over MCP with the `trace` group and [`config`] under `root`,
/// its session's trace started: the client, its browser's profile, and
/// the trace's directory.
async fn traced_session(root: &Path) -> (testkit::McpClient, tempfile::TempDir, PathBuf) {
    traced_session_with(root, "").await
}

/// [`traced_session`] with `more` lines of configuration.
async fn traced_session_with(root: &Path, more: &str) -> (testkit::McpClient, tempfile::TempDir, PathBuf) {
    let cfg = config_with(root, more);
    let (mut client, chrome_tmp) =
        spawn_cdpilot_with(&["--caps", "trace", "--config", cfg.to_str().unwrap()]);
    client.initialize().await;
    let started = client.call("browser_trace", json!({"action": "start"})).await;
    assert_eq!(started["isError"], false, "{started}");
    let dir = PathBuf::from(started["structuredContent"]["dir"].as_str().unwrap());
    (client, chrome_tmp, dir)
}

/// A copy of trace `dir` with `edit` applied to its trace.jsonl.
fn edited(dir: &Path, to: &Path, edit: impl Fn(String) -> String) -> PathBuf {
    std::fs::create_dir_all(to).unwrap();
    let text = std::fs::read_to_string(dir.join("trace.jsonl")).unwrap();
    std::fs::write(to.join("trace.jsonl"), edit(text)).unwrap();
    to.to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_traced_session_reads_back_without_its_secret_and_replays_to_the_same_end() {
    std::env::set_var("CDPILOT_TEST_TRACE_SECRET", SECRET);
    let site = PageServer::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let (mut client, _chrome_tmp, dir) = traced_session(tmp.path()).await;
    assert!(
        dir.starts_with(tmp.path().join("out/traces")),
        "{}",
        dir.display()
    );

    client.call("browser_navigate", json!({"url": site.url()})).await;
    let snap = text_of(&client.call("browser_snapshot", json!({})).await);
    let add = ref_on_line(&snap, "button \"Add\"");
    // A step that only reads, naming a ref (what --continue-on-change passes over).
    let shot = client.call("browser_screenshot", json!({"ref": add})).await;
    assert_eq!(shot["isError"], false, "{shot}");
    for _ in 0..2 {
        let click = client.call("browser_click", json!({"ref": add})).await;
        assert_eq!(click["isError"], false, "{click}");
    }
    client
        .call("browser_trace", json!({"action": "chapter", "name": "log in"}))
        .await;
    let snap = text_of(&client.call("browser_snapshot", json!({})).await);
    assert!(snap.contains("Clicked 2 times"), "{snap}");
    let password = ref_on_line(&snap, "textbox \"Password\"");
    let typed = client
        .call(
            "browser_type",
            json!({"ref": password, "text": "{{secret:PW}}", "submit": true}),
        )
        .await;
    assert_eq!(typed["isError"], false, "{typed}");
    client.call("browser_wait", json!({"url": "**/page?pw=*"})).await;
    // The new document, not the one the submit left.
    client
        .call("browser_wait", json!({"text": "Clicked 0 times"}))
        .await;
    // Its cross-origin frame in, as the recorded snapshot has it.
    client.call("browser_wait", json!({"text": "Frame loaded"})).await;
    client.call("browser_snapshot", json!({})).await;
    let stopped = client.call("browser_trace", json!({"action": "stop"})).await;
    assert_eq!(stopped["isError"], false, "{stopped}");

    // The files: private, one header and a line per call, screenshots.
    assert_eq!(
        std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
        0o700
    );
    let lines = lines(&dir);
    assert_eq!(lines[0]["kind"], "header");
    assert_eq!(lines[0]["format"], "cdpilot-trace");
    assert_eq!(lines[0]["version"], 1);
    let steps: Vec<&Value> = lines.iter().filter(|l| l["kind"] == "step").collect();
    let tools: Vec<&str> = steps.iter().map(|s| s["tool"].as_str().unwrap()).collect();
    assert_eq!(
        tools,
        [
            "browser_navigate",
            "browser_snapshot",
            "browser_screenshot",
            "browser_click",
            "browser_click",
            "browser_snapshot",
            "browser_type",
            "browser_wait",
            "browser_wait",
            "browser_wait",
            "browser_snapshot"
        ],
        "{lines:#?}"
    );
    let click = steps[3];
    assert_eq!(click["targets"]["/ref"]["role"], "button", "{click}");
    assert_eq!(click["targets"]["/ref"]["name"], "Add");
    assert_eq!(
        (
            click["targets"]["/ref"]["ordinal"].as_u64(),
            click["targets"]["/ref"]["of"].as_u64()
        ),
        (Some(0), Some(1))
    );
    assert!(click["url_before"].as_str().unwrap().ends_with("/page"));
    assert!(click["budget_ms"].as_u64().unwrap() > 0);
    assert!(
        steps[1]["text"].as_str().unwrap().contains("<<page-content"),
        "page text stays inside the markers"
    );
    assert!(
        steps.iter().any(|s| s["console"]
            .as_array()
            .is_some_and(|c| c.iter().any(|m| m["text"] == "page ready"))),
        "{steps:#?}"
    );
    let chapter = lines.iter().find(|l| l["kind"] == "chapter").unwrap();
    assert_eq!(
        (chapter["name"].as_str(), chapter["after_step"].as_u64()),
        (Some("log in"), Some(5))
    );
    assert_eq!(lines.last().unwrap()["kind"], "end");
    let shot = dir.join(click["shot"].as_str().expect("a click has a screenshot"));
    let jpeg = std::fs::read(&shot).unwrap();
    assert!(
        jpeg.starts_with(&[0xff, 0xd8, 0xff]) && jpeg.ends_with(&[0xff, 0xd9]) && jpeg.len() > 1000,
        "{} bytes",
        jpeg.len()
    );
    assert_eq!(
        std::fs::metadata(&shot).unwrap().permissions().mode() & 0o777,
        0o600
    );
    // No screenshot of the page the secret was typed on.
    assert_eq!(steps[6]["shot_dropped"], "secret_on_page", "{}", steps[6]);
    assert!(
        steps[7]["text"].as_str().unwrap().contains("pw={{secret:PW}}"),
        "{}",
        steps[7]
    );

    // The secret, in any spelling, in no file of the trace.
    let spellings = [
        SECRET.to_owned(),
        SECRET.replace(' ', "%20").replace('&', "%26"),
        SECRET.replace(' ', "+").replace('&', "%26"),
        base64::engine::general_purpose::STANDARD.encode(SECRET),
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(SECRET),
    ];
    let files = files_under(&dir);
    assert!(files.len() >= 4, "{files:?}");
    for file in &files {
        let bytes = std::fs::read(file).unwrap();
        for spelling in &spellings {
            assert!(
                !bytes.windows(spelling.len()).any(|w| w == spelling.as_bytes()),
                "{} holds the secret as {spelling:?}",
                file.display()
            );
        }
        assert_eq!(
            std::fs::metadata(file).unwrap().permissions().mode() & 0o777,
            0o600,
            "{}",
            file.display()
        );
    }

    // The HAR: HAR 1.2's required fields, the page's document requests.
    let har: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("har.json")).unwrap()).unwrap();
    engine::trace::har::check_har_1_2(&har).unwrap();
    let entries = har["log"]["entries"].as_array().unwrap();
    let documents: Vec<&Value> = entries
        .iter()
        .filter(|e| e["request"]["url"].as_str().unwrap().contains("/page"))
        .collect();
    assert!(documents.len() >= 2, "{har:#}");
    assert_eq!(documents[0]["response"]["status"], 200);
    // Its body, as the browser kept it: what `browser_network har` answers with.
    assert!(
        documents[0]["response"]["content"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("Clicked 0 times")),
        "{:#}",
        documents[0]
    );
    // The cross-origin frame's document (its request is the parent's, its
    // response the frame's own session's) and the binary image, base64.
    let entry = |path: &str| {
        entries
            .iter()
            .find(|e| e["request"]["url"].as_str().unwrap().ends_with(path))
            .unwrap_or_else(|| {
                let urls: Vec<_> = entries
                    .iter()
                    .map(|e| format!("{} {}", e["request"]["url"], e["response"]["status"]))
                    .collect();
                panic!("no {path} among the HAR's entries: {urls:#?}")
            })
    };
    let frame = entry(&format!("//localhost:{}/frame", site.port));
    assert_eq!(frame["response"]["status"], 200, "{frame:#}");
    assert_eq!(frame["response"]["content"]["text"], FRAME, "{frame:#}");
    let dot = &entry("/dot.png")["response"]["content"];
    assert_eq!(
        (&dot["encoding"], &dot["text"]),
        (&json!("base64"), &json!(DOT)),
        "{dot:#}"
    );
    let replayable = engine::policy::har::Har::parse(&har.to_string()).unwrap();
    assert!(replayable
        .find("GET", &site.url(), None)
        .is_some_and(|r| String::from_utf8_lossy(&r.body).contains("<button")));
    assert!(documents[0]["response"]["headers"]
        .as_array()
        .unwrap()
        .iter()
        .any(|h| h["name"].as_str().unwrap().eq_ignore_ascii_case("content-type")));
    // Chrome DevTools' own HAR import reads it: the bodies, statuses and
    // types the Network panel would show.
    let imported = devtools_import(&har).await;
    let page = imported
        .iter()
        .find(|r| r["url"] == site.url())
        .unwrap_or_else(|| panic!("{imported:#?}"));
    assert_eq!(
        (page["status"].as_i64(), page["type"].as_str()),
        (Some(200), Some("document")),
        "{page}"
    );
    assert!(
        page["body"].as_str().unwrap().contains("Clicked 0 times"),
        "{page}"
    );
    client.close_stdin();

    // Replayed without the model: the same steps, the same answers.
    let (code, report) = replay(tmp.path(), &dir, &[]).await;
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["stopped"], Value::Null, "{report:#}");
    assert_eq!(report["steps"].as_array().unwrap().len(), steps.len());
    assert_eq!(
        report["answers_differ"],
        json!([]),
        "{report:#}\nrecorded: {steps:#?}"
    );

    // The button renamed: the replay stops at the first step naming it
    // (a screenshot of it), and says why.
    *site.label.lock().unwrap() = "Plus".into();
    let (code, report) = replay(tmp.path(), &dir, &[]).await;
    assert_eq!(code, 1, "{report:#}");
    let stop = &report["stopped"];
    assert_eq!(
        (stop["step"].as_u64(), stop["tool"].as_str()),
        (Some(3), Some("browser_screenshot")),
        "{report:#}"
    );
    assert_eq!(stop["reason"], "not_found");
    assert_eq!(stop["detail"]["expected"]["name"], "Add");
    assert!(
        stop["snapshot"].as_str().unwrap().contains("button \"Plus\""),
        "{stop}"
    );
    assert_eq!(
        report["steps"].as_array().unwrap().len(),
        2,
        "nothing past the changed step ran"
    );
    // --continue-on-change passes over the step that only reads, and
    // stops at the click that acts on the renamed button.
    let (code, report) = replay(tmp.path(), &dir, &["--continue-on-change"]).await;
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(report["changed"], json!([3]), "{report:#}");
    assert_eq!(report["steps"][2]["outcome"], "changed", "{report:#}");
    assert_eq!(
        (
            report["stopped"]["step"].as_u64(),
            report["stopped"]["tool"].as_str()
        ),
        (Some(4), Some("browser_click")),
        "{report:#}"
    );

    // --until: only the first steps.
    let (code, report) = replay(tmp.path(), &dir, &["--until", "2"]).await;
    assert_eq!(
        (code, report["steps"].as_array().unwrap().len()),
        (0, 2),
        "{report:#}"
    );

    // An edited trace: a denied URL is refused at that step, and never reached.
    let denied = DeniedServer::start().await;
    let to_denied = edited(&dir, &tmp.path().join("edited-denied"), |t| {
        t.replacen(&site.url(), &denied.url("/page"), 1)
    });
    let rule = format!("http://{}/*", denied.host());
    let (code, report) = replay(tmp.path(), &to_denied, &["--deny", &rule]).await;
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(
        (
            report["stopped"]["step"].as_u64(),
            report["stopped"]["reason"].as_str()
        ),
        (Some(1), Some("refused")),
        "{report:#}"
    );
    assert_eq!(report["stopped"]["detail"]["error"]["code"], "permission_denied");
    denied.assert_untouched("an edited trace's navigate");
    // … and a tool this server does not have, as a model's call would be.
    let unknown = edited(&dir, &tmp.path().join("edited-tool"), |t| {
        t.replacen(
            "\"tool\":\"browser_navigate\"",
            "\"tool\":\"browser_format_disk\"",
            1,
        )
    });
    let (code, report) = replay(tmp.path(), &unknown, &[]).await;
    assert_eq!(
        (code, report["stopped"]["reason"].as_str()),
        (1, Some("refused")),
        "{report:#}"
    );
    assert!(
        report["stopped"]["message"]
            .as_str()
            .unwrap()
            .contains("browser_format_disk"),
        "{report:#}"
    );

    // Bad input: named by file and line, nothing replayed.
    let text = std::fs::read_to_string(dir.join("trace.jsonl")).unwrap();
    let version = edited(&dir, &tmp.path().join("v7"), |t| {
        t.replacen("\"version\":1", "\"version\":7", 1)
    });
    let (code, report) = replay(tmp.path(), &version, &[]).await;
    assert_eq!(code, 2, "{report:#}");
    assert_eq!(report["error"]["line"], 1);
    assert!(
        report["error"]["file"]
            .as_str()
            .unwrap()
            .ends_with("v7/trace.jsonl"),
        "{report:#}"
    );
    assert!(
        report["error"]["message"].as_str().unwrap().contains("version 7"),
        "{report:#}"
    );
    let (code, report) = replay(tmp.path(), &tmp.path().join("nowhere"), &[]).await;
    assert_eq!(code, 2, "{report:#}");
    assert!(
        report["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not a trace directory"),
        "{report:#}"
    );
    let cut = text.len() - text.lines().last().unwrap().len() - 30;
    let truncated = edited(&dir, &tmp.path().join("cut"), |t| t[..cut].to_owned());
    let (code, report) = replay(tmp.path(), &truncated, &["--until", "1"]).await;
    assert_eq!(code, 0, "the steps before a cut line replay: {report:#}");
    let _ = truncated;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_trace_flag_traces_every_session_and_export_prints_cdpilot_commands() {
    let site = testkit::TestSite::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("traces");
    // And its video when the session ends.
    let config = tmp.path().join("cdpilot.toml");
    std::fs::write(&config, "[trace]\nvideo = true\n").unwrap();
    let (mut client, _chrome_tmp) = spawn_cdpilot_with(&[
        "--trace",
        base.to_str().unwrap(),
        "--config",
        config.to_str().unwrap(),
    ]);
    client.initialize().await;
    client
        .call("browser_navigate", json!({"url": site.url("/dialogs.html")}))
        .await;
    let snap = text_of(&client.call("browser_snapshot", json!({})).await);
    // A dialog opened by a call, and answered by the next: each step says so.
    let chain = ref_on_line(&snap, "button \"Chain\"");
    client.call("browser_click", json!({"ref": chain})).await;
    let answered = client.call("browser_dialog", json!({"action": "accept"})).await;
    assert_eq!(answered["isError"], false, "{answered}");
    client.close_stdin();
    let dir = support::eventually(std::time::Duration::from_secs(20), || {
        let base = base.clone();
        async move {
            let Ok(mut dirs) = std::fs::read_dir(&base) else {
                return false;
            };
            // Read as it is written: a line may be half there.
            dirs.next().and_then(Result::ok).is_some_and(|d| {
                let text = std::fs::read_to_string(d.path().join("trace.jsonl")).unwrap_or_default();
                text.lines()
                    .last()
                    .and_then(|l| serde_json::from_str::<Value>(l).ok())
                    .is_some_and(|l| l["kind"] == "end")
            })
        }
    })
    .await;
    assert!(
        dir,
        "the session's trace ends with its end line when cdpilot exits"
    );
    let dir = std::fs::read_dir(&base).unwrap().next().unwrap().unwrap().path();
    let steps: Vec<Value> = lines(&dir).into_iter().filter(|l| l["kind"] == "step").collect();
    assert_eq!(steps.len(), 4, "{steps:#?}");
    // The video, made as the session ended: WebM (EBML's magic), 0600.
    let video = dir.join("video.webm");
    let made = support::eventually(std::time::Duration::from_secs(60), || {
        let video = video.clone();
        async move { video.is_file() }
    })
    .await;
    assert!(made, "no video in {}: {:?}", dir.display(), files_under(&dir));
    let bytes = std::fs::read(&video).unwrap();
    assert_eq!(&bytes[..4], &[0x1a, 0x45, 0xdf, 0xa3], "{} bytes", bytes.len());
    assert_eq!(
        std::fs::metadata(&video).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert!(steps[0]["shot"].as_str().is_some(), "{}", steps[0]);
    let events = |step: &Value| -> Vec<String> {
        step["events"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|e| {
                format!(
                    "{} {}",
                    e["event"].as_str().unwrap(),
                    e["message"].as_str().unwrap_or("")
                )
            })
            .collect()
    };
    assert!(
        events(&steps[2]).contains(&"dialog_opened first".to_owned()),
        "{:#}",
        steps[2]
    );
    assert!(
        events(&steps[3]).contains(&"dialog_closed first".to_owned()),
        "{:#}",
        steps[3]
    );
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_cdpilot"))
        .args(["trace", "export", dir.to_str().unwrap(), "--cli"])
        .output()
        .unwrap();
    let script = String::from_utf8_lossy(&output.stdout);
    assert!(
        script.contains(&format!("\ncdpilot open {}\n", site.url("/dialogs.html"))),
        "{script}"
    );
    assert!(script.contains("\ncdpilot snapshot\n"), "{script}");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_cdpilot"))
        .args(["trace", "har", dir.to_str().unwrap()])
        .output()
        .unwrap();
    let har: Value = serde_json::from_slice(&output.stdout).unwrap();
    engine::trace::har::check_har_1_2(&har).unwrap();
    assert!(!har["log"]["entries"].as_array().unwrap().is_empty());
}

/// What ffprobe says of the video at `video`: codec, frames, size, duration.
fn probe(video: &Path) -> Value {
    let probe = std::process::Command::new("ffprobe")
        .args(["-v", "error", "-count_frames", "-show_entries"])
        .args(["stream=codec_name,nb_read_frames,width,height", "-show_entries"])
        .args(["format=duration", "-of", "json"])
        .arg(video)
        .output()
        .expect("ffprobe (scripts/ensure-ffmpeg installs it)");
    let probed: Value = serde_json::from_slice(&probe.stdout).unwrap();
    eprintln!("ffprobe: {probed}");
    probed
}

/// `cdpilot trace video ARGS…` with `PATH` and `TMPDIR`: its exit code,
/// stdout and stderr.
fn trace_video(args: &[&str], path: &str, tmp: &Path) -> (i32, String, String) {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_cdpilot"))
        .arg("trace")
        .arg("video")
        .args(args)
        .env("PATH", path)
        .env("TMPDIR", tmp)
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Issue 43, item 4: a traced run made into a VP9 WebM by ffmpeg, each
/// acting step's picture captioned with its tool and target and the
/// target's box (recorded in the step) outlined; what ffmpeg was given
/// holds no typed secret; without ffmpeg, or without a trace, a clear error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_traced_session_becomes_a_video_of_its_steps_without_its_secret() {
    std::env::set_var("CDPILOT_TEST_TRACE_SECRET", SECRET);
    let site = PageServer::start().await;
    let tmp = tempfile::tempdir().unwrap();
    // `[trace] video`: browser_trace stop makes it and names it.
    let (mut client, _chrome_tmp, dir) = traced_session_with(tmp.path(), "[trace]\nvideo = true\n").await;
    client.call("browser_navigate", json!({"url": site.url()})).await;
    let snap = text_of(&client.call("browser_snapshot", json!({})).await);
    let add = ref_on_line(&snap, "button \"Add\"");
    let password = ref_on_line(&snap, "textbox \"Password\"");
    for _ in 0..2 {
        let click = client.call("browser_click", json!({"ref": add})).await;
        assert_eq!(click["isError"], false, "{click}");
    }
    let typed = client
        .call("browser_type", json!({"ref": password, "text": "{{secret:PW}}"}))
        .await;
    assert_eq!(typed["isError"], false, "{typed}");
    client.call("browser_snapshot", json!({})).await;
    let stopped = client.call("browser_trace", json!({"action": "stop"})).await;
    assert_eq!(
        stopped["structuredContent"]["video"].as_str(),
        Some(dir.join("video.webm").to_str().unwrap()),
        "{stopped}"
    );
    assert!(dir.join("video.webm").is_file());
    client.close_stdin();

    // Each acting step on an element says where it was, against the
    // viewport its screenshot shows.
    let steps: Vec<Value> = lines(&dir).into_iter().filter(|l| l["kind"] == "step").collect();
    let click = &steps[2];
    assert_eq!(click["tool"], "browser_click");
    let (w, h) = (click["box"]["width"].as_f64(), click["box"]["height"].as_f64());
    assert!(w > Some(10.0) && h > Some(5.0), "{click}");
    assert!(click["viewport"]["width"].as_f64() > w, "{click}");
    assert!(
        steps[4]["box"]["width"].as_f64() > Some(10.0),
        "the typed field's box: {}",
        steps[4]
    );
    assert_eq!(steps[4]["shot_dropped"], "secret_on_page");
    assert!(
        steps[0].get("box").is_none(),
        "a navigate aims at nothing: {}",
        steps[0]
    );

    // The screencast's frames between the steps, kept for the video: JPEGs,
    // 0600, none from the typing of the secret on (its call's frames, and
    // every later one of its page, are dropped).
    let cast: Vec<Value> = std::fs::read_to_string(dir.join("cast.jsonl"))
        .expect("[trace] video keeps the screencast's frames in cast.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(cast.len() >= 2, "the page painted at least twice: {cast:?}");
    let typing_began = engine::audit::parse_rfc3339(steps[4]["at"].as_str().unwrap()).unwrap();
    for frame in &cast {
        let file = dir.join(frame["file"].as_str().unwrap());
        assert_eq!(&std::fs::read(&file).unwrap()[..2], [0xff, 0xd8], "{frame}");
        assert_eq!(
            std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert!(
            frame["at"].as_f64().unwrap() < typing_began,
            "a frame from the secret's page: {frame}"
        );
        assert!(frame["viewport"]["width"].as_f64() > Some(100.0), "{frame}");
    }
    let stop_line = lines(&dir).into_iter().find(|l| l["kind"] == "end").unwrap();
    eprintln!(
        "cast frames kept: {}, dropped: {}",
        cast.len(),
        stop_line["dropped"]
    );

    // The video the stop made is of the screencast's frames.
    let (code, stdout, stderr) = trace_video(
        &[
            dir.to_str().unwrap(),
            "--out",
            tmp.path().join("cast.webm").to_str().unwrap(),
        ],
        &std::env::var("PATH").unwrap(),
        tmp.path(),
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains(" pictures of the screencast, "), "{stdout}");
    let probed = probe(&tmp.path().join("cast.webm"));
    let seconds: f64 = probed["format"]["duration"].as_str().unwrap().parse().unwrap();
    assert_eq!(probed["streams"][0]["codec_name"], "vp9", "{probed}");
    assert!(seconds >= 2.0 - 0.2, "the last frame alone plays 2 s: {probed}");
    // `--steps`: of the steps' screenshots, one picture each.
    let (code, stdout, stderr) = trace_video(
        &[dir.to_str().unwrap(), "--keep-work", "--steps"],
        &std::env::var("PATH").unwrap(),
        tmp.path(),
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    let video = dir.join("video.webm");
    assert!(
        stdout.starts_with(&format!("{}: 4 steps", video.display())),
        "{stdout}"
    );
    let probed = probe(&video);
    let stream = &probed["streams"][0];
    assert_eq!(stream["codec_name"], "vp9", "{probed}");
    let frames: u64 = stream["nb_read_frames"].as_str().unwrap().parse().unwrap();
    assert!(frames > 0, "{probed}");
    assert!(stream["width"].as_u64().unwrap() <= 640, "{probed}");
    // 4 pictures (navigate, two clicks, the typing shown on the click's
    // screenshot), each 0.5–3 s, the last 2 s.
    let seconds: f64 = probed["format"]["duration"].as_str().unwrap().parse().unwrap();
    assert!(
        (4.0 * 0.5 - 0.2..=3.0 * 3.0 + 2.0 + 0.2).contains(&seconds),
        "{probed}"
    );
    assert_eq!(
        std::fs::metadata(&video).unwrap().permissions().mode() & 0o777,
        0o600
    );

    // What ffmpeg was given: the captions name tools and targets, and no
    // file holds the typed secret in any spelling.
    let work = stderr
        .lines()
        .find_map(|l| l.strip_prefix("cdpilot trace video: ffmpeg's inputs kept in "))
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("{stderr}"));
    let script = std::fs::read_to_string(work.join("filter.txt")).unwrap();
    assert_eq!(
        script.matches("drawbox=").count(),
        3,
        "two clicks and the typing: {script}"
    );
    let captions: Vec<String> = (0..4)
        .map(|i| std::fs::read_to_string(work.join(format!("caption-{i}.txt"))).unwrap())
        .collect();
    assert_eq!(captions[1], "3  browser_click  button \"Add\"", "{captions:?}");
    assert!(
        captions[3].starts_with("5  browser_type  textbox \"Password\""),
        "{captions:?}"
    );
    for file in files_under(&work) {
        let text = std::fs::read_to_string(&file).unwrap();
        for spelling in [
            SECRET.to_owned(),
            "{{secret:PW}}".to_owned(),
            base64::engine::general_purpose::STANDARD.encode(SECRET),
        ] {
            assert!(!text.contains(&spelling), "{} holds {spelling:?}", file.display());
        }
    }

    // Without ffmpeg: the error says how to install it.
    let (code, _, stderr) = trace_video(&[dir.to_str().unwrap()], "/nonexistent", tmp.path());
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("ffmpeg_missing"), "{stderr}");
    assert!(
        stderr.contains("apt-get install --no-install-recommends ffmpeg"),
        "{stderr}"
    );
    assert!(video.is_file(), "a run that fails leaves the video before it");
    assert!(!dir.join("video.webm.part").exists());
    // No trace there: the file is named.
    let nowhere = tmp.path().join("nowhere");
    let (code, _, stderr) = trace_video(&[nowhere.to_str().unwrap()], "/usr/bin:/bin", tmp.path());
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(nowhere.to_str().unwrap()) && stderr.contains("trace_unreadable"),
        "{stderr}"
    );
}
