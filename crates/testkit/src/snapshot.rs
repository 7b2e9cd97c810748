//! Reading a snapshot's text as an agent does: the ref of the element a
//! line names. One copy for every test and benchmark.

/// The ref of the first element whose line has `needle`, or whose text
/// line under it does (`listitem [ref=e3]` then `text: Alpha`): the
/// nearest line above it, less indented, with a ref. `None`: no such line.
pub fn find_ref(snapshot: &str, needle: &str) -> Option<String> {
    let lines: Vec<&str> = snapshot.lines().collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let reference = |l: &str| {
        let start = l.find("[ref=")? + 5;
        Some(l[start..].split(']').next()?.to_owned())
    };
    for (i, line) in lines.iter().enumerate().filter(|(_, l)| l.contains(needle)) {
        if let Some(r) = reference(line) {
            return Some(r);
        }
        if !line.trim_start().starts_with("text:") {
            continue;
        }
        let above = lines[..i].iter().rev().find(|l| indent(l) < indent(line));
        if let Some(r) = above.and_then(|l| reference(l)) {
            return Some(r);
        }
    }
    None
}

/// [`find_ref`], panicking with the snapshot when there is none.
pub fn ref_of(snapshot: &str, needle: &str) -> String {
    find_ref(snapshot, needle)
        .unwrap_or_else(|| panic!("no element with {needle:?} and a ref in:\n{snapshot}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SNAPSHOT: &str =
        "list [ref=e1]\n  listitem [ref=e2]\n    text: Alpha\n  button \"Go\" [ref=f1e7]\n  text: loose";

    #[test]
    fn the_ref_on_the_line_or_above_its_text() {
        assert_eq!(ref_of(SNAPSHOT, "\"Go\""), "f1e7");
        assert_eq!(ref_of(SNAPSHOT, "Alpha"), "e2");
        assert_eq!(ref_of(SNAPSHOT, "loose"), "e1");
        assert_eq!(find_ref(SNAPSHOT, "Beta"), None);
    }
}
