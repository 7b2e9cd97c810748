//! Which elements listen for input, from the browser's own record (issue
//! 35): an empty `<span>` painted by CSS with a jQuery click handler, a
//! heading with an inline `ondblclick`, a word with its own listener
//! inside a clickable bar say nothing in their markup or cursor. Before a
//! frame's snapshot, `DOMDebugger.getEventListeners` on its document (the
//! whole tree, shadow roots included) lists the nodes with input
//! listeners; those not marked yet are resolved in cdpilot's world and
//! handed to the serializer (`listen`), which gives them a ref (a
//! container whose listener delegates to items that have refs gets none).
//! Inline `on…` attribute handlers are left out: the serializer reads the
//! attribute itself, for free. A jQuery listener (its dispatcher) is asked,
//! in the page's world, for the selectors it delegates to (`$(list).on(
//! 'click', '.item', fn)`, kept in jQuery's data on the element); the
//! serializer marks the container's descendants that match them, at each
//! snapshot. Other libraries' delegation cannot be told from the record.
//!
//! Cost: the scan runs only when the serializer says an element was added
//! to the document since the last one (a `MutationObserver` in its world:
//! `listenersStale`, answered to the snapshot's own call in place of the
//! snapshot), so a snapshot of an unchanged page, or of one whose text
//! alone changed (a counter, a status line), pays nothing for it; a node
//! is resolved once per document. A listener added to an existing node
//! without an element added is seen at the next such change. Failures here never fail the snapshot: it is taken with the
//! cheap signals alone.

use std::collections::{HashMap, HashSet};

use cdp::protocol::{dom, dom_debugger, runtime};
use futures_util::future::join_all;
use serde_json::{json, Value};

use crate::tab::{FrameRef, Tab};
use crate::timing;
use crate::{ActionError, Budget};

/// Events that say "an agent may act here": clicks, presses, touches,
/// keys. Hover and scroll listeners (analytics, lazy loading) do not.
const INPUT: &[&str] = &[
    "click",
    "dblclick",
    "auxclick",
    "contextmenu",
    "mousedown",
    "mouseup",
    "pointerdown",
    "pointerup",
    "touchstart",
    "touchend",
    "keydown",
    "keyup",
    "keypress",
];

/// At most this many nodes are resolved in one scan (each is a round
/// trip, sent together; 1,667 took 0.3–7 s on this 2-core machine): a
/// page with more listeners than that marks most of them by the cheap
/// signals.
const MAX_NEW: usize = 500;

/// At most this many jQuery containers are asked for their delegated
/// selectors in one scan (two round trips each, sent together).
const MAX_DELEGATING: usize = 50;

/// Asked of a jQuery container in the page's world: the selectors its
/// input handlers delegate to. jQuery 2 and later keep their data in a
/// property `jQuery<digits>` of the element itself (bundled copies too);
/// only data properties are read (no getter runs) and jQuery 1's
/// `jQuery._data` is not called. Run in the page's world, it uses the
/// page's built-ins: a page that replaced `Object.getOwnPropertyNames`
/// sees when the scan runs (nothing more: it gets no handle on cdpilot's
/// world, and what comes back is only selector strings).
const DELEGATED: &str = r#"function (types) {
  const out = [];
  const add = (events) => {
    for (const type of types) {
      const handlers = value(events, type);
      if (!Array.isArray(handlers)) continue;
      for (let i = 0; i < handlers.length && i < 100; i++) {
        const selector = value(handlers[i], 'selector');
        if (typeof selector === 'string' && selector && !out.includes(selector)) out.push(selector);
      }
    }
  };
  const value = (object, key) => {
    const found = object && Object.getOwnPropertyDescriptor(object, key);
    return found && 'value' in found ? found.value : undefined;
  };
  for (const key of Object.getOwnPropertyNames(this)) {
    if (key.startsWith('jQuery')) add(value(value(this, key), 'events'));
  }
  return out.slice(0, 20);
}"#;

/// The object group the scan's remote objects are released with.
const GROUP: &str = "cdpilot-listeners";

/// At most this many places in the page's scripts are asked whether their
/// listener is jQuery's dispatcher, when the record without the handlers
/// is enough (two round trips each, sent together); past it the record is
/// read again with every handler's source.
const MAX_PLACES: usize = 20;

/// Marks `frame`'s elements with input listeners in its serializer, whose
/// tree changed since the last scan: the serializer answered the
/// snapshot's first call with the nodes it has `marked` already (their
/// backend ids) and how many of its elements carry each `inline` handler
/// attribute (`{"click": 1667}`), instead of a snapshot. Errors are the
/// caller's to drop.
///
/// The browser's record is read first without the handlers' functions (a
/// third of the time on a page of 1,667 `<button onclick>`s: with them,
/// Chrome wraps each function twice with its source). Inline handlers are
/// told apart by count: each is a script of its own, so when, for every
/// input event, the listeners that are their script's only one are as
/// many as the elements with that attribute, those are the inline ones.
/// Otherwise (a lone `addEventListener` in a script of its own, an inline
/// handler that did not compile, a frame inside) the record is read again
/// with the functions, which tell them apart one by one.
pub(super) async fn mark(
    tab: &Tab,
    frame: &FrameRef,
    budget: &Budget,
    marked: &[Value],
    inline: &Value,
) -> Result<(), ActionError> {
    let step = "reading the page's event listeners";
    let marked: HashSet<i64> = marked.iter().filter_map(Value::as_i64).collect();
    let world = tab.world_of(frame, budget).await?;
    let session = &frame.session;
    // Asked of the page's own world's `document`: each listener's function
    // comes back in the world it belongs to, to tell inline attribute
    // handlers apart. Asked of cdpilot's world's instead, the page's
    // functions were handed across worlds, and on heavy pages (a news
    // site's thousands of handlers) the renderer crashed.
    let document = tab
        .evaluate_in(frame, budget, step, "document", false, false)
        .await?;
    let Some(document) = document.object_id else {
        return Ok(());
    };
    let described = budget
        .cdp(
            step,
            session,
            dom::DescribeNode {
                object_id: Some(document.clone()),
                backend_node_id: None,
            },
        )
        .await;
    let _ = budget
        .cdp(step, session, runtime::ReleaseObject { object_id: document })
        .await;
    let document = described?.node.backend_node_id;
    let result = async {
        let plain = record(budget, session, document, Reach::Document).await?;
        let (fresh, delegating) = match by_count(&plain, inline, &marked) {
            Some(found) if found.places.len() <= MAX_PLACES => {
                let jquery =
                    join_all(found.places.iter().map(|place| is_jquery(budget, session, place))).await;
                let delegating = found
                    .places
                    .iter()
                    .zip(jquery)
                    .filter(|(_, jquery)| *jquery)
                    .flat_map(|(place, _)| place.nodes.iter().copied())
                    .collect();
                (found.fresh, delegating)
            }
            _ => by_source(
                &record(budget, session, document, Reach::DocumentWithSources).await?,
                &marked,
            ),
        };
        hand_over(budget, session, world, fresh, delegating).await
    }
    .await;
    let _ = budget
        .cdp(
            step,
            session,
            runtime::ReleaseObjectGroup {
                object_group: GROUP.into(),
            },
        )
        .await;
    result
}

/// How much of the browser's record is read: the listeners in a whole
/// document (shadow roots and frames inside included), without their
/// functions or with them (in the scan's group), or one node's own with
/// their functions.
#[derive(Clone, Copy, PartialEq)]
enum Reach {
    Document,
    DocumentWithSources,
    NodeWithSources,
}

/// The browser's record of the listeners on `node`, as far as `reach`.
async fn record(
    budget: &Budget,
    session: &cdp::Session,
    node: i64,
    reach: Reach,
) -> Result<Vec<dom_debugger::EventListener>, ActionError> {
    let step = "reading the page's event listeners";
    let resolved = budget
        .cdp(
            step,
            session,
            dom::ResolveNode {
                backend_node_id: node,
                execution_context_id: None,
                object_group: (reach != Reach::Document).then(|| GROUP.into()),
            },
        )
        .await?
        .object
        .object_id;
    let Some(object_id) = resolved else {
        return Ok(Vec::new());
    };
    let whole = reach != Reach::NodeWithSources;
    let listed = timing::timed(
        match reach {
            Reach::Document => "snapshot.listeners.record",
            Reach::DocumentWithSources => "snapshot.listeners.sources",
            Reach::NodeWithSources => "snapshot.listeners.node",
        },
        budget.cdp(
            step,
            session,
            dom_debugger::GetEventListeners {
                object_id: object_id.clone(),
                depth: if whole { -1 } else { 0 },
                pierce: whole,
            },
        ),
    )
    .await;
    if reach == Reach::Document {
        // Not in the group the scan releases at its end.
        let _ = budget
            .cdp(step, session, runtime::ReleaseObject { object_id })
            .await;
    }
    Ok(listed?.listeners)
}

/// Where a script's listener was compiled, and the unmarked nodes it
/// listens on.
#[derive(Debug, PartialEq)]
struct Place {
    script: String,
    line: i64,
    column: i64,
    kind: String,
    nodes: Vec<i64>,
}

impl Place {
    /// Whether `listener` was compiled here.
    fn compiled(&self, listener: &dom_debugger::EventListener) -> bool {
        self.script == listener.script_id
            && self.line == listener.line_number
            && self.column == listener.column_number
            && self.kind == listener.kind
    }
}

/// What the record without handlers says, when it is enough.
#[derive(Debug, PartialEq)]
struct ByCount {
    /// The nodes to mark, in the record's order.
    fresh: Vec<i64>,
    /// The places in the scripts the fresh nodes' listeners come from
    /// (asked whether each is jQuery's dispatcher).
    places: Vec<Place>,
}

/// The nodes with input listeners from scripts, told from inline handlers
/// by count (see `mark`); none when the counts do not say.
fn by_count(
    listeners: &[dom_debugger::EventListener],
    inline: &Value,
    marked: &HashSet<i64>,
) -> Option<ByCount> {
    let mut uses: HashMap<&str, usize> = HashMap::new();
    for listener in listeners {
        *uses.entry(listener.script_id.as_str()).or_default() += 1;
    }
    let alone = |listener: &dom_debugger::EventListener| uses.get(listener.script_id.as_str()) == Some(&1);
    for kind in INPUT {
        let lone = listeners
            .iter()
            .filter(|l| l.kind == *kind && l.backend_node_id.is_some() && alone(l))
            .count();
        let attributes = inline.get(kind).and_then(Value::as_u64).unwrap_or(0);
        if lone as u64 != attributes {
            return None;
        }
    }
    let mut found = ByCount {
        fresh: Vec::new(),
        places: Vec::new(),
    };
    // (Indexes and seen sets: a page's scripts may listen on thousands of
    // nodes from one place.)
    let mut fresh_seen = HashSet::new();
    let mut place_of: HashMap<(&str, i64, i64, &str), usize> = HashMap::new();
    let mut placed = HashSet::new();
    for listener in listeners {
        let Some(node) = listener.backend_node_id else {
            continue;
        };
        if !INPUT.contains(&listener.kind.as_str()) || alone(listener) || marked.contains(&node) {
            continue;
        }
        if fresh_seen.insert(node) {
            found.fresh.push(node);
        }
        let key = (
            listener.script_id.as_str(),
            listener.line_number,
            listener.column_number,
            listener.kind.as_str(),
        );
        let at = *place_of.entry(key).or_insert_with(|| {
            found.places.push(Place {
                script: listener.script_id.clone(),
                line: listener.line_number,
                column: listener.column_number,
                kind: listener.kind.clone(),
                nodes: Vec::new(),
            });
            found.places.len() - 1
        });
        if placed.insert((at, node)) {
            found.places[at].nodes.push(node);
        }
    }
    Some(found)
}

/// The nodes with input listeners from scripts, told from inline handlers
/// by each handler's source, and those of them jQuery listens on.
fn by_source(listeners: &[dom_debugger::EventListener], marked: &HashSet<i64>) -> (Vec<i64>, Vec<i64>) {
    let mut fresh: Vec<i64> = Vec::new();
    let mut delegating: Vec<i64> = Vec::new();
    let (mut fresh_seen, mut delegating_seen) = (HashSet::new(), HashSet::new());
    for listener in listeners {
        let Some(node) = listener.backend_node_id else {
            continue;
        };
        if !INPUT.contains(&listener.kind.as_str()) || inline(listener) || marked.contains(&node) {
            continue;
        }
        if fresh_seen.insert(node) {
            fresh.push(node);
        }
        if jquery(listener) && delegating_seen.insert(node) {
            delegating.push(node);
        }
    }
    (fresh, delegating)
}

/// Whether the listener compiled at `place` is jQuery's dispatcher: its
/// first node's own listeners are read with their functions.
async fn is_jquery(budget: &Budget, session: &cdp::Session, place: &Place) -> bool {
    let Some(&node) = place.nodes.first() else {
        return false;
    };
    let Ok(own) = record(budget, session, node, Reach::NodeWithSources).await else {
        return false;
    };
    own.iter().any(|l| place.compiled(l) && jquery(l))
}

/// Hands the `fresh` nodes to `world`'s serializer (at most `MAX_NEW`),
/// with the selectors the jQuery containers among them (`delegating`)
/// delegate to.
async fn hand_over(
    budget: &Budget,
    session: &cdp::Session,
    world: i64,
    mut fresh: Vec<i64>,
    mut delegating: Vec<i64>,
) -> Result<(), ActionError> {
    let step = "reading the page's event listeners";
    fresh.truncate(MAX_NEW);
    delegating.retain(|node| fresh.contains(node));
    delegating.truncate(MAX_DELEGATING);
    if fresh.is_empty() {
        return Ok(());
    }
    let delegated = join_all(delegating.iter().map(|&node| selectors(budget, session, node))).await;
    // Resolved in cdpilot's world; a node of another frame's document
    // (pierce) does not resolve there and is left out.
    let resolved = join_all(fresh.iter().map(|&node| {
        budget.cdp(
            step,
            session,
            dom::ResolveNode {
                backend_node_id: node,
                execution_context_id: Some(world),
                object_group: Some(GROUP.into()),
            },
        )
    }))
    .await;
    let mut ids = Vec::new();
    let mut arguments = vec![runtime::CallArgument {
        value: Some(json!(null)),
        object_id: None,
    }];
    for (node, found) in fresh.iter().zip(resolved) {
        if let Ok(Some(object_id)) = found.map(|r| r.object.object_id) {
            ids.push(*node);
            arguments.push(runtime::CallArgument {
                value: None,
                object_id: Some(object_id),
            });
        }
    }
    if ids.is_empty() {
        return Ok(());
    }
    arguments[0].value = Some(json!(ids));
    // `[at, selectors]`: the container's place among the elements.
    let delegated: Vec<Value> = delegating
        .iter()
        .zip(delegated)
        .filter(|(_, selectors)| !selectors.is_empty())
        .filter_map(|(node, selectors)| {
            let at = ids.iter().position(|id| id == node)?;
            Some(json!([at, selectors]))
        })
        .collect();
    arguments.insert(
        1,
        runtime::CallArgument {
            value: Some(json!(delegated)),
            object_id: None,
        },
    );
    let first = arguments[2].object_id.clone();
    let called = budget
        .cdp(
            step,
            session,
            runtime::CallFunctionOn {
                function_declaration:
                    "function (ids, delegated, ...elements) { globalThis.__cdpilot?.listen?.(ids, elements, delegated); }"
                        .into(),
                object_id: first,
                execution_context_id: None,
                arguments,
                return_by_value: true,
                await_promise: false,
                user_gesture: false,
            },
        )
        .await?;
    if let Some(exception) = called.exception_details {
        return Err(ActionError::internal(format!("{step}: {}", exception.message())));
    }
    Ok(())
}

/// The selectors the jQuery container `node` delegates input to, asked in
/// the page's world (resolved into the scan's object group); none when it
/// delegates nothing or cannot be asked.
async fn selectors(budget: &Budget, session: &cdp::Session, node: i64) -> Vec<String> {
    let step = "reading the page's delegated handlers";
    let Ok(resolved) = budget
        .cdp(
            step,
            session,
            dom::ResolveNode {
                backend_node_id: node,
                execution_context_id: None,
                object_group: Some(GROUP.into()),
            },
        )
        .await
    else {
        return Vec::new();
    };
    let Some(object_id) = resolved.object.object_id else {
        return Vec::new();
    };
    let called = budget
        .cdp(
            step,
            session,
            runtime::CallFunctionOn {
                function_declaration: DELEGATED.into(),
                object_id: Some(object_id),
                execution_context_id: None,
                arguments: vec![runtime::CallArgument {
                    value: Some(json!(INPUT)),
                    object_id: None,
                }],
                return_by_value: true,
                await_promise: false,
                user_gesture: false,
            },
        )
        .await;
    called
        .ok()
        .and_then(|c| c.result.value)
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_default()
}

/// Whether the listener is jQuery's dispatcher (`jQuery.event.dispatch`
/// behind every handler jQuery attaches, minified or not): its
/// delegated selectors can be asked of jQuery's data.
fn jquery(listener: &dom_debugger::EventListener) -> bool {
    listener
        .handler
        .as_ref()
        .and_then(|h| h.description.as_deref())
        .is_some_and(|source| source.contains("event.dispatch.apply"))
}

/// Whether the listener is an inline `on…` attribute's (Chromium compiles
/// one as `function onclick(event) {…}`): the serializer sees the
/// attribute itself, and resolving each would cost a page of 1,667
/// `<button onclick>`s seconds.
fn inline(listener: &dom_debugger::EventListener) -> bool {
    let source = listener
        .handler
        .as_ref()
        .and_then(|h| h.description.as_deref())
        .unwrap_or_default();
    source
        .strip_prefix("function on")
        .and_then(|rest| rest.strip_prefix(listener.kind.as_str()))
        .is_some_and(|rest| rest.starts_with("(event)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listener(kind: &str, source: &str) -> dom_debugger::EventListener {
        dom_debugger::EventListener {
            kind: kind.into(),
            backend_node_id: Some(1),
            handler: Some(runtime::RemoteObject {
                description: Some(source.into()),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    /// A listener as the record without handlers gives it.
    fn at(kind: &str, node: i64, script: &str, column: i64) -> dom_debugger::EventListener {
        dom_debugger::EventListener {
            kind: kind.into(),
            backend_node_id: Some(node),
            script_id: script.into(),
            column_number: column,
            ..Default::default()
        }
    }

    #[test]
    fn lone_listeners_as_many_as_the_inline_attributes_are_those_and_a_scripts_are_kept_by_place() {
        let record = [
            at("click", 10, "s1", 179),
            at("click", 11, "s2", 358),
            // One script's listeners on two nodes and a marked one.
            at("mousedown", 12, "app", 40),
            at("mousedown", 13, "app", 40),
            at("keydown", 12, "app", 90),
            at("click", 14, "app", 40),
            // Not input: a lone one counts for nothing.
            at("mouseover", 15, "hover", 1),
        ];
        let marked = HashSet::from([14]);
        let found = by_count(&record, &json!({"click": 2}), &marked).expect("the counts say");
        assert_eq!(found.fresh, vec![12, 13]);
        let places: Vec<(&str, i64, &str, &[i64])> = found
            .places
            .iter()
            .map(|p| (p.script.as_str(), p.column, p.kind.as_str(), p.nodes.as_slice()))
            .collect();
        assert_eq!(
            places,
            vec![
                ("app", 40, "mousedown", &[12, 13][..]),
                ("app", 90, "keydown", &[12][..])
            ]
        );
    }

    #[test]
    fn a_lone_script_listener_or_an_uncompiled_inline_handler_makes_the_counts_disagree() {
        // Two inline handlers and a script's only listener: three lone
        // ones for two attributes.
        let record = [
            at("click", 10, "s1", 1),
            at("click", 11, "s2", 2),
            at("click", 12, "one", 3),
        ];
        assert_eq!(by_count(&record, &json!({"click": 2}), &HashSet::new()), None);
        // An attribute whose handler did not compile is not in the record.
        assert_eq!(
            by_count(&record[..1], &json!({"click": 2}), &HashSet::new()),
            None
        );
        // No answer from the serializer: any lone input listener disagrees.
        assert_eq!(by_count(&record[..1], &Value::Null, &HashSet::new()), None);
        assert!(by_count(&[at("mouseover", 1, "x", 0)], &Value::Null, &HashSet::new()).is_some());
    }

    #[test]
    fn an_inline_attribute_handler_is_told_from_a_script_one() {
        assert!(inline(&listener(
            "click",
            "function onclick(event) {\nthis.dataset.n=1\n}"
        )));
        assert!(inline(&listener(
            "dblclick",
            "function ondblclick(event) {\nx()\n}"
        )));
        assert!(!inline(&listener("click", "function (e) { go(); }")));
        assert!(!inline(&listener("click", "(e) => go()")));
        assert!(!inline(&listener("mousedown", "function onclick(event) {}")));
    }

    #[test]
    fn jquerys_dispatcher_is_told_minified_or_not() {
        assert!(jquery(&listener(
            "click",
            "function(e){return void 0!==S&&S.event.triggered!==e.type?S.event.dispatch.apply(t,arguments):void 0}"
        )));
        assert!(jquery(&listener(
            "click",
            "function( e ) {\n\treturn typeof jQuery !== \"undefined\" && jQuery.event.triggered !== e.type ?\n\t\tjQuery.event.dispatch.apply( elem, arguments ) : undefined;\n}"
        )));
        assert!(!jquery(&listener("click", "function (e) { go(); }")));
    }
}
