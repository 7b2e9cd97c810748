//! A video of a trace (issue 43, item 4): VP9 in WebM, made by `ffmpeg`
//! (a subprocess found on `PATH`) from the tab's screencast frames the
//! trace kept (`[trace] video`: `cast/`, each shown until the next came),
//! else from its screenshots in step order (each shown for its step's
//! share of the run's time); captioned with the step's number, tool and
//! target (the role and name the trace recorded, already redacted: never
//! an argument's value, so a typed secret cannot reach the pixels), and
//! the target's box outlined.
//!
//! Which picture is shown for how long is the plans' ([`plan`]); this
//! module owns ffmpeg's inputs in a work directory of its own (the filter
//! script, a caption file per frame), and running ffmpeg.
//! Reads the trace only; writes nothing but the video (and the work
//! directory, removed unless kept).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::read::{read, read_cast, ReadError};

mod plan;

pub use plan::{caption, plan, plan_cast, Frame, MAX_PICTURES, SHOWN_LAST, SHOWN_MAX, SHOWN_MIN};

/// Frames a second, unless asked (`--fps`): the pictures change at most a
/// few times a second, and VP9 spends almost nothing on a repeated frame.
pub const DEFAULT_FPS: u32 = 10;

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

impl Made {
    /// What it is, for a person: `PATH: N pictures of the screencast, S s`
    /// (or `N steps`), as the CLI prints it and the session's log says it.
    pub fn summary(&self) -> String {
        let of = if self.screencast {
            "pictures of the screencast"
        } else {
            "steps"
        };
        format!(
            "{}: {} {of}, {:.1} s",
            self.out.display(),
            self.frames,
            self.seconds
        )
    }
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

    use super::plan::tests::step;
    use super::*;
    use crate::trace::Target;

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
