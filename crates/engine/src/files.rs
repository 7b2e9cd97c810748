//! Where the files cdpilot writes for an agent go (PDFs, saved screenshots,
//! saved storage states): always inside `[files] output_dir`, so a model
//! cannot be talked into overwriting a file elsewhere on the machine.
//!
//! A `path` argument is a name relative to the output directory (`a.pdf`,
//! `run1/state.json`), or an absolute path inside it; `..`, and absolute
//! paths elsewhere, are `permission_denied`. A symbolic link anywhere
//! under the output directory is refused too (issue 20, finding 13: a link
//! planted there would carry a write, or a read, outside it): every
//! component below the directory is checked, the file's canonical parent
//! must be inside the directory's, and the file itself is opened with
//! `O_NOFOLLOW`, so a link swapped in after the check fails the open.
//! No error here quotes a file's content.

use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};

use crate::config::FilesConfig;
use crate::{ActionError, ErrorCode};

/// The file `requested` names (or `default_name`) under the output
/// directory, with its directory created.
pub fn output_path(
    files: &FilesConfig,
    requested: Option<&str>,
    default_name: &str,
) -> Result<PathBuf, ActionError> {
    let path = inside_output(files, requested.unwrap_or(default_name))?;
    // Checked before creating anything, so a link to a directory elsewhere
    // gets no new directories made through it.
    no_links_below(&files.output_dir(), &path)?;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| {
            ActionError::invalid(
                format!("cannot create the output directory {}: {e}", parent.display()),
                "Set [files] output_dir to a writable directory.",
            )
        })?;
    }
    confined(&files.output_dir(), &path)?;
    Ok(path)
}

/// Writes `bytes` to `path` (from [`output_path`]), creating or replacing
/// the file, never through a symbolic link.
pub fn write(path: &Path, bytes: &[u8]) -> Result<(), ActionError> {
    let opened = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW)
        .mode(0o600)
        .open(path);
    let mut file = opened.map_err(|e| open_error(path, &e, "write"))?;
    file.write_all(bytes).map_err(|e| {
        ActionError::invalid(
            format!(
                "cannot write {}: {}",
                path.display(),
                std::io::Error::from(e.kind())
            ),
            "Set [files] output_dir to a writable directory.",
        )
    })
}

/// Reads at most `max` + 1 bytes of the file `requested` names inside the
/// output directory, never through a symbolic link (more than `max` read:
/// the file is larger, and the caller refuses it); errors name the path,
/// never the content.
pub fn read_bytes_inside(
    files: &FilesConfig,
    requested: &str,
    max: usize,
) -> Result<(PathBuf, Vec<u8>), ActionError> {
    let path = inside_output(files, requested)?;
    no_links_below(&files.output_dir(), &path)?;
    confined(&files.output_dir(), &path)?;
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path);
    let file = opened.map_err(|e| open_error(&path, &e, "read"))?;
    let mut bytes = Vec::new();
    file.take((max as u64).saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| {
            ActionError::invalid(
                format!(
                    "cannot read {}: {}",
                    path.display(),
                    std::io::Error::from(e.kind())
                ),
                "Pass the path of a file under the output directory.",
            )
        })?;
    Ok((path, bytes))
}

/// Reads the file `requested` names inside the output directory, never
/// through a symbolic link, as text; errors name the path, never the
/// content.
pub fn read_inside(files: &FilesConfig, requested: &str) -> Result<(PathBuf, String), ActionError> {
    let (path, bytes) = read_bytes_inside(files, requested, usize::MAX)?;
    let text = String::from_utf8(bytes).map_err(|_| {
        ActionError::invalid(
            format!(
                "cannot read {}: {}",
                path.display(),
                std::io::Error::from(std::io::ErrorKind::InvalidData)
            ),
            "Pass the path of a text file written by cdpilot.",
        )
    })?;
    Ok((path, text))
}

fn open_error(path: &Path, e: &std::io::Error, doing: &str) -> ActionError {
    if e.raw_os_error() == Some(libc::ELOOP) {
        return link_refused(path);
    }
    ActionError::invalid(
        format!(
            "cannot {doing} {}: {}",
            path.display(),
            std::io::Error::from(e.kind())
        ),
        "Pass a file name under the output directory ([files] output_dir).",
    )
}

fn link_refused(path: &Path) -> ActionError {
    ActionError::new(
        ErrorCode::PermissionDenied,
        format!(
            "{} is or goes through a symbolic link inside the output directory ([files] output_dir); cdpilot does not follow links there",
            path.display()
        ),
        "Use another file name; a person must remove the link first.",
    )
}

/// Refuses `path` (inside `dir`) when any existing component below `dir`
/// is a symbolic link.
fn no_links_below(dir: &Path, path: &Path) -> Result<(), ActionError> {
    let base = absolute(dir);
    let Ok(rest) = path.strip_prefix(&base) else {
        return Err(outside(&path.display().to_string(), dir));
    };
    let mut at = base;
    for part in rest.components() {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.file_type().is_symlink() => return Err(link_refused(path)),
            Ok(_) => {}
            // Nothing further exists yet.
            Err(_) => break,
        }
    }
    Ok(())
}

/// The file's canonical parent lies inside the output directory's
/// canonical form (the directory itself may be a link the user made).
fn confined(dir: &Path, path: &Path) -> Result<(), ActionError> {
    let (Some(parent), Ok(root)) = (path.parent(), absolute(dir).canonicalize()) else {
        return Ok(());
    };
    match parent.canonicalize() {
        Ok(real) if real.starts_with(&root) => Ok(()),
        Ok(_) => Err(link_refused(path)),
        // A parent that does not exist: the open fails and says so.
        Err(_) => Ok(()),
    }
}

/// `requested` resolved inside the output directory, as an absolute path
/// (nothing created).
pub fn inside_output(files: &FilesConfig, requested: &str) -> Result<PathBuf, ActionError> {
    let dir = files.output_dir();
    let wanted = Path::new(requested);
    if requested.trim().is_empty() {
        return Err(ActionError::invalid(
            "path is empty",
            "Pass a file name (it is saved under the output directory), or leave path out.",
        ));
    }
    let relative = if wanted.is_absolute() {
        let base = absolute(&dir);
        match wanted.strip_prefix(&base) {
            Ok(rest) => rest.to_path_buf(),
            Err(_) => return Err(outside(requested, &dir)),
        }
    } else {
        wanted.to_path_buf()
    };
    let plain = relative.components().all(|c| matches!(c, Component::Normal(_)));
    if !plain || relative.as_os_str().is_empty() {
        return Err(outside(requested, &dir));
    }
    // Absolute, so the model and its user know where the file is whatever
    // the server's working directory.
    Ok(absolute(&dir).join(relative))
}

fn absolute(dir: &Path) -> PathBuf {
    if dir.is_absolute() {
        dir.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(dir)
    }
}

fn outside(requested: &str, dir: &Path) -> ActionError {
    ActionError::new(
        ErrorCode::PermissionDenied,
        format!(
            "{requested} is outside the output directory {} ([files] output_dir)",
            dir.display()
        ),
        "Pass a file name or a relative path without `..`; files are written under the output directory.",
    )
}

/// Milliseconds since the epoch, for default file names.
pub fn stamp() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_inside_the_output_directory() {
        let files = FilesConfig {
            output_dir: "/tmp/cdpilot-out".into(),
            ..Default::default()
        };
        assert_eq!(
            inside_output(&files, "a/b.pdf").unwrap(),
            PathBuf::from("/tmp/cdpilot-out/a/b.pdf")
        );
        assert_eq!(
            inside_output(&files, "/tmp/cdpilot-out/x.png").unwrap(),
            PathBuf::from("/tmp/cdpilot-out/x.png")
        );
        for bad in ["../x", "/etc/passwd", "a/../../x", "/tmp/cdpilot-out", " "] {
            let e = inside_output(&files, bad).unwrap_err();
            assert!(
                matches!(e.code, ErrorCode::PermissionDenied | ErrorCode::InvalidArgument),
                "{bad}"
            );
        }
        assert_eq!(
            inside_output(&files, "/etc/passwd").unwrap_err().code,
            ErrorCode::PermissionDenied
        );
    }

    /// Issue 20, finding 13: a link planted inside the output directory
    /// (to a file or a directory elsewhere) carries no write and no read.
    #[test]
    fn links_inside_the_output_directory_are_never_followed() {
        let base = std::env::temp_dir().join(format!("cdpilot-files-{}", std::process::id()));
        let out = base.join("out");
        let elsewhere = base.join("elsewhere");
        std::fs::create_dir_all(&out).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::fs::write(elsewhere.join("victim"), "precious").unwrap();
        std::os::unix::fs::symlink(elsewhere.join("victim"), out.join("shot.png")).unwrap();
        std::os::unix::fs::symlink(&elsewhere, out.join("dir")).unwrap();
        let files = FilesConfig {
            output_dir: out.display().to_string(),
            ..Default::default()
        };
        for name in ["shot.png", "dir/victim", "dir/new.pdf", "dir/sub/new.pdf"] {
            let e = output_path(&files, Some(name), "x").unwrap_err();
            assert_eq!(e.code, ErrorCode::PermissionDenied, "{name}: {e}");
            let e = read_inside(&files, name).unwrap_err();
            assert_eq!(e.code, ErrorCode::PermissionDenied, "{name}: {e}");
        }
        assert!(
            !elsewhere.join("sub").exists(),
            "no directory made through the link"
        );
        // A link swapped in after the check: the open refuses it.
        let path = output_path(&files, Some("late.png"), "x").unwrap();
        std::os::unix::fs::symlink(elsewhere.join("victim"), &path).unwrap();
        assert_eq!(write(&path, b"x").unwrap_err().code, ErrorCode::PermissionDenied);
        assert_eq!(
            std::fs::read_to_string(elsewhere.join("victim")).unwrap(),
            "precious"
        );
        let path = output_path(&files, Some("ok/fine.txt"), "x").unwrap();
        write(&path, b"fine").unwrap();
        assert_eq!(read_inside(&files, "ok/fine.txt").unwrap().1, "fine");
        std::fs::remove_dir_all(&base).unwrap();
    }
}
