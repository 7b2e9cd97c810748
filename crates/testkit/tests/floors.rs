//! The floors test (issue 25): each crate that has a `floors.txt` beside
//! its `Cargo.toml` says on which floor each of its top-level modules lives;
//! a module may reach (`use crate::…`, a `crate::x::` path in its code, or
//! `super::` climbing out of it) only modules on its own floor or lower,
//! plus the edges the table excepts, each with its reason. Independently,
//! the top-level modules' graph (without the excepted edges) must have no
//! circle, on one floor either. Playwright's
//! `DEPS.list` idea, without a build step: read the sources, compare.
//!
//! The table (`crates/<crate>/floors.txt`):
//!
//! ```text
//! # a comment
//! 0: error budget timing        # floor 0 holds these modules
//! 1: config
//! allow storage_state -> session: the reason it may, for now
//! ```
//!
//! Every top-level module of the crate (each `mod x;` of its `lib.rs` or
//! `main.rs`) must be on a floor. Names re-exported at the crate root
//! (`pub use error::ActionError;`) count as their module (`crate::ActionError`
//! is a use of `error`). Doc comments and line comments are not code.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One crate's table.
#[derive(Debug, Default)]
struct Floors {
    floor: BTreeMap<String, u32>,
    /// The floor of every module the table does not name (`N: *`): a
    /// folder's tools, so that a new one needs no line here.
    rest: Option<u32>,
    /// Edges allowed across floors, with their reasons.
    allowed: BTreeMap<(String, String), String>,
}

/// A crate's `floors.txt`: the crate's own table, and a table for each
/// folder that has a section (`[actions]`, `[serve::dashboard]`: the
/// folder's module path), whose floors hold the folder's modules.
fn parse_tables(text: &str) -> Result<BTreeMap<String, Floors>, String> {
    let mut sections: Vec<(String, usize, String)> = vec![(String::new(), 0, String::new())];
    for (n, line) in text.lines().enumerate() {
        let code = line.split('#').next().unwrap_or_default().trim();
        if let Some(name) = code.strip_prefix('[').and_then(|c| c.strip_suffix(']')) {
            sections.push((name.trim().to_owned(), n + 1, String::new()));
            continue;
        }
        let last = sections.last_mut().unwrap();
        last.2.push_str(line);
        last.2.push('\n');
    }
    let mut tables = BTreeMap::new();
    for (name, offset, text) in sections {
        let floors = Floors::parse_from(&text, offset)?;
        if tables.insert(name.clone(), floors).is_some() {
            return Err(format!("floors.txt: [{name}] twice"));
        }
    }
    Ok(tables)
}

impl Floors {
    fn parse(text: &str) -> Result<Floors, String> {
        Floors::parse_from(text, 0)
    }

    /// A table whose first line is line `offset + 1` of the file.
    fn parse_from(text: &str, offset: usize) -> Result<Floors, String> {
        let mut floors = Floors::default();
        for (n, line) in text.lines().enumerate() {
            let n = n + offset;
            let line = line.split('#').next().unwrap_or_default().trim();
            if line.is_empty() {
                continue;
            }
            let bad = || format!("floors.txt:{}: cannot read {line:?}", n + 1);
            if let Some(rest) = line.strip_prefix("allow ") {
                let (edge, reason) = rest.split_once(':').ok_or_else(bad)?;
                let (from, to) = edge.split_once("->").ok_or_else(bad)?;
                if reason.trim().is_empty() {
                    return Err(format!("floors.txt:{}: an exception needs its reason", n + 1));
                }
                floors
                    .allowed
                    .insert((from.trim().into(), to.trim().into()), reason.trim().into());
                continue;
            }
            let (number, modules) = line.split_once(':').ok_or_else(bad)?;
            let number: u32 = number.trim().parse().map_err(|_| bad())?;
            for module in modules.split_whitespace() {
                if module == "*" {
                    if floors.rest.replace(number).is_some() {
                        return Err(format!("floors.txt:{}: a second `*`", n + 1));
                    }
                    continue;
                }
                if floors.floor.insert(module.into(), number).is_some() {
                    return Err(format!("floors.txt:{}: {module} is on two floors", n + 1));
                }
            }
        }
        Ok(floors)
    }

    /// The table with every module of `sources` it does not name on the
    /// `*` floor, if it has one.
    fn completed(mut self, sources: &Sources) -> Floors {
        if let Some(rest) = self.rest {
            for module in &sources.modules {
                self.floor.entry(module.clone()).or_insert(rest);
            }
        }
        self
    }
}

/// One reach from a module into another: where it is written.
#[derive(Debug, Clone)]
struct Edge {
    from: String,
    to: String,
    file: String,
    line: usize,
}

/// A crate's sources: its top-level modules, the root's re-exports, and
/// every reach of one module into another.
struct Sources {
    modules: BTreeSet<String>,
    edges: Vec<Edge>,
}

/// The text of `source` without comments and string literals' contents,
/// line for line (so line numbers stay). Raw strings (scripts in pages) and
/// block comments are blanked too.
fn code_of(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut block = 0usize; // depth of /* */ comments
    let mut raw: Option<usize> = None; // inside r#…"…"#…: number of #
    for line in source.lines() {
        let chars: Vec<char> = line.chars().collect();
        let mut kept = String::new();
        let mut i = 0;
        let mut in_string = false;
        while i < chars.len() {
            let c = chars[i];
            let next = chars.get(i + 1).copied();
            if let Some(hashes) = raw {
                if c == '"' && (0..hashes).all(|k| chars.get(i + 1 + k) == Some(&'#')) {
                    raw = None;
                    i += 1 + hashes;
                    kept.push('"');
                } else {
                    i += 1;
                }
                continue;
            }
            if block > 0 {
                if c == '*' && next == Some('/') {
                    block -= 1;
                    i += 2;
                } else if c == '/' && next == Some('*') {
                    block += 1;
                    i += 2;
                } else {
                    i += 1;
                }
                continue;
            }
            if in_string {
                if c == '\\' {
                    i += 2;
                } else {
                    if c == '"' {
                        in_string = false;
                        kept.push('"');
                    }
                    i += 1;
                }
                continue;
            }
            match (c, next) {
                ('/', Some('/')) => break,
                ('/', Some('*')) => {
                    block += 1;
                    i += 2;
                }
                ('"', _) => {
                    in_string = true;
                    kept.push('"');
                    i += 1;
                }
                ('r', Some('#' | '"')) if i == 0 || !is_ident(chars[i - 1]) => {
                    let hashes = chars[i + 1..].iter().take_while(|c| **c == '#').count();
                    if chars.get(i + 1 + hashes) == Some(&'"') {
                        raw = Some(hashes);
                        kept.push('"');
                        i += 2 + hashes;
                    } else {
                        kept.push(c);
                        i += 1;
                    }
                }
                // A char literal ('"' or '{') is not a string or a group.
                ('\'', _) if chars.get(i + 2) == Some(&'\'') => {
                    kept.push_str("' '");
                    i += 3;
                }
                ('\'', Some('\\')) => {
                    let end = chars[i + 2..]
                        .iter()
                        .position(|c| *c == '\'')
                        .map_or(chars.len(), |p| i + 3 + p);
                    kept.push_str("' '");
                    i = end;
                }
                _ => {
                    kept.push(c);
                    i += 1;
                }
            }
        }
        out.push(kept);
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The identifier starting at `at` in `text`, if any.
fn ident_at(text: &[char], at: usize) -> Option<String> {
    let name: String = text[at..].iter().take_while(|c| is_ident(**c)).collect();
    (!name.is_empty()).then_some(name)
}

/// The heads of a `{ … }` group starting at `open` (the `{`): the first
/// identifier of each item at depth one, with its offset.
fn group_heads(text: &[char], open: usize) -> Vec<(String, usize)> {
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut expect = true;
    let mut i = open;
    while i < text.len() {
        match text[i] {
            '{' => {
                depth += 1;
                if depth == 1 {
                    expect = true;
                }
            }
            '}' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            ',' if depth == 1 => expect = true,
            c if depth == 1 && expect && is_ident(c) => {
                let name = ident_at(text, i).unwrap_or_default();
                i += name.len();
                heads.push((name, i));
                expect = false;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    heads
}

/// The module path of a source file under `src/` (`tab/pump.rs` →
/// `["tab", "pump"]`, `tab/mod.rs` → `["tab"]`).
fn module_path(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" {
        parts.push(stem.to_owned());
    }
    parts
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

impl Sources {
    /// The crate's top-level modules and their reaches into each other.
    fn read(src: &Path) -> Sources {
        Sources::read_folder(src, &[])
    }

    /// The modules of the folder at module path `folder` (`["serve"]`:
    /// `src/serve/`, its root `mod.rs` or `src/serve.rs`; empty: the
    /// crate, its root `lib.rs` or `main.rs`) and their reaches into each
    /// other: `crate::serve::x`, `super::x` from a module of the folder,
    /// `super::super::x` from one a floor deeper, …
    fn read_folder(src: &Path, folder: &[String]) -> Sources {
        let dir = folder.iter().fold(src.to_owned(), |d, p| d.join(p));
        let roots: Vec<PathBuf> = if folder.is_empty() {
            vec![src.join("lib.rs"), src.join("main.rs")]
        } else {
            vec![dir.join("mod.rs"), dir.with_extension("rs")]
        };
        let root = roots
            .into_iter()
            .find(|p| p.exists())
            .unwrap_or_else(|| panic!("{}: no root module file", dir.display()));
        let root_code = code_of(&std::fs::read_to_string(&root).unwrap()).join("\n");
        let mut modules = BTreeSet::new();
        // `crate::Name` for a name the root re-exports means its module.
        let mut aliases: BTreeMap<String, String> = BTreeMap::new();
        for statement in root_code.split(';') {
            let words: Vec<&str> = statement.split_whitespace().collect();
            let at = words.iter().position(|w| *w == "mod" || *w == "use");
            match at.map(|i| (words[i], &words[i + 1..])) {
                Some(("mod", [name])) => {
                    modules.insert(name.to_string());
                }
                Some(("use", rest)) => {
                    let path = rest.join(" ");
                    let path = path.trim_start_matches("crate::");
                    let module = path.split("::").next().unwrap_or_default().trim().to_owned();
                    let chars: Vec<char> = path.chars().collect();
                    let names: Vec<String> = match path.find('{') {
                        Some(open) => {
                            let open = path[..open].chars().count();
                            group_heads(&chars, open).into_iter().map(|(n, _)| n).collect()
                        }
                        None => path
                            .rsplit("::")
                            .next()
                            .map(|n| n.trim().to_owned())
                            .into_iter()
                            .collect(),
                    };
                    for name in names {
                        aliases.insert(name, module.clone());
                    }
                }
                _ => {}
            }
        }
        aliases.retain(|_, module| modules.contains(module));
        let resolve = |name: &str| -> Option<String> {
            if modules.contains(name) {
                Some(name.to_owned())
            } else {
                aliases.get(name).cloned()
            }
        };
        let mut files = Vec::new();
        rust_files(&dir, &mut files);
        let mut edges = Vec::new();
        let depth = folder.len();
        for file in files.iter().filter(|f| **f != root) {
            let relative = file.strip_prefix(src).unwrap();
            let path = module_path(relative);
            if path.len() <= depth || path[..depth] != *folder {
                continue;
            }
            let me = path[depth].clone();
            let lines = code_of(&std::fs::read_to_string(file).unwrap());
            let text: Vec<char> = lines.join("\n").chars().collect();
            let line_of = |at: usize| text[..at].iter().filter(|c| **c == '\n').count() + 1;
            let mut reach = |name: &str, at: usize| {
                if let Some(to) = resolve(name) {
                    if to != me {
                        edges.push(Edge {
                            from: me.clone(),
                            to,
                            file: relative.display().to_string(),
                            line: line_of(at),
                        });
                    }
                }
            };
            let mut i = 0;
            while i < text.len() {
                if i > 0 && (is_ident(text[i - 1]) || text[i - 1] == ':') {
                    i += 1;
                    continue;
                }
                let from_here: String = text[i..text.len().min(i + 7)].iter().collect();
                if from_here == "crate::" {
                    let mut at = i + 7;
                    // Down to the folder: `crate::serve::`.
                    let mut inside = true;
                    for part in folder {
                        let named = ident_at(&text, at);
                        let after = at + part.len();
                        if named.as_deref() == Some(part.as_str()) && text[after..].starts_with(&[':', ':']) {
                            at = after + 2;
                        } else {
                            inside = false;
                            break;
                        }
                    }
                    if !inside {
                        i = at;
                        continue;
                    }
                    if text.get(at) == Some(&'{') {
                        for (name, end) in group_heads(&text, at) {
                            reach(&name, end);
                        }
                    } else if let Some(name) = ident_at(&text, at) {
                        reach(&name, at);
                    }
                    i = at;
                    continue;
                }
                if text[i..].starts_with(&['s', 'u', 'p', 'e', 'r', ':', ':']) {
                    // `super::` k times from a module k deep or deeper
                    // reaches the crate root, then names a top-level module.
                    let mut at = i;
                    let mut climbs = 0;
                    while text[at..].starts_with(&['s', 'u', 'p', 'e', 'r', ':', ':']) {
                        climbs += 1;
                        at += 7;
                    }
                    // The crate's root (or above, an error rustc names),
                    // or exactly the folder.
                    let lands = path.len().checked_sub(climbs);
                    if (depth == 0 && lands.is_none()) || lands == Some(depth) {
                        if text.get(at) == Some(&'{') {
                            for (name, end) in group_heads(&text, at) {
                                reach(&name, end);
                            }
                        } else if let Some(name) = ident_at(&text, at) {
                            reach(&name, at);
                        }
                    }
                    i = at;
                    continue;
                }
                i += 1;
            }
        }
        Sources { modules, edges }
    }
}

/// What is wrong with a crate's sources against its table, one line each.
fn violations(sources: &Sources, floors: &Floors) -> Vec<String> {
    let mut wrong = Vec::new();
    for module in &sources.modules {
        if !floors.floor.contains_key(module) {
            wrong.push(format!("module `{module}` is on no floor: add it to floors.txt"));
        }
    }
    for module in floors.floor.keys() {
        if !sources.modules.contains(module) {
            wrong.push(format!(
                "floors.txt names `{module}`, which is not a module of the crate"
            ));
        }
    }
    let mut used_exceptions = BTreeSet::new();
    for edge in &sources.edges {
        let (Some(&from), Some(&to)) = (floors.floor.get(&edge.from), floors.floor.get(&edge.to)) else {
            continue;
        };
        let key = (edge.from.clone(), edge.to.clone());
        if floors.allowed.contains_key(&key) {
            used_exceptions.insert(key);
            continue;
        }
        if to > from {
            wrong.push(format!(
                "{}:{}: `{}` (floor {from}) reaches up into `{}` (floor {to})",
                edge.file, edge.line, edge.from, edge.to
            ));
        }
    }
    for (from, to) in floors.allowed.keys() {
        if !used_exceptions.contains(&(from.clone(), to.clone())) {
            wrong.push(format!(
                "floors.txt allows `{from}` -> `{to}`, which no code does any more: remove the exception"
            ));
        }
    }
    wrong
}

/// The circles among the top-level modules (Tarjan's strongly connected
/// components with more than one module). An edge the table excepts is
/// left out: an exception is a debt the table names with its reason, and
/// the test prints every one.
fn circles(sources: &Sources, floors: &Floors) -> Vec<Vec<String>> {
    let names: Vec<&String> = sources.modules.iter().collect();
    let index: BTreeMap<&str, usize> = names.iter().enumerate().map(|(i, n)| (n.as_str(), i)).collect();
    let mut next: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); names.len()];
    for edge in &sources.edges {
        if floors.allowed.contains_key(&(edge.from.clone(), edge.to.clone())) {
            continue;
        }
        if let (Some(&a), Some(&b)) = (index.get(edge.from.as_str()), index.get(edge.to.as_str())) {
            next[a].insert(b);
        }
    }
    struct Tarjan<'a> {
        next: &'a [BTreeSet<usize>],
        order: Vec<Option<usize>>,
        low: Vec<usize>,
        stack: Vec<usize>,
        on_stack: Vec<bool>,
        counter: usize,
        found: Vec<Vec<usize>>,
    }
    impl Tarjan<'_> {
        fn visit(&mut self, v: usize) {
            self.order[v] = Some(self.counter);
            self.low[v] = self.counter;
            self.counter += 1;
            self.stack.push(v);
            self.on_stack[v] = true;
            for &w in self.next[v].iter() {
                match self.order[w] {
                    None => {
                        self.visit(w);
                        self.low[v] = self.low[v].min(self.low[w]);
                    }
                    Some(o) if self.on_stack[w] => self.low[v] = self.low[v].min(o),
                    Some(_) => {}
                }
            }
            if Some(self.low[v]) == self.order[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    self.found.push(component);
                }
            }
        }
    }
    let mut tarjan = Tarjan {
        next: &next,
        order: vec![None; names.len()],
        low: vec![0; names.len()],
        stack: Vec::new(),
        on_stack: vec![false; names.len()],
        counter: 0,
        found: Vec::new(),
    };
    for v in 0..names.len() {
        if tarjan.order[v].is_none() {
            tarjan.visit(v);
        }
    }
    let mut found: Vec<Vec<String>> = tarjan
        .found
        .into_iter()
        .map(|c| {
            let mut c: Vec<String> = c.into_iter().map(|i| names[i].clone()).collect();
            c.sort();
            c
        })
        .collect();
    found.sort();
    found
}

/// Says each circle with the lines that close it.
fn describe(circle: &[String], sources: &Sources) -> String {
    let inside: BTreeSet<&String> = circle.iter().collect();
    let mut seen = BTreeSet::new();
    let lines: Vec<String> = sources
        .edges
        .iter()
        .filter(|e| inside.contains(&e.from) && inside.contains(&e.to))
        .filter(|e| seen.insert((e.from.clone(), e.to.clone())))
        .map(|e| format!("    {} -> {} ({}:{})", e.from, e.to, e.file, e.line))
        .collect();
    format!(
        "a circle of {} modules: {}\n{}",
        circle.len(),
        circle.join(", "),
        lines.join("\n")
    )
}

fn crates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_owned()
}

/// Every module folder under `src` (`["serve"]`, `["serve", "dashboard"]`),
/// as module paths.
fn folders(src: &Path) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut stack = vec![(src.to_owned(), Vec::<String>::new())];
    while let Some((dir, path)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let p = entry.path();
            if !p.is_dir() {
                continue;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            let mut child = path.clone();
            child.push(name);
            if p.join("mod.rs").exists() || p.with_extension("rs").exists() {
                found.push(child.clone());
            }
            stack.push((p, child));
        }
    }
    found.sort();
    found
}

#[test]
fn every_crate_with_a_table_keeps_its_floors_and_has_no_circle() {
    let mut checked = Vec::new();
    let mut wrong = Vec::new();
    let mut crates: Vec<PathBuf> = std::fs::read_dir(crates_dir())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("floors.txt").exists())
        .collect();
    crates.sort();
    for dir in crates {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let mut tables = parse_tables(&std::fs::read_to_string(dir.join("floors.txt")).unwrap())
            .unwrap_or_else(|e| panic!("crates/{name}/{e}"));
        let src = dir.join("src");
        let sources = Sources::read(&src);
        let floors = tables.remove("").unwrap_or_default().completed(&sources);
        assert!(
            sources.modules.len() < 2 || !sources.edges.is_empty(),
            "crates/{name}: no module reaches another: the reader is broken"
        );
        for line in violations(&sources, &floors) {
            wrong.push(format!("crates/{name}: {line}"));
        }
        for circle in circles(&sources, &floors) {
            wrong.push(format!("crates/{name}: {}", describe(&circle, &sources)));
        }
        for ((from, to), reason) in &floors.allowed {
            eprintln!("crates/{name}: excepted {from} -> {to}: {reason}");
        }
        // Inside each folder: its section's floors if it has one, and no
        // circle among its modules either way.
        for folder in folders(&src) {
            let key = folder.join("::");
            let sources = Sources::read_folder(&src, &folder);
            let floors = tables.remove(&key).map(|f| f.completed(&sources));
            if let Some(floors) = &floors {
                assert!(
                    sources.modules.len() < 2 || !sources.edges.is_empty(),
                    "crates/{name} [{key}]: no module reaches another: the reader is broken"
                );
                for line in violations(&sources, floors) {
                    wrong.push(format!("crates/{name} [{key}]: {line}"));
                }
                for ((from, to), reason) in &floors.allowed {
                    eprintln!("crates/{name} [{key}]: excepted {from} -> {to}: {reason}");
                }
            }
            for circle in circles(&sources, &floors.unwrap_or_default()) {
                wrong.push(format!("crates/{name} [{key}]: {}", describe(&circle, &sources)));
            }
            checked.push(format!("{name}::{key}"));
        }
        for key in tables.keys() {
            wrong.push(format!(
                "crates/{name}/floors.txt: [{key}] is not a folder of the crate"
            ));
        }
        checked.push(name);
    }
    for table in ["engine", "cdp", "server", "engine::tab_tools", "server::serve"] {
        assert!(
            checked.contains(&table.to_owned()),
            "{table} is checked: {checked:?}"
        );
    }
    assert!(wrong.is_empty(), "\n{}\n", wrong.join("\n"));
}

/// The checker itself, on a small crate written here: it must see a
/// reach up through each way of writing one, name its file and line and
/// both floors, and find a circle on one floor.
#[test]
fn the_checker_finds_reaches_up_and_circles() {
    let dir = std::env::temp_dir().join(format!("cdpilot-floors-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let write = |path: &str, text: &str| {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "lib.rs",
        "mod low;\npub mod high;\nmod top;\nmod peer;\npub use high::{Thing, other::More};\n",
    );
    write(
        "low/mod.rs",
        "//! Says crate::top in a doc comment: not code.\nmod deep;\nuse crate::{\n    peer,\n    Thing,\n};\nfn f() -> &'static str { \"crate::top in a string\" }\n",
    );
    write("low/deep.rs", "fn g() { super::super::top::run(); }\n");
    write(
        "high.rs",
        "pub struct Thing;\npub mod other { pub struct More; }\nfn h() { crate::peer::x(); }\n",
    );
    write(
        "peer.rs",
        "fn p() { let _ = crate::high::Thing; }\nconst C: char = '{';\n",
    );
    write(
        "top.rs",
        "use crate::low;\nconst JS: &str = r#\"// crate::peer\"#;\n",
    );
    let sources = Sources::read(&dir);
    let floors =
        Floors::parse("0: low\n1: high peer\n2: top\nallow low -> peer: it may, for this test\n").unwrap();
    let wrong = violations(&sources, &floors);
    let want = [
        "low/deep.rs:1: `low` (floor 0) reaches up into `top` (floor 2)",
        "low/mod.rs:5: `low` (floor 0) reaches up into `high` (floor 1)",
    ];
    assert_eq!(wrong, want, "{wrong:#?}");
    assert_eq!(
        circles(&sources, &floors),
        [
            vec!["high".to_owned(), "peer".to_owned()],
            vec!["low".to_owned(), "top".to_owned()]
        ],
        "high <-> peer on one floor, low -> top -> low through super::super"
    );
    let unused = Floors::parse("0: low high peer top\nallow top -> peer: gone\n").unwrap();
    assert!(violations(&sources, &unused)
        .iter()
        .any(|w| w.contains("no code does any more")));
    let missing = Floors::parse("0: low high\n").unwrap();
    assert!(violations(&sources, &missing)
        .iter()
        .any(|w| w.contains("`peer` is on no floor")));
    assert!(
        Floors::parse("allow a -> b:\n").is_err(),
        "an exception without a reason"
    );
    // `*`: every module the table does not name, on that floor.
    let rest = Floors::parse("0: low high\n1: *\n").unwrap().completed(&sources);
    assert_eq!(
        (rest.floor["peer"], rest.floor["top"], rest.floor["low"]),
        (1, 1, 0)
    );
    assert!(violations(&sources, &rest)
        .iter()
        .any(|w| w.contains("`low` (floor 0) reaches up into `top` (floor 1)")));
    // Inside a folder: `f/a.rs` reaches its sibling through `super::`,
    // `f/b.rs` through `crate::f::` and `f/deep/c.rs` through
    // `super::super::`: the folder's own section sees each, and a circle.
    write("f/mod.rs", "mod a;\nmod b;\nmod deep;\n");
    write("f/a.rs", "fn a() { super::b::x(); }\n");
    write("f/b.rs", "use crate::f::a;\n");
    write("f/deep/mod.rs", "mod c;\n");
    write("f/deep/c.rs", "fn c() { super::super::b::x(); }\n");
    let folder = Sources::read_folder(&dir, &["f".to_owned()]);
    let tables = parse_tables("0: low high peer top\n[f]\n0: a deep\n1: b\n").unwrap();
    let wrong = violations(&folder, &tables["f"]);
    assert_eq!(
        wrong,
        [
            "f/a.rs:1: `a` (floor 0) reaches up into `b` (floor 1)",
            "f/deep/c.rs:1: `deep` (floor 0) reaches up into `b` (floor 1)",
        ],
        "{wrong:#?}"
    );
    assert_eq!(
        circles(&folder, &tables["f"]),
        [vec!["a".to_owned(), "b".to_owned()]]
    );
    assert!(
        tables[""].floor.contains_key("top"),
        "the crate's own table before the first section"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
