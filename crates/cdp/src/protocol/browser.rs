//! `Browser` domain.
use serde::{Deserialize, Serialize};

use super::{command, Empty};

#[derive(Debug, Default, Serialize)]
pub struct GetVersion {}
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Version {
    pub product: String,
    pub user_agent: String,
    pub protocol_version: String,
}
command!(GetVersion => "Browser.getVersion", Version);

#[derive(Debug, Default, Serialize)]
pub struct Close {}
command!(Close => "Browser.close", Empty);

/// Grants permissions (`geolocation`, …) to a browser context.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GrantPermissions {
    pub permissions: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub browser_context_id: Option<String>,
}
command!(GrantPermissions => "Browser.grantPermissions", Empty);
