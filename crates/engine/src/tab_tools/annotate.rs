//! `browser_screenshot annotate`: each ref'd element's box and ref label,
//! drawn by an overlay that cdpilot's isolated world puts in each frame's
//! document just before the capture and removes right after. The overlay
//! lives in a closed shadow root, so the page's CSS cannot restyle it.
//!
//! The refs are those of the tab's latest snapshot of the current document
//! (one is taken first when there is none).

use std::collections::BTreeMap;

use serde_json::json;

use crate::tab::{FrameRef, Tab};
use crate::{ActionError, Budget};

/// Draws the boxes of `refs` (one frame's) in cdpilot's world; returns how
/// many were drawn.
const DRAW: &str = r#"(refs) => {
  const old = globalThis.__cdpilotAnnotations;
  if (old) old.remove();
  const host = document.createElement('div');
  host.style.cssText = 'position:absolute;left:0;top:0;width:0;height:0;overflow:visible;z-index:2147483647;pointer-events:none;margin:0;padding:0;border:0';
  const root = host.attachShadow({ mode: 'closed' });
  let drawn = 0;
  for (const ref of refs) {
    const el = globalThis.__cdpilot && globalThis.__cdpilot.lookup(ref);
    if (!el || !el.getBoundingClientRect) continue;
    const r = el.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) continue;
    const x = r.left + scrollX, y = r.top + scrollY;
    const box = document.createElement('div');
    box.style.cssText = `position:absolute;left:${x}px;top:${y}px;width:${r.width}px;height:${r.height}px;border:2px solid #e6007a;box-sizing:border-box`;
    const label = document.createElement('span');
    label.textContent = ref;
    label.style.cssText = `position:absolute;left:-2px;${y >= 14 ? 'top:-14px' : 'top:0'};background:#e6007a;color:#fff;font:bold 10px/12px monospace;padding:1px 2px;white-space:nowrap`;
    box.append(label);
    root.append(box);
    drawn++;
  }
  document.documentElement.append(host);
  globalThis.__cdpilotAnnotations = host;
  return drawn;
}"#;

const REMOVE: &str =
    "(() => { const h = globalThis.__cdpilotAnnotations; if (h) h.remove(); globalThis.__cdpilotAnnotations = null; })()";

/// The frames that hold overlays, to clear after the capture.
pub struct Drawn {
    frames: Vec<FrameRef>,
    /// Boxes drawn, over all frames.
    pub boxes: u64,
}

/// Draws every ref of the latest snapshot (taking one if needed).
pub async fn draw(tab: &Tab, max_elements: u32, budget: &Budget) -> Result<Drawn, ActionError> {
    let refs = match crate::snapshot::latest_refs(tab) {
        Some(refs) => refs,
        None => {
            crate::snapshot::run(tab, &crate::snapshot::View::default(), max_elements, budget).await?;
            crate::snapshot::latest_refs(tab).unwrap_or_default()
        }
    };
    // By frame: "" for the main document, else the frame's number.
    let mut by_frame: BTreeMap<Option<u32>, Vec<String>> = BTreeMap::new();
    for reference in refs {
        let number = crate::tab::refs::parse(&reference).and_then(|(frame, _)| frame);
        by_frame.entry(number).or_default().push(reference);
    }
    let mut drawn = Drawn {
        frames: Vec::new(),
        boxes: 0,
    };
    for (number, refs) in by_frame {
        let frame = match number {
            None => tab.main_frame(),
            Some(n) => match tab.numbered_frame(n) {
                Some(Ok(frame)) => frame,
                // Gone since the snapshot: nothing to draw there.
                _ => continue,
            },
        };
        let expression = format!("({DRAW})({})", json!(refs));
        match tab
            .evaluate_in(&frame, budget, "drawing the ref labels", &expression, true, false)
            .await
        {
            Ok(result) => {
                drawn.boxes += result.value.and_then(|v| v.as_u64()).unwrap_or(0);
                drawn.frames.push(frame);
            }
            Err(e) if e.failure.ends_the_call() => {
                clear(tab, drawn).await;
                return Err(e);
            }
            Err(e) => tracing::debug!("annotating frame {}: {e}", frame.name()),
        }
    }
    Ok(drawn)
}

/// Removes the overlays (with a budget of its own, so a call that ran out
/// of time still leaves the page as it was).
pub async fn clear(tab: &Tab, drawn: Drawn) {
    let budget = Budget::with_timeout(std::time::Duration::from_secs(3));
    for frame in drawn.frames {
        if let Err(e) = tab
            .evaluate_in(&frame, &budget, "removing the ref labels", REMOVE, true, false)
            .await
        {
            tracing::debug!("removing annotations from frame {}: {e}", frame.name());
        }
    }
}
