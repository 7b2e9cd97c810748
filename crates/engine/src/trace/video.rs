//! A video of a trace (issue 43, item 4): VP9 in WebM, made by `ffmpeg`
//! (a subprocess found on `PATH`) from the tab's screencast frames the
//! trace kept (`[trace] video`: `cast/`, each shown until the next came),
//! else from its screenshots in step order (each shown for its step's
//! share of the run's time); captioned with the step's number, tool and
//! target (the role and name the trace recorded, already redacted: never
//! an argument's value, so a typed secret cannot reach the pixels), and
//! the target's box outlined.
//!
//! Owns the plans ([`plan`], [`plan_cast`]: which picture, for how long,
//! which caption and outline; pure, unit-tested), ffmpeg's inputs in a work directory of its
//! own (the filter script, a caption file per frame), and running ffmpeg.
//! Reads the trace only; writes nothing but the video (and the work
//! directory, removed unless kept).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::format::{CastFrame, Step};
use super::read::{read, read_cast, ReadError};
use crate::audit::parse_rfc3339;

/// The shortest time a step's picture is shown, in seconds: a burst of
/// quick steps stays readable.
pub const SHOWN_MIN: f64 = 0.5;

/// The longest, in seconds: a long wait does not make a minute of still
/// picture.
pub const SHOWN_MAX: f64 = 3.0;

/// How long the last step's picture is shown, in seconds (no step after it
/// says).
pub const SHOWN_LAST: f64 = 2.0;

/// Frames a second, unless asked (`--fps`): the pictures change at most a
/// few times a second, and VP9 spends almost nothing on a repeated frame.
pub const DEFAULT_FPS: u32 = 10;

/// At most this many pictures go into one video (each is an input of
/// ffmpeg's): a longer screencast is thinned evenly.
pub const MAX_PICTURES: usize = 600;

/// Where the captions' font is looked for, in order: DejaVu Sans comes
/// with Chromium on Debian (`fonts-dejavu-core`), Liberation with it
/// elsewhere.
pub const FONTS: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
];

/// The encoder's settings, chosen by measurement (`docs/src/figures.md`,
/// "Tracing"): VP9 at its realtime speed costs about as much CPU as x264's
/// `veryfast` and plays in every browser.
const ENCODER: &[&str] = &[
    "-c:v",
    "libvpx-vp9",
    "-b:v",
    "0",
    "-crf",
    "40",
    "-deadline",
    "realtime",
    "-cpu-used",
    "8",
    "-pix_fmt",
    "yuv420p",
];

/// What to make.
#[derive(Debug, Clone)]
pub struct Options {
    /// The video's path (default `DIR/video.webm`).
    pub out: Option<PathBuf>,
    /// Frames a second.
    pub fps: u32,
    /// Keep the work directory (the filter script, the captions) and say
    /// where it is: to see what was drawn.
    pub keep_work: bool,
    /// Made of the steps' screenshots even when the trace kept the
    /// screencast's frames (`--steps`).
    pub steps_only: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            out: None,
            fps: DEFAULT_FPS,
            keep_work: false,
            steps_only: false,
        }
    }
}

/// A video made.
#[derive(Debug, Clone)]
pub struct Made {
    /// Where it is.
    pub out: PathBuf,
    /// The pictures shown: one per step, or the screencast's frames.
    pub frames: usize,
    /// Made of the screencast's frames (else of the steps' screenshots).
    pub screencast: bool,
    /// How long it plays, in seconds (the plan's; the container's may
    /// differ by a frame).
    pub seconds: f64,
    /// The work directory, when kept.
    pub work: Option<PathBuf>,
}

/// Why no video was made. Each says what to do next ([`VideoError::next_step`]).
#[derive(Debug, thiserror::Error)]
pub enum VideoError {
    /// The trace cannot be read (named by file and line).
    #[error("{0}")]
    Trace(#[from] ReadError),
    /// No step kept a screenshot.
    #[error("{}: no step of the trace kept a screenshot", file.display())]
    NoShots {
        /// The trace's `trace.jsonl`.
        file: PathBuf,
    },
    /// A screenshot the trace names cannot be read as a JPEG.
    #[error("{}: {message}", file.display())]
    Shot {
        /// The screenshot.
        file: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// `ffmpeg` is not on `PATH`.
    #[error("ffmpeg is not installed (no `ffmpeg` on PATH)")]
    NoFfmpeg,
    /// None of [`FONTS`] exists.
    #[error("no font to caption the frames with (looked for {})", FONTS.join(", "))]
    NoFont,
    /// ffmpeg ran and failed.
    #[error("ffmpeg failed ({status}): {said}")]
    Ffmpeg {
        /// Its exit status.
        status: String,
        /// The end of what it said on stderr.
        said: String,
    },
    /// The task making it ended before it did (it panicked, or the
    /// runtime was shutting down).
    #[error("making the video stopped: {0}")]
    Stopped(String),
    /// A file of the work directory or the video could not be written.
    #[error("{}: {error}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        error: std::io::Error,
    },
}

impl VideoError {
    /// A short code a script can branch on.
    pub fn code(&self) -> &'static str {
        match self {
            VideoError::Trace(_) => "trace_unreadable",
            VideoError::NoShots { .. } => "no_screenshots",
            VideoError::Shot { .. } => "screenshot_unreadable",
            VideoError::NoFfmpeg => "ffmpeg_missing",
            VideoError::NoFont => "font_missing",
            VideoError::Ffmpeg { .. } => "ffmpeg_failed",
            VideoError::Io { .. } => "write_failed",
            VideoError::Stopped(_) => "video_stopped",
        }
    }

    /// What to do about it.
    pub fn next_step(&self) -> &'static str {
        match self {
            VideoError::Trace(_) => "Pass a trace directory (one holding trace.jsonl), as `cdpilot trace view` lists them.",
            VideoError::NoShots { .. } => {
                "Trace a run with [trace] screenshots = true (the default) and steps that act (click, type, open)."
            }
            VideoError::Shot { .. } => "The trace was edited or cut short; trace the run again.",
            VideoError::NoFfmpeg => {
                "Install it: `apt-get install --no-install-recommends ffmpeg` (Debian, Ubuntu; `scripts/ensure-ffmpeg` does it), then run this again."
            }
            VideoError::NoFont => "Install one: `apt-get install --no-install-recommends fonts-dejavu-core`.",
            VideoError::Ffmpeg { .. } => {
                "Check that this ffmpeg has libvpx-vp9 (`ffmpeg -encoders | grep vp9`) and the disk has room; --keep-work keeps its inputs."
            }
            VideoError::Io { .. } => "Check the directory's permissions and free space, or pass --out elsewhere.",
            VideoError::Stopped(_) => "Make it again with `cdpilot trace video DIR` (the trace is complete); the log says why it stopped.",
        }
    }
}

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

/// The width and height of a JPEG, from its start-of-frame marker.
pub fn jpeg_size(bytes: &[u8]) -> Option<(u32, u32)> {
    if bytes.get(..2)? != [0xff, 0xd8] {
        return None;
    }
    let mut at = 2;
    while at + 4 <= bytes.len() {
        if bytes[at] != 0xff {
            return None;
        }
        let marker = bytes[at + 1];
        let length = u16::from_be_bytes([bytes[at + 2], bytes[at + 3]]) as usize;
        // SOF0..SOF15, except DHT (C4), JPG (C8) and DAC (CC).
        if (0xc0..=0xcf).contains(&marker) && !matches!(marker, 0xc4 | 0xc8 | 0xcc) {
            let height = u16::from_be_bytes([*bytes.get(at + 5)?, *bytes.get(at + 6)?]);
            let width = u16::from_be_bytes([*bytes.get(at + 7)?, *bytes.get(at + 8)?]);
            return Some((u32::from(width), u32::from(height)));
        }
        at += 2 + length;
    }
    None
}

/// The filter script for `frames` (each input `i` is frame `i`'s picture,
/// `sizes[i]` its size) at `size` (even): each picture fitted and padded to
/// it, its outline drawn, its caption read from `caption-<i>.txt` in the
/// work directory (never inline: the script holds no page text), at `fps`,
/// then all of them in a row.
pub fn filter_script(
    frames: &[Frame],
    sizes: &[(u32, u32)],
    size: (u32, u32),
    fps: u32,
    font: &str,
) -> String {
    let (width, height) = size;
    let font_size = (width / 40).max(12);
    let mut script = String::new();
    for (i, (frame, &(w, h))) in frames.iter().zip(sizes).enumerate() {
        let k = (f64::from(width) / f64::from(w)).min(f64::from(height) / f64::from(h));
        let (pad_x, pad_y) = (
            (f64::from(width) - f64::from(w) * k) / 2.0,
            (f64::from(height) - f64::from(h) * k) / 2.0,
        );
        let _ = write!(
            script,
            "[{i}:v]scale=w={width}:h={height}:force_original_aspect_ratio=decrease,\
             pad=w={width}:h={height}:x=-1:y=-1:color=white,setsar=1,fps={fps}"
        );
        if let Some((x, y, w, h)) = frame.outline {
            let (x, y) = (x * k + pad_x, y * k + pad_y);
            let (w, h) = ((w * k).max(4.0), (h * k).max(4.0));
            let _ = write!(
                script,
                ",drawbox=x={:.0}:y={:.0}:w={:.0}:h={:.0}:color=red@0.9:t=3",
                x - 2.0,
                y - 2.0,
                w + 4.0,
                h + 4.0
            );
        }
        let _ = writeln!(
            script,
            ",drawtext=fontfile={font}:textfile=caption-{i}.txt:expansion=none:fontsize={font_size}:\
             fontcolor=white:box=1:boxcolor=black@0.65:boxborderw=6:x=8:y=h-th-14[v{i}];"
        );
    }
    for i in 0..frames.len() {
        let _ = write!(script, "[v{i}]");
    }
    let _ = writeln!(script, "concat=n={}:v=1:a=0[out]", frames.len());
    script
}

/// Makes the video of the trace in `dir` with the default options on a
/// blocking thread (ffmpeg runs for seconds): `[trace] video`, when a
/// trace stops.
pub async fn make_in_background(dir: PathBuf) -> Result<Made, VideoError> {
    let made = tokio::task::spawn_blocking(move || make(&dir, &Options::default())).await;
    made.unwrap_or_else(|e| Err(VideoError::Stopped(e.to_string())))
}

/// Makes the video of the trace in `dir`.
pub fn make(dir: &Path, options: &Options) -> Result<Made, VideoError> {
    let trace = read(dir)?;
    let mut sizes = std::collections::HashMap::new();
    for step in &trace.steps {
        if let Some(shot) = &step.shot {
            // A hand-edited trace may name any file: only the step's own
            // screenshot is read (a picture from elsewhere on the disk
            // must not end up in a video someone shares).
            if *shot != super::shot_name(step.step) {
                return Err(VideoError::Shot {
                    file: dir.join("trace.jsonl"),
                    message: format!(
                        "step {} names the screenshot {shot:?}; a step's screenshot is {}",
                        step.step,
                        super::shot_name(step.step)
                    ),
                });
            }
            sizes.insert(shot.clone(), jpeg_size_of(&dir.join(shot))?);
        }
    }
    let cast = match options.steps_only {
        true => Vec::new(),
        false => read_cast(dir)?,
    };
    for frame in &cast {
        // read_cast accepted only the frame's own name.
        let file = dir.join(&frame.file);
        sizes.insert(frame.file.clone(), jpeg_size_of(&file)?);
    }
    let screencast = !cast.is_empty();
    let width = |shot: &str| sizes.get(shot).map(|s| f64::from(s.0));
    let frames = match screencast {
        true => plan_cast(&cast, &trace.steps, options.fps, width),
        false => plan(&trace.steps, width),
    };
    if frames.is_empty() {
        return Err(VideoError::NoShots {
            file: dir.join("trace.jsonl"),
        });
    }
    let font = FONTS
        .iter()
        .copied()
        .find(|f| Path::new(f).is_file())
        .ok_or(VideoError::NoFont)?;
    let frame_sizes: Vec<(u32, u32)> = frames.iter().map(|f| sizes[&f.shot]).collect();
    // The first picture's size, even (yuv420p halves it).
    let size = (frame_sizes[0].0 & !1, frame_sizes[0].1 & !1);
    let out = options.out.clone().unwrap_or_else(|| dir.join("video.webm"));
    let out = std::path::absolute(&out).map_err(|error| VideoError::Io {
        path: out.clone(),
        error,
    })?;
    // Written to a file of its own, made 0600 before ffmpeg writes into it
    // (ffmpeg keeps the mode of a file it truncates), then renamed: the
    // video is never readable by others, and a run that fails leaves the
    // video before it as it was.
    let mut part = out.clone().into_os_string();
    part.push(".part");
    let part = PathBuf::from(part);
    {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&part)
            .map_err(|error| VideoError::Io {
                path: part.clone(),
                error,
            })?;
    }
    let fps = options.fps.clamp(1, 60);
    let encoded = encode(dir, &frames, &frame_sizes, (size, fps), font, &part).and_then(|work| {
        std::fs::rename(&part, &out).map_err(|error| VideoError::Io {
            path: out.clone(),
            error,
        })?;
        Ok(work)
    });
    let work = encoded.inspect_err(|_| {
        let _ = std::fs::remove_file(&part);
    })?;
    Ok(Made {
        out,
        frames: frames.len(),
        screencast,
        seconds: frames.iter().map(|f| f.seconds).sum(),
        work: options.keep_work.then(|| work.keep()),
    })
}

/// The width and height of the JPEG in `file`.
fn jpeg_size_of(file: &Path) -> Result<(u32, u32), VideoError> {
    let bytes = std::fs::read(file).map_err(|e| VideoError::Shot {
        file: file.to_owned(),
        message: format!("cannot be read: {e}"),
    })?;
    jpeg_size(&bytes).ok_or_else(|| VideoError::Shot {
        file: file.to_owned(),
        message: "not a JPEG".into(),
    })
}

/// Writes ffmpeg's inputs for `frames` into a new work directory and runs
/// it, the video into `out` at `size` and `fps`.
fn encode(
    dir: &Path,
    frames: &[Frame],
    frame_sizes: &[(u32, u32)],
    (size, fps): ((u32, u32), u32),
    font: &str,
    out: &Path,
) -> Result<Work, VideoError> {
    let work = Work::new()?;
    for (i, frame) in frames.iter().enumerate() {
        work.write(&format!("caption-{i}.txt"), &frame.caption)?;
    }
    work.write("filter.txt", &filter_script(frames, frame_sizes, size, fps, font))?;
    let mut ffmpeg = Command::new("ffmpeg");
    ffmpeg
        .current_dir(&work.dir)
        .args(["-nostdin", "-hide_banner", "-loglevel", "error", "-y"]);
    for frame in frames {
        let shot = std::path::absolute(dir.join(&frame.shot)).unwrap_or_else(|_| dir.join(&frame.shot));
        ffmpeg
            .args(["-loop", "1", "-framerate", &fps.to_string(), "-t"])
            .arg(format!("{:.3}", frame.seconds))
            .arg("-i")
            .arg(shot);
    }
    ffmpeg
        .args(["-filter_complex_script", "filter.txt", "-map", "[out]", "-an"])
        .args(ENCODER)
        .args(["-f", "webm"])
        .arg(out);
    let ran = ffmpeg.output().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => VideoError::NoFfmpeg,
        _ => VideoError::Ffmpeg {
            status: "not started".into(),
            said: e.to_string(),
        },
    })?;
    if !ran.status.success() {
        let said = String::from_utf8_lossy(&ran.stderr);
        let tail: Vec<&str> = said.lines().rev().take(5).collect();
        return Err(VideoError::Ffmpeg {
            status: ran.status.to_string(),
            said: tail.into_iter().rev().collect::<Vec<_>>().join(" / "),
        });
    }
    Ok(work)
}

/// ffmpeg's inputs: a private directory under the system's temporary one,
/// removed when dropped unless kept.
struct Work {
    dir: PathBuf,
    kept: bool,
}

impl Work {
    fn new() -> Result<Work, VideoError> {
        use std::os::unix::fs::DirBuilderExt;
        use std::sync::atomic::{AtomicU32, Ordering};
        static MADE: AtomicU32 = AtomicU32::new(0);
        // A new directory, never one already there (another user's, a link).
        loop {
            let n = MADE.fetch_add(1, Ordering::Relaxed);
            let dir = std::env::temp_dir().join(format!("cdpilot-video-{}-{n}", std::process::id()));
            match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
                Ok(()) => return Ok(Work { dir, kept: false }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 100 => continue,
                Err(error) => return Err(VideoError::Io { path: dir, error }),
            }
        }
    }

    fn write(&self, name: &str, text: &str) -> Result<(), VideoError> {
        let path = self.dir.join(name);
        std::fs::write(&path, text).map_err(|error| VideoError::Io { path, error })
    }

    fn keep(mut self) -> PathBuf {
        self.kept = true;
        self.dir.clone()
    }
}

impl Drop for Work {
    fn drop(&mut self) {
        if !self.kept {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::trace::{Target, TargetBox, Viewport};

    fn step(n: u64, tool: &str, at: &str, ms: u64) -> Step {
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

    #[test]
    fn the_filter_script_holds_no_page_text_and_no_argument() {
        let mut typed = step(1, "browser_type", "2026-12-02T10:00:00.000Z", 100);
        typed.shot = Some("shots/0001.jpg".into());
        typed.arguments = json!({"ref": "e4", "text": "hunter2-typed"});
        typed.targets.insert(
            "/ref".into(),
            Target {
                reference: "e4".into(),
                role: "textbox".into(),
                name: "Name: it's [a] ;b,c %{pts}".into(),
                ordinal: 0,
                of: 1,
            },
        );
        let frames = plan(&[typed], |_| Some(640.0));
        let script = filter_script(&frames, &[(640, 300)], (640, 300), 10, FONTS[0]);
        assert!(!script.contains("hunter2"), "{script}");
        assert!(!script.contains("Name:"), "{script}");
        assert!(
            script.contains("textfile=caption-0.txt:expansion=none"),
            "{script}"
        );
        assert!(!frames[0].caption.contains("hunter2"));
        assert!(script.ends_with("[v0]concat=n=1:v=1:a=0[out]\n"), "{script}");
    }

    /// A hand-edited trace whose step names a picture outside its
    /// `shots/` (any JPEG on the disk) is refused, and nothing is read.
    #[test]
    fn a_step_naming_a_screenshot_outside_its_own_is_refused() {
        use crate::trace::{Header, Line, FORMAT, VERSION};
        let root = std::env::temp_dir().join(format!("cdpilot-video-edited-{}", std::process::id()));
        let dir = root.join("trace");
        std::fs::create_dir_all(dir.join("shots")).unwrap();
        let jpeg = [0xff, 0xd8, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x00, 0x10, 0x00, 0x10];
        std::fs::write(root.join("private.jpg"), jpeg).unwrap();
        std::fs::write(dir.join("shots/0001.jpg"), jpeg).unwrap();
        let header = Line::Header(Header {
            format: FORMAT.into(),
            version: VERSION,
            session: "s1".into(),
            started: "2026-12-02T10:00:00Z".into(),
            cdpilot: "test".into(),
            max_bytes: 1 << 20,
        });
        for named in ["../private.jpg", "/etc/hostname", "shots/0002.jpg"] {
            let mut click = step(1, "browser_click", "2026-12-02T10:00:01.000Z", 20);
            click.shot = Some(named.into());
            let lines = [header.clone(), Line::Step(Box::new(click))]
                .iter()
                .map(|l| serde_json::to_string(l).unwrap() + "\n")
                .collect::<String>();
            std::fs::write(dir.join("trace.jsonl"), lines).unwrap();
            let refused = make(&dir, &Options::default()).unwrap_err();
            assert!(
                matches!(&refused, VideoError::Shot { message, .. } if message.contains("names the screenshot")),
                "{named}: {refused}"
            );
        }
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_jpegs_size_is_read_from_its_frame_header() {
        // SOI, an APP0 of 4 bytes, SOF0 of 300×640.
        let jpeg = [
            0xff, 0xd8, 0xff, 0xe0, 0x00, 0x04, 0x00, 0x00, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x01, 0x2c, 0x02,
            0x80,
        ];
        assert_eq!(jpeg_size(&jpeg), Some((640, 300)));
        assert_eq!(jpeg_size(b"not a jpeg"), None);
    }
}
