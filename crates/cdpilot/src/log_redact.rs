//! Log lines leave redacted (issue 20): the log goes to stderr through
//! one writer that replaces every configured secret's value, in every
//! spelling `engine::secrets` knows, by its placeholder. Engine code logs
//! URLs and errors before the dispatch redacts them for the client (a
//! blocked document's URL after a GET form, a failed call's message); this
//! is the one place every log byte passes.
//!
//! The configured browser addresses (`cdp_url`, `endpoints`, `grid`) are
//! masked in every line too (`engine::masked`: their passwords and query
//! values), wherever a lower layer quoted them.
//!
//! Owns the process-wide secrets and addresses the writer reads, set once
//! the engine has read them ([`install`]); lines logged before that have
//! nothing to hide.

use std::io::Write;
use std::sync::{Arc, OnceLock};

use engine::secrets::Secrets;
use tracing_subscriber::fmt::MakeWriter;

static SECRETS: OnceLock<Arc<Secrets>> = OnceLock::new();
static ADDRESSES: OnceLock<Vec<String>> = OnceLock::new();

/// The secrets every later log line is redacted of, and the configured
/// browser addresses it masks.
pub fn install(secrets: &Arc<Secrets>, browser: &engine::config::BrowserConfig) {
    let _ = SECRETS.set(secrets.clone());
    let addresses = std::iter::once(&browser.cdp_url)
        .chain(&browser.endpoints)
        .chain(std::iter::once(&browser.grid))
        .filter(|url| !url.is_empty() && engine::masked::url(url) != **url)
        .cloned()
        .collect();
    let _ = ADDRESSES.set(addresses);
}

/// Makes a [`Stderr`] per event.
pub struct Redacting;

/// Writes one formatted event (tracing's formatter writes an event at
/// once) to stderr, redacted.
pub struct Stderr;

impl<'a> MakeWriter<'a> for Redacting {
    type Writer = Stderr;
    fn make_writer(&'a self) -> Stderr {
        Stderr
    }
}

impl Write for Stderr {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let mut err = std::io::stderr().lock();
        let addresses = ADDRESSES.get().filter(|a| !a.is_empty());
        match (SECRETS.get().filter(|s| !s.is_empty()), addresses) {
            (None, None) => err.write_all(bytes)?,
            (secrets, addresses) => {
                let mut text = match secrets {
                    Some(secrets) => redact(secrets, bytes),
                    None => String::from_utf8_lossy(bytes).into_owned(),
                };
                for url in addresses.into_iter().flatten() {
                    text = engine::masked::in_text(&text, url);
                }
                err.write_all(text.as_bytes())?
            }
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

fn redact(secrets: &Secrets, bytes: &[u8]) -> String {
    secrets.redact(&String::from_utf8_lossy(bytes))
}
