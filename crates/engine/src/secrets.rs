//! Secrets the model never sees (`shared/spec/TOOLS.md`, Secrets): values
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
    /// Longest value first, so a value inside another is never redacted
    /// out of the longer one first.
    list: Vec<Secret>,
}

#[derive(Debug)]
struct Secret {
    name: String,
    value: String,
    /// Origins (`https://bank.example`) it may be typed on; empty: any.
    origins: Vec<String>,
}

impl Secrets {
    /// The configured secrets with their values from the environment. An
    /// unset or empty variable is a start-up error naming the key.
    pub fn from_config(config: &BTreeMap<String, SecretConfig>) -> Result<Secrets, String> {
        Self::resolve(config, |var| std::env::var(var).ok())
    }

    fn resolve(
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
        Ok(Secrets { list })
    }

    /// No secret is configured.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// `text` with each `{{secret:NAME}}` replaced by the secret's value,
    /// for typing on the page at `page_url`. An unknown name is
    /// `invalid_argument`; a secret bound to other origins is
    /// `permission_denied`.
    pub fn expand(&self, text: &str, page_url: &str) -> Result<String, ActionError> {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find("{{secret:") {
            let after = &rest[start + "{{secret:".len()..];
            let Some(end) = after.find("}}") else { break };
            let name = &after[..end];
            let secret = self.list.iter().find(|s| s.name == name).ok_or_else(|| {
                let known: Vec<&str> = self.list.iter().map(|s| s.name.as_str()).collect();
                ActionError::invalid(
                    format!("there is no secret named {name:?}"),
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
                            "the secret {name} may only be typed on {}, and this page is {page_url}",
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
    pub fn redact(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for secret in &self.list {
            if text.contains(&secret.value) {
                text = text.replace(&secret.value, &format!("{{{{secret:{}}}}}", secret.name));
            }
        }
        text
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
