//! The widget gallery's libraries: real npm releases that `scripts/widgets`
//! unpacks into a cache outside the clone (`$CDPILOT_WIDGETS`, default
//! `~/.cache/cdpilot/widgets`), served by the test site at `/vendor/…` on
//! both origins. Gallery pages (`site/widget-*.html`) load them from there.

use std::path::{Component, Path, PathBuf};

/// The packages `scripts/widgets` installs (each a folder of the cache).
pub const PACKAGES: &[&str] = &[
    "jquery",
    "jquery-ui",
    "flatpickr",
    "nouislider",
    "tom-select",
    "sortablejs",
    "quill",
    "jstree",
    "@tanstack/virtual-core",
];

/// The cache folder the libraries live in.
pub fn dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CDPILOT_WIDGETS") {
        return PathBuf::from(dir);
    }
    let home = std::env::var_os("HOME").unwrap_or_else(|| "/root".into());
    Path::new(&home).join(".cache/cdpilot/widgets")
}

/// Panics, naming the script to run, unless every package is installed:
/// widget tests call it first, so a missing cache is one clear failure
/// instead of pages that silently lack their library.
pub fn require() {
    if let Err(message) = installed_in(&dir()) {
        panic!("{message}");
    }
}

/// Whether every package is installed in `dir`; else what to do about it.
fn installed_in(dir: &Path) -> Result<(), String> {
    let missing: Vec<&str> = PACKAGES
        .iter()
        .copied()
        .filter(|p| !dir.join(p).join(".pinned").is_file())
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(format!(
        "the widget gallery's libraries are missing from {} ({}): run scripts/widgets \
         (scripts/test runs it), or set CDPILOT_WIDGETS to where they are",
        dir.display(),
        missing.join(", ")
    ))
}

/// The file for `/vendor/<path>`, if it is inside the cache.
pub(crate) fn file(path: &str) -> Option<PathBuf> {
    let relative = Path::new(path);
    if !relative.components().all(|c| matches!(c, Component::Normal(_))) {
        return None;
    }
    Some(dir().join(relative))
}

/// The content type of a library file, by extension.
pub(crate) fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()) {
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("png") => "image/png",
        Some("gif") => "image/gif",
        Some("svg") => "image/svg+xml",
        Some("json" | "map") => "application/json",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_cache_names_the_script_to_run() {
        let empty = std::env::temp_dir().join(format!("cdpilot-no-widgets-{}", std::process::id()));
        let message = installed_in(&empty).unwrap_err();
        assert!(message.contains("run scripts/widgets"), "{message}");
        assert!(
            message.contains("jquery-ui") && message.contains("quill"),
            "{message}"
        );
    }

    #[test]
    fn only_paths_inside_the_cache_are_served() {
        assert!(file("jquery/dist/jquery.js").is_some());
        assert!(file("../secrets").is_none());
        assert!(file("/etc/passwd").is_none());
        assert!(file("jquery/../../x").is_none());
    }
}
