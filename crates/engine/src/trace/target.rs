//! What a ref was shown as, read off the snapshot tree the agent had: its
//! role, its name and its ordinal among the tree's lines of the same role
//! and name. A replay re-finds the element by these, never by the ref's
//! number (`cdpilot replay`).
//!
//! A tree line reads `  button "Save" [ref=e5] [disabled]`
//! (`scripts/serializer.js`): what comes before ` [ref=` is the role and
//! the quoted name.

use serde::{Deserialize, Serialize};

/// A ref's element as the snapshot showed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    /// The ref the call named (`e5`, `t2f1e3`).
    #[serde(rename = "ref")]
    pub reference: String,
    /// Its role (`button`).
    pub role: String,
    /// Its accessible name (empty: none).
    pub name: String,
    /// 0 for the first line of this role and name in the tree, 1 for the
    /// second, …
    pub ordinal: usize,
    /// How many lines of this role and name the tree had.
    pub of: usize,
}

impl Target {
    /// `button "Save"` (the second of 3).
    pub fn describe(&self) -> String {
        let mut text = self.role.clone();
        if !self.name.is_empty() {
            text += &format!(" {:?}", self.name);
        }
        if self.of > 1 {
            text += &format!(" (number {} of {})", self.ordinal + 1, self.of);
        }
        text
    }
}

/// One tree line's role-and-name (as written) and ref.
fn line(text: &str) -> Option<(&str, &str)> {
    let at = text.find(" [ref=")?;
    let rest = &text[at + 6..];
    let reference = &rest[..rest.find(']')?];
    Some((text[..at].trim_start(), reference))
}

/// A ref's element part (`e5` of `t2e5`): trees carry no tab part.
fn element_part(reference: &str) -> &str {
    crate::validate::split_tab(reference).1
}

/// Role and name from a line's head (`button "Save"`).
fn role_and_name(head: &str) -> (String, String) {
    match head.split_once(' ') {
        Some((role, quoted)) => {
            let name = serde_json::from_str::<String>(quoted).unwrap_or_else(|_| quoted.to_owned());
            (role.to_owned(), name)
        }
        None => (head.to_owned(), String::new()),
    }
}

/// What `tree` showed `reference` as, if it shows it.
pub fn identify(tree: &str, reference: &str) -> Option<Target> {
    let wanted = element_part(reference);
    let lines: Vec<(&str, &str)> = tree.lines().filter_map(line).collect();
    let (head, _) = *lines.iter().find(|(_, r)| *r == wanted)?;
    let same: Vec<&str> = lines
        .iter()
        .filter(|(h, _)| *h == head)
        .map(|(_, r)| *r)
        .collect();
    let (role, name) = role_and_name(head);
    Some(Target {
        reference: reference.to_owned(),
        role,
        name,
        ordinal: same.iter().position(|r| *r == wanted)?,
        of: same.len(),
    })
}

/// The refs of `tree`'s lines shown with `target`'s role and name, in
/// order, each with the tab part `target`'s ref had.
pub fn find(tree: &str, target: &Target) -> Vec<String> {
    let tab = crate::validate::split_tab(&target.reference)
        .0
        .unwrap_or_default();
    tree.lines()
        .filter_map(line)
        .filter(|(head, _)| role_and_name(head) == (target.role.clone(), target.name.clone()))
        .map(|(_, r)| format!("{tab}{r}"))
        .collect()
}

/// What re-finding `target` in a tree came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// The element: as many lines of its role and name as recorded, and
    /// the one at its ordinal.
    One(String),
    /// No line of its role and name.
    Missing,
    /// Another number of lines than recorded (`refs`): which one is meant
    /// cannot be told.
    Ambiguous(Vec<String>),
}

/// Re-finds `target` in `tree`.
pub fn refind(tree: &str, target: &Target) -> Found {
    let refs = find(tree, target);
    if refs.is_empty() {
        Found::Missing
    } else if refs.len() == target.of {
        Found::One(refs[target.ordinal].clone())
    } else {
        Found::Ambiguous(refs)
    }
}

/// Every ref a call's arguments name: the string values of keys `ref` and
/// `…_ref`, by JSON pointer (`/ref`, `/fields/1/ref`).
pub fn refs_in(arguments: &serde_json::Value) -> Vec<(String, String)> {
    let mut found = Vec::new();
    walk(arguments, String::new(), &mut found);
    found
}

fn walk(value: &serde_json::Value, at: String, found: &mut Vec<(String, String)>) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, value) in map {
                let path = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
                match value {
                    serde_json::Value::String(r) if key == "ref" || key.ends_with("_ref") => {
                        found.push((path, r.clone()))
                    }
                    _ => walk(value, path, found),
                }
            }
        }
        serde_json::Value::Array(items) => {
            for (i, value) in items.iter().enumerate() {
                walk(value, format!("{at}/{i}"), found);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TREE: &str = "heading \"Shop\"\nbutton \"Add\" [ref=e1]\nlist\n  button \"Add\" [ref=e2] [disabled]\n  link \"Say \\\"hi\\\"\" [ref=e3]\nbutton [ref=f1e4]";

    #[test]
    fn a_ref_is_known_by_role_name_and_ordinal() {
        let second = identify(TREE, "t2e2").unwrap();
        assert_eq!((second.role.as_str(), second.name.as_str()), ("button", "Add"));
        assert_eq!((second.ordinal, second.of), (1, 2));
        assert_eq!(identify(TREE, "e3").unwrap().name, "Say \"hi\"");
        assert_eq!(identify(TREE, "f1e4").unwrap().name, "");
        assert_eq!(identify(TREE, "e9"), None);
        assert_eq!(refind(TREE, &second), Found::One("t2e2".into()));
    }

    #[test]
    fn a_renamed_or_added_element_is_not_guessed() {
        let add = identify(TREE, "e1").unwrap();
        let renamed = TREE.replace("button \"Add\" [ref=e1]", "button \"Plus\" [ref=e1]");
        // One "Add" left of two: which one was meant cannot be told.
        assert_eq!(refind(&renamed, &add), Found::Ambiguous(vec!["e2".into()]));
        let gone = renamed.replace("button \"Add\" [ref=e2]", "button \"More\" [ref=e2]");
        assert_eq!(refind(&gone, &add), Found::Missing);
    }

    #[test]
    fn refs_are_found_anywhere_in_the_arguments() {
        let args = serde_json::json!({"ref": "e1", "fields": [{"ref": "e2", "value": "x"}], "end_ref": "e3", "text": "ref"});
        let mut refs = refs_in(&args);
        refs.sort();
        assert_eq!(
            refs,
            [
                ("/end_ref".to_owned(), "e3".to_owned()),
                ("/fields/0/ref".into(), "e2".into()),
                ("/ref".into(), "e1".into())
            ]
        );
    }
}
