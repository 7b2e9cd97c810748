//! `browser_snapshot find`: the lines of a rendered snapshot tree that match
//! a text (case-insensitive) or a `/regex/`, each with the lines of its
//! ancestors (read from the indentation), so the model sees where it is.
//! Pure text work on the serializer's output.

use regex::Regex;

use crate::ActionError;

/// What `find` looks for.
#[derive(Debug)]
pub enum Pattern {
    /// Plain text, lowercased: matched without regard to case.
    Text(String),
    /// `/…/` (or `/…/i`, case-insensitive).
    Regex(Regex),
}

impl Pattern {
    /// Reads `find` as the model wrote it.
    pub fn parse(find: &str) -> Result<Pattern, ActionError> {
        if find.trim().is_empty() {
            return Err(ActionError::invalid(
                "find is empty",
                "Pass the text to look for, or /regex/.",
            ));
        }
        let regex = find
            .strip_prefix('/')
            .and_then(|rest| match rest.strip_suffix("/i") {
                Some(body) => Some(format!("(?i){body}")),
                None => rest.strip_suffix('/').map(str::to_owned),
            })
            .filter(|body| !body.is_empty() && body != "(?i)");
        match regex {
            Some(body) => Regex::new(&body).map(Pattern::Regex).map_err(|e| {
                ActionError::invalid(
                    format!("find \"{find}\" is not a valid regular expression: {e}"),
                    "Fix the pattern, or pass plain text (matched case-insensitively).",
                )
            }),
            None => Ok(Pattern::Text(find.to_lowercase())),
        }
    }

    fn matches(&self, line: &str) -> bool {
        match self {
            Pattern::Text(text) => line.to_lowercase().contains(text.as_str()),
            Pattern::Regex(regex) => regex.is_match(line),
        }
    }
}

/// The lines of `tree` that match, with their ancestors, in order; and how
/// many lines matched.
pub fn filter(tree: &str, pattern: &Pattern) -> (String, usize) {
    let lines: Vec<&str> = tree.split('\n').collect();
    let mut keep = vec![false; lines.len()];
    let mut matches = 0;
    // Indices of the current line's ancestors, outermost first.
    let mut ancestors: Vec<(usize, usize)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let depth = line.len() - line.trim_start().len();
        while ancestors.last().is_some_and(|&(d, _)| d >= depth) {
            ancestors.pop();
        }
        if !line.trim().is_empty() && pattern.matches(line.trim_start()) {
            matches += 1;
            keep[i] = true;
            for &(_, a) in &ancestors {
                keep[a] = true;
            }
        }
        ancestors.push((depth, i));
    }
    let kept: Vec<&str> = lines
        .iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .map(|(l, _)| *l)
        .collect();
    (kept.join("\n"), matches)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TREE: &str = "heading \"Shop\" [ref=e1]\nnavigation [ref=e2]\n  link \"Home\" [ref=e3]\niframe \"Cart\" [ref=e4]\n  button \"Checkout\" [ref=f1e1]\n  text: 2 items\nbutton \"Help\" [ref=e5]";

    #[test]
    fn matches_come_with_their_ancestors() {
        let (text, n) = filter(TREE, &Pattern::parse("CHECKOUT").unwrap());
        assert_eq!(n, 1);
        assert_eq!(text, "iframe \"Cart\" [ref=e4]\n  button \"Checkout\" [ref=f1e1]");
        let (text, n) = filter(TREE, &Pattern::parse("/^button/").unwrap());
        assert_eq!(n, 2);
        assert_eq!(
            text,
            "iframe \"Cart\" [ref=e4]\n  button \"Checkout\" [ref=f1e1]\nbutton \"Help\" [ref=e5]"
        );
        assert_eq!(filter(TREE, &Pattern::parse("/HOME/i").unwrap()).1, 1);
        assert_eq!(filter(TREE, &Pattern::parse("/HOME/").unwrap()).1, 0);
        assert_eq!(
            filter(TREE, &Pattern::parse("nothing").unwrap()),
            (String::new(), 0)
        );
        assert!(Pattern::parse("/(/").is_err());
        assert!(Pattern::parse(" ").is_err());
        // A lone slash is text.
        assert!(matches!(Pattern::parse("/").unwrap(), Pattern::Text(_)));
    }
}
