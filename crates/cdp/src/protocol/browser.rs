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
/// Where a browser context's downloads go and whether they are reported
/// (`Browser.downloadWillBegin` / `Browser.downloadProgress`). With
/// "allowAndName" each file is saved as its download's guid, and never
/// asks the user.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SetDownloadBehavior {
    /// "deny", "allow", "allowAndName" or "default".
    pub behavior: String,
    /// `None`: the default browser context.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub browser_context_id: Option<String>,
    /// An absolute directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub download_path: Option<String>,
    pub events_enabled: bool,
}
command!(SetDownloadBehavior => "Browser.setDownloadBehavior", Empty);

/// A download started in `frame_id`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct DownloadWillBegin {
    pub frame_id: String,
    pub guid: String,
    pub url: String,
    pub suggested_filename: String,
}
crate::event!(DownloadWillBegin => "Browser.downloadWillBegin");

/// How far download `guid` got.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct DownloadProgress {
    pub guid: String,
    pub total_bytes: f64,
    pub received_bytes: f64,
    /// "inProgress", "completed" or "canceled".
    pub state: String,
    /// Where the file was saved (once completed; newer Chromium only).
    pub file_path: Option<String>,
}
crate::event!(DownloadProgress => "Browser.downloadProgress");
