//! A session's trace (issue 43; the format is `docs/src/spec/trace.md`):
//! one directory per session holding `trace.jsonl` (a versioned header,
//! then a line per call, appended and flushed per call so a crash loses at
//! most the call under way) and `shots/NNNN.jpg`, and `har.json` (the
//! tab's requests as HAR 1.2) once it stops.
//!
//! Owns the trace's files and its size budget ([`Trace`]); what goes in a
//! line is the door's (it writes after redaction, so a trace holds what the
//! agent read and nothing more). Reading a trace back ([`read`]) and the
//! re-finding of a ref by what it was shown as ([`target`]) are here too,
//! for `cdpilot replay` and `cdpilot trace`; and its video ([`video`]:
//! the screenshots, or the screencast's frames kept in `cast/` with
//! `[trace] video`, made into a WebM by `ffmpeg`).

mod format;
pub mod har;
pub mod read;
pub mod slot;
pub mod target;
pub mod video;
mod writer;

pub use format::{
    cast_name, shot_name, CastFrame, Chapter, End, Header, Line, RequestRecord, Step, StepError, TargetBox,
    Viewport, BODIES_BUDGET_MS, FORMAT, POST_DATA_KEPT, RESPONSE_BODY_KEPT, VERSION,
};
pub use slot::Slot;
pub use target::Target;
pub use writer::{CastShot, Shot, Stopped, Trace};
