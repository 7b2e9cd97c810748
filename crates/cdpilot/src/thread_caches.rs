//! serve runs with glibc's per-thread caches of freed blocks off (issue 24).
//!
//! glibc keeps a few freed small blocks of every size per thread (its
//! "tcache", up to 7 of each of 64 sizes) for the next allocation on that
//! thread. Those blocks count as in use, so `malloc_trim` cannot return the
//! pages they sit in; on the runtime's long-lived threads they are spread
//! over the whole heap, and after a soak of 16 sessions they kept about 5
//! MiB of the server's memory after every session had closed (RSS 31.2 →
//! 26.4 MiB with the caches off, against 24.9 before the soak:
//! docs/src/figures.md). The setting exists only as a tunable read when the
//! process starts (`GLIBC_TUNABLES=glibc.malloc.tcache_count=0`), so serve
//! starts itself again once with it, before it has made a thread; the
//! process keeps its pid, its arguments and its open files.
//!
//! `GLIBC_TUNABLES` set by the user is left as it is (their tuning wins),
//! and `CDPILOT_MALLOC_TCACHE=1` keeps glibc's caches (the before-and-after
//! measurement). Chromium and every other child get the environment the
//! user gave serve: the variables are removed once glibc has read them.
//! Other allocators and platforms: nothing to do.
//!
//! Owns nothing: it reads and sets the process's environment once, at start.

/// The tunable that turns the caches off.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TUNABLES: &str = "GLIBC_TUNABLES";
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const CACHES_OFF: &str = "glibc.malloc.tcache_count=0";
/// Set on the started-again process: the tunable is ours, remove it.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const STARTED_AGAIN: &str = "CDPILOT_THREAD_CACHES_OFF";

/// Starts this process again with glibc's thread caches off, unless it is
/// that process (then removes the variables that did it) or the user chose
/// otherwise. Call while the process has one thread: before the runtime,
/// logging or anything else that starts one. If the start fails, it says so
/// and serve goes on with the caches on.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn off() {
    use std::os::unix::process::CommandExt;
    if std::env::var_os(STARTED_AGAIN).is_some() {
        std::env::remove_var(STARTED_AGAIN);
        std::env::remove_var(TUNABLES);
        return;
    }
    let kept = std::env::var("CDPILOT_MALLOC_TCACHE").is_ok_and(|v| v != "0");
    if kept || std::env::var_os(TUNABLES).is_some() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let error = std::process::Command::new(exe)
        .args(std::env::args_os().skip(1))
        .env(TUNABLES, CACHES_OFF)
        .env(STARTED_AGAIN, "1")
        .exec();
    eprintln!("cdpilot: could not start again with glibc's thread caches off ({error}); going on with them");
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn off() {}
