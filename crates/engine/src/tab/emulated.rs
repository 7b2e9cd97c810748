//! What `browser_emulate` set on a tab, kept in the tab's state: the
//! viewport's four values go to Chrome together, so what one call leaves
//! out is taken from the last call. Written only through the tab state's
//! methods (`TabState::emulated_metrics`, `TabState::emulated_agent`).

/// What earlier calls set on the tab.
#[derive(Debug, Default, Clone)]
pub struct Emulated {
    /// width, height, device scale factor, mobile.
    metrics: Option<(u32, u32, f64, bool)>,
    /// The browser's own screen, measured before the first viewport was set.
    own_screen: Option<(u32, u32)>,
    user_agent: Option<String>,
    locale: Option<String>,
    /// Offline or throttled (`browser_network conditions`, `browser_emulate
    /// offline`): one state both report; `None` is the browser's own.
    network: Option<cdp::protocol::network::EmulateNetworkConditions>,
}

impl Emulated {
    /// The viewport last set: width, height, device scale factor, mobile.
    pub fn metrics(&self) -> Option<(u32, u32, f64, bool)> {
        self.metrics
    }

    /// The browser's own screen (width, height), once a viewport was set.
    pub fn own_screen(&self) -> Option<(u32, u32)> {
        self.own_screen
    }

    /// The user agent last set.
    pub fn user_agent(&self) -> Option<&str> {
        self.user_agent.as_deref()
    }

    /// The locale last set.
    pub fn locale(&self) -> Option<&str> {
        self.locale.as_deref()
    }

    /// The network conditions last set (`None`: none, or cleared).
    pub fn network(&self) -> Option<cdp::protocol::network::EmulateNetworkConditions> {
        self.network
    }

    pub(super) fn set_network(
        &mut self,
        conditions: Option<cdp::protocol::network::EmulateNetworkConditions>,
    ) {
        self.network = conditions;
    }

    pub(super) fn set_metrics(&mut self, metrics: (u32, u32, f64, bool), own_screen: (u32, u32)) {
        self.metrics = Some(metrics);
        self.own_screen = Some(own_screen);
    }

    pub(super) fn set_agent(&mut self, user_agent: String, locale: Option<String>) {
        self.user_agent = Some(user_agent);
        self.locale = locale;
    }
}
