//! The CLI's subcommands, generated from the tool registry: each tool's
//! declaration names its verb, and its help is the tool's description (the
//! one MCP sends). A tool with arguments of its own on the command line
//! has a mapping here; every other tool's verb takes its arguments as one
//! JSON object, so a new tool has a verb without an edit here. The
//! arguments are generic JSON, so a tool this build's server lacks is
//! refused by the server with `invalid_argument`.

use clap::{Arg, ArgAction, ArgMatches, Command};
use serde_json::{json, Map, Value};

/// How one tool's verb reads its own command line.
struct Mapping {
    /// The tool (its declaration names the verb).
    tool: &'static str,
    args: fn() -> Vec<Arg>,
    map: fn(&ArgMatches) -> Result<Value, String>,
}

/// One CLI subcommand.
#[derive(Clone)]
pub struct Verb {
    pub name: &'static str,
    /// The tool it runs (`None`: it talks to the server itself).
    pub tool: Option<&'static str>,
    /// Help when the registry has no such tool (or it runs none).
    pub about: &'static str,
    args: fn() -> Vec<Arg>,
    map: fn(&ArgMatches) -> Result<Value, String>,
}

fn pos(name: &'static str, help: &'static str) -> Arg {
    Arg::new(name).help(help).required(true)
}

fn opt(name: &'static str, help: &'static str) -> Arg {
    Arg::new(name).long(name).help(help)
}

fn flag(name: &'static str, help: &'static str) -> Arg {
    Arg::new(name).long(name).help(help).action(ArgAction::SetTrue)
}

fn many(name: &'static str, help: &'static str) -> Arg {
    Arg::new(name).help(help).required(true).num_args(1..)
}

fn s(m: &ArgMatches, name: &str) -> Option<String> {
    m.get_one::<String>(name).cloned()
}

fn list(m: &ArgMatches, name: &str) -> Vec<String> {
    m.get_many::<String>(name)
        .map(|v| v.cloned().collect())
        .unwrap_or_default()
}

fn number(m: &ArgMatches, name: &str) -> Result<Option<u64>, String> {
    s(m, name)
        .map(|v| {
            v.parse::<u64>()
                .map_err(|_| format!("--{name} wants a whole number, not {v:?}"))
        })
        .transpose()
}

/// `{ref: R}` or `{selector: S}` from a positional `target` and `--selector`.
fn target(m: &ArgMatches, args: &mut Map<String, Value>) -> Result<(), String> {
    match (s(m, "target"), s(m, "selector")) {
        (Some(r), None) => args.insert("ref".into(), r.into()),
        (None, Some(sel)) => args.insert("selector".into(), sel.into()),
        (Some(_), Some(_)) => return Err("give a ref or --selector, not both".into()),
        (None, None) => return Err("give a ref (e3, from `cdpilot snapshot`) or --selector CSS".into()),
    };
    Ok(())
}

fn absolute(path: &str) -> String {
    let path = std::path::Path::new(path);
    match path.is_absolute() {
        true => path.display().to_string(),
        false => std::env::current_dir()
            .map(|d| d.join(path).display().to_string())
            .unwrap_or_else(|_| path.display().to_string()),
    }
}

/// How a tool's verb reads its command line, for the tools that have
/// arguments of their own on the CLI, in the order `cdpilot` lists them.
/// Every other tool gets a verb too ([`generic`]): its declared name,
/// taking the tool's arguments as one JSON object.
const MAPPINGS: &[Mapping] = &[
    Mapping {
        tool: "browser_navigate",
        args: || {
            vec![
                pos("url", "The URL to open (http or https)"),
                opt("wait-until", "load, domcontentloaded or networkidle"),
            ]
        },
        map: |m| {
            let mut a = json!({"url": s(m, "url")});
            if let Some(w) = s(m, "wait-until") {
                a["wait_until"] = w.into();
            }
            Ok(a)
        },
    },
    Mapping {
        tool: "browser_snapshot",
        args: || {
            vec![
                opt(
                    "find",
                    "Only lines matching this text (or /regex/), with their ancestors",
                ),
                flag("diff", "Only what changed since the previous snapshot"),
                opt("selector", "Only the subtree under this CSS selector"),
                opt("frame", "Only this frame (f2)"),
                opt("max", "At most this many elements"),
            ]
        },
        map: |m| {
            let mut a = Map::new();
            if let Some(f) = s(m, "find") {
                a.insert("find".into(), f.into());
            }
            if m.get_flag("diff") {
                a.insert("diff".into(), true.into());
            }
            if let Some(v) = s(m, "selector") {
                a.insert("selector".into(), v.into());
            }
            if let Some(v) = s(m, "frame") {
                a.insert("frame".into(), v.into());
            }
            if let Some(v) = number(m, "max")? {
                a.insert("max_elements".into(), v.into());
            }
            Ok(Value::Object(a))
        },
    },
    Mapping {
        tool: "browser_click",
        args: || {
            vec![
                Arg::new("target").help("The element's ref (e3)"),
                opt("selector", "A CSS selector instead of a ref"),
                flag("double", "Double-click"),
                flag("right", "Right button"),
            ]
        },
        map: |m| {
            let mut a = Map::new();
            target(m, &mut a)?;
            if m.get_flag("double") {
                a.insert("click_count".into(), 2.into());
            }
            if m.get_flag("right") {
                a.insert("button".into(), "right".into());
            }
            Ok(Value::Object(a))
        },
    },
    Mapping {
        tool: "browser_type",
        args: || {
            vec![
                Arg::new("words")
                    .help("REF TEXT (or TEXT with --selector)")
                    .required(true)
                    .num_args(1..=2),
                opt("selector", "A CSS selector instead of a ref"),
                flag("submit", "Press Enter afterwards"),
                flag("append", "Keep what the field holds (default: replace it)"),
            ]
        },
        map: |m| {
            let words = list(m, "words");
            let mut a = Map::new();
            let text = match (words.as_slice(), s(m, "selector")) {
                ([r, text], None) => {
                    a.insert("ref".into(), r.clone().into());
                    text.clone()
                }
                ([text], Some(sel)) => {
                    a.insert("selector".into(), sel.into());
                    text.clone()
                }
                _ => return Err("usage: cdpilot type REF TEXT, or cdpilot type --selector CSS TEXT".into()),
            };
            a.insert("text".into(), text.into());
            if m.get_flag("submit") {
                a.insert("submit".into(), true.into());
            }
            if m.get_flag("append") {
                a.insert("clear".into(), false.into());
            }
            Ok(Value::Object(a))
        },
    },
    Mapping {
        tool: "browser_fill_form",
        args: || vec![many("fields", "REF=VALUE pairs (a checkbox takes true/false)")],
        map: |m| {
            let mut fields = Vec::new();
            for pair in list(m, "fields") {
                let Some((r, value)) = pair.split_once('=') else {
                    return Err(format!("{pair:?}: write each field as REF=VALUE (e3=hello)"));
                };
                fields.push(json!({"ref": r, "value": value}));
            }
            Ok(json!({ "fields": fields }))
        },
    },
    Mapping {
        tool: "browser_press_key",
        args: || {
            vec![pos(
                "key",
                "Enter, Tab, Escape, ArrowDown, Control+a, one character…",
            )]
        },
        map: |m| Ok(json!({"key": s(m, "key")})),
    },
    Mapping {
        tool: "browser_select_option",
        args: || {
            vec![
                pos("target", "The select's ref"),
                many("values", "Option values or labels"),
            ]
        },
        map: |m| Ok(json!({"ref": s(m, "target"), "values": list(m, "values")})),
    },
    Mapping {
        tool: "browser_hover",
        args: || {
            vec![
                Arg::new("target").help("The element's ref"),
                opt("selector", "A CSS selector instead of a ref"),
            ]
        },
        map: |m| {
            let mut a = Map::new();
            target(m, &mut a)?;
            Ok(Value::Object(a))
        },
    },
    Mapping {
        tool: "browser_scroll",
        args: || {
            vec![
                Arg::new("target").help("up, down, left, right, or an element's ref to scroll into view"),
                opt("selector", "Scroll this element into view"),
                opt("amount", "Pixels (default one viewport)"),
                opt("in", "The ref of the container to scroll"),
            ]
        },
        map: |m| {
            let mut a = Map::new();
            match s(m, "target") {
                Some(d) if ["up", "down", "left", "right"].contains(&d.as_str()) => {
                    a.insert("direction".into(), d.into());
                    if let Some(n) = number(m, "amount")? {
                        a.insert("amount".into(), n.into());
                    }
                    if let Some(r) = s(m, "in") {
                        a.insert("ref".into(), r.into());
                    }
                }
                _ => target(m, &mut a)?,
            }
            Ok(Value::Object(a))
        },
    },
    Mapping {
        tool: "browser_handoff",
        args: || {
            vec![
                pos("reason", "What the person should do (shown to them)"),
                opt("until-text", "Also return once this text appears"),
                opt("until-url", "Also return once the URL matches this glob"),
                opt("until-selector", "Also return once a visible element matches"),
            ]
        },
        map: |m| {
            let mut a = Map::new();
            a.insert("reason".into(), s(m, "reason").unwrap_or_default().into());
            let mut until = Map::new();
            for (flag, key) in [
                ("until-text", "text"),
                ("until-url", "url"),
                ("until-selector", "selector"),
            ] {
                if let Some(v) = s(m, flag) {
                    until.insert(key.into(), v.into());
                }
            }
            if !until.is_empty() {
                a.insert("until".into(), Value::Object(until));
            }
            Ok(Value::Object(a))
        },
    },
    Mapping {
        tool: "browser_wait",
        args: || {
            vec![
                opt("text", "Until this text appears"),
                opt("gone", "Until this text is gone"),
                opt("selector", "Until a visible element matches"),
                opt("url", "Until the URL matches this glob"),
                opt("ms", "This many milliseconds"),
            ]
        },
        map: |m| {
            let mut a = Map::new();
            for (flag, key) in [
                ("text", "text"),
                ("gone", "text_gone"),
                ("selector", "selector"),
                ("url", "url"),
            ] {
                if let Some(v) = s(m, flag) {
                    a.insert(key.into(), v.into());
                }
            }
            if let Some(ms) = number(m, "ms")? {
                a.insert("time_ms".into(), ms.into());
            }
            if a.len() != 1 {
                return Err("give exactly one of --text, --gone, --selector, --url, --ms".into());
            }
            Ok(Value::Object(a))
        },
    },
    Mapping {
        tool: "browser_extract",
        args: || {
            vec![
                opt("selector", "Only this element's content"),
                opt("start", "Start at this character (paging)"),
                opt("max", "At most this many characters"),
            ]
        },
        map: |m| {
            let mut a = Map::new();
            if let Some(v) = s(m, "selector") {
                a.insert("selector".into(), v.into());
            }
            if let Some(v) = number(m, "start")? {
                a.insert("start_char".into(), v.into());
            }
            if let Some(v) = number(m, "max")? {
                a.insert("max_chars".into(), v.into());
            }
            Ok(Value::Object(a))
        },
    },
    Mapping {
        tool: "browser_screenshot",
        args: || {
            vec![
                Arg::new("file").help("Where to save it (default screenshot.png; .jpg saves a JPEG)"),
                flag("full", "The whole page, not just the viewport"),
                flag("annotate", "Draw each ref'd element's box and ref"),
                opt("ref", "Only this element"),
            ]
        },
        map: |m| {
            let file = s(m, "file").unwrap_or_else(|| "screenshot.png".into());
            let mut a = Map::new();
            let lower = file.to_ascii_lowercase();
            if lower.ends_with(".jpg") || lower.ends_with(".jpeg") {
                a.insert("format".into(), "jpeg".into());
            }
            if m.get_flag("full") {
                a.insert("full_page".into(), true.into());
            }
            if m.get_flag("annotate") {
                a.insert("annotate".into(), true.into());
            }
            if let Some(r) = s(m, "ref") {
                a.insert("ref".into(), r.into());
            }
            Ok(Value::Object(a))
        },
    },
    Mapping {
        tool: "browser_evaluate",
        args: || vec![pos("js", "The expression (a promise is awaited)")],
        map: |m| Ok(json!({"expression": s(m, "js")})),
    },
    Mapping {
        tool: "browser_dialog",
        args: || {
            vec![
                pos("action", "accept or dismiss").value_parser(["accept", "dismiss"]),
                Arg::new("text").help("A prompt's answer (with accept)"),
            ]
        },
        map: |m| {
            let mut a = json!({"action": s(m, "action")});
            if let Some(t) = s(m, "text") {
                a["prompt_text"] = t.into();
            }
            Ok(a)
        },
    },
    Mapping {
        tool: "browser_tabs",
        args: || {
            vec![
                Arg::new("action")
                    .help("new, select or close (default: list)")
                    .value_parser(["list", "new", "select", "close"]),
                Arg::new("arg").help("The URL (new) or the tab id (select, close)"),
            ]
        },
        map: |m| {
            let action = s(m, "action").unwrap_or_else(|| "list".into());
            let mut a = json!({"action": action});
            match (action.as_str(), s(m, "arg")) {
                ("new", Some(url)) => a["url"] = url.into(),
                ("select" | "close", Some(tab)) => a["tab"] = tab.into(),
                ("select" | "close", None) => return Err(format!("tabs {action} wants a tab id (t2)")),
                _ => {}
            }
            Ok(a)
        },
    },
    Mapping {
        tool: "browser_console",
        args: || {
            vec![
                opt("level", "error, warning or all"),
                flag("clear", "Empty it afterwards"),
            ]
        },
        map: |m| {
            let mut a = Map::new();
            if let Some(l) = s(m, "level") {
                a.insert("level".into(), l.into());
            }
            if m.get_flag("clear") {
                a.insert("clear".into(), true.into());
            }
            Ok(Value::Object(a))
        },
    },
    Mapping {
        tool: "browser_upload",
        args: || {
            vec![
                pos("target", "The file input's ref"),
                many("files", "Files to upload"),
            ]
        },
        map: |m| {
            let paths: Vec<String> = list(m, "files").iter().map(|p| absolute(p)).collect();
            Ok(json!({"ref": s(m, "target"), "paths": paths}))
        },
    },
    Mapping {
        tool: "browser_pdf",
        args: || vec![pos("file", "Where to write it")],
        // The server writes under its [files] output_dir; the CLI then
        // moves the file where the user asked (see `cli::move_pdf`).
        map: |_| Ok(json!({})),
    },
];

/// The CLI's own subcommands (they talk to the server itself).
const OWN: &[Verb] = &[
    Verb {
        name: "sessions",
        tool: None,
        about: "List the sessions of the background server (tabs, URL, last action).",
        args: Vec::new,
        map: |_| Ok(Value::Null),
    },
    Verb {
        name: "stop",
        tool: None,
        about: "End this session (--all: every session, and the background server).",
        args: || vec![flag("all", "End every session and stop the background server")],
        map: |m| Ok(json!({"all": m.get_flag("all")})),
    },
];

/// Every subcommand, in the order `cdpilot` lists them: a verb per tool
/// of the registry (named by its declaration; its arguments read as
/// [`MAPPINGS`] says, or as JSON), then the CLI's own.
pub fn all() -> &'static [Verb] {
    static VERBS: std::sync::OnceLock<Vec<Verb>> = std::sync::OnceLock::new();
    VERBS.get_or_init(|| {
        let registry = engine::tools::tools();
        let mapped = MAPPINGS.iter().filter_map(|m| {
            let tool = engine::tools::find(m.tool)?;
            Some(Verb {
                name: tool.verb,
                tool: Some(tool.name),
                about: "",
                args: m.args,
                map: m.map,
            })
        });
        let generic = registry
            .iter()
            .filter(|t| MAPPINGS.iter().all(|m| m.tool != t.name))
            .map(|t| generic(t.verb, t.name));
        mapped.chain(generic).chain(OWN.iter().map(Verb::clone)).collect()
    })
}

/// Whether `tool`'s verb takes its arguments as one JSON object (it has
/// no mapping of its own).
pub fn takes_json(tool: &str) -> bool {
    MAPPINGS.iter().all(|m| m.tool != tool)
}

/// The verb called `name`.
pub fn find(name: &str) -> Option<&'static Verb> {
    all().iter().find(|v| v.name == name)
}

/// The verb of a tool without arguments of its own on the CLI: its
/// arguments as one JSON object (`cdpilot network '{"action": "list"}'`).
fn generic(name: &'static str, tool: &'static str) -> Verb {
    Verb {
        name,
        tool: Some(tool),
        about: "",
        args: || {
            vec![Arg::new("arguments")
                .help("The tool's arguments as a JSON object (see `cdpilot tools`); default {}")]
        },
        map: |m| match s(m, "arguments") {
            None => Ok(Value::Object(Map::new())),
            Some(text) => match serde_json::from_str::<Value>(&text) {
                Ok(Value::Object(args)) => Ok(Value::Object(args)),
                Ok(_) => Err(format!("{text:?}: give the arguments as a JSON object ({{…}})")),
                Err(e) => Err(format!("{text:?} is not JSON: {e}")),
            },
        },
    }
}

impl Verb {
    /// The tool's arguments from the parsed subcommand.
    pub fn arguments(&self, matches: &ArgMatches) -> Result<Value, String> {
        (self.map)(matches)
    }

    /// The clap subcommand; its help is the tool's registry description.
    pub fn command(&self) -> Command {
        let spec = self.tool.and_then(engine::tools::find);
        let about = spec.map_or(self.about.to_owned(), |t| first_sentence(t.description));
        let mut command = Command::new(self.name)
            .about(about)
            .args((self.args)())
            .mut_args(|arg| {
                // clap wants a 'static name; a few bytes per argument, once
                // per process.
                let name = arg.get_id().as_str().replace("target", "ref").to_uppercase();
                arg.value_name(&*Box::leak(name.into_boxed_str()))
            });
        if let Some(spec) = spec {
            command = command.long_about(format!(
                "{}\n\nRuns the tool {} (see `cdpilot tools`).",
                spec.description, spec.name
            ));
        }
        command
    }
}

/// The first sentence of a description (up to the first ". ").
fn first_sentence(text: &str) -> String {
    match text.find(". ") {
        Some(end) => text[..=end].to_owned(),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every tool of the registry has a verb, named by its declaration,
    /// with no name taken twice; a tool without a mapping of its own takes
    /// its arguments as one JSON object.
    #[test]
    fn every_tool_has_the_verb_its_declaration_names() {
        for tool in engine::tools::tools() {
            let verb = find(tool.verb).unwrap_or_else(|| panic!("no verb for {}", tool.name));
            assert_eq!(verb.tool, Some(tool.name));
        }
        let names: Vec<&str> = all().iter().map(|v| v.name).collect();
        for (i, name) in names.iter().enumerate() {
            assert!(!names[..i].contains(name), "{name} twice");
        }
        let network = find("network").unwrap();
        // As main builds it: the CLI's own options beside the verb's.
        let command = || network.command().args(crate::cli::global_args());
        let matches = command()
            .try_get_matches_from(["network", r#"{"action": "get", "id": 3}"#])
            .unwrap();
        assert_eq!(
            network.arguments(&matches).unwrap(),
            json!({"action": "get", "id": 3})
        );
        let matches = network
            .command()
            .try_get_matches_from(["network", "[1]"])
            .unwrap();
        assert!(network.arguments(&matches).unwrap_err().contains("JSON object"));
        let matches = command().try_get_matches_from(["network", "--json"]).unwrap();
        assert_eq!(network.arguments(&matches).unwrap(), json!({}));
    }
}
