//! Where things come from and go: `[audit]`, `[output]` (how results are
//! written), `[files]` (uploads' roots, outputs' directory), `[trace]`
//! (sessions' traces).

use std::path::PathBuf;

use serde::Deserialize;

/// `[audit]`: the audit log.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AuditConfig {
    /// File the audit log is appended to; empty: none.
    pub file: String,
}

/// `[trace]`: a trace of every session (`docs/src/spec/trace.md`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TraceConfig {
    /// Each session writes its trace in a directory of its own under this
    /// one; empty: sessions are not traced unless `browser_trace start`
    /// asks (into `<output_dir>/traces`).
    pub dir: String,
    /// A trace's size budget in MB: screenshots stop at three quarters of
    /// it, the trace itself at all of it.
    pub max_mb: u64,
    /// A screenshot after each call that acts (the trace's main cost:
    /// tens of milliseconds a call, `docs/src/figures.md`).
    pub screenshots: bool,
    /// The trace's video (`video.webm`, `spec/trace.md` "The video") made
    /// when the trace stops cleanly: `browser_trace stop`, the session's
    /// end; and the tab's screencast frames kept between steps for it.
    pub video: bool,
}

impl Default for TraceConfig {
    fn default() -> Self {
        TraceConfig {
            dir: String::new(),
            max_mb: 100,
            screenshots: true,
            video: false,
        }
    }
}

impl TraceConfig {
    /// The budget in bytes.
    pub fn max_bytes(&self) -> u64 {
        self.max_mb.saturating_mul(1024 * 1024)
    }
}

/// `[output]`: how results are written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OutputConfig {
    /// Page text in results enclosed in nonce markers (contract v3, "Page
    /// content is untrusted"; `content.rs`).
    #[serde(deserialize_with = "content_markers")]
    pub content_markers: bool,
}

/// `output.content_markers`: a boolean, or an error that names the key
/// (the TOML reader's own message does not).
fn content_markers<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    match toml::Value::deserialize(d)? {
        toml::Value::Boolean(on) => Ok(on),
        other => Err(serde::de::Error::custom(format!(
            "output.content_markers = {}: allowed is true or false",
            serde_json::to_string(&other).unwrap_or_default()
        ))),
    }
}

impl Default for OutputConfig {
    fn default() -> Self {
        OutputConfig {
            content_markers: true,
        }
    }
}

/// `[files]`: the file system an agent's actions may touch.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FilesConfig {
    /// Directories `browser_upload` may read from; empty: none (uploads
    /// are refused).
    pub upload_roots: Vec<String>,
    /// Where downloads, PDFs and saved screenshots go; empty:
    /// `./cdpilot-output`.
    pub output_dir: String,
}

impl FilesConfig {
    /// The directory outputs are written to (not created here).
    pub fn output_dir(&self) -> PathBuf {
        if self.output_dir.is_empty() {
            PathBuf::from("cdpilot-output")
        } else {
            PathBuf::from(&self.output_dir)
        }
    }

    /// The directories uploads may be read from, as written (relative
    /// ones against the working directory); empty: uploads are refused
    /// (a server started in `$HOME` must not hand out `~/.ssh`).
    pub fn upload_roots(&self) -> Vec<PathBuf> {
        self.upload_roots.iter().map(PathBuf::from).collect()
    }
}
