//! serve runs with glibc's per-thread caches of freed blocks off (issue 24:
//! the blocks they hold keep pages of the heap that `malloc_trim` cannot
//! return after the sessions close); the user's own `GLIBC_TUNABLES` and
//! `CDPILOT_MALLOC_TCACHE=1` are respected, and the browser gets the
//! environment serve was given.

use testkit::TestSite;

use crate::support::browser_main_processes;
use crate::support::serve::Serve;

/// `pid`'s environment as it started (the variables glibc read).
fn environment(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/environ"))
        .unwrap_or_default()
        .split(|b| *b == 0)
        .filter(|v| !v.is_empty())
        .map(|v| String::from_utf8_lossy(v).into_owned())
        .collect()
}

fn tunables(env: &[String]) -> Option<&str> {
    env.iter().find_map(|v| v.strip_prefix("GLIBC_TUNABLES="))
}

/// serve with a session on a page: serve's pid and its browser's.
async fn serve_and_browser(serve: &Serve, site: &TestSite) -> (u32, u32) {
    let _session = crate::idle::session_on(serve, site).await;
    let browsers = browser_main_processes(serve.tmp.path());
    assert_eq!(browsers.len(), 1, "one browser: {browsers:?}");
    (serve.child.id().expect("serve running"), browsers[0])
}

#[tokio::test]
async fn serve_turns_glibcs_thread_caches_off_and_its_browser_does_not_inherit_the_setting() {
    if std::env::var_os("GLIBC_TUNABLES").is_some() {
        eprintln!("skipped: GLIBC_TUNABLES is set for the tests (serve keeps the user's)");
        return;
    }
    let site = TestSite::start().await;
    let serve = Serve::start("", &[]).await;
    let (pid, browser) = serve_and_browser(&serve, &site).await;
    let own = environment(pid);
    assert_eq!(
        tunables(&own),
        Some("glibc.malloc.tcache_count=0"),
        "serve's process (the same pid, started again) runs with the caches off: {own:?}"
    );
    let cmdline = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap();
    assert!(
        cmdline.contains("serve\0--listen\0"),
        "its arguments kept: {cmdline:?}"
    );
    let child = environment(browser);
    assert!(!child.is_empty(), "the browser's environment was read");
    assert_eq!(
        tunables(&child),
        None,
        "the browser inherited the tunable: {child:?}"
    );
    assert!(
        !child.iter().any(|v| v.starts_with("CDPILOT_THREAD_CACHES_OFF")),
        "the browser inherited serve's marker: {child:?}"
    );
    assert!(
        child.iter().any(|v| v.starts_with("TMPDIR=")),
        "the rest of serve's environment is passed on: {child:?}"
    );
}

#[tokio::test]
async fn the_users_own_tunables_and_the_opt_out_are_left_as_they_are() {
    let site = TestSite::start().await;
    let users = "glibc.malloc.tcache_count=3";
    let serve = Serve::start_with_env("", &[], &[("GLIBC_TUNABLES", users)]).await;
    let (pid, browser) = serve_and_browser(&serve, &site).await;
    let own = environment(pid);
    assert_eq!(tunables(&own), Some(users), "{own:?}");
    assert!(
        !own.iter().any(|v| v.starts_with("CDPILOT_THREAD_CACHES_OFF")),
        "{own:?}"
    );
    assert_eq!(tunables(&environment(browser)), Some(users), "passed on as given");
    drop(serve);

    let kept = Serve::start_with_env("", &[], &[("CDPILOT_MALLOC_TCACHE", "1")]).await;
    let pid = kept.child.id().expect("serve running");
    let own = environment(pid);
    if std::env::var_os("GLIBC_TUNABLES").is_none() {
        assert_eq!(
            tunables(&own),
            None,
            "CDPILOT_MALLOC_TCACHE=1 keeps glibc's caches: {own:?}"
        );
    }
}
