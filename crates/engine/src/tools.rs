//! The registry, generated from the list of tools (`crate::list`): each
//! tool's declaration and argument schema (written beside its handler, in
//! its `impl Tool`), served to every front end (MCP's tools/list, the
//! CLI's verbs and help, the dashboard, the docs), and each call's parsing
//! and checks. The [`Action`] enum and its dispatch to each handler are
//! `crate::calls`.
//!
//! Adding a tool: its file (`tab_tools/` for a tab's tool, `session/` for
//! the session's: arguments, `impl Tool`, handler) and one line in the
//! list.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::calls::{args_type, Action};
use crate::tool::Tool;
pub use crate::tool::{Declaration, DefaultBudget, Group, Scope, Switch};
use crate::{ActionError, Budget};

/// Arguments every tool takes ([`Common`](crate::calls::Common)). Their schemas are left out of
/// each tool's definition (about 1,000 characters for 19 tools): the
/// server's instructions describe them once, and the parser accepts them.
pub const COMMON_ARGUMENTS: &[&str] = &["tab", "timeout_ms"];

/// One registered tool: its [`Declaration`] (read through `Deref`: `name`,
/// `group`, `description`, …) and how to derive its schema and parse its
/// arguments.
pub struct ToolSpec {
    declaration: Declaration,
    schema: fn() -> Value,
    parse: fn(Value) -> Result<Action, serde_json::Error>,
}

impl std::ops::Deref for ToolSpec {
    type Target = Declaration;

    fn deref(&self) -> &Declaration {
        &self.declaration
    }
}

fn schema_of<T: JsonSchema>() -> Value {
    serde_json::to_value(schemars::schema_for!(T)).expect("schema serializes")
}

fn parse_as<T: DeserializeOwned>(args: Value, wrap: fn(T) -> Action) -> Result<Action, serde_json::Error> {
    serde_json::from_value(args).map(wrap)
}

/// What the registry takes from the list of tools (`crate::list`): each
/// tool's declaration (its `impl Tool`), its arguments' schema and parser.
macro_rules! declare_tools {
    ([] $( $scope:ident $variant:ident($args:ident) = $module:ident $(, $other:ident)* ;)*) => {
        static TOOLS: &[ToolSpec] = &[
            $(ToolSpec {
                declaration: <args_type!($scope $module $args) as Tool>::TOOL,
                schema: schema_of::<args_type!($scope $module $args)>,
                parse: |args| parse_as(args, Action::$variant),
            },)*
        ];
    };
}
crate::list::tool_list!(declare_tools);

/// Every tool, in the order tools/list shows them.
pub fn tools() -> &'static [ToolSpec] {
    TOOLS
}

/// The tools this configuration offers (`tools.evaluate = false` hides
/// browser_evaluate, for instance).
pub fn offered(config: &crate::Config) -> impl Iterator<Item = &'static ToolSpec> + '_ {
    TOOLS.iter().filter(move |t| t.enabled(config))
}

/// The next step when a tool cannot be called: the ones that can.
pub(crate) fn use_one_of(config: &crate::Config) -> String {
    let names: Vec<&str> = offered(config).map(|t| t.name).collect();
    format!("Use one of: {}.", names.join(", "))
}

/// The tool named `name`, if there is one.
pub fn find(name: &str) -> Option<&'static ToolSpec> {
    TOOLS.iter().find(|t| t.name == name)
}

impl ToolSpec {
    /// Whether the configuration turns this tool on.
    pub fn enabled(&self, config: &crate::Config) -> bool {
        self.why_off(config).is_none()
    }

    /// What keeps this tool off in `config` (the setting that would turn
    /// it on), or `None` when it is offered.
    pub fn why_off(&self, config: &crate::Config) -> Option<String> {
        if !self.group.on(&config.tools.caps) {
            return Some(format!(
                "it is in the {0} group, which [tools] caps (or --caps {0}) turns on",
                self.group.name()
            ));
        }
        self.switch.and_then(|switch| switch.why_off(&config.tools))
    }

    /// The argument schema as a compact JSON Schema object (no titles, no
    /// `$defs`, no `null` unions: the fewest characters that say the same).
    pub fn input_schema(&self) -> Map<String, Value> {
        self.schema_cached().clone()
    }

    /// The schema, derived once per process (every call's parse reads it).
    fn schema_cached(&self) -> &'static Map<String, Value> {
        static SCHEMAS: std::sync::OnceLock<Vec<Map<String, Value>>> = std::sync::OnceLock::new();
        let all = SCHEMAS.get_or_init(|| TOOLS.iter().map(ToolSpec::derive_schema).collect());
        let index = TOOLS
            .iter()
            .position(|t| t.name == self.name)
            .expect("a registered tool");
        &all[index]
    }

    fn derive_schema(&self) -> Map<String, Value> {
        let mut schema = (self.schema)();
        let defs = schema
            .as_object_mut()
            .and_then(|o| o.remove("$defs"))
            .unwrap_or(Value::Null);
        tidy(&mut schema, &defs);
        // The tool's own description says what it does; the argument
        // struct's doc (or a flattened struct's) would only repeat it.
        if let Some(map) = schema.as_object_mut() {
            map.remove("description");
            if let Some(Value::Object(properties)) = map.get_mut("properties") {
                for common in COMMON_ARGUMENTS {
                    properties.remove(*common);
                }
            }
        }
        match schema {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    /// A budget for one call of this tool: its `timeout_ms` or the
    /// configured default, cancelled by `cancel`.
    pub(crate) fn budget(
        &self,
        config: &crate::Config,
        action: &Action,
        cancel: CancellationToken,
    ) -> Budget {
        let ms = action.timeout_ms().unwrap_or_else(|| self.budget.ms(config));
        Budget::new(std::time::Duration::from_millis(ms), cancel)
    }

    /// Parses and validates one call's arguments into an [`Action`].
    pub fn parse(&self, arguments: Value) -> Result<Action, ActionError> {
        let arguments = match arguments {
            Value::Null => Value::Object(Map::new()),
            Value::Object(map) => Value::Object(map),
            other => {
                return Err(ActionError::invalid(
                    format!("{} takes an object of arguments, not {other}", self.name),
                    "Pass the arguments as a JSON object.",
                ))
            }
        };
        let schema = self.schema_cached();
        let known: Vec<&str> = schema
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|p| p.keys().map(String::as_str))
            .chain(COMMON_ARGUMENTS.iter().copied())
            .collect();
        if let Some(unknown) = arguments
            .as_object()
            .into_iter()
            .flat_map(|o| o.keys())
            .find(|k| !known.contains(&k.as_str()))
        {
            return Err(ActionError::invalid(
                format!("{} has no argument `{unknown}`", self.name),
                format!("Use only: {}.", known.join(", ")),
            ));
        }
        // The schemas leave `null` out of every argument's type (saying it
        // for each optional argument would cost about 700 characters of
        // tool definitions per session), so the parser refuses it too,
        // naming the argument, rather than quietly reading it as "not given".
        if let Some((name, _)) = arguments
            .as_object()
            .into_iter()
            .flatten()
            .find(|(_, value)| value.is_null())
        {
            let required = schema
                .get("required")
                .and_then(Value::as_array)
                .is_some_and(|r| r.iter().any(|n| n == name.as_str()));
            return Err(ActionError::invalid(
                format!("{} got null for `{name}`; no argument takes null", self.name),
                if required {
                    format!("Pass a value for `{name}`.")
                } else {
                    format!("Leave `{name}` out to use its default.")
                },
            ));
        }
        let action = (self.parse)(arguments).map_err(|e| {
            ActionError::invalid(
                format!("bad arguments for {}: {e}", self.name),
                "Fix the arguments to match the tool's schema and call again.",
            )
        })?;
        crate::validate::timeout(action.timeout_ms())?;
        action.check()?;
        Ok(action)
    }
}

/// Inlines `$ref`s and drops what a model does not need.
fn tidy(value: &mut Value, defs: &Value) {
    if let Value::Object(map) = value {
        if let Some(Value::String(reference)) = map.get("$ref").cloned() {
            let name = reference.trim_start_matches("#/$defs/");
            if let Some(def) = defs.get(name) {
                map.remove("$ref");
                for (k, v) in def.as_object().into_iter().flatten() {
                    map.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
        }
        for key in ["$schema", "title", "format", "default"] {
            map.remove(key);
        }
        if map.get("minimum") == Some(&Value::from(0)) {
            map.remove("minimum");
        }
        // Option<T> comes out as "type": [T, "null"] or anyOf [T, null].
        if let Some(Value::Array(types)) = map.get("type") {
            let kept: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
            if kept.len() == 1 {
                map.insert("type".into(), kept[0].clone());
            }
        }
        if let Some(Value::Array(options)) = map.get("anyOf").cloned() {
            let kept: Vec<Value> = options
                .into_iter()
                .filter(|o| o.get("type") != Some(&Value::from("null")))
                .collect();
            if kept.len() == 1 {
                map.remove("anyOf");
                if let Value::Object(inner) = &kept[0] {
                    for (k, v) in inner {
                        map.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                }
                tidy(value, defs);
                return;
            }
        }
        if let Some(Value::Array(values)) = map.get("enum") {
            let kept: Vec<Value> = values.iter().filter(|v| !v.is_null()).cloned().collect();
            map.insert("enum".into(), Value::Array(kept));
        }
        // Recurse into sub-schemas only: the keys of `properties` are
        // argument names (one is literally "format"), not keywords.
        if let Some(Value::Object(properties)) = map.get_mut("properties") {
            properties.values_mut().for_each(|v| tidy(v, defs));
        }
        for key in ["items", "additionalProperties"] {
            if let Some(child) = map.get_mut(key) {
                tidy(child, defs);
            }
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            if let Some(Value::Array(children)) = map.get_mut(key) {
                children.iter_mut().for_each(|v| tidy(v, defs));
            }
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn groups_beyond_core_are_off_until_caps_name_them() {
        let mut config = crate::Config::default();
        // browser_cdp is core but off by default ([tools] cdp = false).
        assert!(TOOLS
            .iter()
            .filter(|t| t.name != "browser_cdp")
            .all(|t| (t.group == Group::Core) == t.enabled(&config)));
        assert!(!find("browser_page_tool").unwrap().enabled(&config));
        assert!(!find("browser_cdp").unwrap().enabled(&config));
        assert!(!find("browser_network").unwrap().enabled(&config));
        let off = |g: Group, config: &crate::Config| !g.on(&config.tools.caps);
        assert!(off(Group::Network, &config));
        config.tools.caps = vec!["network".into()];
        assert!(!off(Group::Network, &config));
        assert!(off(Group::Pdf, &config));
        config.tools.caps = vec!["all".into()];
        assert!(Group::ALL.iter().all(|g| !off(*g, &config)));
        config.tools.caps.clear();
        config.tools.cdp = crate::config::CdpAccess::Off;
        let cdp = find("browser_cdp").unwrap();
        assert!(cdp.why_off(&config).unwrap().contains("cdp = false"));
    }

    #[test]
    fn the_tools_switches_are_declared_by_the_tools_they_turn_off() {
        let switched: Vec<(&str, &str)> = TOOLS
            .iter()
            .filter_map(|t| t.switch.map(|s| (t.name, s.setting)))
            .collect();
        assert_eq!(
            switched,
            [
                ("browser_evaluate", "evaluate"),
                ("browser_cdp", "cdp"),
                ("browser_page_tool", "page_tools")
            ]
        );
        let mut config = crate::Config::default();
        config.tools.cdp = crate::config::CdpAccess::Fenced;
        assert!(TOOLS.iter().all(|t| t.group != Group::Core || t.enabled(&config)));
        config.tools.evaluate = false;
        config.tools.cdp = crate::config::CdpAccess::Off;
        for (name, why) in [
            ("browser_evaluate", "[tools] evaluate = false turns it off"),
            ("browser_cdp", "[tools] cdp = false turns it off"),
        ] {
            assert_eq!(find(name).unwrap().why_off(&config).as_deref(), Some(why));
        }
        // The group is said first: it is the setting to change first.
        config.tools.caps = Vec::new();
        assert!(find("browser_network")
            .unwrap()
            .why_off(&config)
            .unwrap()
            .contains("network group"));
    }

    use super::*;
    use crate::ErrorCode;
    use serde_json::json;

    /// The declarations hold what the dashboard and the CLI used to list
    /// by hand: the tools whose call changes the page (a thumbnail after
    /// each), one CLI verb per tool, names and verbs unique, and each
    /// declaration found under its own name.
    #[test]
    fn declarations_say_which_tools_change_the_page_and_name_unique_verbs() {
        let changing: Vec<&str> = tools()
            .iter()
            .filter(|t| t.changes_page)
            .map(|t| t.name)
            .collect();
        let mut expected = vec![
            "browser_navigate",
            "browser_click",
            "browser_type",
            "browser_press_key",
            "browser_select_option",
            "browser_hover",
            "browser_fill_form",
            "browser_drag",
            "browser_upload",
            "browser_scroll",
            "browser_tabs",
            "browser_dialog",
            // What the person did shows in a thumbnail after it.
            "browser_handoff",
            // A page's tool runs the page's code (a form's submits it).
            "browser_page_tool",
        ];
        let mut got = changing.clone();
        got.sort_unstable();
        expected.sort_unstable();
        assert_eq!(got, expected);
        for (i, tool) in tools().iter().enumerate() {
            assert!(std::ptr::eq(find(tool.name).unwrap(), tool), "{}", tool.name);
            assert!(
                tools()[..i]
                    .iter()
                    .all(|t| t.name != tool.name && t.verb != tool.verb),
                "{} repeats a name or a verb",
                tool.name
            );
        }
        let scoped = |s: Scope| tools().iter().filter(move |t| t.scope == s).map(|t| t.name);
        assert_eq!(
            scoped(Scope::Session).collect::<Vec<_>>(),
            [
                "browser_tabs",
                "browser_handoff",
                "browser_storage",
                "browser_trace"
            ]
        );
        assert_eq!(find("browser_wait").unwrap().budget, DefaultBudget::Wait);
        assert_eq!(find("browser_evaluate").unwrap().budget, DefaultBudget::Evaluate);
        assert_eq!(find("browser_handoff").unwrap().budget, DefaultBudget::Handoff);
    }

    /// A typed call becomes the JSON a transport sends, and that JSON
    /// parses back to the same call (the one door takes both).
    #[test]
    fn a_typed_action_round_trips_through_its_arguments() {
        use crate::calls::{ClickArgs, ElementTarget};
        let click = Action::Click(ClickArgs {
            target: ElementTarget {
                reference: Some("e3".into()),
                selector: None,
            },
            click_count: Some(2),
            ..Default::default()
        });
        let json = click.arguments();
        assert_eq!(json, json!({"ref": "e3", "click_count": 2}));
        let back = find(click.tool_name()).unwrap().parse(json).unwrap();
        assert_eq!(format!("{back:?}"), format!("{click:?}"));
        let e = find("browser_click")
            .unwrap()
            .parse(json!({"ref": "e3", "click_count": 9}));
        assert!(e.unwrap_err().message.contains("click_count"));
    }

    #[test]
    fn schemas_are_compact_objects_with_the_contract_names() {
        let nav = find("browser_navigate").unwrap().input_schema();
        assert_eq!(nav["type"], "object");
        let props = nav["properties"].as_object().unwrap();
        let shot = find("browser_screenshot").unwrap().input_schema();
        assert_eq!(shot["properties"]["format"]["enum"], json!(["png", "jpeg"]));
        for name in ["url", "history", "wait_until"] {
            assert!(props.contains_key(name), "missing {name}");
        }
        assert_eq!(props["history"]["enum"], json!(["back", "forward", "reload"]));
        let text = serde_json::to_string(&nav).unwrap();
        assert!(
            !text.contains("$ref") && !text.contains("null") && !text.contains("title"),
            "{text}"
        );
        let click = find("browser_click").unwrap().input_schema();
        assert!(click["properties"].get("ref").is_some());
    }

    /// Characters of `tools` as the contract measures them: `cdpilot
    /// tools --json` (name, description, input schema of each), compact.
    fn definitions_size<'a>(tools: impl Iterator<Item = &'a ToolSpec>) -> usize {
        let list: Vec<Value> = tools
            .map(|t| json!({"name": t.name, "description": t.description, "inputSchema": t.input_schema()}))
            .collect();
        serde_json::to_string(&list).unwrap().chars().count()
    }

    /// The contract (v2): the core group's definitions take at most 8,000
    /// characters.
    #[test]
    fn core_tool_definitions_stay_within_the_budget() {
        let core = definitions_size(tools().iter().filter(|t| t.group == Group::Core));
        assert!(core <= 8000, "the core tools' definitions take {core} chars");
        let count = tools().iter().filter(|t| t.group == Group::Core).count();
        assert!(count >= 19, "core has the 15 v1 tools and the 4 of v2: {count}");
    }

    /// The contract (v2): every group together takes at most 13,000.
    #[test]
    fn all_tool_definitions_stay_within_the_budget() {
        for group in Group::ALL {
            let size = definitions_size(tools().iter().filter(|t| t.group == *group));
            println!("group {}: {size} chars", group.name());
        }
        let all = definitions_size(tools().iter());
        println!("all: {all} chars");
        assert!(all <= 13000, "all tool definitions take {all} chars");
    }

    /// Common arguments are described once (the server's instructions),
    /// not in every schema, and every tool still takes them.
    #[test]
    fn common_arguments_are_taken_by_every_tool_but_listed_by_none() {
        for tool in tools() {
            let schema = tool.input_schema();
            for common in COMMON_ARGUMENTS {
                assert!(
                    schema["properties"].get(*common).is_none(),
                    "{} lists {common}",
                    tool.name
                );
                let parsed = tool.parse(json!({ *common: null }));
                let e = parsed.unwrap_err();
                assert!(
                    e.message.contains(&format!("null for `{common}`")),
                    "{}: {e}",
                    tool.name
                );
            }
        }
        let dialog = find("browser_dialog").unwrap();
        let e = dialog
            .parse(json!({"action": "accept", "timeout_ms": 0}))
            .unwrap_err();
        assert!(e.message.contains("timeout_ms"), "{e}");
        assert!(dialog
            .parse(json!({"action": "accept", "tab": "t2", "timeout_ms": 500}))
            .is_ok());
    }

    /// Whether a property's schema lets `null` through.
    fn allows_null(schema: &Value) -> bool {
        let null = Value::from("null");
        schema["type"] == null
            || schema["type"].as_array().is_some_and(|t| t.contains(&null))
            || schema["enum"]
                .as_array()
                .is_some_and(|e| e.contains(&Value::Null))
            || ["anyOf", "oneOf"]
                .iter()
                .any(|k| schema[*k].as_array().is_some_and(|o| o.iter().any(allows_null)))
    }

    /// Issue 8: `{"selector": null}` was read as "not given" while every
    /// schema said the argument is a string. The schema and the parser must
    /// agree on null for every argument of every tool.
    #[test]
    fn schema_and_parser_agree_on_null_for_every_argument() {
        for tool in tools() {
            let schema = tool.input_schema();
            let properties = schema["properties"].as_object().expect("properties");
            for (name, property) in properties {
                let refused = tool
                    .parse(json!({ name: null }))
                    .err()
                    .filter(|e| e.message.contains(&format!("null for `{name}`")));
                if allows_null(property) {
                    assert!(
                        refused.is_none(),
                        "{} {name}: schema allows null, parser refuses it",
                        tool.name
                    );
                } else {
                    let e = refused.unwrap_or_else(|| {
                        panic!("{} {name}: schema refuses null, parser takes it", tool.name)
                    });
                    assert_eq!(e.code, ErrorCode::InvalidArgument);
                }
            }
        }
    }

    #[test]
    fn unknown_and_mistyped_arguments_are_invalid() {
        let click = find("browser_click").unwrap();
        let e = click.parse(json!({"element": "e1"})).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert!(e.message.contains("`element`"), "{}", e.message);
        let e = click.parse(json!({"ref": 12})).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        let e = find("browser_type")
            .unwrap()
            .parse(json!({"ref": "e1"}))
            .unwrap_err();
        assert!(e.message.contains("text"), "{}", e.message);
        assert!(click.parse(json!({"ref": "e1"})).is_ok());
    }
}
