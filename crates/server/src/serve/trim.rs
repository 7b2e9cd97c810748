//! Giving an ended session's memory back to the system (issue 24).
//!
//! glibc's allocator keeps freed memory in its arenas (one per thread that
//! allocated, up to 8 per core) and returns only the top of each heap, so a
//! server whose sessions ended kept most of their peak. After a session
//! ends, `malloc_trim(0)` returns every free page of every arena. It walks
//! the arenas under their locks (about a millisecond for a few hundred
//! MiB), so it runs on a blocking thread, and sessions ending together
//! share one trim. Measured against mimalloc and jemalloc in the memory
//! figures (docs/src/figures.md). Other allocators and platforms: nothing
//! to do.
//!
//! While sessions run, the same trim every [`EVERY`] (`CDPILOT_MALLOC_TRIM_S`
//! sets the period, 0 turns it off): glibc keeps what a call freed in the
//! arena of the thread that freed it, so without it the server's RSS grew
//! with the free memory its arenas kept (10 → 22 MiB over a release soak of
//! 16 sessions, issue 24) although its live heap had stopped growing.
//!
//! The trim cannot return a page that a block in a thread's cache of freed
//! blocks (glibc's tcache) sits in: those count as in use. The binary turns
//! the caches off for serve when it starts (`cdpilot`'s `thread_caches`).
//!
//! `CDPILOT_HEAP_STATS_S=N` logs glibc's own heap statistics (`mallinfo2`)
//! every N seconds: the bytes the program holds in live allocations against
//! the free bytes the allocator keeps, which tells a structure that grows
//! from memory the allocator holds on to (the soak bench's question), and
//! the CDP events held in queues for the tabs' readers, now and at the peak
//! (`engine::holdings::held_events`), and the audit ring's records and bytes.
//!
//! Owns only the flag saying a trim is scheduled.

use std::sync::atomic::{AtomicBool, Ordering};

/// A trim is scheduled and has not started: later sessions' ends join it.
static SCHEDULED: AtomicBool = AtomicBool::new(false);

/// How often serve trims while it runs: a trim walks every arena under its
/// lock (a millisecond or two for a hundred MiB), so every 10 s costs
/// nothing measurable and keeps the free memory the allocator holds to
/// what 10 s of calls freed.
pub const EVERY: std::time::Duration = std::time::Duration::from_secs(10);

/// Trims every [`EVERY`] (or `CDPILOT_MALLOC_TRIM_S` seconds; 0 or
/// `CDPILOT_MALLOC_TRIM=0`: never) until `stop`.
pub async fn every(stop: tokio_util::sync::CancellationToken) {
    let period = std::env::var("CDPILOT_MALLOC_TRIM_S")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(EVERY, std::time::Duration::from_secs);
    if !enabled() || period.is_zero() {
        return;
    }
    loop {
        tokio::select! {
            _ = tokio::time::sleep(period) => after_session(),
            _ = stop.cancelled() => return,
        }
    }
}

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

/// The heap now, in bytes: (in live allocations, free but kept by the
/// allocator, of which mmapped chunks), from glibc's `mallinfo2`.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn heap() -> Option<(u64, u64, u64)> {
    // SAFETY: mallinfo2 only reads the allocator's counters under its locks.
    let info = unsafe { libc::mallinfo2() };
    Some((
        (info.uordblks + info.hblkhd) as u64,
        info.fordblks as u64,
        info.hblkhd as u64,
    ))
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn heap() -> Option<(u64, u64, u64)> {
    None
}

/// With `CDPILOT_HEAP_STATS_S=N`, logs [`heap`] every N seconds until
/// `stop` (the soak bench reads the lines from serve's stderr).
pub async fn report_heap(engine: std::sync::Arc<engine::Engine>, stop: tokio_util::sync::CancellationToken) {
    let Some(every) = std::env::var("CDPILOT_HEAP_STATS_S")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|s| *s > 0)
    else {
        return;
    };
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    loop {
        tokio::select! {
            _ = tokio::time::sleep(std::time::Duration::from_secs(every)) => {}
            _ = stop.cancelled() => return,
        }
        if let Some((live, free, mapped)) = heap() {
            eprintln!(
                "heap: live {:.1} MiB (mmapped {:.1}), free kept by the allocator {:.1} MiB",
                mib(live),
                mib(mapped),
                mib(free)
            );
        }
        let held = engine.holdings();
        eprintln!(
            "audit ring: {} records, {:.1} MiB",
            held.audit_records,
            mib(held.audit_bytes as u64)
        );
        let events = engine::holdings::held_events();
        eprintln!(
            "cdp events: held {} ({:.1} MiB of params), peak {} ({:.1} MiB)",
            events.now,
            mib(events.now_bytes),
            events.peak,
            mib(events.peak_bytes)
        );
    }
}
