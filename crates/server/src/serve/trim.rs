//! Giving an ended session's memory back to the system (issue 24).
//!
//! glibc's allocator keeps freed memory in its arenas (one per thread that
//! allocated, up to 8 per core) and returns only the top of each heap, so a
//! server whose sessions ended kept most of their peak. After a session
//! ends, `malloc_trim(0)` returns every free page of every arena. It walks
//! the arenas under their locks (about a millisecond for a few hundred
//! MiB), so it runs on a blocking thread, and sessions ending together
//! share one trim. Measured against mimalloc in the memory figures
//! (docs/src/figures.md). Other allocators and platforms: nothing to do.
//!
//! Owns only the flag saying a trim is scheduled.

use std::sync::atomic::{AtomicBool, Ordering};

/// A trim is scheduled and has not started: later sessions' ends join it.
static SCHEDULED: AtomicBool = AtomicBool::new(false);

/// Schedules one trim after a session ended (on a tokio runtime; without
/// one, nothing). `CDPILOT_MALLOC_TRIM=0` turns it off (the benches'
/// before-and-after).
pub fn after_session() {
    if !enabled() || SCHEDULED.swap(true, Ordering::SeqCst) {
        return;
    }
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        SCHEDULED.store(false, Ordering::SeqCst);
        return;
    };
    runtime.spawn_blocking(|| {
        SCHEDULED.store(false, Ordering::SeqCst);
        trim();
    });
}

fn enabled() -> bool {
    static ENABLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ENABLED.get_or_init(|| std::env::var("CDPILOT_MALLOC_TRIM").map_or(true, |v| v != "0"))
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn trim() {
    // SAFETY: malloc_trim takes the allocator's own locks; it is safe to
    // call from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim() {}
