//! `browser_emulate`: the device and environment a tab presents (viewport,
//! scale, mobile, user agent, color scheme, locale, time zone, position,
//! offline). Each setting lasts for the tab until changed; the viewport's
//! four values go to Chrome together, so what one call leaves out is kept
//! from the last call (`tab::emulated::Emulated`, in the tab's state).
//!
//! The settings apply to the tab's page; cross-origin iframes (their own
//! targets) keep the browser's locale, time zone and network.
//!
//! One identity (docs/src/identity.md): the screen holds the viewport (a
//! larger one grows it; a phone's screen is its viewport, touched), and a
//! user agent gets the client hints its Chrome version says, or none for
//! another browser's (`tab::identity::hints_of`); with only a locale the
//! session's own user agent and hints stay.

use cdp::protocol::{browser, emulation, network, target};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::args::Common;
use crate::tab::{identity, Tab};
use crate::tool::{Declaration, DefaultBudget, Effect, Group, Scope, TabCall, TabTool, Tool};
use crate::{ActionError, ActionOutput, Budget};

// A `prefers-color-scheme` value.
#[allow(missing_docs)] // schema-visible: see `crate::tool`
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ColorScheme {
    Light,
    Dark,
}

/// A position on Earth, in degrees.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
pub struct Geolocation {
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    pub latitude: f64,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    pub longitude: f64,
}

/// Arguments of `browser_emulate`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct EmulateArgs {
    /// CSS pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<u32>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<u32>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_scale_factor: Option<f64>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mobile: Option<bool>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_agent: Option<String>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color_scheme: Option<ColorScheme>,
    /// e.g. fr-FR.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
    /// e.g. Europe/Paris.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geolocation: Option<Geolocation>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offline: Option<bool>,
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    #[serde(flatten)]
    pub common: Common,
}

/// `browser_emulate`: its declaration and checks (see `crate::tool`).
impl Tool for EmulateArgs {
    const TOOL: Declaration = Declaration {
        name: "browser_emulate",
        verb: "emulate",
        group: Group::Emulation,
        description: "Emulate a device in this tab until changed: viewport, scale, mobile, user agent, color scheme, locale, timezone, geolocation, offline.",
        scope: Scope::Tab,
        runs_during_dialog: false,
        budget: DefaultBudget::Action,
        changes_page: false,
        switch: None,
        effect: Effect::Acts,
    };

    /// Checks every value's range before anything touches the browser.
    fn check(&self) -> Result<(), ActionError> {
        let given = self.width.is_some()
            || self.height.is_some()
            || self.device_scale_factor.is_some()
            || self.mobile.is_some()
            || self.user_agent.is_some()
            || self.color_scheme.is_some()
            || self.locale.is_some()
            || self.timezone.is_some()
            || self.geolocation.is_some()
            || self.offline.is_some();
        let bad = |what: String, next: &str| Err(ActionError::invalid(what, next));
        if !given {
            return bad(
                "nothing to emulate".into(),
                "Pass at least one of width, height, device_scale_factor, mobile, user_agent, color_scheme, locale, timezone, geolocation, offline.",
            );
        }
        for (name, value) in [("width", self.width), ("height", self.height)] {
            if let Some(v) = value.filter(|v| !SIZE.contains(v)) {
                return bad(
                    format!(
                        "{name} must be {}-{} CSS pixels, not {v}",
                        SIZE.start(),
                        SIZE.end()
                    ),
                    "Pass a viewport size such as width 390, height 844.",
                );
            }
        }
        if let Some(f) = self.device_scale_factor.filter(|f| !SCALE.contains(f)) {
            return bad(
                format!("device_scale_factor must be 0.25-5, not {f}"),
                "Use 1 for a desktop, 2 or 3 for a phone.",
            );
        }
        if let Some(ua) = &self.user_agent {
            if ua.trim().is_empty() || ua.len() > 1000 {
                return bad(
                    "user_agent must be 1-1000 characters".into(),
                    "Pass a browser's user agent string.",
                );
            }
        }
        if let Some(locale) = &self.locale {
            let tag = regex::Regex::new(r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$").expect("a valid regex");
            if !tag.is_match(locale) {
                return bad(
                    format!("locale \"{locale}\" is not a language tag"),
                    "Pass a BCP 47 tag such as en-US or fr-FR.",
                );
            }
        }
        if let Some(zone) = &self.timezone {
            let id =
                regex::Regex::new(r"^[A-Za-z][A-Za-z0-9_+\-]*(/[A-Za-z0-9_+\-]+)*$").expect("a valid regex");
            if !id.is_match(zone) || zone.len() > 64 {
                return bad(
                    format!("timezone \"{zone}\" is not a time zone id"),
                    "Pass an IANA id such as Europe/Paris or America/New_York.",
                );
            }
        }
        if let Some(g) = self.geolocation {
            if !(-90.0..=90.0).contains(&g.latitude) || !(-180.0..=180.0).contains(&g.longitude) {
                return bad(
                    format!("geolocation ({}, {}) is off the globe", g.latitude, g.longitude),
                    "latitude must be -90 to 90 and longitude -180 to 180.",
                );
            }
        }
        Ok(())
    }
}

impl TabTool for EmulateArgs {
    /// Runs the tool in the call's tab.
    async fn perform(&self, call: &TabCall<'_>) -> Result<ActionOutput, ActionError> {
        run(call.tab, self, call.budget).await
    }
}

const SIZE: std::ops::RangeInclusive<u32> = 50..=8192;
const SCALE: std::ops::RangeInclusive<f64> = 0.25..=5.0;

pub async fn run(tab: &Tab, args: &EmulateArgs, budget: &Budget) -> Result<ActionOutput, ActionError> {
    let s = &tab.session;
    // Chrome's refusal of a value (an unknown locale or zone) is the
    // model's to fix.
    let refused = |what: &'static str| {
        move |e: ActionError| {
            if e.failure.ends_the_call() {
                e
            } else {
                ActionError::invalid(
                    format!("Chrome refused the {what}: {}", e.message),
                    format!("Pass another {what}."),
                )
            }
        }
    };
    // Checked before anything is applied: a refused value leaves the tab as it was.
    if let Some(zone) = &args.timezone {
        // Chrome takes any id and falls back to GMT; the page's own ICU
        // knows which ids exist.
        let probe = format!(
            "(() => {{ try {{ new Intl.DateTimeFormat('en', {{ timeZone: {} }}); return true; }} catch {{ return false; }} }})()",
            json!(zone)
        );
        let known = tab
            .evaluate_in_world(budget, "checking the time zone", &probe, true)
            .await?
            .value;
        if known != Some(json!(true)) {
            return Err(ActionError::invalid(
                format!("timezone \"{zone}\" is not a time zone this browser knows"),
                "Pass an IANA id such as Europe/Paris or America/New_York.",
            ));
        }
    }
    if args.width.is_some()
        || args.height.is_some()
        || args.device_scale_factor.is_some()
        || args.mobile.is_some()
    {
        let kept = tab.state(|s| s.emulated().metrics().zip(s.emulated().own_screen()));
        let (current, own_screen) = match kept {
            Some(kept) => kept,
            None => {
                let seen = tab
                    .evaluate_in_world(
                        budget,
                        "measuring the viewport",
                        "[innerWidth, innerHeight, devicePixelRatio, screen.width, screen.height]",
                        true,
                    )
                    .await?
                    .value
                    .unwrap_or_default();
                let n = |i: usize| seen[i].as_f64().unwrap_or(1.0);
                (
                    (n(0) as u32, n(1) as u32, n(2), false),
                    (n(3) as u32, n(4) as u32),
                )
            }
        };
        let metrics = (
            args.width.unwrap_or(current.0),
            args.height.unwrap_or(current.1),
            args.device_scale_factor.unwrap_or(current.2),
            args.mobile.unwrap_or(current.3),
        );
        let (screen_width, screen_height) = screen_for(metrics, own_screen);
        let set = emulation::SetDeviceMetricsOverride {
            width: metrics.0,
            height: metrics.1,
            device_scale_factor: metrics.2,
            mobile: metrics.3,
            screen_width: Some(screen_width),
            screen_height: Some(screen_height),
        };
        budget.cdp("setting the viewport", s, set).await?;
        // A phone is touched, a desktop is not.
        let touch = emulation::SetTouchEmulationEnabled {
            enabled: metrics.3,
            max_touch_points: metrics.3.then_some(5),
        };
        budget.cdp("setting touch", s, touch).await?;
        tab.state(|s| s.emulated_metrics(metrics, own_screen));
    }
    let mut hints_said = None;
    if args.user_agent.is_some() || args.locale.is_some() {
        let kept = tab.state(|s| s.emulated().clone());
        // The session's own identity unless a user agent was set: its
        // client hints are the browser's own, not derived.
        let own = tab
            .identity()
            .filter(|_| args.user_agent.is_none() && kept.user_agent().is_none());
        let user_agent = match args.user_agent.clone().or(kept.user_agent().map(str::to_owned)) {
            Some(ua) => ua,
            None => match own {
                Some(own) => own.string.clone(),
                None => tab
                    .evaluate_in_world(budget, "reading the user agent", "navigator.userAgent", true)
                    .await?
                    .value
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default(),
            },
        };
        // Chrome sends no client hints for a user agent set without them:
        // a Chrome one gets those its version says, another browser's none.
        let metadata = match own {
            Some(own) => Some(own.metadata.clone()),
            None => identity::hints_of(&user_agent),
        };
        if args.user_agent.is_some() {
            hints_said = Some(match &metadata {
                Some(_) => "the user agent's client hints are derived from its Chrome version",
                None => "the user agent names no Chrome version, so no client hints are sent",
            });
        }
        let locale = args.locale.clone().or(kept.locale().map(str::to_owned));
        let set = network::SetUserAgentAndLanguage {
            user_agent: user_agent.clone(),
            accept_language: locale.clone().unwrap_or_default(),
            user_agent_metadata: metadata,
        };
        budget.cdp("setting the user agent", s, set).await?;
        if let Some(locale) = &args.locale {
            let set = emulation::SetLocaleOverride {
                locale: locale.clone(),
            };
            budget
                .cdp("setting the locale", s, set)
                .await
                .map_err(refused("locale"))?;
        }
        tab.state(|s| s.emulated_agent(user_agent, locale));
    }
    if let Some(scheme) = args.color_scheme {
        let value = match scheme {
            ColorScheme::Light => "light",
            ColorScheme::Dark => "dark",
        };
        let set = emulation::SetEmulatedMedia {
            features: vec![emulation::MediaFeature {
                name: "prefers-color-scheme".into(),
                value: value.into(),
            }],
        };
        budget.cdp("setting the color scheme", s, set).await?;
    }
    if let Some(zone) = &args.timezone {
        let set = emulation::SetTimezoneOverride {
            timezone_id: zone.clone(),
        };
        budget
            .cdp("setting the time zone", s, set)
            .await
            .map_err(refused("timezone"))?;
    }
    if let Some(position) = args.geolocation {
        // The page may ask for the position without a prompt.
        let browser_session = s.connection().browser();
        let info = budget
            .cdp(
                "finding the tab's browser context",
                &browser_session,
                target::GetTargetInfo {
                    target_id: tab.target_id.clone(),
                },
            )
            .await?;
        let grant = browser::GrantPermissions {
            permissions: vec!["geolocation".into()],
            browser_context_id: info.target_info.browser_context_id,
        };
        budget
            .cdp("allowing geolocation", &browser_session, grant)
            .await?;
        let set = emulation::SetGeolocationOverride {
            latitude: position.latitude,
            longitude: position.longitude,
            accuracy: 10.0,
        };
        budget.cdp("setting the position", s, set).await?;
    }
    if let Some(offline) = args.offline {
        // One state with `browser_network conditions`: a throttle set
        // there stays, only going offline changes.
        let now = tab.state(|s| s.emulated().network());
        let mut set = now.unwrap_or(network::EmulateNetworkConditions {
            offline,
            latency: 0.0,
            download_throughput: -1.0,
            upload_throughput: -1.0,
        });
        set.offline = offline;
        let unthrottled = set.latency == 0.0 && set.download_throughput < 0.0 && set.upload_throughput < 0.0;
        tab.set_network((offline || !unthrottled).then_some(set), budget).await?;
    }
    // The emulated screen; a mobile page without a viewport meta tag still
    // lays out 980 CSS pixels wide inside it, as on a phone.
    let (width, height) = match tab.state(|s| s.emulated().metrics()) {
        Some((width, height, ..)) => (width as u64, height as u64),
        None => {
            let seen = tab
                .evaluate_in_world(
                    budget,
                    "measuring the viewport",
                    "[innerWidth, innerHeight]",
                    true,
                )
                .await?
                .value
                .unwrap_or_default();
            (seen[0].as_u64().unwrap_or(0), seen[1].as_u64().unwrap_or(0))
        }
    };
    let now = tab.state(|s| s.emulated().network());
    let (network, conditions) = crate::throttle::describe(now);
    let mut text = format!("Emulation set; the viewport is {width}x{height}");
    // The network is told when this call or an earlier one changed it.
    if now.is_some() || args.offline.is_some() {
        text.push_str(&format!("; the network: {network}"));
    }
    text.push('.');
    let mut data = json!({ "ok": true, "viewport": { "width": width, "height": height }, "network": conditions });
    if let Some(said) = hints_said {
        text.push_str(&format!(" {}{}.", said[..1].to_uppercase(), &said[1..]));
        data["client_hints"] = json!(!said.contains("no client hints"));
    }
    Ok(ActionOutput::new(text, data))
}

/// The screen a viewport is shown on: a phone's is its viewport; a
/// desktop's is the browser's own, grown to hold a larger viewport (a
/// window is never bigger than its screen).
fn screen_for((width, height, _, mobile): (u32, u32, f64, bool), own: (u32, u32)) -> (u32, u32) {
    if mobile {
        (width, height)
    } else {
        (width.max(own.0), height.max(own.1))
    }
}
