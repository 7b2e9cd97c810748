//! A client written with the official Python `mcp` package drives the
//! binary end to end (tests/python/mcp_client_e2e.py, mcp_ask.py), over stdio and over
//! `cdpilot serve`'s streamable HTTP (issue 10). The interpreter is
//! `$CDPILOT_TEST_PYTHON` (scripts/test sets up a venv with `mcp`), else
//! `python3`; a missing package is a failure with the fix, never a skip.

use std::path::Path;
use std::process::Command;

#[test]
fn the_official_python_mcp_client_runs_the_agent_loop() {
    run_python_client(&[]);
}

#[test]
fn the_official_python_mcp_client_runs_the_agent_loop_over_http() {
    run_python_client(&["--http"]);
}

/// Issue 9: an `ask` rule asks through MCP elicitation (decline, once,
/// always scoped to the origin, a deny winning over a grant, a client that
/// cannot ask).
#[test]
fn ask_rules_ask_the_user_through_the_official_python_client() {
    run_python_script("mcp_ask.py", &[], "all ok");
}

fn run_python_client(flags: &[&str]) {
    run_python_script("mcp_client_e2e.py", flags, "all ok");
}

fn run_python_script(script: &str, flags: &[&str], ok: &str) {
    let python = std::env::var("CDPILOT_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let has_mcp = Command::new(&python)
        .args(["-c", "import mcp"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(
        has_mcp,
        "{python} cannot import the `mcp` package: run scripts/test, or set CDPILOT_TEST_PYTHON to a Python with `pip install mcp`"
    );
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/python")
        .join(script);
    let output = Command::new(&python)
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_cdpilot"))
        .args(flags)
        .env("CDPILOT_CONFIG", "")
        .env("CDPILOT_CHROME", testkit::chromium::executable())
        .output()
        .expect("run python");
    assert!(
        output.status.success(),
        "python client failed:\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains(ok));
}
