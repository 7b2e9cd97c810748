//! The audit trail end to end (issue 9): every tool call, failed ones
//! included, is one JSON line in `[audit] file` with its verdicts and
//! outcome, and `cdpilot://audit` lists the same records.

mod support;

use std::path::Path;

use serde_json::{json, Value};
use support::spawn_cdpilot_with;
use testkit::TestSite;

/// A config file in `dir` with `body`, for `--config`.
fn config_in(dir: &Path, body: &str) -> String {
    let path = dir.join("cdpilot.toml");
    std::fs::write(&path, body).unwrap();
    path.to_str().unwrap().to_owned()
}

fn lines_of(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// Issue 9: `[audit] file` was refused at start-up and calls left no trace.
#[tokio::test]
async fn every_call_failed_ones_too_is_one_audit_line_with_its_verdicts_and_the_resource_lists_them() {
    let site = TestSite::start().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("audit.jsonl");
    // An earlier run's line stays: the file is appended to, never rewritten.
    std::fs::write(&file, "{\"earlier\":true}\n").unwrap();
    let denied = site.url_b("/*");
    let config = config_in(
        dir.path(),
        &format!(
            "[audit]\nfile = {:?}\n[[policy.rules]]\npattern = {denied:?}\naction = \"deny\"\n",
            file.to_str().unwrap()
        ),
    );
    let (mut client, _tmp) = spawn_cdpilot_with(&["--config", &config]);
    client.initialize().await;
    let calls = [
        ("browser_navigate", json!({"url": site.url("/index.html")}), "ok"),
        (
            "browser_navigate",
            json!({"url": site.url_b("/index.html")}),
            "permission_denied",
        ),
        ("browser_click", json!({"ref": "e999"}), "ref_unknown"),
        ("browser_fly", json!({}), "invalid_argument"),
    ];
    for (tool, args, _) in &calls {
        client.call(tool, args.clone()).await;
    }

    let lines = lines_of(&file);
    assert_eq!(lines.len(), 1 + calls.len(), "{lines:#?}");
    assert_eq!(lines[0], json!({"earlier": true}));
    for (line, (tool, args, outcome)) in lines[1..].iter().zip(&calls) {
        assert_eq!(line["tool"], *tool, "{line}");
        assert_eq!(line["arguments"], *args, "{line}");
        assert_eq!(line["outcome"], *outcome, "{line}");
        assert_eq!(line["session"], "default", "{line}");
        assert!(line["at"].as_str().unwrap().ends_with('Z'), "{line}");
        assert!(line["ms"].is_u64(), "{line}");
    }
    assert_eq!(lines[1]["verdicts"][0]["action"], "allow", "{}", lines[1]);
    assert_eq!(lines[1]["url_after"], site.url("/index.html"), "{}", lines[1]);
    let deny = &lines[2]["verdicts"][0];
    assert_eq!(deny["action"], "deny", "{}", lines[2]);
    assert_eq!(deny["url"], site.url_b("/index.html"));
    assert!(
        deny["rule"]
            .as_str()
            .unwrap_or_default()
            .contains("policy.rules[0]"),
        "{deny}"
    );

    let listed = client.request("resources/list", json!({})).await.unwrap();
    let uris: Vec<&str> = listed["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["uri"].as_str())
        .collect();
    assert!(uris.contains(&"cdpilot://audit"), "{listed}");
    let read = client
        .request("resources/read", json!({"uri": "cdpilot://audit"}))
        .await
        .unwrap();
    let text = read["contents"][0]["text"].as_str().unwrap();
    let records: Value = serde_json::from_str(text).unwrap();
    let records = records["records"].as_array().unwrap();
    assert_eq!(records.len(), calls.len(), "{text}");
    for (record, line) in records.iter().zip(&lines[1..]) {
        assert_eq!(record, line);
    }
}

/// Issue 9: an audit file that cannot be opened is a start-up error naming
/// the key, not a server that runs without its audit.
#[test]
fn an_audit_file_that_cannot_be_opened_is_a_start_up_error_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let config = config_in(dir.path(), "[audit]\nfile = \"/nonexistent-dir/audit.jsonl\"\n");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cdpilot"))
        .args(["mcp", "--config", &config])
        .env("CDPILOT_CHROME", testkit::chromium::executable())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("audit.file"), "{stderr}");
}
