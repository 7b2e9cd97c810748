//! `browser_snapshot`: the page as an indented accessibility tree with refs.
//!
//! The tree is built by an in-page serializer (`scripts/serializer.js`) run in
//! cdpilot's isolated world, not from `Accessibility.getFullAXTree`: on a
//! 5,000-control page the full AX tree took 1.2–1.6 s and 18 MB, an in-page
//! walk ~15 ms. The serializer keeps the element↔ref map in that world, so a
//! ref stays the same for the same element across snapshots of one document.

use std::future::Future;
use std::pin::Pin;

use cdp::protocol::dom;
use serde::Deserialize;
use serde_json::json;

use crate::tab::{FrameRef, Tab};
use crate::timing;
use crate::{ActionError, ActionOutput, Budget, ErrorCode};

mod diff;
mod find;
mod listeners;
mod prime;
mod sections;
mod view;

pub use prime::prime;
pub use view::{check, latest_refs, View};

use crate::scripts::SERIALIZER;

/// Frames nested deeper than this are listed but not expanded.
const MAX_FRAME_DEPTH: usize = 3;
/// At most this many frames are expanded in one snapshot.
const MAX_FRAMES: usize = 30;

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Serialized {
    text: String,
    /// Elements listed.
    elements: u64,
    /// Elements counted, listed or before `start` (an earlier page's).
    seen: u64,
    refs: u64,
    truncated: bool,
    /// Refs of the frame elements, whose markers await their content.
    frames: Vec<String>,
    /// Refs of frame elements an earlier page listed: their content may
    /// still be on this page (it comes after the frame's document).
    #[serde(rename = "earlierFrames")]
    earlier_frames: Vec<String>,
    /// Text lines cut at the serializer's cap.
    cut: u64,
    /// Field values cut at the serializer's cap.
    #[serde(rename = "valuesCut")]
    values_cut: u64,
    /// The serializer's next ref number in this frame.
    next: u64,
    url: String,
    title: String,
    error: Option<String>,
    message: Option<String>,
    /// The serializer's own time in the page.
    ms: f64,
    /// The page was quiet since the last snapshot with these options,
    /// which the serializer answered again.
    reused: bool,
}

/// One snapshot's walk over the tab's frames.
struct Walk<'a> {
    tab: &'a Tab,
    budget: &'a Budget,
    /// Elements still allowed by `max_elements`.
    remaining: u64,
    /// Elements still to pass over before listing (`start`).
    skip: u64,
    elements: u64,
    /// Text lines cut at the serializer's cap.
    cut: u64,
    /// Field values cut at the serializer's cap.
    values_cut: u64,
    refs: u64,
    truncated: bool,
    frames_expanded: usize,
}

pub async fn run(
    tab: &Tab,
    view: &View<'_>,
    max_elements: u32,
    budget: &Budget,
) -> Result<ActionOutput, ActionError> {
    if let Some(blocked) = blocked_by_dialog(tab) {
        return Ok(blocked);
    }
    let document = tab.state(|s| s.document());
    let root = match view.frame {
        None => tab.main_frame(),
        Some(name) => find_frame(tab, name)?,
    };
    let start = u64::from(view.start);
    let mut walk = Walk {
        tab,
        budget,
        remaining: max_elements as u64,
        skip: start,
        elements: 0,
        cut: 0,
        values_cut: 0,
        refs: 0,
        truncated: false,
        frames_expanded: 0,
    };
    // The obstacle probe is sent beside the serializer: the page runs them
    // one after the other, but the two round trips overlap.
    let status = tab.state(|s| s.current_status());
    let (snap, obstacle) = tokio::join!(
        timing::timed("snapshot.frames", walk.frame(&root, view.selector, 0)),
        timing::timed("snapshot.obstacle", tab.obstacle(budget, status)),
    );
    let (snap, obstacle) = (snap?, obstacle?);
    // Refs are valid for the document they were issued in; if a navigation
    // raced the snapshot, the world was replaced and the evaluate retried,
    // so record the document the tab is in now.
    tab.state(|s| s.refs_issued(document));

    let (tree, shown) = view::shape(tab, view, &root.frame_id, &snap.text);
    // The title, the tree and the sections (dialog messages, console
    // lines) are the page's words: enclosed in the session's markers, one
    // block; cdpilot's own notes follow it, outside.
    let mut page = format!("Title: {}\n\n", snap.title);
    if start > 0 {
        page += &match walk.elements {
            0 => format!("(No elements from start: {start} on: the page lists fewer.)\n"),
            n => format!(
                "(Elements {start} to {}: the ones before are on earlier pages of this snapshot.)\n",
                start + n - 1
            ),
        };
    }
    page += &tree;
    let (section_text, section_data) = sections::render(tab);
    page += &section_text;
    let mut text = format!("URL: {}\n{}", snap.url, crate::content::page(&page));
    let next_start = walk.truncated.then(|| start + walk.elements);
    if let Some(next) = next_start {
        text += &format!(
            "\n[truncated after {} elements: continue with browser_snapshot start: {next} (refs stay the same), \
             look for something with find, scope with selector or frame, or raise max_elements]",
            walk.elements
        );
    }
    if walk.cut > 0 {
        text += &format!(
            "\n[{} long text passages were cut (marked \"text cut\"): browser_extract reads the page's text whole]",
            walk.cut
        );
    }
    if walk.values_cut > 0 {
        text += &format!(
            "\n[{} long field values were cut (marked \"value cut\"): read the rest with browser_evaluate, \
             the field's ref and function \"(el) => (el.value ?? el.textContent).slice(4000)\"]",
            walk.values_cut
        );
    }
    if let Some(o) = &obstacle {
        text += &format!(
            "\n\nobstacle: {} ({} confidence): {}",
            o.kind, o.confidence, o.message
        );
    }
    let mut data = json!({
        "url": snap.url,
        "title": snap.title,
        "ref_count": walk.refs,
        "element_count": walk.elements,
        "truncated": walk.truncated,
        "start": start,
        "next_start": next_start,
    });
    for (key, value) in shown {
        data[key] = value;
    }
    for (key, value) in section_data {
        data[key] = value;
    }
    Ok(ActionOutput::new(text, data).with_obstacle(obstacle))
}

/// While a dialog blocks the page its scripts cannot run, so the snapshot
/// is only what the supervisor knows: the address, the dialog, the frames.
fn blocked_by_dialog(tab: &Tab) -> Option<ActionOutput> {
    let url = tab.state(|s| s.dialogs().is_blocked().then(|| s.url().to_owned()))?;
    let mut text = format!(
        "URL: {url}\n\n(The page is blocked by a dialog: answer it with browser_dialog to see the page.)"
    );
    let mut data = json!({ "url": url, "ref_count": 0, "truncated": false, "blocked_by_dialog": true });
    let (section_text, section_data) = sections::render(tab);
    // The dialogs' messages are the page's words.
    if let Some(sections) = section_text.strip_prefix("\n\n") {
        text += "\n\n";
        text += &crate::content::page(sections);
    }
    for (key, value) in section_data {
        data[key] = value;
    }
    Some(ActionOutput::new(text, data))
}

/// `frame` as the model gave it: `f2` (as in refs), or a CDP frame id of a
/// frame a snapshot has numbered.
fn find_frame(tab: &Tab, name: &str) -> Result<FrameRef, ActionError> {
    let frame = tab.frame_named(name)?;
    let main = frame.frame_id == tab.state(|s| s.main_frame_id().to_owned());
    if frame.number.is_none() && !main {
        // Refs in a frame carry its number, which a whole-page snapshot gives.
        return Err(ActionError::new(
            ErrorCode::FrameNotFound,
            format!("frame \"{name}\" has not been numbered by a snapshot yet"),
            "Take a browser_snapshot of the whole page first, then scope to the frame by its number (f2).",
        ));
    }
    Ok(frame)
}

/// Runs the serializer in `frame` with `options`: the one installed in its
/// world (at the document's start, see `tab::pump`), else its source.
async fn serialize(
    tab: &Tab,
    frame: &FrameRef,
    budget: &Budget,
    options: &serde_json::Value,
) -> Result<serde_json::Value, ActionError> {
    let step = "serializing the page";
    let installed = format!("globalThis.__cdpilot?.snapshot({options})");
    let value = tab
        .evaluate_in(frame, budget, step, &installed, true, false)
        .await?
        .value;
    if let Some(value) = value.filter(|v| !v.is_null()) {
        return Ok(value);
    }
    let expression = format!("({SERIALIZER}).snapshot({options})");
    let value = tab
        .evaluate_in(frame, budget, step, &expression, true, false)
        .await?
        .value;
    Ok(value.unwrap_or_default())
}

/// Serializes `frame` with `options` (which ask for the listener scan),
/// its input listeners marked first. The tab's scan lock is held: one scan
/// at a time, so a snapshot waits for the one a navigate started
/// (`prime`). The serializer answers the tree, or, when an element was
/// added since the last scan, the marks it holds instead; then the scan
/// runs (best effort: without its marks, the cheap signals still give
/// refs) and the serializer is asked again without it.
async fn serialize_marked(
    tab: &Tab,
    frame: &FrameRef,
    budget: &Budget,
    mut options: serde_json::Value,
) -> Result<serde_json::Value, ActionError> {
    let waiting = timing::timed("snapshot.scan_wait", tab.listener_scan.lock());
    let _scanning = budget
        .run("waiting for the page's listener scan", async {
            Ok(waiting.await)
        })
        .await?;
    let serializing = serialize(tab, frame, budget, &options);
    let value = timing::timed("snapshot.evaluate", serializing).await?;
    let Some(serde_json::Value::Array(marked)) = value.get("listenersStale") else {
        return Ok(value);
    };
    let inline = value.get("inline").cloned().unwrap_or_default();
    let scan = listeners::mark(tab, frame, budget, marked, &inline);
    let _ = timing::timed("snapshot.listeners", scan).await;
    options["listeners"] = json!(false);
    let serializing = serialize(tab, frame, budget, &options);
    timing::timed("snapshot.evaluate", serializing).await
}

impl Walk<'_> {
    /// Serializes `frame` and, recursively, the frames inside it.
    fn frame<'b>(
        &'b mut self,
        frame: &'b FrameRef,
        selector: Option<&'b str>,
        depth: usize,
    ) -> Pin<Box<dyn Future<Output = Result<Serialized, ActionError>> + Send + 'b>> {
        Box::pin(async move {
            let base = self.tab.state(|s| s.frames().next_ref(&frame.frame_id));
            let options = json!({
                "selector": selector,
                "maxElements": self.remaining.max(1),
                "start": self.skip,
                "prefix": self.tab.state(|s| s.refs_tab()) + &frame.prefix(),
                "refBase": base,
                // A snapshot is answered again only while no call that
                // may change the page ran in the tab (the serializer's
                // reuse, issue 46).
                "acts": self.tab.state(|s| s.acts()),
                "listeners": true,
            });
            let value = serialize_marked(self.tab, frame, self.budget, options).await?;
            let decoding = timing::span("snapshot.decode");
            let mut snap: Serialized = serde_json::from_value(value).map_err(|e| {
                ActionError::internal(format!(
                    "the snapshot serializer returned an unexpected shape: {e}"
                ))
            })?;
            drop(decoding);
            timing::record(
                match snap.reused {
                    true => "snapshot.reused",
                    false => "snapshot.in_page",
                },
                std::time::Duration::from_secs_f64(snap.ms / 1000.0),
            );
            match snap.error.as_deref() {
                Some("invalid_selector") => {
                    return Err(ActionError::invalid(
                        format!(
                            "the selector is not valid CSS: {}",
                            snap.message.clone().unwrap_or_default()
                        ),
                        "Fix the selector or leave it out to snapshot the whole page.",
                    ))
                }
                Some("no_match") => {
                    return Err(ActionError::new(
                        ErrorCode::ElementNotFound,
                        "no element matches the selector",
                        "Leave selector out to snapshot the whole page.",
                    ))
                }
                _ => {}
            }
            self.tab
                .state(|s| s.frame_refs_issued(&frame.frame_id, snap.next));
            self.remaining = self.remaining.saturating_sub(snap.elements);
            self.skip = self.skip.saturating_sub(snap.seen);
            self.elements += snap.elements;
            self.refs += snap.refs;
            self.cut += snap.cut;
            self.values_cut += snap.values_cut;
            self.truncated |= snap.truncated;
            // Frames an earlier page listed come first in the order pages
            // count elements; their content goes at the end, under a line
            // that names the frame again.
            for reference in std::mem::take(&mut snap.earlier_frames) {
                let content = self.content(frame, &reference, depth).await?;
                if !content.is_empty() {
                    let _stitching = timing::span("snapshot.stitch").entered();
                    let marker = format!("iframe [ref={reference}] (continued)\n  \u{1}{reference}");
                    snap.text = stitch(&format!("{}\n{marker}", snap.text), &reference, &content);
                }
            }
            for reference in std::mem::take(&mut snap.frames) {
                let content = self.content(frame, &reference, depth).await?;
                let _stitching = timing::span("snapshot.stitch").entered();
                snap.text = stitch(&snap.text, &reference, &content);
            }
            Ok(snap)
        })
    }

    /// The text of the frame shown by the `<iframe>` with ref `reference`
    /// in `parent`, when it is to be expanded.
    async fn content(
        &mut self,
        parent: &FrameRef,
        reference: &str,
        depth: usize,
    ) -> Result<String, ActionError> {
        if depth >= MAX_FRAME_DEPTH || self.frames_expanded >= MAX_FRAMES || self.truncated {
            return Ok(String::new());
        }
        self.frames_expanded += 1;
        let failed = |e: ActionError| format!("(frame content unavailable: {})", e.message);
        match self.child(parent, reference).await {
            Ok(Some(child)) => match self.frame(&child, None, depth + 1).await {
                Ok(inner) => Ok(inner.text),
                Err(e) if e.failure.ends_the_call() => Err(e),
                Err(e) => Ok(failed(e)),
            },
            Ok(None) => Ok(String::new()),
            Err(e) if e.failure.ends_the_call() => Err(e),
            Err(e) => Ok(failed(e)),
        }
    }

    /// The frame shown by the `<iframe>` with ref `reference` in `parent`.
    async fn child(&mut self, parent: &FrameRef, reference: &str) -> Result<Option<FrameRef>, ActionError> {
        let lookup = format!("globalThis.__cdpilot.lookup({})", json!(reference));
        let object = self
            .tab
            .evaluate_in(parent, self.budget, "finding a frame", &lookup, false, false)
            .await?;
        let Some(object_id) = object.object_id else {
            return Ok(None);
        };
        let described = parent
            .cdp(
                self.budget,
                "describing a frame",
                dom::DescribeNode {
                    object_id: Some(object_id),
                    backend_node_id: None,
                },
            )
            .await?;
        let Some(frame_id) = described.node.frame_id else {
            return Ok(None);
        };
        // Numbered on first sight; the session is the one its record names
        // now (asked again by every later use, never copied into refs).
        self.tab
            .state(|s| s.frame_met(&frame_id, &parent.frame_id, described.node.backend_node_id));
        self.tab.frame_by_id(&frame_id).map(Some)
    }
}

/// Puts a frame's content under its `iframe` line, at the marker's depth.
fn stitch(text: &str, reference: &str, content: &str) -> String {
    let marker = format!("\u{1}{reference}");
    let mut out = String::with_capacity(text.len() + content.len());
    for line in text.split('\n') {
        match line.strip_suffix(marker.as_str()) {
            Some(indent) if indent.trim().is_empty() => {
                for inner in content.split('\n').filter(|l| !l.is_empty()) {
                    out.push_str(indent);
                    out.push_str(inner);
                    out.push('\n');
                }
            }
            _ => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out.pop();
    out
}

#[cfg(test)]
mod tests {
    use super::stitch;

    #[test]
    fn frame_content_goes_under_its_iframe_line() {
        let text = "heading \"A\" [ref=e1]\niframe \"F\" [ref=e2]\n  \u{1}e2\nbutton \"B\" [ref=e3]";
        let stitched = stitch(text, "e2", "button \"Inner\" [ref=f1e1]\n  text: deep");
        assert_eq!(
            stitched,
            "heading \"A\" [ref=e1]\niframe \"F\" [ref=e2]\n  button \"Inner\" [ref=f1e1]\n    text: deep\nbutton \"B\" [ref=e3]"
        );
        assert_eq!(stitch("iframe [ref=e2]\n  \u{1}e2", "e2", ""), "iframe [ref=e2]");
    }
}
