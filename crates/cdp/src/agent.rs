//! The user agent a headless browser cdpilot launches is given as a switch
//! (`--user-agent`), so that every realm says the same: pages and frames,
//! and the shared and service workers whose `navigator.userAgent` Chrome
//! makes in the browser process before any DevTools session could
//! override it (issue 45). The string is the one a person's Chrome of the
//! same major version on this platform announces (Chrome's reduced user
//! agent: `Chrome/N.0.0.0`, one frozen platform token per OS); the version
//! is the executable's own (`--version`), read once per executable file
//! (kept in `~/.cache/cdpilot/browser-versions` by its path, size and
//! modification time, so a later process need not run it again). Chrome keeps its client hints with the switch: `sec-ch-ua` and
//! `navigator.userAgentData` still carry the browser's brands.
//!
//! Owns the cache of versions read (in memory and that file); touches
//! nothing else.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// How long `--version` may take (a shell wrapper, then the binary).
const VERSION_BUDGET: Duration = Duration::from_secs(5);

/// The platform token of Chrome's reduced user agent on this OS; `None`
/// where cdpilot does not know it (the switch is then not given, and the
/// per-page override covers pages).
fn platform() -> Option<&'static str> {
    if cfg!(target_os = "linux") {
        Some("X11; Linux x86_64")
    } else if cfg!(target_os = "macos") {
        Some("Macintosh; Intel Mac OS X 10_15_7")
    } else if cfg!(target_os = "windows") {
        Some("Windows NT 10.0; Win64; x64")
    } else {
        None
    }
}

/// The major version in `--version`'s words (`Chromium 156.0.8078.114
/// built on Debian…`, `Google Chrome 156.0.8078.114`): the first dotted
/// number of four parts.
fn major_of(printed: &str) -> Option<u32> {
    printed
        .split_whitespace()
        .find(|word| word.split('.').count() == 4 && word.split('.').all(|p| p.parse::<u32>().is_ok()))
        .and_then(|version| version.split('.').next()?.parse().ok())
}

/// The user agent a person's Chrome `major` announces here.
pub fn person_user_agent(major: u32) -> Option<String> {
    Some(format!(
        "Mozilla/5.0 ({}) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{major}.0.0.0 Safari/537.36",
        platform()?
    ))
}

/// The major version `executable` says it is, read once per process.
pub async fn major_version(executable: &Path) -> Option<u32> {
    static READ: Mutex<Option<HashMap<PathBuf, Option<u32>>>> = Mutex::new(None);
    if let Some(known) = READ.lock().unwrap().as_ref().and_then(|m| m.get(executable)) {
        return *known;
    }
    // Read from the disk cache of an earlier process when the executable
    // is the same file as then: `--version` costs a first navigate 0.1 s
    // (Debian's wrapper script, then the browser; issue 46).
    let stamp = stamp_of(executable);
    if let Some(major) = stamp.as_deref().and_then(cached) {
        READ.lock()
            .unwrap()
            .get_or_insert_with(HashMap::new)
            .insert(executable.to_owned(), Some(major));
        return Some(major);
    }
    let run = tokio::process::Command::new(executable)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let major = match tokio::time::timeout(VERSION_BUDGET, run).await {
        Ok(Ok(out)) if out.status.success() => major_of(&String::from_utf8_lossy(&out.stdout)),
        _ => None,
    };
    READ.lock()
        .unwrap()
        .get_or_insert_with(HashMap::new)
        .insert(executable.to_owned(), major);
    if let (Some(stamp), Some(major)) = (stamp, major) {
        remember(&stamp, major);
    }
    major
}

/// The executable as a file now: its path, size and modification time (a
/// browser's update replaces the file, and changes them).
fn stamp_of(executable: &Path) -> Option<String> {
    let meta = std::fs::metadata(executable).ok()?;
    let modified = meta.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?;
    Some(format!(
        "{} {} {}",
        modified.as_nanos(),
        meta.len(),
        executable.display()
    ))
}

/// The file of versions read: `$XDG_CACHE_HOME/cdpilot/browser-versions`
/// (else `~/.cache/…`), a line `MAJOR STAMP` per executable.
fn cache_file() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("cdpilot").join("browser-versions"))
}

/// The major version cached for `stamp`.
fn cached(stamp: &str) -> Option<u32> {
    let text = std::fs::read_to_string(cache_file()?).ok()?;
    text.lines().find_map(|line| {
        let (major, rest) = line.split_once(' ')?;
        (rest == stamp).then(|| major.parse().ok())?
    })
}

/// Adds `stamp`'s version to the cache (best effort: written whole under
/// another name, then renamed, so a reader never sees half a file).
fn remember(stamp: &str, major: u32) {
    let Some(file) = cache_file() else { return };
    let path_of = |s: &str| s.splitn(3, ' ').nth(2).map(str::to_owned);
    let own = path_of(stamp);
    let mut lines: Vec<String> = std::fs::read_to_string(&file)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.split_once(' ').and_then(|(_, rest)| path_of(rest)) != own)
        .take(32)
        .map(str::to_owned)
        .collect();
    lines.push(format!("{major} {stamp}"));
    let Some(dir) = file.parent() else { return };
    let part = dir.join(format!("browser-versions.{}", std::process::id()));
    let written = std::fs::create_dir_all(dir)
        .and_then(|_| std::fs::write(&part, lines.join("\n") + "\n"))
        .and_then(|_| std::fs::rename(&part, &file));
    if written.is_err() {
        let _ = std::fs::remove_file(&part);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_read_once_is_cached_by_the_executables_file_and_path() {
        let dir = tempfile::tempdir().unwrap();
        std::env::set_var("XDG_CACHE_HOME", dir.path());
        let browser = dir.path().join("chrome");
        std::fs::write(&browser, "v1").unwrap();
        let stamp = stamp_of(&browser).unwrap();
        assert_eq!(cached(&stamp), None);
        remember(&stamp, 156);
        remember("1 2 /elsewhere/chrome", 120);
        assert_eq!(cached(&stamp), Some(156));
        assert_eq!(cached("1 2 /elsewhere/chrome"), Some(120));
        // The file replaced (an update): its stamp changes, the cache misses.
        std::fs::write(&browser, "version 2").unwrap();
        let updated = stamp_of(&browser).unwrap();
        assert_ne!(updated, stamp);
        assert_eq!(cached(&updated), None);
        remember(&updated, 157);
        assert_eq!(cached(&updated), Some(157));
        assert_eq!(cached(&stamp), None, "the old stamp's line was replaced");
    }

    #[test]
    fn the_version_is_the_first_four_part_number() {
        assert_eq!(
            major_of("Chromium 156.0.8078.114 built on Debian GNU/Linux 12 (bookworm)\n"),
            Some(156)
        );
        assert_eq!(major_of("Google Chrome 131.0.6778.85 \n"), Some(131));
        assert_eq!(major_of("Debian 12.1 built"), None);
        let ua = person_user_agent(156).unwrap();
        assert!(ua.contains(" Chrome/156.0.0.0 Safari/537.36"), "{ua}");
        assert!(!ua.contains("Headless"));
    }
}
