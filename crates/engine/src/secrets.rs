//! Secrets the model never sees (`docs/src/spec/tools.md`, Secrets): values
//! read from environment variables at start-up (`[secrets]`), typed where a
//! `browser_type` text says `{{secret:NAME}}`, and replaced by that
//! placeholder in every text that goes back to a client.
//!
//! Owns the values. Expansion happens in the session, in the tab the text
//! is typed into (an origin-bound secret is refused on other origins);
//! redaction happens once, on the way out, in the one dispatch
//! (`crate::dispatch::call`): results (text and structured data), errors
//! and audit records.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::config::SecretConfig;
use crate::{ActionError, ActionOutput, ErrorCode};

/// The configured secrets, with their values read from the environment.
#[derive(Debug, Default)]
pub struct Secrets {
    list: Vec<Secret>,
    /// Every spelling of every value ([`forms`]), longest first, so a
    /// spelling inside a longer one is never redacted out of it first.
    forms: Vec<Form>,
    /// All spellings as one leftmost-longest search (the `regex` crate's
    /// literal alternation: one pass over a text whatever the number of
    /// spellings); `None` with no secret.
    search: Option<regex::Regex>,
}

#[derive(Debug)]
struct Secret {
    name: String,
    value: String,
    /// Origins (`https://bank.example`) it may be typed on; empty: any.
    origins: Vec<String>,
}

/// One spelling of a secret's value that may reach a client, and the
/// secret it stands for.
#[derive(Debug)]
struct Form {
    text: String,
    /// Index into `Secrets::list`.
    secret: usize,
}

/// The spellings cdpilot and the browser produce of `value`: raw,
/// URL-encoded (a form's `+` for spaces, `%20`, a URL's query with only
/// the characters a browser escapes, upper- and lower-case hex),
/// JSON- and Rust-escaped, HTML-escaped, base64 (standard and URL-safe).
fn forms(value: &str) -> Vec<String> {
    use base64::Engine as _;
    let mut out = vec![value.to_owned()];
    let escape = |keep: &dyn Fn(u8) -> bool, space_plus: bool, lower: bool| -> String {
        let mut text = String::new();
        for b in value.bytes() {
            if b == b' ' && space_plus {
                text.push('+');
            } else if keep(b) {
                text.push(b as char);
            } else if lower {
                text += &format!("%{b:02x}");
            } else {
                text += &format!("%{b:02X}");
            }
        }
        text
    };
    // application/x-www-form-urlencoded (a GET form, a POST body).
    let form_safe = |b: u8| b.is_ascii_alphanumeric() || b"*-._".contains(&b);
    // encodeURIComponent.
    let component_safe = |b: u8| b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b);
    // What a browser escapes in a typed query or path: controls, space,
    // quotes, angle brackets, backtick, non-ASCII.
    let url_safe = |b: u8| b > 0x20 && b < 0x7f && !b"\"<>`#%{}|^".contains(&b) || b == b'\\';
    // How Chrome shows a URL for people (a page's default title, the
    // tab strip): escapes unescaped except those that change the URL's
    // meaning.
    let display_safe = |b: u8| b > 0x20 && b < 0x7f && !b"%&=+#?/;:@$,\\".contains(&b);
    for lower in [false, true] {
        out.push(escape(&form_safe, true, lower));
        out.push(escape(&component_safe, false, lower));
        out.push(escape(&url_safe, false, lower));
        out.push(escape(&display_safe, true, lower));
        out.push(escape(&display_safe, false, lower));
    }
    // Each spelling so far, as a JSON or Rust string, or in HTML, shows it
    // escaped once more (a URL's display form inside a JSON title); and
    // once more again as JSON or Rust (a page's `JSON.stringify` of it in
    // a result's JSON text).
    for text in std::mem::take(&mut out) {
        let json = serde_json::to_string(&text).unwrap_or_default();
        out.push(json[1..json.len() - 1].to_owned());
        let debug = format!("{text:?}");
        out.push(debug[1..debug.len() - 1].to_owned());
        let html = text
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;");
        out.push(html.replace('\'', "&#39;"));
        out.push(html.replace('\'', "&#x27;"));
        out.push(text);
    }
    out.sort();
    out.dedup();
    for text in std::mem::take(&mut out) {
        let json = serde_json::to_string(&text).unwrap_or_default();
        out.push(json[1..json.len() - 1].to_owned());
        let debug = format!("{text:?}");
        out.push(debug[1..debug.len() - 1].to_owned());
        out.push(text);
    }
    out.push(base64::engine::general_purpose::STANDARD.encode(value));
    out.push(base64::engine::general_purpose::STANDARD_NO_PAD.encode(value));
    out.push(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(value));
    out.sort();
    out.dedup();
    out
}

impl Secrets {
    /// The configured secrets with their values from the environment. An
    /// unset or empty variable is a start-up error naming the key.
    pub fn from_config(config: &BTreeMap<String, SecretConfig>) -> Result<Secrets, String> {
        Self::resolve(config, |var| std::env::var(var).ok())
    }

    /// The configured secrets with their values from `env` (the tests'
    /// own values; [`Secrets::from_config`] reads the environment).
    pub(crate) fn resolve(
        config: &BTreeMap<String, SecretConfig>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Secrets, String> {
        let mut list = Vec::new();
        for (name, secret) in config {
            let value = env(&secret.env).filter(|v| !v.is_empty()).ok_or_else(|| {
                format!(
                    "secrets.{name}: the environment variable {} is not set (or empty)",
                    secret.env
                )
            })?;
            let mut origins = Vec::new();
            for origin in &secret.origins {
                let parsed = url::Url::parse(origin)
                    .ok()
                    .map(|u| u.origin())
                    .filter(url::Origin::is_tuple)
                    .ok_or_else(|| {
                        format!("secrets.{name}.origins: {origin:?} is not an origin like \"https://bank.example\"")
                    })?;
                origins.push(parsed.ascii_serialization());
            }
            list.push(Secret {
                name: name.clone(),
                value,
                origins,
            });
        }
        list.sort_by_key(|s| std::cmp::Reverse(s.value.len()));
        let mut forms: Vec<Form> = list
            .iter()
            .enumerate()
            .flat_map(|(secret, s)| forms(&s.value).into_iter().map(move |text| Form { text, secret }))
            .collect();
        forms.sort_by_key(|f| std::cmp::Reverse(f.text.len()));
        let search = (!forms.is_empty())
            .then(|| {
                let alternatives: Vec<String> = forms.iter().map(|f| regex::escape(&f.text)).collect();
                regex::Regex::new(&alternatives.join("|"))
            })
            .transpose()
            .map_err(|e| format!("secrets: cannot build the redaction search: {e}"))?;
        Ok(Secrets { list, forms, search })
    }

    /// No secret is configured.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// `text` with each `{{secret:NAME}}` replaced by the secret's value,
    /// for typing into an element whose frame's document is at
    /// `frame_url` (the frame that owns the element, not the top page: a
    /// cross-origin iframe is another site). An unknown name is
    /// `invalid_argument`; a secret bound to other origins is
    /// `permission_denied`.
    pub fn expand(&self, text: &str, frame_url: &str) -> Result<String, ActionError> {
        let page_url = frame_url;
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find("{{secret:") {
            let after = &rest[start + "{{secret:".len()..];
            let Some(end) = after.find("}}") else { break };
            let name = &after[..end];
            let secret = self.list.iter().find(|s| s.name == name).ok_or_else(|| {
                let known: Vec<&str> = self.list.iter().map(|s| s.name.as_str()).collect();
                ActionError::invalid(
                    format!("there is no secret named \"{name}\""),
                    match known.is_empty() {
                        true => {
                            "No secrets are configured ([secrets] in cdpilot's configuration).".to_owned()
                        }
                        false => format!("Use one of: {}.", known.join(", ")),
                    },
                )
            })?;
            if !secret.origins.is_empty() {
                let origin = url::Url::parse(page_url)
                    .map(|u| u.origin().ascii_serialization())
                    .unwrap_or_default();
                if !secret.origins.contains(&origin) {
                    return Err(ActionError::new(
                        ErrorCode::PermissionDenied,
                        format!(
                            "the secret {name} may only be typed on {}, and the element's frame is {page_url}",
                            secret.origins.join(", ")
                        ),
                        "Navigate to the site the secret belongs to first.",
                    ));
                }
            }
            out.push_str(&rest[..start]);
            out.push_str(&secret.value);
            rest = &after[end + 2..];
        }
        out.push_str(rest);
        Ok(out)
    }

    /// `text` with each secret's value replaced by `{{secret:NAME}}`.
    /// Every spelling in `forms` is replaced (a URL-encoded, escaped or
    /// base64 value too).
    pub fn redact(&self, text: &str) -> String {
        let Some(search) = &self.search else {
            return text.to_owned();
        };
        if !search.is_match(text) {
            return text.to_owned();
        }
        search
            .replace_all(text, |found: &regex::Captures| {
                let found = &found[0];
                let secret = self
                    .forms
                    .iter()
                    .find(|f| f.text == found)
                    .map_or(0, |f| f.secret);
                format!("{{{{secret:{}}}}}", self.list[secret].name)
            })
            .into_owned()
    }

    /// Whether `text` holds any spelling of any secret.
    pub fn leaks(&self, text: &str) -> bool {
        self.search.as_ref().is_some_and(|s| s.is_match(text))
    }

    /// Every string in `value` (keys included) redacted.
    pub fn redact_value(&self, value: Value) -> Value {
        if self.is_empty() {
            return value;
        }
        match value {
            Value::String(s) => Value::String(self.redact(&s)),
            Value::Array(items) => Value::Array(items.into_iter().map(|v| self.redact_value(v)).collect()),
            Value::Object(map) => Value::Object(
                map.into_iter()
                    .map(|(k, v)| (self.redact(&k), self.redact_value(v)))
                    .collect(),
            ),
            other => other,
        }
    }

    /// A call's result or error, redacted for the client.
    pub fn redact_result(
        &self,
        result: Result<ActionOutput, ActionError>,
    ) -> Result<ActionOutput, ActionError> {
        if self.is_empty() {
            return result;
        }
        match result {
            Ok(mut output) => {
                output.text = self.redact(&output.text);
                output.data = self.redact_value(std::mem::take(&mut output.data));
                Ok(output)
            }
            Err(mut error) => {
                error.message = self.redact(&error.message);
                error.next_step = self.redact(&error.next_step);
                Err(error)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secrets(origins: &[&str]) -> Secrets {
        let mut config = BTreeMap::new();
        config.insert(
            "PW".to_owned(),
            SecretConfig {
                env: "X".into(),
                origins: origins.iter().map(|s| s.to_string()).collect(),
            },
        );
        Secrets::resolve(&config, |_| Some("hunter2".into())).unwrap()
    }

    #[test]
    fn placeholders_expand_and_values_redact() {
        let s = secrets(&[]);
        assert_eq!(s.expand("a{{secret:PW}}b", "http://x/").unwrap(), "ahunter2b");
        assert_eq!(
            s.redact("typed hunter2, hunter2"),
            "typed {{secret:PW}}, {{secret:PW}}"
        );
        let e = s.expand("{{secret:NOPE}}", "http://x/").unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert!(e.next_step.contains("PW"), "{e}");
    }

    /// Issue 20, finding 7: every spelling a URL, a form body, an escaped
    /// string or base64 gives of the value is redacted.
    #[test]
    fn every_spelling_of_a_value_is_redacted() {
        let value = "p a&s\"s\\w<o>r'd";
        let mut config = BTreeMap::new();
        config.insert(
            "PW".to_owned(),
            SecretConfig {
                env: "X".into(),
                origins: vec![],
            },
        );
        let s = Secrets::resolve(&config, |_| Some(value.into())).unwrap();
        use base64::Engine as _;
        let spellings = [
            value.to_owned(),
            "p+a%26s%22s%5Cw%3Co%3Er%27d".to_owned(),
            "p%20a%26s%22s%5Cw%3Co%3Er'd".to_owned(),
            "p%20a&s%22s\\w%3Co%3Er'd".to_owned(),
            "p%20a%26s%22s%5cw%3co%3er'd".to_owned(),
            serde_json::to_string(value).unwrap().trim_matches('"').to_owned(),
            format!("{value:?}").trim_matches('"').to_owned(),
            "p a&amp;s&quot;s\\w&lt;o&gt;r&#39;d".to_owned(),
            "p a&amp;s&quot;s\\w&lt;o&gt;r&#x27;d".to_owned(),
            base64::engine::general_purpose::STANDARD.encode(value),
        ];
        for spelling in spellings {
            let text = format!("before {spelling} after");
            assert_eq!(s.redact(&text), "before {{secret:PW}} after", "{spelling}");
            assert!(s.leaks(&text));
        }
    }

    /// What redaction costs on a large result (a measurement, not a
    /// check): `cargo test -p cdpilot-engine --lib redaction_cost --
    /// --ignored --nocapture`.
    #[test]
    #[ignore]
    fn redaction_cost() {
        let mut config = BTreeMap::new();
        for name in ["A", "B", "C"] {
            config.insert(
                name.to_owned(),
                SecretConfig {
                    env: name.into(),
                    origins: vec![],
                },
            );
        }
        let s = Secrets::resolve(&config, |v| Some(format!("{v} pa ss&w\"o\\rd"))).unwrap();
        let text = "textbox \"Search\" [ref=e12] value=\"hello world\"\n".repeat(4000);
        let started = std::time::Instant::now();
        for _ in 0..10 {
            assert_eq!(s.redact(&text).len(), text.len());
        }
        println!(
            "{} spellings of 3 secrets; redacting {} chars: {:.2} ms",
            s.forms.len(),
            text.len(),
            started.elapsed().as_secs_f64() * 100.0
        );
    }

    #[test]
    fn an_origin_bound_secret_is_refused_elsewhere() {
        let s = secrets(&["https://bank.example"]);
        assert!(s.expand("{{secret:PW}}", "https://bank.example/login").is_ok());
        let e = s.expand("{{secret:PW}}", "https://evil.example/").unwrap_err();
        assert_eq!(e.code, ErrorCode::PermissionDenied);
    }

    #[test]
    fn an_unset_variable_names_the_key() {
        let mut config = BTreeMap::new();
        config.insert(
            "PW".to_owned(),
            SecretConfig {
                env: "CDPILOT_TEST_UNSET".into(),
                origins: vec![],
            },
        );
        let e = Secrets::resolve(&config, |_| None).unwrap_err();
        assert!(
            e.starts_with("secrets.PW:") && e.contains("CDPILOT_TEST_UNSET"),
            "{e}"
        );
    }
}
