//! `Emulation` domain: the viewport, media features, locale, time zone and
//! position a tab reports.
use serde::Serialize;

use super::{command, Empty};

/// The viewport's size, device pixel ratio and mobile mode.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SetDeviceMetricsOverride {
    pub width: u32,
    pub height: u32,
    pub device_scale_factor: f64,
    pub mobile: bool,
    /// The screen `screen.width` reports (Chrome's own otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub screen_width: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub screen_height: Option<u32>,
}
command!(SetDeviceMetricsOverride => "Emulation.setDeviceMetricsOverride", Empty);

/// The page has focus whether or not its window does (`document.hasFocus()`,
/// `focus` events), as the active tab of a person's browser.
#[derive(Debug, Default, Serialize)]
pub struct SetFocusEmulationEnabled {
    pub enabled: bool,
}
command!(SetFocusEmulationEnabled => "Emulation.setFocusEmulationEnabled", Empty);

/// Whether touch events are emulated (a phone's `ontouchstart`,
/// `maxTouchPoints`).
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SetTouchEmulationEnabled {
    pub enabled: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_touch_points: Option<u32>,
}
command!(SetTouchEmulationEnabled => "Emulation.setTouchEmulationEnabled", Empty);

/// Back to the window's own viewport.
#[derive(Debug, Default, Serialize)]
pub struct ClearDeviceMetricsOverride {}
command!(ClearDeviceMetricsOverride => "Emulation.clearDeviceMetricsOverride", Empty);

/// One CSS media feature (`prefers-color-scheme: dark`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct MediaFeature {
    pub name: String,
    pub value: String,
}

/// CSS media features the page's queries see.
#[derive(Debug, Default, Serialize)]
pub struct SetEmulatedMedia {
    pub features: Vec<MediaFeature>,
}
command!(SetEmulatedMedia => "Emulation.setEmulatedMedia", Empty);

/// The ICU locale (`Intl`, date formats).
#[derive(Debug, Default, Serialize)]
pub struct SetLocaleOverride {
    pub locale: String,
}
command!(SetLocaleOverride => "Emulation.setLocaleOverride", Empty);

/// The time zone (an IANA id such as `Europe/Paris`).
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SetTimezoneOverride {
    pub timezone_id: String,
}
command!(SetTimezoneOverride => "Emulation.setTimezoneOverride", Empty);

/// The position `navigator.geolocation` reports.
#[derive(Debug, Default, Serialize)]
pub struct SetGeolocationOverride {
    pub latitude: f64,
    pub longitude: f64,
    pub accuracy: f64,
}
command!(SetGeolocationOverride => "Emulation.setGeolocationOverride", Empty);
