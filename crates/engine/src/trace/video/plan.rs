//! The video's plans: which picture is shown, for how long, under which
//! caption and outline; from the steps' screenshots ([`plan`]) or from the
//! screencast's frames among them ([`plan_cast`]). Pure: the trace's
//! records in, the pictures out (ffmpeg's side is the module above).

use std::fmt::Write as _;

use crate::audit::parse_rfc3339;
use crate::trace::format::{CastFrame, Step};

/// The shortest time a step's picture is shown, in seconds: a burst of
/// quick steps stays readable.
pub const SHOWN_MIN: f64 = 0.5;

/// The longest, in seconds: a long wait does not make a minute of still
/// picture.
pub const SHOWN_MAX: f64 = 3.0;

/// How long the last step's picture is shown, in seconds (no step after it
/// says).
pub const SHOWN_LAST: f64 = 2.0;

/// At most this many pictures go into one video (each is an input of
/// ffmpeg's): a longer screencast is thinned evenly.
pub const MAX_PICTURES: usize = 600;

/// One picture of the video: a step and how it is shown.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// The step's number.
    pub step: u64,
    /// The picture shown (`shots/0003.jpg`): the step's own, or for a
    /// step that kept none the last one before it; or a screencast frame
    /// (`cast/000042.jpg`) and the step under way or last done then.
    pub shot: String,
    /// How long, in seconds.
    pub seconds: f64,
    /// What is written on it: `3  browser_click  button "Save"`.
    pub caption: String,
    /// The target's box (left, top, width, height) in the screenshot's
    /// pixels, when the step recorded one and the viewport it is measured
    /// against.
    pub outline: Option<(f64, f64, f64, f64)>,
}

/// The frames of `steps`: one per step that acts (one that kept a
/// screenshot, or says why it kept none), from the first screenshot on.
/// `shot_width` gives a screenshot's width in pixels (the box is in CSS
/// px of the viewport; the screenshot may be scaled down from it).
pub fn plan(steps: &[Step], shot_width: impl Fn(&str) -> Option<f64>) -> Vec<Frame> {
    // The picture on screen: its file and the viewport it shows.
    let mut showing: Option<(String, Option<f64>)> = None;
    let mut frames: Vec<Frame> = Vec::new();
    let mut ends: Vec<Option<f64>> = Vec::new();
    for step in steps {
        if let Some(shot) = &step.shot {
            showing = Some((shot.clone(), step.viewport.map(|v| v.width)));
        } else if step.shot_dropped.is_none() {
            // A step that only reads: its time stays with the picture before.
            continue;
        }
        let Some((shot, viewport_width)) = &showing else {
            continue;
        };
        let scale = match (shot_width(shot), viewport_width) {
            (Some(px), Some(css)) if *css > 0.0 => Some(px / css),
            _ => None,
        };
        let outline = step
            .target_box
            .zip(scale)
            .map(|(b, k)| (b.x * k, b.y * k, b.width * k, b.height * k));
        frames.push(Frame {
            step: step.step,
            shot: shot.clone(),
            seconds: SHOWN_LAST,
            caption: caption(step),
            outline,
        });
        ends.push(parse_rfc3339(&step.at).map(|at| at + step.ms as f64 / 1000.0));
    }
    // Each picture stays until the next one, within the bounds.
    for i in 1..frames.len() {
        if let (Some(this), Some(next)) = (ends[i - 1], ends[i]) {
            frames[i - 1].seconds = (next - this).clamp(SHOWN_MIN, SHOWN_MAX);
        }
    }
    frames
}

/// The pictures of a trace that kept its screencast: its frames and the
/// steps' screenshots (each at its step's end: the screencast may have
/// sent no frame of a change), in time order, each shown until the next
/// (at least a frame of the video, at most [`SHOWN_MAX`]; the last
/// [`SHOWN_LAST`]); a frame closer than a video frame to the picture
/// before gives way to a screenshot or replaces a frame; at most
/// [`MAX_PICTURES`]. Each is captioned with the acting step under
/// way or last done then (before the first, the first step), its target
/// outlined. `width_px` gives a picture's width in pixels; the box is in
/// CSS px of the viewport the latest acting step measured (a frame's own
/// metadata says the width a screenshot's scaling left while it ran).
pub fn plan_cast(
    cast: &[CastFrame],
    steps: &[Step],
    fps: u32,
    width_px: impl Fn(&str) -> Option<f64>,
) -> Vec<Frame> {
    let slot = 1.0 / f64::from(fps.max(1));
    let acting: Vec<(f64, &Step)> = steps
        .iter()
        .filter(|s| s.shot.is_some() || s.shot_dropped.is_some())
        .filter_map(|s| Some((parse_rfc3339(&s.at)?, s)))
        .collect();
    // (time, file, the CSS width of the viewport it shows, a step's own)
    let mut pictures: Vec<(f64, &str, Option<f64>, bool)> = cast
        .iter()
        .map(|f| (f.at, f.file.as_str(), Some(f.viewport.width), false))
        .collect();
    for (start, step) in &acting {
        if let Some(shot) = &step.shot {
            let width = step.viewport.map(|v| v.width);
            pictures.push((start + step.ms as f64 / 1000.0, shot.as_str(), width, true));
        }
    }
    pictures.sort_by(|a, b| a.0.total_cmp(&b.0));
    // A step's screenshot is always shown; a frame less than a video frame
    // after the picture before gives way to it (after a screenshot: it
    // shows what the screenshot does) or takes its place (after a frame).
    let mut chosen: Vec<(f64, &str, Option<f64>, bool)> = Vec::new();
    for picture in pictures {
        match chosen.last() {
            Some(before) if picture.0 - before.0 < slot && before.3 && !picture.3 => continue,
            Some(before) if picture.0 - before.0 < slot && !before.3 => {
                chosen.pop();
            }
            _ => {}
        }
        chosen.push(picture);
    }
    while chosen.len() > MAX_PICTURES {
        let mut i = 0;
        chosen.retain(|_| {
            i += 1;
            i % 2 == 1
        });
    }
    let mut frames = Vec::with_capacity(chosen.len());
    for (i, &(at, file, own_width, _)) in chosen.iter().enumerate() {
        let under_way = acting.iter().rev().find(|(start, _)| *start <= at);
        let step = under_way.or(acting.first()).map(|(_, s)| *s).or(steps.first());
        let measured = acting
            .iter()
            .rev()
            .filter(|(start, _)| *start <= at)
            .find_map(|(_, s)| s.viewport.map(|v| v.width));
        let css = measured.or(own_width).filter(|w| *w > 0.0);
        let scale = width_px(file).zip(css).map(|(px, css)| px / css);
        let outline = step
            .and_then(|s| s.target_box)
            .zip(scale)
            .map(|(b, k)| (b.x * k, b.y * k, b.width * k, b.height * k));
        let seconds = match chosen.get(i + 1) {
            Some(next) => (next.0 - at).clamp(slot, SHOWN_MAX),
            None => SHOWN_LAST,
        };
        frames.push(Frame {
            step: step.map_or(0, |s| s.step),
            shot: file.to_owned(),
            seconds,
            caption: step.map(caption).unwrap_or_default(),
            outline,
        });
    }
    frames
}

/// A step's caption: its number, its tool, its target's role and name as
/// the trace recorded them (redacted), its outcome when it failed, and why
/// it kept no screenshot. Never its arguments: what a call typed stays out
/// of the pixels, where no redaction reaches.
pub fn caption(step: &Step) -> String {
    let mut text = format!("{}  {}", step.step, step.tool);
    // The first target by pointer: `/ref` before `/to_ref`.
    if let Some(target) = step.targets.values().next() {
        text += "  ";
        text += &target.role;
        if !target.name.is_empty() {
            let name: String = target.name.chars().take(60).collect();
            let cut = if name.len() < target.name.len() { "…" } else { "" };
            let _ = write!(text, " \"{name}{cut}\"");
        }
    }
    if step.outcome != "ok" {
        let _ = write!(text, "  (failed: {})", step.outcome);
    }
    if let Some(why) = &step.shot_dropped {
        let _ = write!(text, "  (no screenshot: {why})");
    }
    // One line, nothing ffmpeg would read as markup (the captions are read
    // from files with expansion off; control characters are the rest).
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

#[cfg(test)]
pub(super) mod tests {
    use serde_json::json;

    use super::*;
    use crate::trace::{Target, TargetBox, Viewport};

    /// A step of `tool` at `at`, `ms` long (the video's tests share it).
    pub(in crate::trace::video) fn step(n: u64, tool: &str, at: &str, ms: u64) -> Step {
        Step {
            step: n,
            at: at.into(),
            ms,
            tool: tool.into(),
            outcome: "ok".into(),
            ..Step::default()
        }
    }
    #[test]
    fn each_acting_step_is_a_picture_shown_until_the_next_within_bounds() {
        let mut open = step(1, "browser_navigate", "2026-12-02T10:00:00.000Z", 400);
        open.shot = Some("shots/0001.jpg".into());
        open.viewport = Some(Viewport {
            width: 1280.0,
            height: 600.0,
        });
        let read = step(2, "browser_snapshot", "2026-12-02T10:00:00.500Z", 100);
        let mut click = step(3, "browser_click", "2026-12-02T10:00:00.600Z", 100);
        click.shot = Some("shots/0003.jpg".into());
        click.viewport = open.viewport;
        click.target_box = Some(TargetBox {
            x: 100.0,
            y: 50.0,
            width: 200.0,
            height: 40.0,
        });
        click.targets.insert(
            "/ref".into(),
            Target {
                reference: "e3".into(),
                role: "button".into(),
                name: "Save".into(),
                ordinal: 0,
                of: 1,
            },
        );
        // Typed a secret: no screenshot, the one before is shown.
        let mut typed = step(4, "browser_type", "2026-12-02T10:00:10.000Z", 100);
        typed.arguments = json!({"ref": "e4", "text": "{{secret:PW}}"});
        typed.shot_dropped = Some("secret_on_page".into());
        let frames = plan(&[open, read, click, typed], |_| Some(640.0));
        assert_eq!(frames.len(), 3);
        assert_eq!(
            frames[0].seconds, SHOWN_MIN,
            "0.3 s to the click's end: at least the minimum"
        );
        assert_eq!(
            frames[1].seconds, SHOWN_MAX,
            "9.4 s to the typing: at most the maximum"
        );
        assert_eq!(frames[2].seconds, SHOWN_LAST);
        assert_eq!(frames[1].caption, "3  browser_click  button \"Save\"");
        assert_eq!(frames[1].outline, Some((50.0, 25.0, 100.0, 20.0)));
        assert_eq!(frames[2].shot, "shots/0003.jpg");
        assert_eq!(
            frames[2].caption,
            "4  browser_type  (no screenshot: secret_on_page)"
        );
    }

    #[test]
    fn screencast_frames_and_the_steps_screenshots_are_shown_in_time_order() {
        let viewport = Viewport {
            width: 1280.0,
            height: 600.0,
        };
        let mut open = step(1, "browser_navigate", "2026-12-02T10:00:00.000Z", 400);
        open.shot = Some("shots/0001.jpg".into());
        open.viewport = Some(viewport);
        let read = step(2, "browser_snapshot", "2026-12-02T10:00:01.000Z", 100);
        let mut click = step(3, "browser_click", "2026-12-02T10:00:02.000Z", 100);
        click.shot = Some("shots/0003.jpg".into());
        click.viewport = Some(viewport);
        click.target_box = Some(TargetBox {
            x: 100.0,
            y: 50.0,
            width: 200.0,
            height: 40.0,
        });
        let start = parse_rfc3339("2026-12-02T10:00:00.000Z").unwrap();
        // Before the first step, in the navigate, during the snapshot, two
        // at once with the click's screenshot after them (merged to the
        // screenshot), 10 s later. A frame's own width is a screenshot's
        // scaling (640), not the page's viewport.
        let times = [-0.2, 0.25, 1.05, 2.01, 2.03, 12.0];
        let cast: Vec<CastFrame> = times
            .iter()
            .enumerate()
            .map(|(i, t)| CastFrame {
                frame: i as u64 + 1,
                at: start + t,
                file: crate::trace::cast_name(i as u64 + 1),
                viewport: Viewport {
                    width: 640.0,
                    height: 300.0,
                },
            })
            .collect();
        let steps = [open, read, click];
        let frames = plan_cast(&cast, &steps, 10, |_| Some(640.0));
        let shown: Vec<(u64, &str)> = frames.iter().map(|f| (f.step, f.shot.as_str())).collect();
        assert_eq!(
            shown,
            [
                (1, "cast/000001.jpg"),
                (1, "cast/000002.jpg"),
                (1, "shots/0001.jpg"),
                (1, "cast/000003.jpg"),
                (3, "shots/0003.jpg"),
                (3, "cast/000006.jpg")
            ],
            "a reading step captions nothing; frames 20 ms apart, then the click's screenshot: the screenshot"
        );
        let seconds: Vec<f64> = frames
            .iter()
            .map(|f| (f.seconds * 100.0).round() / 100.0)
            .collect();
        assert_eq!(seconds, [0.45, 0.15, 0.65, 1.05, SHOWN_MAX, SHOWN_LAST]);
        // Scaled by the viewport the click measured: 640 px show 1280 CSS px.
        assert_eq!(frames[4].outline, Some((50.0, 25.0, 100.0, 20.0)));
        assert_eq!(frames[5].outline, frames[4].outline);
        assert_eq!(frames[0].outline, None);
        assert!(
            frames[4].caption.starts_with("3  browser_click"),
            "{}",
            frames[4].caption
        );
        // A frame right after a step's screenshot shows what it shows.
        let mut late = cast.clone();
        late[5].at = start + 2.15;
        let frames = plan_cast(&late, &steps, 10, |_| Some(640.0));
        assert_eq!(frames.last().map(|f| f.shot.as_str()), Some("shots/0003.jpg"));
    }

    #[test]
    fn a_long_screencast_is_thinned_to_the_most_pictures_a_video_takes() {
        let viewport = Viewport {
            width: 1.0,
            height: 1.0,
        };
        let cast: Vec<CastFrame> = (1..=2000)
            .map(|i| CastFrame {
                frame: i,
                at: i as f64,
                file: crate::trace::cast_name(i),
                viewport,
            })
            .collect();
        let frames = plan_cast(&cast, &[], 10, |_| None);
        assert!(
            frames.len() <= MAX_PICTURES && frames.len() > MAX_PICTURES / 2,
            "{}",
            frames.len()
        );
        assert_eq!(frames[0].shot, "cast/000001.jpg");
    }
}
