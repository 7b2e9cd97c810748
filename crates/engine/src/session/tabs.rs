//! `browser_tabs`: list, open, select and close tabs. Tabs the page opened
//! appear in the list as soon as it is asked for.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::args::Common;
use crate::policy::Consent;
use crate::session::{Context, SessionCall, SessionTool};
use crate::tab_tools::navigate::{self, NavigateArgs};
use crate::tool::{Declaration, DefaultBudget, Effect, Group, Scope, Tool};
use crate::validate;
use crate::{ActionError, ActionOutput, Budget};

// What `browser_tabs` does.
#[allow(missing_docs)] // schema-visible: see `crate::tool`
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TabsAction {
    List,
    New,
    Select,
    Close,
}

/// Arguments of `browser_tabs`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TabsArgs {
    #[allow(missing_docs)] // schema-visible: see `crate::tool`
    pub action: TabsAction,
    /// For new.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// For select and close, `tab` names the tab.
    #[serde(flatten)]
    pub common: Common,
}

/// `browser_tabs`: its declaration and checks (see `crate::tool`).
impl Tool for TabsArgs {
    const TOOL: Declaration = Declaration {
        name: "browser_tabs",
        verb: "tabs",
        group: Group::Core,
        description: "List, open (url), select or close tabs, the page's popups included.",
        scope: Scope::Session,
        runs_during_dialog: true,
        budget: DefaultBudget::Action,
        changes_page: true,
        switch: None,
        effect: Effect::Acts,
    };

    /// A url only for new, and not empty.
    fn check(&self) -> Result<(), ActionError> {
        match (&self.url, self.action) {
            (Some(url), TabsAction::New) => validate::non_empty("url", url),
            (Some(_), _) => Err(ActionError::invalid(
                "url is only for action new",
                "Leave url out, or use action new.",
            )),
            (None, _) => Ok(()),
        }
    }

    /// Where a call sends the browser: a new tab's URL.
    fn destination(&self) -> Option<&str> {
        match self.action {
            TabsAction::New => self.url.as_deref(),
            _ => None,
        }
    }
}

impl SessionTool for TabsArgs {
    /// Runs the tool on the session's context.
    async fn perform(&self, call: &SessionCall<'_>) -> Result<ActionOutput, ActionError> {
        run(
            call.context,
            self,
            call.consent,
            call.session.routes(),
            call.budget,
        )
        .await
    }
}

/// `consent`: the session's grants, followed by a new tab's request stage
/// (a URL the user allowed once for this call loads there).
pub async fn run(
    context: &Context,
    args: &TabsArgs,
    consent: &Arc<Consent>,
    routes: &Arc<crate::policy::routes::Routes>,
    budget: &Budget,
) -> Result<ActionOutput, ActionError> {
    let tab_id = || {
        args.common.tab.as_deref().ok_or_else(|| {
            ActionError::invalid(
                "select and close need the tab's id in tab",
                "Pass tab, e.g. {\"action\": \"select\", \"tab\": \"t2\"}.",
            )
        })
    };
    let mut said = String::new();
    match args.action {
        TabsAction::List => {}
        TabsAction::New => {
            let (id, tab) = context.open_tab(budget).await?;
            tab.gate().serve(consent);
            tab.gate().route_by(routes);
            tab.arm_routes(budget).await?;
            said = format!("Opened tab {id}. ");
            // The URL's scheme was checked by the engine before the tab opened.
            if let Some(url) = &args.url {
                let nav = NavigateArgs {
                    url: Some(url.clone()),
                    ..Default::default()
                };
                let out = navigate::run(&tab, &nav, budget).await?;
                said += &out.text;
                said += " ";
            }
        }
        TabsAction::Select => {
            let id = tab_id()?;
            context.select_tab(id, budget).await?;
            said = format!("Tab {id} is now active. ");
        }
        TabsAction::Close => {
            let id = tab_id()?;
            context.close_tab(id, budget).await?;
            said = format!("Closed tab {id}. ");
        }
    }
    context.sync(budget).await?;
    let tabs: Vec<_> = context
        .tab_list(budget)
        .await?
        .into_iter()
        .map(|(id, _tab, active, info)| {
            json!({
                "id": id,
                "url": info.url,
                "title": info.title,
                "active": active,
            })
        })
        .collect();
    let mut text = format!("{said}{} tab(s):", tabs.len());
    for t in &tabs {
        let mark = if t["active"] == true { " (active)" } else { "" };
        text += &format!(
            "\n{}{mark}: {} {}",
            t["id"].as_str().unwrap_or_default(),
            t["title"],
            t["url"].as_str().unwrap_or_default()
        );
    }
    Ok(ActionOutput::new(text, json!({ "tabs": tabs })))
}
