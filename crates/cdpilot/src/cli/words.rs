//! The CLI speaks CLI: an answer's words for a next step name the verb a
//! shell user types (`cdpilot snapshot`, `cdpilot dialog`), not the MCP
//! tool (`browser_snapshot`), which MCP answers keep. The engine writes
//! every hint with the tool's name (its one canonical name); this is the
//! one place a CLI answer (its text, an error's message and next step) is
//! rendered in the CLI's words, by the registry's verbs ([`super::verbs`]),
//! so a new tool's hints follow it without an edit here. What the page
//! said (inside `<<page-content …>>` fences) is left as the page wrote it.

/// `text` with every tool name outside page content made its CLI verb.
pub fn in_cli_words(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("<<page-content") {
        out.push_str(&outside(&rest[..start]));
        let fenced = &rest[start..];
        let end = fenced
            .find("<</page-content")
            .and_then(|close| fenced[close..].find(">>").map(|e| close + e + 2))
            .unwrap_or(fenced.len());
        out.push_str(&fenced[..end]);
        rest = &fenced[end..];
    }
    out.push_str(&outside(rest));
    out
}

/// Tool names in cdpilot's own words made verbs.
fn outside(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("browser_") {
        let before = &rest[..at];
        let boundary = !before
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        let len = rest[at..]
            .find(|c: char| !(c.is_ascii_lowercase() || c == '_'))
            .unwrap_or(rest.len() - at);
        let name = rest[at..at + len].trim_end_matches('_');
        out.push_str(before);
        match verb_of(name).filter(|_| boundary) {
            Some(verb) => out.push_str(&format!("cdpilot {verb}")),
            None => out.push_str(name),
        }
        rest = &rest[at + name.len()..];
    }
    out.push_str(rest);
    out
}

/// The CLI verb of a tool of the registry.
fn verb_of(tool: &str) -> Option<&'static str> {
    super::verbs::all()
        .iter()
        .find(|verb| verb.tool == Some(tool))
        .map(|verb| verb.name)
}

#[cfg(test)]
mod tests {
    use super::in_cli_words;

    #[test]
    fn tool_names_become_verbs_outside_page_content() {
        let said = "Take a browser_snapshot to see the page; use `browser_dialog` (or browser_tabs). \
                    <<page-content nonce=1>>\nthe page says browser_click\n<</page-content nonce=1>> then browser_navigate.";
        let cli = in_cli_words(said);
        assert!(
            cli.starts_with(
                "Take a cdpilot snapshot to see the page; use `cdpilot dialog` (or cdpilot tabs)."
            ),
            "{cli}"
        );
        assert!(cli.contains("the page says browser_click"), "{cli}");
        assert!(cli.ends_with("then cdpilot open."), "{cli}");
        // Not a tool: left as it is.
        assert_eq!(
            in_cli_words("my_browser_snapshot browser_nothing"),
            "my_browser_snapshot browser_nothing"
        );
    }
}
