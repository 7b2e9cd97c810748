//! Key names to what CDP's `Input.dispatchKeyEvent` needs: `key`, `code`,
//! the Windows virtual key code, and the text a key types. Pure, tested.

use crate::ActionError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key {
    pub key: String,
    pub code: String,
    pub key_code: u32,
    /// What the key types (None for keys that type nothing).
    pub text: Option<String>,
}

/// A parsed combo: modifiers held (CDP bit mask and their keys) and the key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Combo {
    pub modifiers: Vec<Key>,
    pub mask: u32,
    pub key: Key,
}

fn named(key: &str, code: &str, key_code: u32, text: Option<&str>) -> Key {
    Key {
        key: key.into(),
        code: code.into(),
        key_code,
        text: text.map(str::to_owned),
    }
}

fn modifier(name: &str) -> Option<(Key, u32)> {
    Some(match name {
        "Alt" => (named("Alt", "AltLeft", 18, None), 1),
        "Control" | "Ctrl" => (named("Control", "ControlLeft", 17, None), 2),
        "Meta" | "Command" | "Cmd" => (named("Meta", "MetaLeft", 91, None), 4),
        "Shift" => (named("Shift", "ShiftLeft", 16, None), 8),
        _ => return None,
    })
}

fn key(name: &str, shift: bool) -> Option<Key> {
    let key = match name {
        "Enter" => named("Enter", "Enter", 13, Some("\r")),
        "Tab" => named("Tab", "Tab", 9, None),
        "Escape" | "Esc" => named("Escape", "Escape", 27, None),
        "Backspace" => named("Backspace", "Backspace", 8, None),
        "Delete" => named("Delete", "Delete", 46, None),
        "Insert" => named("Insert", "Insert", 45, None),
        "ArrowUp" => named("ArrowUp", "ArrowUp", 38, None),
        "ArrowDown" => named("ArrowDown", "ArrowDown", 40, None),
        "ArrowLeft" => named("ArrowLeft", "ArrowLeft", 37, None),
        "ArrowRight" => named("ArrowRight", "ArrowRight", 39, None),
        "PageUp" => named("PageUp", "PageUp", 33, None),
        "PageDown" => named("PageDown", "PageDown", 34, None),
        "Home" => named("Home", "Home", 36, None),
        "End" => named("End", "End", 35, None),
        "Space" | " " => named(" ", "Space", 32, Some(" ")),
        _ => {
            if let Some(n) = name
                .strip_prefix('F')
                .and_then(|n| n.parse::<u32>().ok())
                .filter(|n| (1..=12).contains(n))
            {
                return Some(named(name, name, 111 + n, None));
            }
            let mut chars = name.chars();
            let (Some(c), None) = (chars.next(), chars.next()) else {
                return None;
            };
            let typed = if shift {
                c.to_uppercase().to_string()
            } else {
                c.to_string()
            };
            if c.is_ascii_alphabetic() {
                let upper = c.to_ascii_uppercase();
                return Some(Key {
                    key: typed.clone(),
                    code: format!("Key{upper}"),
                    key_code: upper as u32,
                    text: Some(typed),
                });
            }
            if c.is_ascii_digit() {
                return Some(Key {
                    key: typed.clone(),
                    code: format!("Digit{c}"),
                    key_code: c as u32,
                    text: Some(typed),
                });
            }
            Key {
                key: typed.clone(),
                code: String::new(),
                key_code: 0,
                text: Some(typed),
            }
        }
    };
    Some(key)
}

/// Parses `Enter`, `a`, `Control+a`, `Shift+Tab`, `Control+Shift+ArrowLeft`.
pub fn parse(spec: &str) -> Result<Combo, ActionError> {
    let invalid = || {
        ActionError::invalid(
            format!("\"{spec}\" is not a key"),
            "Use a key name (Enter, Tab, Escape, Backspace, ArrowDown, PageDown, F5, …), one character, or a combo like Control+a.",
        )
    };
    if spec.is_empty() {
        return Err(invalid());
    }
    // "+" alone, or a combo ending in "+" ("Control++"), names the plus key.
    let (head, last) = match spec.strip_suffix("++") {
        Some(head) => (head, "+"),
        None if spec == "+" => ("", "+"),
        None => match spec.rsplit_once('+') {
            Some((head, last)) => (head, last),
            None => ("", spec),
        },
    };
    let mut modifiers = Vec::new();
    let mut mask = 0;
    for name in head.split('+').filter(|s| !s.is_empty()) {
        let (key, bit) = modifier(name).ok_or_else(invalid)?;
        modifiers.push(key);
        mask |= bit;
    }
    let key = match modifier(last) {
        Some((key, _)) if !modifiers.is_empty() || head.is_empty() => key,
        _ => key(last, mask & 8 != 0).ok_or_else(invalid)?,
    };
    Ok(Combo { modifiers, mask, key })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_characters_and_combos() {
        let enter = parse("Enter").unwrap();
        assert_eq!(
            (
                enter.key.code.as_str(),
                enter.key.key_code,
                enter.key.text.as_deref()
            ),
            ("Enter", 13, Some("\r"))
        );
        let a = parse("a").unwrap();
        assert_eq!((a.key.code.as_str(), a.key.key_code, a.mask), ("KeyA", 65, 0));
        let select_all = parse("Control+a").unwrap();
        assert_eq!(select_all.mask, 2);
        assert_eq!(select_all.modifiers[0].key, "Control");
        assert_eq!(select_all.key.key, "a");
        let shift_tab = parse("Shift+Tab").unwrap();
        assert_eq!((shift_tab.mask, shift_tab.key.key.as_str()), (8, "Tab"));
        assert_eq!(parse("Shift+a").unwrap().key.text.as_deref(), Some("A"));
        assert_eq!(parse("F5").unwrap().key.key_code, 116);
        assert_eq!(parse("Control++").unwrap().key.key, "+");
        assert_eq!(parse("7").unwrap().key.code, "Digit7");
        assert_eq!(parse("Shift").unwrap().key.key, "Shift");
        for bad in ["", "Hyper+a", "Enterr", "Control+Nope"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
