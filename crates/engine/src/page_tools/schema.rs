//! Checking a page tool's arguments against the tool's own input schema
//! before the call (Chromium passes anything through): the JSON Schema
//! words pages use for tool inputs (`type`, `properties`, `required`,
//! `additionalProperties: false`, `enum`, `const`, `items`, `minimum`,
//! `maximum`, `minLength`, `maxLength`, `pattern`). A word it does not know
//! is not checked; the page's tool sees the arguments either way.
//!
//! A mismatch names where (`/qty`), what the schema says there in its own
//! words (the sub-schema as JSON, capped), and what was given.

use serde_json::{Map, Value};

/// Depth past which a schema is not followed (a page's recursive schema).
const MAX_DEPTH: usize = 16;
/// Characters of the schema quoted in an error.
const QUOTED: usize = 300;

/// The first way `value` breaks `schema`, in words, or `None`.
pub fn mismatch(schema: &Value, value: &Value) -> Option<String> {
    check(schema, value, "", 0)
}

fn check(schema: &Value, value: &Value, at: &str, depth: usize) -> Option<String> {
    let Value::Object(s) = schema else {
        // `true`/`false` schemas.
        return (schema == &Value::Bool(false)).then(|| format!("{} is not allowed", place(at)));
    };
    if depth > MAX_DEPTH {
        return None;
    }
    let fail = |what: String| Some(format!("{} {what} (schema: {})", place(at), quote(s)));
    if let Some(types) = s.get("type") {
        let allowed: Vec<&str> = match types {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !allowed.is_empty() && !allowed.iter().any(|t| is_type(value, t)) {
            return fail(format!("must be {}, not {}", allowed.join(" or "), kind(value)));
        }
    }
    if let Some(Value::Array(choices)) = s.get("enum") {
        if !choices.contains(value) {
            return fail(format!("must be one of the schema's enum, not {}", short(value)));
        }
    }
    if let Some(constant) = s.get("const") {
        if constant != value {
            return fail(format!("must be {}, not {}", short(constant), short(value)));
        }
    }
    match value {
        Value::Object(object) => check_object(s, object, at, depth),
        Value::Array(items) => {
            let item_schema = s.get("items")?;
            items
                .iter()
                .enumerate()
                .find_map(|(i, item)| check(item_schema, item, &format!("{at}/{i}"), depth + 1))
        }
        Value::String(text) => {
            let length = text.chars().count() as u64;
            if let Some(min) = s.get("minLength").and_then(Value::as_u64).filter(|m| length < *m) {
                return fail(format!("must be at least {min} characters, not {length}"));
            }
            if let Some(max) = s.get("maxLength").and_then(Value::as_u64).filter(|m| length > *m) {
                return fail(format!("must be at most {max} characters, not {length}"));
            }
            if let Some(pattern) = s.get("pattern").and_then(Value::as_str) {
                // A pattern Rust's regex cannot read is left to the page.
                if let Ok(re) = regex::Regex::new(pattern) {
                    if !re.is_match(text) {
                        return fail(format!("must match the pattern {pattern}"));
                    }
                }
            }
            None
        }
        Value::Number(n) => {
            let n = n.as_f64()?;
            if let Some(min) = s.get("minimum").and_then(Value::as_f64).filter(|m| n < *m) {
                return fail(format!("must be at least {min}, not {n}"));
            }
            if let Some(max) = s.get("maximum").and_then(Value::as_f64).filter(|m| n > *m) {
                return fail(format!("must be at most {max}, not {n}"));
            }
            None
        }
        _ => None,
    }
}

fn check_object(
    s: &Map<String, Value>,
    object: &Map<String, Value>,
    at: &str,
    depth: usize,
) -> Option<String> {
    if let Some(Value::Array(required)) = s.get("required") {
        for name in required.iter().filter_map(Value::as_str) {
            if !object.contains_key(name) {
                return Some(format!("{} needs \"{name}\" (schema: {})", place(at), quote(s)));
            }
        }
    }
    let props = s.get("properties").and_then(Value::as_object);
    for (name, value) in object {
        let path = format!("{at}/{name}");
        match props.and_then(|p| p.get(name)) {
            Some(sub) => {
                if let Some(problem) = check(sub, value, &path, depth + 1) {
                    return Some(problem);
                }
            }
            None => match s.get("additionalProperties") {
                Some(Value::Bool(false)) => {
                    let known: Vec<&str> = props
                        .map(|p| p.keys().map(String::as_str).collect())
                        .unwrap_or_default();
                    return Some(format!(
                        "{} is not an argument of this tool (it takes: {})",
                        place(&path),
                        known.join(", ")
                    ));
                }
                Some(extra @ Value::Object(_)) => {
                    if let Some(problem) = check(extra, value, &path, depth + 1) {
                        return Some(problem);
                    }
                }
                _ => {}
            },
        }
    }
    None
}

fn is_type(value: &Value, kind: &str) -> bool {
    match kind {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        "number" => value.is_number(),
        "integer" => value.as_f64().is_some_and(|n| n.fract() == 0.0),
        // A type word the checker does not know is the page's to judge.
        _ => true,
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn place(at: &str) -> String {
    if at.is_empty() {
        "the arguments".into()
    } else {
        format!("argument {at}")
    }
}

fn short(value: &Value) -> String {
    super::cap(&value.to_string(), 60)
}

fn quote(schema: &Map<String, Value>) -> String {
    super::cap(&Value::Object(schema.clone()).to_string(), QUOTED)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cart() -> Value {
        json!({
            "type": "object",
            "properties": {
                "sku": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]+$", "description": "The product code, like ABC-12"},
                "qty": {"type": "integer", "minimum": 1, "maximum": 9}
            },
            "required": ["sku"],
            "additionalProperties": false
        })
    }

    #[test]
    fn arguments_that_fit_pass() {
        assert_eq!(mismatch(&cart(), &json!({"sku": "ABC-12", "qty": 2})), None);
    }

    #[test]
    fn a_mismatch_quotes_the_schema_in_its_own_words() {
        let e = mismatch(&cart(), &json!({"sku": "abc"})).unwrap();
        assert!(e.contains("/sku must match the pattern"), "{e}");
        assert!(e.contains("The product code, like ABC-12"), "{e}");
        let e = mismatch(&cart(), &json!({"sku": "ABC-1", "qty": "two"})).unwrap();
        assert!(e.contains("/qty must be integer, not string"), "{e}");
        let e = mismatch(&cart(), &json!({"qty": 2})).unwrap();
        assert!(e.contains("needs \"sku\""), "{e}");
        let e = mismatch(&cart(), &json!({"sku": "ABC-1", "qty": 12})).unwrap();
        assert!(e.contains("at most 9"), "{e}");
        let e = mismatch(&cart(), &json!({"sku": "ABC-1", "colour": "red"})).unwrap();
        assert!(
            e.contains("/colour is not an argument") && e.contains("sku"),
            "{e}"
        );
    }
}
