//! The docs stay true: the book's generated tools reference is what the
//! registry says now, every relative link in the README and the book
//! reaches a file (and a heading, when it names one), every page is in the
//! book's table of contents, and the README's figures are the figures
//! page's. No browser needed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn cdpilot(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_cdpilot"))
        .args(args)
        .output()
        .expect("cdpilot runs");
    assert!(output.status.success(), "cdpilot {args:?}: {output:?}");
    String::from_utf8(output.stdout).expect("UTF-8")
}

/// The book's pages and the README.
fn documents() -> Vec<PathBuf> {
    let mut files = vec![repository().join("README.md")];
    let mut pages: Vec<PathBuf> = std::fs::read_dir(repository().join("docs/src"))
        .expect("docs/src")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    files.extend(pages);
    files
}

#[test]
fn the_tools_reference_is_what_cdpilot_tools_markdown_prints() {
    let page = repository().join("docs/src/tools-reference.md");
    let committed = read(&page);
    let now = cdpilot(&["tools", "--markdown"]);
    if committed != now {
        let line = committed
            .lines()
            .zip(now.lines())
            .position(|(a, b)| a != b)
            .map_or_else(
                || committed.lines().count().min(now.lines().count()) + 1,
                |i| i + 1,
            );
        panic!(
            "docs/src/tools-reference.md is out of date (first difference at line {line}: \
             committed {:?}, now {:?}). Run `scripts/book --update` and commit the page.",
            committed.lines().nth(line - 1),
            now.lines().nth(line - 1)
        );
    }
}

/// Text with fenced code blocks and inline code spans blanked out: links
/// and headings are only read outside them.
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            out.push('\n');
            continue;
        }
        if fenced {
            out.push('\n');
            continue;
        }
        let mut in_code = false;
        for c in line.chars() {
            if c == '`' {
                in_code = !in_code;
            } else if !in_code {
                out.push(c);
            }
        }
        out.push('\n');
    }
    out
}

/// The anchors a Markdown file's headings get (GitHub's and mdBook's rule:
/// lower case, spaces to `-`, other punctuation dropped).
fn anchors(text: &str) -> BTreeSet<String> {
    let raw_headings: Vec<String> = {
        // Headings keep their code spans' words (`## The \`[files]\` key`).
        let mut fenced = false;
        text.lines()
            .filter(|line| {
                if line.trim_start().starts_with("```") {
                    fenced = !fenced;
                    return false;
                }
                !fenced && line.starts_with('#')
            })
            .map(|line| line.trim_start_matches('#').trim().to_string())
            .collect()
    };
    raw_headings.iter().map(|h| slug(h)).collect()
}

fn slug(heading: &str) -> String {
    heading
        .chars()
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '_' || c == '-' {
                Some(c.to_lowercase().next().unwrap_or(c))
            } else if c.is_whitespace() {
                Some('-')
            } else {
                None
            }
        })
        .collect()
}

/// Every `](target)` in the prose of `text`.
fn link_targets(text: &str) -> Vec<String> {
    let prose = prose(text);
    let mut targets = Vec::new();
    let mut rest = prose.as_str();
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        if let Some(end) = rest.find(')') {
            targets.push(rest[..end].trim().to_string());
        }
    }
    targets
}

#[test]
fn every_relative_link_in_the_readme_and_the_book_reaches_a_file_and_heading() {
    let mut broken = Vec::new();
    for file in documents() {
        let text = read(&file);
        let dir = file.parent().expect("a directory");
        for target in link_targets(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((path, anchor)) => (path, Some(anchor)),
                None => (target.as_str(), None),
            };
            let linked = if path.is_empty() {
                file.clone()
            } else {
                dir.join(path)
            };
            let name = file
                .strip_prefix(repository())
                .unwrap_or(&file)
                .display()
                .to_string();
            if !linked.exists() {
                broken.push(format!("{name}: ({target}): no file {}", linked.display()));
                continue;
            }
            if let Some(anchor) = anchor {
                if linked.extension().is_some_and(|e| e == "md") && !anchors(&read(&linked)).contains(anchor)
                {
                    broken.push(format!("{name}: ({target}): no heading #{anchor} there"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_page_of_the_book_is_in_its_table_of_contents() {
    let summary = read(&repository().join("docs/src/SUMMARY.md"));
    let listed: BTreeSet<String> = link_targets(&summary).into_iter().collect();
    let missing: Vec<String> = documents()
        .iter()
        .filter(|p| p.parent().is_some_and(|d| d.ends_with("docs/src")))
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .filter(|name| name != "SUMMARY.md" && !listed.contains(name))
        .collect();
    assert!(
        missing.is_empty(),
        "pages docs/src/SUMMARY.md does not list (the book would not show them): {missing:?}"
    );
}

#[test]
fn the_readme_figures_are_the_figures_page_and_the_tool_sizes_are_current() {
    let readme = read(&repository().join("README.md"));
    let figures = read(&repository().join("docs/src/figures.md"));
    let figure_lines: BTreeSet<&str> = figures.lines().collect();
    let rows: Vec<&str> = readme
        .lines()
        .skip_while(|l| !l.starts_with("| figure |"))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .collect();
    assert!(!rows.is_empty(), "the README has a figure table (| figure | …)");
    for row in &rows {
        assert!(
            figure_lines.contains(row),
            "a README figure that docs/src/figures.md does not give (each figure is measured once, \
             there): {row}"
        );
    }
    // The tool definitions' size comes from the registry (the generated
    // reference's table); the figure rows must say the same.
    let reference = cdpilot(&["tools", "--markdown"]);
    let size = |group: &str| -> (String, String) {
        let row = reference
            .lines()
            .find(|l| l.starts_with(&format!("| {group} |")))
            .unwrap_or_else(|| panic!("a size row for {group} in the tools reference"));
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        (cells[2].to_string(), cells[3].to_string())
    };
    let (core_tools, core_chars) = size("`core`");
    let (all_tools, all_chars) = size("every group");
    let said =
        format!("core {core_chars} chars ({core_tools} tools); every group {all_chars} ({all_tools} tools)");
    assert!(
        figures.contains(&said) && readme.contains(&said),
        "README.md and docs/src/figures.md should say the tool definitions take `{said}`"
    );
}

/// Every `cargo test … --test FILE [FILTER]` and `cargo bench … --bench
/// FILE` the docs give names a test or bench file that exists, and a
/// filter matches a test function in it; `module::tests::name` names a
/// function that exists (the README once named a test that did not).
#[test]
fn every_test_and_bench_the_docs_name_exists() {
    let sources: Vec<PathBuf> = ["cdp", "engine", "server", "cdpilot", "testkit"]
        .iter()
        .map(|c| repository().join("crates").join(c))
        .collect();
    // A target is `folder/name.rs` or, split into modules, the folder
    // `folder/name/` with its `main.rs` (Cargo's two layouts): its files.
    let find = |folder: &str, name: &str| -> Option<(PathBuf, Vec<PathBuf>)> {
        sources.iter().find_map(|crate_dir| {
            let file = crate_dir.join(folder).join(format!("{name}.rs"));
            let dir = crate_dir.join(folder).join(name);
            if file.exists() {
                Some((file.clone(), vec![file]))
            } else if dir.join("main.rs").exists() {
                Some((dir.clone(), walk(&dir)))
            } else {
                None
            }
        })
    };
    let mut missing = Vec::new();
    for file in documents() {
        for span in code(&read(&file)) {
            let words: Vec<&str> = span.split_whitespace().collect();
            for (i, word) in words.iter().enumerate() {
                let (folder, kind) = match *word {
                    "--test" => ("tests", "test"),
                    "--bench" => ("benches", "bench"),
                    _ => continue,
                };
                let Some(name) = words.get(i + 1) else { continue };
                let Some((path, files)) = find(folder, name) else {
                    missing.push(format!("{}: no {kind} file {name}.rs", shown(&file)));
                    continue;
                };
                // The filter: the first word after the file that is not a
                // flag (`--test policy -- --ignored navigate_cost`).
                if let Some(filter) = words
                    .iter()
                    .skip(i + 2)
                    .find(|w| !w.starts_with('-'))
                    .filter(|w| kind == "test" && w.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
                {
                    let names: Vec<String> = files.iter().flat_map(|f| fn_names(&read(f))).collect();
                    if !names.iter().any(|f| f.contains(*filter)) {
                        missing.push(format!(
                            "{}: no test matching `{filter}` in {}",
                            shown(&file),
                            shown(&path)
                        ));
                    }
                }
            }
            for word in &words {
                if let Some((_, name)) = word.split_once("::tests::") {
                    let name = name.trim_end_matches(|c: char| !c.is_alphanumeric() && c != '_');
                    let found = sources.iter().any(|c| {
                        walk(&c.join("src"))
                            .iter()
                            .any(|f| fn_names(&read(f)).iter().any(|n| n == name))
                    });
                    if !found {
                        missing.push(format!("{}: no test function {name}", shown(&file)));
                    }
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "the docs name tests that do not exist:\n{}",
        missing.join("\n")
    );
}

/// A path as the repository names it.
fn shown(path: &Path) -> String {
    let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let root = repository().canonicalize().unwrap_or_else(|_| repository());
    canonical
        .strip_prefix(&root)
        .unwrap_or(&canonical)
        .display()
        .to_string()
}

/// The code in Markdown text: each fenced block's lines and each inline
/// code span (which may wrap across lines).
fn code(text: &str) -> Vec<String> {
    let mut spans = Vec::new();
    let mut fenced = false;
    let mut inline = false;
    let mut current = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            spans.push(line.to_string());
            continue;
        }
        for c in line.chars() {
            if c == '`' {
                if inline {
                    spans.push(std::mem::take(&mut current));
                }
                inline = !inline;
            } else if inline {
                current.push(c);
            }
        }
        if inline {
            current.push(' ');
        }
    }
    spans
}

/// The names of the functions a Rust file declares.
fn fn_names(source: &str) -> Vec<String> {
    source
        .split("fn ")
        .skip(1)
        .map(|rest| {
            rest.chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect()
        })
        .collect()
}

/// Every `.rs` file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files
}

#[test]
fn slugs_follow_the_heading_rule() {
    assert_eq!(slug("CLI and MCP: characters"), "cli-and-mcp-characters");
    assert_eq!(slug("Group `core`"), "group-core");
    assert_eq!(link_targets("[a](b.md#c) `[x](y)`"), vec!["b.md#c".to_string()]);
    assert_eq!(
        code("a `cargo test\n--test x` b\n```\nrun\n```"),
        vec!["cargo test --test x", "run"]
    );
}
