//! The scripts cdpilot runs inside pages, as source strings: a leaf that
//! knows nothing of tabs or tools. The tab installs the serializer in
//! cdpilot's isolated world of every document (`tab/pump.rs`); the snapshot
//! calls it (`snapshot/`); `browser_extract` runs the reader
//! (`tab_tools/extract.rs`).

/// The serializer's source; evaluating it yields the world's `__cdpilot`.
pub const SERIALIZER: &str = include_str!("serializer.js");

/// The page reader: `(selector, cap, links, known, whole)` → `{html,
/// truncated, key, fallback}`, `{unchanged, key}` or `{error}` (see the
/// script's header).
pub const READER: &str = include_str!("extract.js");
