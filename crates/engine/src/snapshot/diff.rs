//! `browser_snapshot diff`: what changed in a snapshot tree since the tab's
//! previous snapshot of the same document (and scope). Lines are compared
//! as text (a longest-common-subsequence over the lines that differ); a
//! removed and an added line are one changed line (`~`) when they carry the
//! same ref, or, without refs, the same depth and role. Refs are stable
//! within a document, so unchanged elements keep theirs. The previous tree
//! is the tab's (`tab::refs`).

/// What changed between two trees.
#[derive(Debug, Default, PartialEq)]
pub struct Changes {
    /// `+ `, `- ` and `~ ` lines, in the new tree's order.
    pub lines: Vec<String>,
    pub added: usize,
    pub removed: usize,
    pub changed: usize,
}

/// Above this many cells (lines × lines of the part that differs) the
/// comparison gives up on pairing lines and lists that part as removed and
/// added: still correct, only longer.
const MAX_CELLS: usize = 4_000_000;

enum Op {
    Same,
    Removed(usize),
    Added(usize),
}

/// The changes from `old` to `new`.
pub fn between(old: &str, new: &str) -> Changes {
    let a: Vec<&str> = old.split('\n').collect();
    let b: Vec<&str> = new.split('\n').collect();
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (am, bm) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let mut ops = Vec::new();
    if am.len() * bm.len() <= MAX_CELLS {
        // lcs[i][j]: the longest common subsequence of am[i..] and bm[j..].
        let width = bm.len() + 1;
        let mut lcs = vec![0u32; (am.len() + 1) * width];
        for i in (0..am.len()).rev() {
            for j in (0..bm.len()).rev() {
                lcs[i * width + j] = if am[i] == bm[j] {
                    lcs[(i + 1) * width + j + 1] + 1
                } else {
                    lcs[(i + 1) * width + j].max(lcs[i * width + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < am.len() || j < bm.len() {
            if i < am.len() && j < bm.len() && am[i] == bm[j] {
                ops.push(Op::Same);
                i += 1;
                j += 1;
            } else if j < bm.len() && (i == am.len() || lcs[i * width + j + 1] >= lcs[(i + 1) * width + j]) {
                ops.push(Op::Added(j));
                j += 1;
            } else {
                ops.push(Op::Removed(i));
                i += 1;
            }
        }
    } else {
        ops.extend((0..am.len()).map(Op::Removed));
        ops.extend((0..bm.len()).map(Op::Added));
    }
    let mut changes = Changes::default();
    let mut hunk: (Vec<&str>, Vec<&str>) = (Vec::new(), Vec::new());
    for op in ops.into_iter().chain([Op::Same]) {
        match op {
            Op::Removed(i) => hunk.0.push(am[i]),
            Op::Added(j) => hunk.1.push(bm[j]),
            Op::Same => {
                let (removed, added) = std::mem::take(&mut hunk);
                settle(&mut changes, removed, added);
            }
        }
    }
    changes
}

/// Writes one run of removed and added lines, pairing changed ones.
fn settle(changes: &mut Changes, removed: Vec<&str>, added: Vec<&str>) {
    let mut partner: Vec<Option<usize>> = vec![None; added.len()];
    let mut taken = vec![false; removed.len()];
    // Same ref first: the same element, changed.
    for (j, line) in added.iter().enumerate() {
        if let Some(r) = ref_of(line) {
            if let Some(i) = (0..removed.len()).find(|&i| !taken[i] && ref_of(removed[i]) == Some(r)) {
                taken[i] = true;
                partner[j] = Some(i);
            }
        }
    }
    // Then lines without refs (text) of the same depth and role, in order.
    for (j, line) in added.iter().enumerate() {
        if partner[j].is_some() || ref_of(line).is_some() {
            continue;
        }
        let same_kind =
            |i: usize| !taken[i] && ref_of(removed[i]).is_none() && kind(removed[i]) == kind(line);
        if let Some(i) = (0..removed.len()).find(|&i| same_kind(i)) {
            taken[i] = true;
            partner[j] = Some(i);
        }
    }
    for (i, line) in removed.iter().enumerate() {
        if !taken[i] && !line.trim().is_empty() {
            changes.lines.push(format!("- {line}"));
            changes.removed += 1;
        }
    }
    for (j, line) in added.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        if partner[j].is_some() {
            changes.lines.push(format!("~ {line}"));
            changes.changed += 1;
        } else {
            changes.lines.push(format!("+ {line}"));
            changes.added += 1;
        }
    }
}

/// The ref a line carries (`e12`, `f2e7`).
fn ref_of(line: &str) -> Option<&str> {
    let start = line.find("[ref=")? + 5;
    let len = line[start..].find(']')?;
    Some(&line[start..start + len])
}

/// A line's depth and first word (`text:`, `button`).
fn kind(line: &str) -> (usize, &str) {
    let depth = line.len() - line.trim_start().len();
    (depth, line.trim_start().split(' ').next().unwrap_or_default())
}

/// Every ref in a tree, in order.
pub fn refs(tree: &str) -> Vec<String> {
    tree.lines().filter_map(ref_of).map(str::to_owned).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_changed_line_is_all_a_diff_says() {
        let old = "heading \"Counter\" [ref=e1]\nbutton \"Add\" [ref=e2]\n  text: Clicked 0 times\nlink \"More\" [ref=e3]";
        let new = "heading \"Counter\" [ref=e1]\nbutton \"Add\" [ref=e2]\n  text: Clicked 1 times\nlink \"More\" [ref=e3]";
        let changes = between(old, new);
        assert_eq!(changes.lines, vec!["~   text: Clicked 1 times"]);
        assert_eq!((changes.added, changes.removed, changes.changed), (0, 0, 1));
        assert_eq!(between(old, old), Changes::default());
    }

    #[test]
    fn refs_pair_changed_elements_and_the_rest_is_added_or_removed() {
        let old = "button \"Save\" [ref=e1] [disabled]\ntext: a\nlink \"Gone\" [ref=e2]";
        let new = "button \"Save\" [ref=e1]\ntext: a\ndialog \"Done\" [ref=e3]\n  button \"OK\" [ref=e4]";
        let changes = between(old, new);
        assert_eq!(
            changes.lines,
            vec![
                "~ button \"Save\" [ref=e1]",
                "- link \"Gone\" [ref=e2]",
                "+ dialog \"Done\" [ref=e3]",
                "+   button \"OK\" [ref=e4]"
            ]
        );
        assert_eq!(refs(new), vec!["e1", "e3", "e4"]);
    }
}
