//! Arguments of the tools behind `[tools] caps` groups: `browser_network`,
//! `browser_storage`, `browser_pdf`, `browser_emulate`. Schema conventions
//! as in the parent module: a field without a doc comment is one a model
//! understands by its name.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Common;

// What `browser_network` does.
#[allow(missing_docs)] // schema-visible: see the `calls` module doc
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum NetworkAction {
    List,
    Get,
}

/// Arguments of `browser_network`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct NetworkArgs {
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    pub action: NetworkAction,
    /// list: URL substring.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<String>,
    /// list: document, xhr, fetch, script, image…
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// list: only failed ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<bool>,
    /// get: request id (r3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// get: include the response body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<bool>,
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    #[serde(flatten)]
    pub common: Common,
}

// What `browser_storage` does.
#[allow(missing_docs)] // schema-visible: see the `calls` module doc
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StorageAction {
    Cookies,
    SetCookie,
    ClearCookies,
    Save,
    Load,
}

// A cookie's SameSite attribute.
#[allow(missing_docs)] // schema-visible: see the `calls` module doc
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum SameSite {
    Strict,
    Lax,
    None,
}

/// A cookie to set: `url`, or `domain` (with `path`), says where it goes.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct CookieArg {
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    pub name: String,
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    pub value: String,
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Unix seconds; default: a session cookie.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<f64>,
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_only: Option<bool>,
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secure: Option<bool>,
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_site: Option<SameSite>,
}

/// Arguments of `browser_storage`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct StorageArgs {
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    pub action: StorageAction,
    /// cookies: only those sent to this URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cookie: Option<CookieArg>,
    /// save/load: JSON file in the output directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    #[serde(flatten)]
    pub common: Common,
}

/// Arguments of `browser_pdf`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct PdfArgs {
    /// File name in the output directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landscape: Option<bool>,
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub print_background: Option<bool>,
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    #[serde(flatten)]
    pub common: Common,
}

// A `prefers-color-scheme` value.
#[allow(missing_docs)] // schema-visible: see the `calls` module doc
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ColorScheme {
    Light,
    Dark,
}

/// A position on Earth, in degrees.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
pub struct Geolocation {
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    pub latitude: f64,
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    pub longitude: f64,
}

/// Arguments of `browser_emulate`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct EmulateArgs {
    /// CSS pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<u32>,
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<u32>,
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_scale_factor: Option<f64>,
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mobile: Option<bool>,
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_agent: Option<String>,
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color_scheme: Option<ColorScheme>,
    /// e.g. fr-FR.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
    /// e.g. Europe/Paris.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geolocation: Option<Geolocation>,
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offline: Option<bool>,
    #[allow(missing_docs)] // schema-visible: see the `calls` module doc
    #[serde(flatten)]
    pub common: Common,
}
