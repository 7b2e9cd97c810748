//! Log lines leave redacted (issue 20): the log goes to stderr through
//! one writer that replaces every configured secret's value, in every
//! spelling `engine::secrets` knows, by its placeholder. Engine code logs
//! URLs and errors before the dispatch redacts them for the client (a
//! blocked document's URL after a GET form, a failed call's message); this
//! is the one place every log byte passes.
//!
//! Owns the process-wide secrets the writer reads, set once the engine has
//! read them ([`install`]); lines logged before that have no secret to
//! hide.

use std::io::Write;
use std::sync::{Arc, OnceLock};

use engine::secrets::Secrets;
use tracing_subscriber::fmt::MakeWriter;

static SECRETS: OnceLock<Arc<Secrets>> = OnceLock::new();

/// The secrets every later log line is redacted of.
pub fn install(secrets: &Arc<Secrets>) {
    let _ = SECRETS.set(secrets.clone());
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
        match SECRETS.get().filter(|s| !s.is_empty()) {
            Some(secrets) => err.write_all(redact(secrets, bytes).as_bytes())?,
            None => err.write_all(bytes)?,
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
