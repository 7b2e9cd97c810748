//! Resolving an action's target (a ref from a snapshot, or a CSS selector)
//! to a live element handle in cdpilot's isolated world.
//!
//! This is where refs go stale: a ref issued for an earlier document of the
//! tab is `element_stale`; a ref the current document never issued (another
//! tab's, another frame's, made up) is `ref_unknown`; one whose element has
//! left the DOM is `element_not_found`. An acting tool's target is checked
//! against the role and name its ref was shown with ([`resolve`]): one
//! that reads otherwise now is `ref_changed`, and nothing is done to it.
//! Reading tools take the element as it is ([`resolve_to_read`], [`by_ref`]).
//! Where an acting tool's input goes, and whether it landed, is
//! [`aim`]'s.

use cdp::protocol::{dom, runtime};

use crate::args::ElementTarget;
use crate::error::{Failure, RefChange};
use crate::tab::{FrameRef, Tab};
use crate::{ActionError, Budget, ErrorCode};

pub mod aim;
pub use aim::{Intent, Pressed};

/// A live element: a remote object in cdpilot's isolated world of its frame.
pub struct Element {
    pub object_id: String,
    /// How the caller named it (`ref e12`, `selector "#go"`), for messages.
    pub label: String,
    /// The frame whose document holds it (its session answers for it).
    pub frame: FrameRef,
}

/// What the caller does with the element: acting on it checks its ref
/// against what the snapshot showed; reading takes it as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Use {
    Act,
    Read,
}

/// The element an acting tool (click, type, hover, drag, select, fill,
/// upload, selecting text) acts on: refused with `ref_changed` when its
/// ref's element no longer has the role or name it was shown with.
pub async fn resolve(tab: &Tab, target: &ElementTarget, budget: &Budget) -> Result<Element, ActionError> {
    resolve_as(tab, target, budget, Use::Act).await
}

/// The element a reading tool (scroll into view, screenshot, evaluate)
/// reads, as it is now.
pub async fn resolve_to_read(
    tab: &Tab,
    target: &ElementTarget,
    budget: &Budget,
) -> Result<Element, ActionError> {
    resolve_as(tab, target, budget, Use::Read).await
}

async fn resolve_as(
    tab: &Tab,
    target: &ElementTarget,
    budget: &Budget,
    use_: Use,
) -> Result<Element, ActionError> {
    match (&target.reference, &target.selector) {
        (Some(reference), _) => by_ref_as(tab, reference, budget, use_).await,
        (None, Some(selector)) => by_selector(tab, selector, budget).await,
        (None, None) => Err(ActionError::invalid(
            "no ref or selector given",
            "Pass the element's ref from browser_snapshot.",
        )),
    }
}

/// The element `reference` names, as it is now (for reading tools).
pub async fn by_ref(tab: &Tab, reference: &str, budget: &Budget) -> Result<Element, ActionError> {
    by_ref_as(tab, reference, budget, Use::Read).await
}

/// `ref_unknown`: the tab's current document never issued `reference`.
/// (The session names the tab that did, if one of its others did.)
pub fn unknown(reference: &str, why: &str) -> ActionError {
    ActionError::of(
        Failure::RefUnknown {
            reference: reference.to_owned(),
        },
        format!("ref {reference} was not issued in this tab{why}"),
        "A ref is valid only in the tab and frame whose browser_snapshot showed it: take a browser_snapshot \
         of this tab and use a ref from it, or pass the tab that showed it as `tab`.",
    )
}

async fn by_ref_as(tab: &Tab, reference: &str, budget: &Budget, use_: Use) -> Result<Element, ActionError> {
    let (document, refs_document, ours) =
        tab.state(|s| (s.document(), s.refs_document(), s.issued(reference)));
    match refs_document {
        None => return Err(unknown(reference, " (no snapshot has been taken of this page)")),
        Some(issued) if issued != document => return Err(ActionError::stale(reference)),
        Some(_) if !ours => return Err(unknown(reference, "")),
        Some(_) => {}
    }
    let not_found = || {
        ActionError::new(
            ErrorCode::ElementNotFound,
            format!("ref {reference} is not on the page (never issued, or its element or frame was removed)"),
            "Take a new browser_snapshot and use a ref from it.",
        )
    };
    // The frame is asked for where it is now (its session may have changed
    // since the snapshot: a cross-origin frame that re-attached).
    let frame = match frame_number(reference).map(|n| tab.numbered_frame(n)) {
        None => tab.main_frame(),
        Some(None) => return Err(not_found()),
        Some(Some(frame)) => frame.map_err(|e| ActionError {
            message: format!("ref {reference}: {}", e.message),
            ..e
        })?,
    };
    // Acting: the world checks the element against what its ref was shown
    // as, in the same round trip that finds it.
    let find = match use_ {
        Use::Act => "target",
        Use::Read => "lookup",
    };
    let expression = format!(
        "globalThis.__cdpilot?.issued() ? globalThis.__cdpilot.{find}({}) : 'no-world'",
        serde_json::to_string(reference).expect("string serializes")
    );
    let object = tab
        .evaluate_in(&frame, budget, "finding the element", &expression, false, false)
        .await?;
    if let Some(changed) = object
        .value
        .as_ref()
        .and_then(|v| v.as_str())
        .filter(|v| v.starts_with('{'))
    {
        return Err(changed_error(tab, &frame, reference, changed));
    }
    let main = frame.number.is_none();
    element_or_error(object, format!("ref {reference}"), frame, not_found).map_err(|e| {
        // A frame's new document has a fresh world: its old refs are gone,
        // not stale in the contract's sense (the tab did not navigate).
        match (&e.failure, main) {
            (Failure::ContextGone, true) => ActionError::stale(reference),
            (Failure::ContextGone, false) => not_found(),
            _ => e,
        }
    })
}

/// `f2e7` → Some(2); `e7` → None.
fn frame_number(reference: &str) -> Option<u32> {
    crate::tab::refs::parse(reference)?.0
}

/// `ref_changed` from the world's account of it (see `target` in the
/// serializer): what the ref was shown as, what its element is now, and the
/// fresh ref of the element that now reads as it was shown, if exactly one
/// does.
fn changed_error(tab: &Tab, frame: &FrameRef, reference: &str, account: &str) -> ActionError {
    #[derive(serde::Deserialize)]
    struct Account {
        was: (String, String),
        now: (String, String),
        fresh: Option<String>,
        matches: u32,
        next: u64,
    }
    let account: Account = match serde_json::from_str(account) {
        Ok(account) => account,
        Err(e) => return ActionError::internal(format!("checking ref {reference}: {e}")),
    };
    // A fresh ref may be one the world gave out just now.
    tab.state(|s| s.frame_refs_issued(&frame.frame_id, account.next));
    let shown = |(role, name): &(String, String)| match name.is_empty() {
        true => role.clone(),
        false => format!("{role} {}", serde_json::Value::from(name.as_str())),
    };
    let message = format!(
        "ref {reference} was shown as {} but its element is now {}; nothing was done",
        shown(&account.was),
        shown(&account.now)
    );
    let next_step = match (&account.fresh, account.matches) {
        (Some(fresh), _) => format!(
            "The element shown as {} is now {fresh}: act on {fresh} if it is the one you meant.",
            shown(&account.was)
        ),
        (None, 0) => format!(
            "Nothing on the page is {} any more: take a browser_snapshot and choose again \
             (acting on {reference} again acts on it as it is now).",
            shown(&account.was)
        ),
        (None, _) => format!(
            "Several elements are {} now: take a browser_snapshot and choose one by its ref.",
            shown(&account.was)
        ),
    };
    ActionError::of(
        Failure::RefChanged(Box::new(RefChange {
            reference: reference.to_owned(),
            was: account.was,
            now: account.now,
            fresh_ref: account.fresh,
        })),
        message,
        next_step,
    )
}

pub async fn by_selector(tab: &Tab, selector: &str, budget: &Budget) -> Result<Element, ActionError> {
    let quoted = serde_json::to_string(selector).expect("string serializes");
    let expression = format!(
        "(() => {{ try {{ return document.querySelector({quoted}); }} catch (e) {{ return 'bad-selector'; }} }})()"
    );
    let object = tab
        .evaluate_in_world(budget, "finding the element", &expression, false)
        .await?;
    if object.value.as_ref().and_then(|v| v.as_str()) == Some("bad-selector") {
        return Err(ActionError::invalid(
            format!("\"{selector}\" is not a valid CSS selector"),
            "Pass a valid CSS selector, or better a ref from browser_snapshot.",
        ));
    }
    element_or_error(
        object,
        format!("selector \"{selector}\""),
        tab.main_frame(),
        || {
            ActionError::new(
                ErrorCode::ElementNotFound,
                format!("no element matches the selector \"{selector}\""),
                "Take a browser_snapshot and use a ref instead.",
            )
        },
    )
}

fn element_or_error(
    object: runtime::RemoteObject,
    label: String,
    frame: FrameRef,
    not_found: impl FnOnce() -> ActionError,
) -> Result<Element, ActionError> {
    if object.value.as_ref().and_then(|v| v.as_str()) == Some("no-world") {
        // The isolated world has no serializer: a document the refs were not issued in.
        return Err(ActionError::of(Failure::ContextGone, label, ""));
    }
    match object.object_id {
        Some(object_id) if object.subtype.as_deref() == Some("node") => Ok(Element {
            object_id,
            label,
            frame,
        }),
        _ => Err(not_found()),
    }
}

impl Element {
    /// The element's backend DOM node id (stable for the node's lifetime).
    pub async fn backend_node_id(&self, budget: &Budget) -> Result<i64, ActionError> {
        let described = self
            .frame
            .cdp(
                budget,
                "describing the element",
                dom::DescribeNode {
                    object_id: Some(self.object_id.clone()),
                    backend_node_id: None,
                },
            )
            .await?;
        Ok(described.node.backend_node_id)
    }

    /// Before input to a cross-origin frame: notes when the frame's window
    /// sees the input's last event (`kind`, e.g. `mouseup`), so
    /// [`Element::settle`] can wait for it. Nothing to do for an element of
    /// the tab's own session.
    pub async fn watch_input(&self, tab: &Tab, kind: &str, budget: &Budget) -> Result<(), ActionError> {
        if self.frame.session.id() == tab.session.id() {
            return Ok(());
        }
        let watch = "function (kind) { const w = this.ownerDocument.defaultView; w.__cdpilotInput = new Promise((resolve) => w.addEventListener(kind, () => resolve(true), { once: true, capture: true })); }";
        self.call(
            budget,
            "watching for the input",
            watch,
            vec![serde_json::json!(kind)],
        )
        .await
        .map(|_| ())
    }

    /// Waits until the element's frame has handled the input. Input for a
    /// cross-origin frame is acknowledged by the top-level page and reaches
    /// the frame's process on another channel, possibly much later on a
    /// loaded machine: this waits for the event [`Element::watch_input`]
    /// watched (at most 5 s: a loaded machine's frame process can be that late; the hit test already showed the input lands there), then one frame, so what the caller reads
    /// next reflects the input (at most 500 ms: a window that draws no
    /// frames, hidden or minimized, is not waited on for the budget). A
    /// frame that navigated meanwhile is settled.
    pub async fn settle(&self, budget: &Budget) -> Result<(), ActionError> {
        let settled = "function () {
  const w = this.ownerDocument.defaultView;
  const seen = w.__cdpilotInput || Promise.resolve(true);
  delete w.__cdpilotInput;
  const late = new Promise((resolve) => w.setTimeout(() => resolve(false), 5000));
  return Promise.race([seen, late]).then(() => new Promise((resolve) => {
    w.requestAnimationFrame(() => resolve(true));
    w.setTimeout(() => resolve(true), 500);
  }));
}";
        match self
            .call_awaiting(budget, "letting the frame handle the input", settled, vec![])
            .await
        {
            Err(e) if e.failure == Failure::ContextGone => Ok(()),
            other => other.map(|_| ()),
        }
    }

    /// Calls `function` with the element as `this` and returns the node it
    /// returns as an element of the same frame, named `label` (`None` when
    /// it returns no node): for an element found from another, such as a
    /// combobox's option.
    pub async fn related(
        &self,
        budget: &Budget,
        step: &str,
        function: &str,
        label: String,
    ) -> Result<Option<Element>, ActionError> {
        let object = self
            .call_on(
                budget,
                step,
                runtime::CallFunctionOn {
                    function_declaration: function.to_owned(),
                    object_id: Some(self.object_id.clone()),
                    return_by_value: false,
                    ..Default::default()
                },
            )
            .await?;
        Ok(match object.object_id {
            Some(object_id) if object.subtype.as_deref() == Some("node") => Some(Element {
                object_id,
                label,
                frame: self.frame.clone(),
            }),
            _ => None,
        })
    }

    /// Like [`Element::call`], for a function that returns a promise.
    pub async fn call_awaiting(
        &self,
        budget: &Budget,
        step: &str,
        function: &str,
        args: Vec<serde_json::Value>,
    ) -> Result<serde_json::Value, ActionError> {
        self.call_with(budget, step, function, args, true).await
    }

    /// Calls `function` (JS source) with the element as `this`; returns its
    /// value by value.
    pub async fn call(
        &self,
        budget: &Budget,
        step: &str,
        function: &str,
        args: Vec<serde_json::Value>,
    ) -> Result<serde_json::Value, ActionError> {
        self.call_with(budget, step, function, args, false).await
    }

    async fn call_with(
        &self,
        budget: &Budget,
        step: &str,
        function: &str,
        args: Vec<serde_json::Value>,
        await_promise: bool,
    ) -> Result<serde_json::Value, ActionError> {
        let returned = self
            .call_on(
                budget,
                step,
                runtime::CallFunctionOn {
                    function_declaration: function.to_owned(),
                    object_id: Some(self.object_id.clone()),
                    arguments: args
                        .into_iter()
                        .map(|v| runtime::CallArgument {
                            value: Some(v),
                            object_id: None,
                        })
                        .collect(),
                    return_by_value: true,
                    await_promise,
                    ..Default::default()
                },
            )
            .await?;
        Ok(returned.value.unwrap_or(serde_json::Value::Null))
    }

    /// Sends `call` (a function called on this element) to its frame; an
    /// exception the function throws is an internal error naming `step`.
    async fn call_on(
        &self,
        budget: &Budget,
        step: &str,
        call: runtime::CallFunctionOn,
    ) -> Result<runtime::RemoteObject, ActionError> {
        let evaluated = self.frame.cdp(budget, step, call).await?;
        if let Some(exception) = evaluated.exception_details {
            return Err(ActionError::internal(format!("{step}: {}", exception.message())));
        }
        Ok(evaluated.result)
    }
}

/// The origin of the document that owns the element `target` names (its
/// frame's, from the frame records the browser's events keep; the top
/// page's when it is in no iframe): where a secret typed into it goes.
pub(crate) async fn origin(
    tab: &Tab,
    target: &ElementTarget,
    budget: &Budget,
) -> Result<String, ActionError> {
    let element = resolve(tab, target, budget).await?;
    let frame_id = element.frame.frame_id.clone();
    let (origin, top) = tab.state(|s| {
        let origin = s.frames().get(&frame_id).map(|f| f.origin().to_owned());
        (origin, s.url().to_owned())
    });
    Ok(match origin {
        Some(origin) if !origin.is_empty() && origin != "null" => origin,
        // No record of the frame (the tab's own document before its first
        // navigation event): the tab's URL, when the element is in it.
        _ if frame_id == tab.target_id => top,
        // An iframe cdpilot has no origin for: nothing a secret can be
        // bound to.
        _ => "null".into(),
    })
}

/// The in-page waits against a window that draws no frames (tests).
#[cfg(test)]
#[path = "element_hidden.rs"]
mod hidden;
