//! `[browser] source = "auto_connect"` (`--auto-connect`): the user's own
//! running Chrome, found through the `DevToolsActivePort` file Chrome
//! writes into its profile directory when remote debugging is on (turned
//! on at `chrome://inspect/#remote-debugging`, or started with
//! `--remote-debugging-port`). Its first line is the port, its second the
//! browser's WebSocket path: together, the `ws://127.0.0.1:PORT/…` address
//! the browser is attached to (the HTTP `/json` endpoints are not needed,
//! and Chrome's chrome://inspect mode does not offer them).
//!
//! The profile directory is `[browser] user_data_dir` when set, else the
//! first of the default ones (Chrome, Beta, Dev, Canary, Chromium on Linux
//! and macOS) that holds the file. Each way this can fail (no such
//! directory, no file, a file whose port nobody listens on any more) says
//! where it looked and what the user must do.
//!
//! The file is a claim: Chrome leaves it behind when it quits, and another
//! local user may bind the freed port and forward (and read) every CDP
//! command. The port is connected to only when the one rule for local
//! peers (`cdp::peer::listener_is_ours`) finds every socket listening
//! there owned by this user; otherwise the start fails naming the file and
//! the owner found, before even a TCP handshake.
//!
//! Owns nothing: it reads the file each time the browser is (re)attached,
//! so a Chrome restarted on another port is found again. What a session may
//! touch in that browser (only its own browser context) is `super`'s
//! `shared` rule.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::{ActionError, Budget, ErrorCode};

/// The file Chrome writes into its profile directory.
pub const FILE: &str = "DevToolsActivePort";

/// How long the port named in the file may take to accept (loopback: a
/// live port accepts at once).
const PROBE: Duration = Duration::from_secs(2);

/// What to do when no running Chrome with remote debugging was found.
const ENABLE: &str = "Turn on remote debugging in your running Chrome: open \
     chrome://inspect/#remote-debugging and allow it (Chrome 144 or later), or quit Chrome and \
     start it with --remote-debugging-port=9222; then retry. If your Chrome uses another profile \
     directory, pass it with --user-data-dir (chrome://version shows it: the Profile Path \
     without its last part).";

/// The profile directories looked in, in order: `user_data_dir` alone when
/// set, else the default ones of this platform under `home`.
pub fn profiles(user_data_dir: &str, home: Option<&Path>) -> Vec<PathBuf> {
    if !user_data_dir.is_empty() {
        return vec![PathBuf::from(user_data_dir)];
    }
    let Some(home) = home else { return Vec::new() };
    let (base, names): (PathBuf, &[&str]) = if cfg!(target_os = "macos") {
        (
            home.join("Library/Application Support"),
            &[
                "Google/Chrome",
                "Google/Chrome Beta",
                "Google/Chrome Dev",
                "Google/Chrome Canary",
                "Chromium",
            ],
        )
    } else {
        (
            home.join(".config"),
            &[
                "google-chrome",
                "google-chrome-beta",
                "google-chrome-unstable",
                "google-chrome-canary",
                "chromium",
            ],
        )
    };
    names.iter().map(|name| base.join(name)).collect()
}

/// The browser's WebSocket address, from the `DevToolsActivePort` of the
/// configured (or first default) profile, checked to be listening.
pub async fn endpoint(user_data_dir: &str, budget: &Budget) -> Result<String, ActionError> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let dirs = profiles(user_data_dir, home.as_deref());
    let (file, port, path) = find(&dirs, !user_data_dir.is_empty())?;
    let address = format!("127.0.0.1:{port}");
    if let Err(why) = cdp::peer::listener_is_ours(([127, 0, 0, 1], port).into(), None) {
        if !why.starts_with("nothing listens") {
            return Err(failed(
                format!(
                    "{} names port {port}, refused: {why}; nothing was sent to it",
                    file.display()
                ),
                "That port is not your Chrome's: another user's program may hold it. Quit it (or \
                 ask who runs it), start your Chrome with remote debugging on so it writes the file \
                 anew, then retry.",
            ));
        }
    }
    let probe = tokio::time::timeout(
        PROBE.min(budget.remaining()),
        tokio::net::TcpStream::connect(&address),
    )
    .await;
    match probe {
        Ok(Ok(_)) => Ok(format!("ws://{address}{path}")),
        Ok(Err(e)) => Err(failed(
            format!(
                "{} names port {port}, but nothing accepts connections there ({e}): the Chrome that \
                 wrote it has exited or turned remote debugging off",
                file.display()
            ),
            "Start Chrome again with remote debugging on (chrome://inspect/#remote-debugging, \
             or --remote-debugging-port=9222): it writes the file anew; then retry.",
        )),
        Err(_) => Err(failed(
            format!(
                "{} names port {port}, which did not accept a connection within {}s",
                file.display(),
                PROBE.as_secs()
            ),
            "Check that the Chrome with remote debugging on is running and not hung, then retry.",
        )),
    }
}

/// The first directory's file: its path, port and WebSocket path.
fn find(dirs: &[PathBuf], chosen: bool) -> Result<(PathBuf, u16, String), ActionError> {
    if dirs.is_empty() {
        return Err(failed(
            "no profile directory to look in: $HOME is not set".into(),
            "Pass your Chrome's profile directory with --user-data-dir (or [browser] user_data_dir).",
        ));
    }
    if chosen && !dirs[0].is_dir() {
        return Err(failed(
            format!("the profile directory {} does not exist", dirs[0].display()),
            "Pass --user-data-dir the profile directory of your running Chrome (chrome://version \
             shows it: the Profile Path without its last part), or leave it out to look in the \
             default ones.",
        ));
    }
    for dir in dirs {
        let file = dir.join(FILE);
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        return match parse(&text) {
            Some((port, path)) => Ok((file, port, path)),
            None => Err(failed(
                format!(
                    "{} is not what Chrome writes (a port, then a /devtools/browser/… path)",
                    file.display()
                ),
                "Restart Chrome with remote debugging on so it writes the file anew, then retry.",
            )),
        };
    }
    let looked: Vec<String> = dirs.iter().map(|d| d.join(FILE).display().to_string()).collect();
    Err(failed(
        format!(
            "no running Chrome with remote debugging found: no {FILE} in {}",
            looked.join(", ")
        ),
        ENABLE,
    ))
}

/// The port (first line) and browser WebSocket path (second line).
fn parse(text: &str) -> Option<(u16, String)> {
    let mut lines = text.lines().map(str::trim);
    let port = lines.next()?.parse::<u16>().ok().filter(|p| *p != 0)?;
    let path = lines.next()?;
    path.starts_with("/devtools/browser/")
        .then(|| (port, path.to_owned()))
}

fn failed(message: String, next_step: &str) -> ActionError {
    ActionError::new(
        ErrorCode::BrowserDisconnected,
        format!("could not auto-connect to your Chrome: {message}"),
        next_step,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_a_port_then_a_browser_path() {
        assert_eq!(
            parse("9222\n/devtools/browser/abc-123\n"),
            Some((9222, "/devtools/browser/abc-123".into()))
        );
        assert_eq!(parse("9222\n"), None);
        assert_eq!(parse("0\n/devtools/browser/x"), None);
        assert_eq!(parse("port\n/devtools/browser/x"), None);
        assert_eq!(parse("9222\n/devtools/page/x"), None);
    }

    #[test]
    fn the_default_profiles_are_looked_in_unless_one_is_chosen() {
        let home = Path::new("/home/u");
        let dirs = profiles("", Some(home));
        assert!(dirs.len() >= 2, "{dirs:?}");
        let chromium = if cfg!(target_os = "macos") {
            "/home/u/Library/Application Support/Chromium"
        } else {
            "/home/u/.config/chromium"
        };
        assert!(dirs.contains(&PathBuf::from(chromium)), "{dirs:?}");
        assert_eq!(profiles("/p", Some(home)), vec![PathBuf::from("/p")]);
    }

    #[test]
    fn no_file_names_every_place_looked_and_how_to_turn_debugging_on() {
        let none = std::env::temp_dir().join(format!("cdpilot-no-profile-{}", std::process::id()));
        let dirs = vec![none.join("a"), none.join("b")];
        let e = find(&dirs, false).unwrap_err();
        assert_eq!(e.code, ErrorCode::BrowserDisconnected);
        assert!(
            e.message.contains(&dirs[1].join(FILE).display().to_string()),
            "{e}"
        );
        assert!(
            e.next_step.contains("chrome://inspect/#remote-debugging"),
            "{e:?}"
        );
        assert!(e.next_step.contains("--remote-debugging-port"), "{e:?}");
        let e = find(&dirs[..1], true).unwrap_err();
        assert!(e.message.contains("does not exist"), "{e}");
    }
}
