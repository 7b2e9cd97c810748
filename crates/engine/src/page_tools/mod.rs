//! Tools a page offers (WebMCP): the record of what a tab's frames
//! registered (`document.modelContext.registerTool`, a form's `toolname`),
//! fed by the tab's event reader from the `WebMCP` domain's events, and
//! the invocations waiting for their answer. Pure bookkeeping, no browser:
//! the reader applies events, `browser_page_tool` and the snapshot read.
//!
//! Everything here is the page's: names, descriptions and schemas are
//! untrusted text, capped when recorded ([`MAX_TOOLS`] per tab, names,
//! descriptions and schemas by length) and shown only inside the page
//! content markers. A frame's tools go when it navigates or detaches.

pub mod listed;
pub mod schema;

use std::collections::HashMap;

use cdp::protocol::webmcp::{RemovedTool, Tool, ToolResponded};
use serde_json::Value;
use tokio::sync::oneshot;

/// Tools kept per tab; registrations past it are counted, not kept.
pub const MAX_TOOLS: usize = 64;
/// Longest tool name kept (a longer one is refused as a flood).
pub const MAX_NAME: usize = 64;
/// Characters of a description kept (the snapshot shows fewer).
pub const MAX_DESCRIPTION: usize = 1000;
/// Characters of a description the snapshot's list shows.
pub const LISTED_DESCRIPTION: usize = 160;
/// Characters of an input schema (as JSON) kept; a bigger one is dropped,
/// and the tool cannot be called (its arguments could not be checked).
pub const MAX_SCHEMA: usize = 16_000;
/// Answers that came before their caller asked for them (the reply to
/// `invokeTool` and the answer travel apart), kept at most.
const EARLY_KEPT: usize = 32;

/// Whether the browser has the WebMCP domain.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum Availability {
    /// Not asked yet (page tools off, or the tab is still starting).
    #[default]
    Unknown,
    /// `WebMCP.enable` succeeded.
    Available,
    /// The browser does not know the domain (no `--enable-features=WebMCP`).
    Absent,
}

/// One tool a frame registered.
#[derive(Debug, Clone)]
pub struct PageTool {
    /// Its name, as the page registered it.
    pub name: String,
    /// Capped at [`MAX_DESCRIPTION`].
    pub description: String,
    /// The tool's input schema; `None` when it gave none.
    pub schema: Option<Value>,
    /// Its schema was over [`MAX_SCHEMA`] and dropped.
    pub schema_too_large: bool,
    /// The page said it changes nothing (`annotations.readOnlyHint`).
    pub read_only: bool,
    /// A form's declarative tool (submitting it may navigate).
    pub declarative: bool,
    /// The frame that registered it.
    pub frame_id: String,
    /// The CDP session its frame's events came on (the tab's or an OOPIF's).
    pub session: String,
}

impl PageTool {
    /// Its arguments' names, from the schema's `properties` (at most 8).
    pub fn argument_names(&self) -> Vec<String> {
        let Some(Value::Object(props)) = self.schema.as_ref().and_then(|s| s.get("properties")) else {
            return Vec::new();
        };
        let mut names: Vec<String> = props.keys().take(8).map(|k| cap(k, 32)).collect();
        if props.len() > 8 {
            names.push("…".into());
        }
        names
    }
}

/// A tool as offered to a client that shows page tools as tools of its
/// own (`[tools] page_tools = "expose"`).
#[derive(Debug, Clone, PartialEq)]
pub struct Offered {
    /// Its name, as the page registered it.
    pub name: String,
    /// `top`, or the frame's label (`f2`) as the snapshot shows it.
    pub frame: String,
    /// Every word the page wrote about it, delimited as page text
    /// (`content::page`): its description (capped at
    /// [`LISTED_DESCRIPTION`]), its claims (`readOnlyHint`), its schema's
    /// words ([`listed::split`]).
    pub page_words: String,
    /// Its input schema's shape ([`listed::split`]), when it gave one small
    /// enough to keep.
    pub schema: Option<Value>,
}

/// Characters of a schema's own words shown with an exposed tool.
pub const LISTED_SCHEMA_WORDS: usize = 600;

impl Offered {
    /// `tool` of `frame` as a tool list shows it.
    pub fn of(tool: &PageTool, frame: String) -> Offered {
        let mut words = cap(&tool.description, LISTED_DESCRIPTION);
        if tool.read_only {
            words.push_str(" [the page claims: read-only]");
        }
        let schema = tool.schema.as_ref().map(|s| {
            let (shape, other) = listed::split(s);
            if !other.is_empty() {
                let other = cap(&Value::Object(other).to_string(), LISTED_SCHEMA_WORDS);
                words.push_str(&format!(" [its schema's words: {other}]"));
            }
            shape
        });
        Offered {
            name: tool.name.clone(),
            frame,
            page_words: crate::content::page(&words),
            schema,
        }
    }
}

/// An invocation waiting for `toolResponded` (or its tool's removal).
#[derive(Debug)]
struct Pending {
    frame_id: String,
    name: String,
    answer: oneshot::Sender<ToolResponded>,
}

/// A tab's page tools and its invocations under way.
#[derive(Debug, Default)]
pub struct PageTools {
    tools: Vec<PageTool>,
    /// Registrations refused since the main document began (over the cap,
    /// or names past [`MAX_NAME`]).
    refused: usize,
    availability: Availability,
    /// The "not available" note was given already.
    absence_said: bool,
    pending: HashMap<String, Pending>,
    early: Vec<ToolResponded>,
    /// Moves on whenever the set of tools may have changed (a registration,
    /// a removal, a frame's document replaced or gone): the tab's reader
    /// tells the session when it moved (`page_tools_changed`).
    generation: u64,
}

/// The status a removed tool's pending invocation is answered with.
pub const REMOVED: &str = "Removed";

impl PageTools {
    /// The tools, oldest registration first.
    pub fn tools(&self) -> &[PageTool] {
        &self.tools
    }

    /// Registrations refused since the main document began (the cap).
    pub fn refused(&self) -> usize {
        self.refused
    }

    /// Moves on whenever the set of tools may have changed.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Whether the browser has the domain.
    pub fn availability(&self) -> Availability {
        self.availability
    }

    /// Records what `WebMCP.enable` said.
    pub fn set_availability(&mut self, availability: Availability) {
        self.availability = availability;
    }

    /// True the first time it is asked while the domain is absent: the
    /// "not available in this browser" note is said once per tab.
    pub fn say_absence(&mut self) -> bool {
        if self.availability != Availability::Absent || self.absence_said {
            return false;
        }
        self.absence_said = true;
        true
    }

    /// Applies `toolsAdded` from `session`. A tool registered again
    /// (`WebMCP.enable` repeats the registered ones) replaces its record.
    pub fn added(&mut self, session: &str, tools: Vec<Tool>) {
        self.generation += 1;
        for tool in tools {
            if let Some(known) = self
                .tools
                .iter_mut()
                .find(|t| t.frame_id == tool.frame_id && t.name == tool.name)
            {
                *known = record(session, tool);
                continue;
            }
            if self.tools.len() >= MAX_TOOLS || tool.name.chars().count() > MAX_NAME || tool.name.is_empty() {
                self.refused += 1;
                continue;
            }
            self.tools.push(record(session, tool));
        }
    }

    /// Applies `toolsRemoved`: the tools go, and a call waiting on one is
    /// answered with [`REMOVED`].
    pub fn removed(&mut self, tools: &[RemovedTool]) {
        self.generation += 1;
        for gone in tools {
            self.tools
                .retain(|t| !(t.frame_id == gone.frame_id && t.name == gone.name));
            self.answer_waiting(|p| p.frame_id == gone.frame_id && p.name == gone.name);
        }
    }

    /// A frame's document was replaced: its tools go (all of them when it
    /// is the main frame, whose new document starts a new count).
    pub fn frame_navigated(&mut self, frame_id: &str, main: bool) {
        let before = self.tools.len();
        self.drop_frame_tools(frame_id, main);
        if self.tools.len() != before {
            self.generation += 1;
        }
    }

    fn drop_frame_tools(&mut self, frame_id: &str, main: bool) {
        if main {
            self.tools.clear();
            self.refused = 0;
            self.answer_waiting(|_| true);
        } else {
            self.tools.retain(|t| t.frame_id != frame_id);
            self.answer_waiting(|p| p.frame_id == frame_id);
        }
    }

    /// A frame's session (an OOPIF's) went away: its tools go.
    pub fn session_detached(&mut self, session: &str) {
        let frames: Vec<String> = self
            .tools
            .iter()
            .filter(|t| t.session == session)
            .map(|t| t.frame_id.clone())
            .collect();
        if !frames.is_empty() {
            self.generation += 1;
        }
        self.tools.retain(|t| t.session != session);
        self.answer_waiting(|p| frames.contains(&p.frame_id));
    }

    /// Applies `toolResponded`: to the call waiting for it, or kept a
    /// moment for the call about to ask.
    pub fn responded(&mut self, answer: ToolResponded) {
        match self.pending.remove(&answer.invocation_id) {
            Some(pending) => {
                let _ = pending.answer.send(answer);
            }
            None => {
                if self.early.len() >= EARLY_KEPT {
                    self.early.remove(0);
                }
                self.early.push(answer);
            }
        }
    }

    /// The answer to invocation `id` of `tool`, when it comes.
    pub fn expect(&mut self, id: &str, tool: &PageTool) -> oneshot::Receiver<ToolResponded> {
        let (send, receive) = oneshot::channel();
        if let Some(at) = self.early.iter().position(|a| a.invocation_id == id) {
            let _ = send.send(self.early.remove(at));
            return receive;
        }
        if !self
            .tools
            .iter()
            .any(|t| t.frame_id == tool.frame_id && t.name == tool.name)
        {
            let _ = send.send(removed(id));
            return receive;
        }
        self.pending.insert(
            id.to_owned(),
            Pending {
                frame_id: tool.frame_id.clone(),
                name: tool.name.clone(),
                answer: send,
            },
        );
        receive
    }

    /// Forgets invocation `id` (its caller stopped waiting).
    pub fn forget(&mut self, id: &str) {
        self.pending.remove(id);
    }

    fn answer_waiting(&mut self, which: impl Fn(&Pending) -> bool) {
        let ids: Vec<String> = self
            .pending
            .iter()
            .filter(|(_, p)| which(p))
            .map(|(id, _)| id.clone())
            .collect();
        for id in ids {
            if let Some(pending) = self.pending.remove(&id) {
                let _ = pending.answer.send(removed(&id));
            }
        }
    }
}

fn removed(id: &str) -> ToolResponded {
    ToolResponded {
        invocation_id: id.to_owned(),
        status: REMOVED.into(),
        ..Default::default()
    }
}

fn record(session: &str, tool: Tool) -> PageTool {
    let annotations = tool.annotations.unwrap_or_default();
    let schema_len = tool
        .input_schema
        .as_ref()
        .map(|s| s.to_string().len())
        .unwrap_or(0);
    let too_large = schema_len > MAX_SCHEMA;
    PageTool {
        description: cap(&tool.description, MAX_DESCRIPTION),
        schema: if too_large { None } else { tool.input_schema },
        schema_too_large: too_large,
        read_only: annotations.read_only,
        declarative: tool.backend_node_id.is_some(),
        frame_id: tool.frame_id,
        session: session.to_owned(),
        name: tool.name,
    }
}

/// `text` cut to `max` characters (an ellipsis says it was), on one line.
pub fn cap(text: &str, max: usize) -> String {
    let one_line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if one_line.chars().count() <= max {
        return one_line;
    }
    let mut out: String = one_line.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// `text` cut to `max` characters, lines kept (a tool's answer).
pub fn cap_block(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max).collect();
    out.push_str("… (cut)");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, frame: &str) -> Tool {
        Tool {
            name: name.into(),
            description: "d".into(),
            frame_id: frame.into(),
            input_schema: Some(json!({"type": "object", "properties": {"sku": {}, "qty": {}}})),
            ..Default::default()
        }
    }

    #[test]
    fn registrations_past_the_cap_are_counted_not_kept() {
        let mut tools = PageTools::default();
        let many: Vec<Tool> = (0..MAX_TOOLS + 5).map(|i| tool(&format!("t{i}"), "F")).collect();
        tools.added("", many);
        assert_eq!((tools.tools().len(), tools.refused()), (MAX_TOOLS, 5));
        // Enabling again repeats them: not counted twice.
        tools.added("", vec![tool("t0", "F")]);
        assert_eq!((tools.tools().len(), tools.refused()), (MAX_TOOLS, 5));
        tools.frame_navigated("F", true);
        assert_eq!((tools.tools().len(), tools.refused()), (0, 0));
    }

    #[test]
    fn a_frames_navigation_drops_its_tools_and_answers_its_waiting_calls() {
        let mut tools = PageTools::default();
        tools.added("", vec![tool("a", "TOP")]);
        tools.added("S1", vec![tool("b", "CHILD")]);
        let b = tools.tools()[1].clone();
        let mut names = b.argument_names();
        names.sort();
        assert_eq!(names, ["qty", "sku"]);
        let mut waiting = tools.expect("I1", &b);
        tools.frame_navigated("CHILD", false);
        assert_eq!(tools.tools().len(), 1);
        assert_eq!(waiting.try_recv().unwrap().status, REMOVED);
    }

    #[test]
    fn an_answer_that_comes_first_waits_for_its_caller() {
        let mut tools = PageTools::default();
        tools.added("", vec![tool("a", "TOP")]);
        tools.responded(ToolResponded {
            invocation_id: "I".into(),
            status: "Completed".into(),
            ..Default::default()
        });
        let a = tools.tools()[0].clone();
        assert_eq!(tools.expect("I", &a).try_recv().unwrap().status, "Completed");
    }

    #[test]
    fn the_absence_is_said_once() {
        let mut tools = PageTools::default();
        assert!(!tools.say_absence());
        tools.set_availability(Availability::Absent);
        assert!(tools.say_absence());
        assert!(!tools.say_absence());
    }
}
