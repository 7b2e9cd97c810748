//! Trusted input through CDP's `Input` domain: mouse clicks and keys whose
//! events the page sees with `isTrusted === true`.

use cdp::protocol::input;

use crate::action::{Modifier, MouseButton};
use crate::tab::Tab;
use crate::{ActionError, Budget};

/// CDP's modifier bit mask.
pub fn modifier_mask(modifiers: &[Modifier]) -> u32 {
    modifiers
        .iter()
        .map(|m| match m {
            Modifier::Alt => 1,
            Modifier::Control => 2,
            Modifier::Meta => 4,
            Modifier::Shift => 8,
        })
        .fold(0, |a, b| a | b)
}

/// Moves to `(x, y)`, presses and releases `button` `count` times.
pub async fn click(
    tab: &Tab,
    budget: &Budget,
    (x, y): (f64, f64),
    button: MouseButton,
    count: u32,
    modifiers: u32,
) -> Result<(), ActionError> {
    let (name, mask) = match button {
        MouseButton::Left => ("left", 1),
        MouseButton::Right => ("right", 2),
        MouseButton::Middle => ("middle", 4),
    };
    let event = |kind: &str, button: &str, buttons: u32, click_count: u32| input::DispatchMouseEvent {
        kind: kind.into(),
        x,
        y,
        button: button.into(),
        buttons,
        click_count,
        modifiers,
    };
    // All events go out at once, in order: Chrome queues input per page and
    // handles it in order, and an event that changes what is painted (hover,
    // :active, the click's own effect) is acknowledged only after a frame,
    // so awaiting them one by one would cost a frame each.
    let mut events = vec![event("mouseMoved", "none", 0, 0)];
    for n in 1..=count {
        events.push(event("mousePressed", name, mask, n));
        events.push(event("mouseReleased", name, 0, n));
    }
    let sends = events
        .into_iter()
        .map(|e| budget.cdp("clicking", &tab.session, e));
    futures_util::future::try_join_all(sends).await?;
    Ok(())
}

/// Presses and releases Enter (the form-submitting key).
pub async fn press_enter(tab: &Tab, budget: &Budget) -> Result<(), ActionError> {
    let key = |kind: &str, text: Option<&str>| input::DispatchKeyEvent {
        kind: kind.into(),
        key: "Enter".into(),
        code: "Enter".into(),
        text: text.map(str::to_owned),
        windows_virtual_key_code: 13,
        native_virtual_key_code: 13,
        modifiers: 0,
    };
    budget
        .cdp("pressing Enter", &tab.session, key("keyDown", Some("\r")))
        .await?;
    budget
        .cdp("releasing Enter", &tab.session, key("keyUp", None))
        .await?;
    Ok(())
}

/// Inserts text at the caret, as an IME commit would (one `input` event).
pub async fn insert_text(tab: &Tab, budget: &Budget, text: &str) -> Result<(), ActionError> {
    budget
        .cdp(
            "typing the text",
            &tab.session,
            input::InsertText {
                text: text.to_owned(),
            },
        )
        .await?;
    Ok(())
}

/// Presses Delete, to remove a selection when there is no text to insert.
pub async fn press_delete(tab: &Tab, budget: &Budget) -> Result<(), ActionError> {
    let key = |kind: &str| input::DispatchKeyEvent {
        kind: kind.into(),
        key: "Delete".into(),
        code: "Delete".into(),
        text: None,
        windows_virtual_key_code: 46,
        native_virtual_key_code: 46,
        modifiers: 0,
    };
    budget
        .cdp("clearing the field", &tab.session, key("rawKeyDown"))
        .await?;
    budget
        .cdp("clearing the field", &tab.session, key("keyUp"))
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modifiers_combine_into_cdp_bits() {
        assert_eq!(modifier_mask(&[]), 0);
        assert_eq!(modifier_mask(&[Modifier::Control, Modifier::Shift]), 10);
        assert_eq!(modifier_mask(&[Modifier::Alt, Modifier::Meta]), 5);
    }
}
