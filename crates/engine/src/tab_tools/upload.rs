//! `browser_upload`: hand local files to a file input, or to the file
//! chooser an element opens when clicked. Only files under `[files]
//! upload_roots` may leave the machine: a page that asks for a file must
//! not get `~/.ssh/id_rsa` because a model complied. Paths are checked as
//! written and again after the file system resolved symlinks and `..`.

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use cdp::protocol::{dom, page, runtime};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::args::{Common, ElementTarget, MouseButton};
use crate::tab::Tab;
use crate::tab_tools::element::{self, Element};
use crate::tab_tools::input;
use crate::tool::{Declaration, DefaultBudget, Effect, Group, Scope, TabCall, TabTool, Tool};
use crate::validate;
use crate::{ActionError, ActionOutput, Budget, ErrorCode};

/// Arguments of `browser_upload`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct UploadArgs {
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(flatten)]
    pub target: ElementTarget,
    /// Relative to the server's directory.
    pub paths: Vec<String>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(flatten)]
    pub common: Common,
}

/// `browser_upload`: its declaration and checks (see `crate::tool`).
impl Tool for UploadArgs {
    const TOOL: Declaration = Declaration {
        name: "browser_upload",
        verb: "upload",
        group: Group::Core,
        description: "Give local files to a file input, or to the element that opens a file chooser.",
        scope: Scope::Tab,
        runs_during_dialog: false,
        budget: DefaultBudget::Action,
        changes_page: true,
        switch: None,
        effect: Effect::Acts,
    };

    /// One element, and at least one path, none empty.
    fn check(&self) -> Result<(), ActionError> {
        validate::element_target(Self::TOOL.name, &self.target)?;
        if self.paths.is_empty() {
            return Err(ActionError::invalid(
                "paths is empty",
                "Pass the local files to upload, e.g. {\"paths\": [\"report.pdf\"]}.",
            ));
        }
        self.paths
            .iter()
            .try_for_each(|p| validate::non_empty("paths[]", p))
    }
}

impl TabTool for UploadArgs {
    /// Runs the tool in the call's tab.
    async fn perform(&self, call: &TabCall<'_>) -> Result<ActionOutput, ActionError> {
        run(call.tab, self, &call.config.files.upload_roots(), call.budget).await
    }
}

const INSPECT: &str = "function () { return { file: this instanceof HTMLInputElement && this.type === 'file', multiple: !!this.multiple, disabled: !!this.disabled }; }";

const FILE_NAMES: &str = "function () { return Array.from(this.files || []).map((f) => f.name); }";

/// How long a click may take to open a file chooser before the element is
/// judged not to open one (within the call's budget).
const CHOOSER_WAIT: Duration = Duration::from_secs(5);

pub async fn run(
    tab: &Tab,
    args: &UploadArgs,
    roots: &[PathBuf],
    budget: &Budget,
) -> Result<ActionOutput, ActionError> {
    let cwd = std::env::current_dir()
        .map_err(|e| ActionError::internal(format!("cannot read the working directory: {e}")))?;
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let files = checked_paths(&args.paths, roots, &cwd, home.as_deref())?;
    let files: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let element = element::resolve(tab, &args.target, budget).await?;
    let inspected = element
        .call(budget, "inspecting the element", INSPECT, vec![])
        .await?;
    let names = if inspected["file"] == Value::Bool(true) {
        if inspected["disabled"] == Value::Bool(true) {
            return Err(ActionError::new(
                ErrorCode::ElementNotInteractable,
                format!("{} is disabled", element.label),
                "Fill in what the form needs first, then upload.",
            ));
        }
        if files.len() > 1 && inspected["multiple"] != Value::Bool(true) {
            return Err(one_file_only(&element.label, files.len()));
        }
        element
            .frame
            .cdp(
                budget,
                "giving the input its files",
                dom::SetFileInputFiles {
                    files: files.clone(),
                    object_id: Some(element.object_id.clone()),
                    backend_node_id: None,
                },
            )
            .await?;
        element
            .call(budget, "reading the chosen files", FILE_NAMES, vec![])
            .await?
    } else {
        through_chooser(tab, &element, files, budget).await?
    };
    let shown = names
        .as_array()
        .map(|n| n.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", "))
        .unwrap_or_default();
    Ok(ActionOutput::new(
        format!("Gave {} the files: {shown}.", element.label),
        json!({ "ok": true, "files": names }),
    ))
}

/// Clicks `element` with file choosers intercepted, and answers the
/// chooser it opens with `files`. Returns the names the input then holds.
async fn through_chooser(
    tab: &Tab,
    element: &Element,
    files: Vec<String>,
    budget: &Budget,
) -> Result<Value, ActionError> {
    let session = &element.frame.session;
    let mut events = session.events();
    let intercept = |enabled| page::SetInterceptFileChooserDialog { enabled };
    element
        .frame
        .cdp(budget, "intercepting the file chooser", intercept(true))
        .await?;
    let opened = async {
        let point = element.actionable_point(tab, budget).await?;
        input::press_at(tab, budget, point, MouseButton::Left, 1, 0).await?;
        let wait = async {
            while let Some(event) = events.recv().await {
                if let Some(opened) = event.decode::<page::FileChooserOpened>() {
                    return Ok(opened);
                }
            }
            Err(ActionError::disconnected())
        };
        let limit = CHOOSER_WAIT.min(budget.remaining());
        budget
            .run("waiting for the file chooser", async {
                tokio::time::timeout(limit, wait).await.unwrap_or_else(|_| {
                    Err(ActionError::new(
                        ErrorCode::ElementNotInteractable,
                        format!(
                            "clicking {} opened no file chooser (waited {} ms)",
                            element.label,
                            limit.as_millis()
                        ),
                        "Pass the <input type=file> itself, or the button that opens the file dialog.",
                    ))
                })
            })
            .await
    }
    .await;
    // Choosers go back to normal whatever happened.
    let stop = element
        .frame
        .cdp(budget, "intercepting the file chooser", intercept(false))
        .await;
    let opened = opened?;
    stop?;
    if opened.mode == "selectSingle" && files.len() > 1 {
        return Err(one_file_only(&element.label, files.len()));
    }
    element
        .frame
        .cdp(
            budget,
            "answering the file chooser",
            dom::SetFileInputFiles {
                files,
                object_id: None,
                backend_node_id: Some(opened.backend_node_id),
            },
        )
        .await?;
    let input = element
        .frame
        .cdp(
            budget,
            "finding the chooser's input",
            dom::ResolveNode {
                backend_node_id: opened.backend_node_id,
                execution_context_id: None,
                object_group: None,
            },
        )
        .await?;
    let names = element
        .frame
        .cdp(
            budget,
            "reading the chosen files",
            runtime::CallFunctionOn {
                function_declaration: FILE_NAMES.to_owned(),
                object_id: input.object.object_id,
                return_by_value: true,
                ..Default::default()
            },
        )
        .await?;
    Ok(names.result.value.unwrap_or(Value::Null))
}

fn one_file_only(label: &str, given: usize) -> ActionError {
    ActionError::invalid(
        format!("{label} takes one file, but {given} were given"),
        "Pass one path.",
    )
}

/// The files `paths` name, each canonical and under one of `roots`
/// (relative paths and roots are taken from `cwd`; `~/` is `home`).
/// Outside the roots: `permission_denied`; missing or not a file:
/// `invalid_argument`.
pub(crate) fn checked_paths(
    paths: &[String],
    roots: &[PathBuf],
    cwd: &Path,
    home: Option<&Path>,
) -> Result<Vec<PathBuf>, ActionError> {
    if roots.is_empty() {
        return Err(ActionError::new(
            ErrorCode::PermissionDenied,
            "browser_upload has no directory to read from: [files] upload_roots is empty",
            "Ask the user to put the file in a directory and list it in [files] upload_roots (or CDPILOT_FILES_UPLOAD_ROOTS); nothing was uploaded.",
        ));
    }
    let absolute = |p: &Path| normalized(&cwd.join(p));
    let written_roots: Vec<PathBuf> = roots.iter().map(|r| absolute(r)).collect();
    let real_roots: Vec<PathBuf> = written_roots
        .iter()
        .filter_map(|r| r.canonicalize().ok())
        .collect();
    let shown_roots = written_roots
        .iter()
        .map(|r| r.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let outside = |path: &str| {
        ActionError::new(
            ErrorCode::PermissionDenied,
            format!("{path} is outside the directories uploads may come from ({shown_roots})"),
            "Upload only files under [files] upload_roots; a person must copy other files there (or widen upload_roots) first.",
        )
    };
    let mut files = Vec::with_capacity(paths.len());
    for path in paths {
        let expanded = match (path.strip_prefix("~/"), home) {
            (Some(rest), Some(home)) => home.join(rest),
            _ => PathBuf::from(path),
        };
        let written = absolute(&expanded);
        if !written_roots.iter().any(|r| written.starts_with(r)) {
            return Err(outside(path));
        }
        let real = written.canonicalize().map_err(|e| {
            ActionError::invalid(
                format!("cannot read {path}: {}", std::io::Error::from(e.kind())),
                "Pass the path of an existing file (relative paths start at the server's working directory).",
            )
        })?;
        if !real_roots.iter().any(|r| real.starts_with(r)) {
            // A symlink under a root that leads out of it.
            return Err(outside(path));
        }
        // A link anywhere below the root, even one that stays inside it, is
        // refused: the file Chromium opens later must be the file checked
        // now, and a link can be re-pointed in between.
        let through_link = written_roots.iter().all(|w| {
            let (Ok(rest), Ok(r)) = (written.strip_prefix(w), w.canonicalize()) else {
                return true;
            };
            r.join(rest) != real
        });
        if through_link {
            return Err(ActionError::new(
                ErrorCode::PermissionDenied,
                format!("{path} is or goes through a symbolic link inside the upload roots"),
                "Pass the file's own path; cdpilot does not follow links under [files] upload_roots.",
            ));
        }
        if !real.is_file() {
            return Err(ActionError::invalid(
                format!("{path} is not a file"),
                "Pass files, not directories.",
            ));
        }
        files.push(real);
    }
    Ok(files)
}

/// `path` with `.` and `..` worked out on the text alone (no file system).
fn normalized(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_outside_the_roots_are_refused_and_missing_files_are_invalid() {
        let base = std::env::temp_dir().join(format!("cdpilot-upload-{}", std::process::id()));
        let root = base.join("root");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/a.txt"), "a").unwrap();
        std::fs::write(base.join("secret"), "s").unwrap();
        let roots = vec![PathBuf::from("root")];
        let check = |p: &str| checked_paths(&[p.to_owned()], &roots, &base, Some(&base));

        let ok = check("root/sub/a.txt").unwrap();
        assert_eq!(ok, vec![root.join("sub/a.txt").canonicalize().unwrap()]);
        assert!(check("root/sub/../sub/a.txt").is_ok());
        for outside in ["secret", "root/../secret", "/etc/passwd", "~/secret"] {
            let e = check(outside).unwrap_err();
            assert_eq!(e.code, ErrorCode::PermissionDenied, "{outside}: {e}");
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(base.join("secret"), root.join("link")).unwrap_or(());
            let e = check("root/link").unwrap_err();
            assert_eq!(e.code, ErrorCode::PermissionDenied, "{e}");
            // Issue 20, finding 13: a link that stays inside the root too.
            std::os::unix::fs::symlink(root.join("sub/a.txt"), root.join("inner")).unwrap_or(());
            std::os::unix::fs::symlink(root.join("sub"), root.join("subdir")).unwrap_or(());
            for linked in ["root/inner", "root/subdir/a.txt"] {
                let e = check(linked).unwrap_err();
                assert_eq!(e.code, ErrorCode::PermissionDenied, "{linked}: {e}");
            }
        }
        // Issue 20, finding 11: no roots configured, no upload at all.
        let e = checked_paths(&["root/sub/a.txt".to_owned()], &[], &base, Some(&base)).unwrap_err();
        assert_eq!(e.code, ErrorCode::PermissionDenied, "{e}");
        assert!(e.message.contains("[files] upload_roots"), "{e}");
        let e = check("root/missing.txt").unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        let e = check("root/sub").unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
        std::fs::remove_dir_all(&base).unwrap();
    }
}
