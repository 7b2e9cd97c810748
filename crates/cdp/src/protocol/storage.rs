//! `Storage` domain: the cookies of a browser context (the default one when
//! no id is given). Cookies stay JSON objects: Chrome's shape passes through.
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{command, Empty};

/// Every cookie of a browser context.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GetCookies {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub browser_context_id: Option<String>,
}
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Cookies {
    /// `Network.Cookie` objects.
    pub cookies: Vec<Value>,
}
command!(GetCookies => "Storage.getCookies", Cookies);

/// Sets cookies (`Network.CookieParam` objects) in a browser context.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SetCookies {
    pub cookies: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub browser_context_id: Option<String>,
}
command!(SetCookies => "Storage.setCookies", Empty);

/// Deletes every cookie of a browser context.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClearCookies {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub browser_context_id: Option<String>,
}
command!(ClearCookies => "Storage.clearCookies", Empty);
