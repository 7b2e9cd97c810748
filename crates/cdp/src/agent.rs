//! The user agent a headless browser cdpilot launches is given as a switch
//! (`--user-agent`), so that every realm says the same: pages and frames,
//! and the shared and service workers whose `navigator.userAgent` Chrome
//! makes in the browser process before any DevTools session could
//! override it (issue 45). The string is the one a person's Chrome of the
//! same major version on this platform announces (Chrome's reduced user
//! agent: `Chrome/N.0.0.0`, one frozen platform token per OS); the version
//! is the executable's own (`--version`), read once per executable and
//! process. Chrome keeps its client hints with the switch: `sec-ch-ua` and
//! `navigator.userAgentData` still carry the browser's brands.
//!
//! Owns the cache of versions read; touches nothing else.

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
    major
}

#[cfg(test)]
mod tests {
    use super::*;

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
