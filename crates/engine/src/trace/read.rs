//! Reading a trace directory back (`cdpilot replay`, `cdpilot trace`):
//! every error names the file and the line (so the step), and a trace of
//! another format or version is refused whole. A last line cut short (the
//! session crashed while writing it) is reported as such, with the steps
//! before it.

use std::path::{Path, PathBuf};

use super::format::{cast_name, CastFrame, Chapter, End, Header, Line, Step, FORMAT, VERSION};

/// A trace as read.
#[derive(Debug)]
pub struct Read {
    /// Its first line.
    pub header: Header,
    /// Its steps, in order.
    pub steps: Vec<Step>,
    /// Its chapters, in order.
    pub chapters: Vec<Chapter>,
    /// Its end line, if it stopped cleanly.
    pub end: Option<End>,
    /// The last line, cut short: what reading it said.
    pub cut: Option<ReadError>,
}

/// What is wrong with a trace, and where.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{}{}: {message}", file.display(), line.map(|l| format!(" line {l}")).unwrap_or_default())]
pub struct ReadError {
    /// The file (or the directory).
    pub file: PathBuf,
    /// The line (1 is the header; line n + 1 is usually step n).
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

/// Reads `dir`'s `trace.jsonl`.
pub fn read(dir: &Path) -> Result<Read, ReadError> {
    let file = dir.join("trace.jsonl");
    let error = |line: Option<usize>, message: String| ReadError {
        file: file.clone(),
        line,
        message,
    };
    if !dir.is_dir() {
        return Err(ReadError {
            file: dir.to_owned(),
            line: None,
            message: "not a trace directory (it does not exist, or is not a directory)".into(),
        });
    }
    let text = std::fs::read_to_string(&file).map_err(|e| error(None, format!("cannot be read: {e}")))?;
    let mut lines = text.split_inclusive('\n').enumerate().peekable();
    let Some((_, first)) = lines.next() else {
        return Err(error(
            Some(1),
            "empty: a trace starts with its header line".into(),
        ));
    };
    let header = match serde_json::from_str::<serde_json::Value>(first) {
        Ok(value) if value["format"] == FORMAT => {
            if value["version"] != VERSION {
                return Err(error(
                    Some(1),
                    format!(
                        "format version {} (this cdpilot reads version {VERSION})",
                        value["version"]
                    ),
                ));
            }
            match serde_json::from_value::<Line>(value) {
                Ok(Line::Header(header)) => header,
                _ => return Err(error(Some(1), "the header line is malformed".into())),
            }
        }
        _ => return Err(error(Some(1), format!("not a {FORMAT} header"))),
    };
    let mut read = Read {
        header,
        steps: Vec::new(),
        chapters: Vec::new(),
        end: None,
        cut: None,
    };
    while let Some((at, text)) = lines.next() {
        let number = at + 1;
        let last = lines.peek().is_none();
        let parsed = serde_json::from_str::<Line>(text);
        match parsed {
            Ok(_) if read.end.is_some() => {
                return Err(error(Some(number), "a line after the trace's end line".into()));
            }
            Ok(Line::Step(step)) => {
                if step.step != read.steps.len() as u64 + 1 {
                    return Err(error(
                        Some(number),
                        format!("step {} where step {} was due", step.step, read.steps.len() + 1),
                    ));
                }
                read.steps.push(*step)
            }
            Ok(Line::Chapter(chapter)) => read.chapters.push(chapter),
            Ok(Line::End(end)) => read.end = Some(end),
            Ok(Line::Header(_)) => return Err(error(Some(number), "a second header line".into())),
            Err(e) if last && !text.ends_with('\n') => {
                read.cut = Some(error(
                    Some(number),
                    format!(
                        "the last line (step {}) is cut short, as a crash while writing it leaves it ({e})",
                        read.steps.len() + 1
                    ),
                ));
            }
            Err(e) => {
                return Err(error(
                    Some(number),
                    format!("not a trace line (after step {}): {e}", read.steps.len()),
                ))
            }
        }
    }
    Ok(read)
}

/// Reads `dir`'s `cast.jsonl` (the screencast's frames, `[trace] video`):
/// none when there is no such file. Each frame names its own file
/// ([`cast_name`]) and comes after the one before; a last line cut short
/// is left out, as a crash leaves it.
pub fn read_cast(dir: &Path) -> Result<Vec<CastFrame>, ReadError> {
    let file = dir.join("cast.jsonl");
    let error = |line: usize, message: String| ReadError {
        file: file.clone(),
        line: Some(line),
        message,
    };
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(ReadError {
                file: file.clone(),
                line: None,
                message: format!("cannot be read: {e}"),
            })
        }
    };
    let mut frames: Vec<CastFrame> = Vec::new();
    for (at, line) in text.split_inclusive('\n').enumerate() {
        let frame = match serde_json::from_str::<CastFrame>(line) {
            Ok(frame) => frame,
            Err(_) if !line.ends_with('\n') => break,
            Err(e) => return Err(error(at + 1, format!("not a frame line: {e}"))),
        };
        let due = frames.len() as u64 + 1;
        if frame.frame != due || frame.file != cast_name(due) {
            return Err(error(
                at + 1,
                format!(
                    "frame {} names {:?}; frame {due} is {}",
                    frame.frame,
                    frame.file,
                    cast_name(due)
                ),
            ));
        }
        if frames.last().is_some_and(|before| frame.at < before.at) || !frame.at.is_finite() {
            return Err(error(
                at + 1,
                format!("frame {due} comes before the frame before it"),
            ));
        }
        frames.push(frame);
    }
    Ok(frames)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir_with(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("cdpilot-read-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("trace.jsonl"), text).unwrap();
        dir
    }

    const HEADER: &str = r#"{"kind":"header","format":"cdpilot-trace","version":1,"session":"s","started":"x","cdpilot":"0","max_bytes":1}"#;
    const STEP: &str =
        r#"{"kind":"step","step":1,"at":"x","ms":1,"tool":"browser_snapshot","arguments":{},"outcome":"ok"}"#;

    #[test]
    fn bad_traces_are_named_by_file_and_line() {
        let missing = read(Path::new("/nonexistent/trace")).unwrap_err();
        assert!(
            missing
                .to_string()
                .starts_with("/nonexistent/trace: not a trace directory"),
            "{missing}"
        );
        let other = dir_with("version", &HEADER.replace("\"version\":1", "\"version\":7"));
        let e = read(&other).unwrap_err().to_string();
        assert!(e.contains("trace.jsonl line 1: format version 7"), "{e}");
        let edited = dir_with(
            "edited",
            &format!("{HEADER}\n{STEP}\n{{\"kind\":\"step\",\"step\":2,\n{STEP}\n"),
        );
        let e = read(&edited).unwrap_err().to_string();
        assert!(
            e.contains("trace.jsonl line 3: not a trace line (after step 1)"),
            "{e}"
        );
        let cut = dir_with("cut", &format!("{HEADER}\n{STEP}\n{}", &STEP[..40]));
        let cut = read(&cut).unwrap();
        assert_eq!(cut.steps.len(), 1);
        let e = cut.cut.unwrap().to_string();
        assert!(e.contains("line 3: the last line (step 2) is cut short"), "{e}");
    }

    #[test]
    fn an_edited_cast_naming_another_file_or_out_of_order_is_refused_by_line_and_a_cut_last_line_ignored() {
        let frame = |n: u64, at: f64, file: &str| {
            format!(
                r#"{{"frame":{n},"at":{at},"file":"{file}","viewport":{{"width":800.0,"height":600.0}}}}"#
            )
        };
        let with_cast = |name: &str, cast: String| {
            let dir = dir_with(name, &format!("{HEADER}\n"));
            std::fs::write(dir.join("cast.jsonl"), cast).unwrap();
            dir
        };
        let good = format!(
            "{}\n{}\n",
            frame(1, 1.0, &cast_name(1)),
            frame(2, 2.0, &cast_name(2))
        );
        assert_eq!(read_cast(&with_cast("cast-good", good.clone())).unwrap().len(), 2);
        let elsewhere = with_cast(
            "cast-elsewhere",
            format!(
                "{}\n{}\n",
                frame(1, 1.0, &cast_name(1)),
                frame(2, 2.0, "../../etc/passwd")
            ),
        );
        let e = read_cast(&elsewhere).unwrap_err().to_string();
        assert!(
            e.contains("cast.jsonl line 2")
                && e.contains("../../etc/passwd")
                && e.contains("cast/000002.jpg"),
            "{e}"
        );
        let skipped = with_cast("cast-skipped", format!("{}\n", frame(2, 1.0, &cast_name(2))));
        let e = read_cast(&skipped).unwrap_err().to_string();
        assert!(e.contains("cast.jsonl line 1: frame 2"), "{e}");
        let backwards = with_cast(
            "cast-backwards",
            format!(
                "{}\n{}\n",
                frame(1, 5.0, &cast_name(1)),
                frame(2, 2.0, &cast_name(2))
            ),
        );
        let e = read_cast(&backwards).unwrap_err().to_string();
        assert!(e.contains("cast.jsonl line 2: frame 2 comes before"), "{e}");
        let cut = with_cast(
            "cast-cut",
            format!("{good}{}", &frame(3, 3.0, &cast_name(3))[..30]),
        );
        assert_eq!(
            read_cast(&cut).unwrap().len(),
            2,
            "a crash's cut last frame is left out"
        );
        let none = dir_with("cast-none", &format!("{HEADER}\n"));
        assert!(read_cast(&none).unwrap().is_empty(), "no cast.jsonl: no frames");
    }
}
