//! Where the files cdpilot writes for an agent go (PDFs, saved screenshots,
//! saved storage states): always inside `[files] output_dir`, so a model
//! cannot be talked into overwriting a file elsewhere on the machine.
//!
//! A `path` argument is a name relative to the output directory (`a.pdf`,
//! `run1/state.json`), or an absolute path inside it; `..`, and absolute
//! paths elsewhere, are `permission_denied`.

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
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| {
            ActionError::invalid(
                format!("cannot create the output directory {}: {e}", parent.display()),
                "Set [files] output_dir to a writable directory.",
            )
        })?;
    }
    Ok(path)
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
            "{requested:?} is outside the output directory {} ([files] output_dir)",
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
}
