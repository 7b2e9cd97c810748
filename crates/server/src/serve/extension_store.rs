//! What pairing with the cdpilot extension keeps across restarts, in the
//! user's state directory (`$CDPILOT_STATE_DIR`, else
//! `$XDG_STATE_HOME/cdpilot`, else `~/.local/state/cdpilot`, mode 0700,
//! made when something is first kept):
//!
//! - `extension-tokens` (0600): the extension tokens pairings handed out,
//!   one SHA-256 (hex) a line, never the tokens themselves. Each line is
//!   the key the relay handshake proves with (`super::extension_proof`):
//!   whoever reads this file can pass for the paired extension, so it is
//!   as private as the token it replaces; a restarted
//!   server (serve, or `cdpilot mcp --extension`) still knows an extension
//!   paired before, so it reconnects without pairing again;
//! - `extension-port` (0600): the loopback port `cdpilot mcp --extension`
//!   listens on, chosen once, so the extension (which keeps its server's
//!   address) finds it again after a restart.
//!
//! Owns those two files; the tokens in memory are [`Tokens`]'s.

use std::collections::HashSet;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::extension_proof::{encode_hex, key_from_hex, key_id, key_of, Key};

/// The user's state directory (made, 0700, when something is first kept
/// in it); `None` when there is no `$HOME` to put it under (pairing then
/// lasts as long as the process).
pub fn state_dir() -> Option<PathBuf> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var("CDPILOT_STATE_DIR")
        .or_else(|| var("XDG_STATE_HOME").map(|d| d.join("cdpilot")))
        .or_else(|| var("HOME").map(|h| h.join(".local/state/cdpilot")))
}

/// Opens `file` (in the state directory, made if missing) to write, 0600.
fn open_private(file: &Path, append: bool) -> std::io::Result<std::fs::File> {
    if let Some(dir) = file.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .append(append)
        .truncate(!append)
        .mode(0o600)
        .open(file)
}

/// The extension tokens this user's servers handed out, by hash.
pub struct Tokens {
    hashes: Mutex<HashSet<String>>,
    /// Where they are kept; `None`: in memory only.
    file: Option<PathBuf>,
}

impl Tokens {
    /// The tokens kept in `dir`'s `extension-tokens` (none yet if it does
    /// not exist); `None`: kept in memory only.
    pub fn load(dir: Option<&Path>) -> Tokens {
        let file = dir.map(|d| d.join("extension-tokens"));
        let hashes = file
            .as_ref()
            .and_then(|f| std::fs::read_to_string(f).ok())
            .map(|text| {
                text.lines()
                    .map(|l| l.trim().to_owned())
                    .filter(|l| l.len() == 64)
                    .collect()
            })
            .unwrap_or_default();
        Tokens {
            hashes: Mutex::new(hashes),
            file,
        }
    }

    /// Keeps `token` (its hash), in the file too.
    pub fn insert(&self, token: &str) {
        let hash = hash(token);
        self.hashes.lock().unwrap().insert(hash.clone());
        let Some(file) = &self.file else { return };
        let written = open_private(file, true).and_then(|mut f| writeln!(f, "{hash}"));
        if let Err(e) = written {
            tracing::warn!(
                "cannot keep the extension token in {}: {e}; it lasts as long as this server",
                file.display()
            );
        }
    }

    /// The key of the token (by [`key_id`]) a pairing handed out, by this
    /// server or an earlier one: what the relay handshake proves with.
    pub fn key(&self, id: &str) -> Option<Key> {
        let find = |hashes: &HashSet<String>| {
            hashes
                .iter()
                .filter_map(|h| key_from_hex(h))
                .find(|k| key_id(k) == id)
        };
        if let Some(key) = find(&self.hashes.lock().unwrap()) {
            return Some(key);
        }
        // Another server of this user's may have paired since we loaded.
        let again = Tokens::load(self.file.as_deref().and_then(Path::parent));
        let known = again.hashes.into_inner().unwrap();
        let found = find(&known);
        self.hashes.lock().unwrap().extend(known);
        found
    }

    pub fn is_empty(&self) -> bool {
        self.hashes.lock().unwrap().is_empty()
    }
}

fn hash(token: &str) -> String {
    encode_hex(&key_of(token))
}

/// The port `cdpilot mcp --extension` listens on, kept in `dir`; `None`
/// when none was chosen yet.
pub fn saved_port(dir: Option<&Path>) -> Option<u16> {
    let text = std::fs::read_to_string(dir?.join("extension-port")).ok()?;
    text.trim().parse().ok().filter(|p| *p != 0)
}

/// Keeps the port chosen.
pub fn save_port(dir: Option<&Path>, port: u16) {
    let Some(dir) = dir else { return };
    let file = dir.join("extension-port");
    let written = open_private(&file, false).and_then(|mut f| writeln!(f, "{port}"));
    if let Err(e) = written {
        tracing::warn!(
            "cannot keep the extension listener's port in {}: {e}",
            file.display()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn tokens_survive_a_restart_as_hashes_in_a_private_file() {
        let dir = std::env::temp_dir().join(format!("cdpilot-store-test-{}/state", std::process::id()));
        let tokens = Tokens::load(Some(&dir));
        assert!(tokens.is_empty());
        tokens.insert("secret-token-1");
        let again = Tokens::load(Some(&dir));
        assert_eq!(
            again.key(&key_id(&key_of("secret-token-1"))),
            Some(key_of("secret-token-1"))
        );
        assert!(again.key(&key_id(&key_of("secret-token-2"))).is_none());
        let file = dir.join("extension-tokens");
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(!text.contains("secret-token-1"), "only the hash is kept");
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "{mode:o}");
        // A token another server paired after this one loaded is known too.
        Tokens::load(Some(&dir)).insert("secret-token-3");
        assert!(again.key(&key_id(&key_of("secret-token-3"))).is_some());
        save_port(Some(&dir), 41234);
        assert_eq!(saved_port(Some(&dir)), Some(41234));
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "the state directory is private: {mode:o}");
        std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
    }
}
