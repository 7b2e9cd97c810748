//! Trusted input through CDP's `Input` domain: mouse clicks and keys whose
//! events the page sees with `isTrusted === true`.

use cdp::protocol::input;

use crate::args::{Modifier, MouseButton};
use crate::tab::Tab;
use crate::tab_tools::keys::{self, Combo, Key};
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

/// Presses and releases `button` `count` times at `(x, y)`, where the
/// pointer already is (`element::Element::aim` moved it there and checked
/// what is at the point).
pub async fn press_at(
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
    // handles it in order, and an event that changes what is painted
    // (:active, the click's own effect) is acknowledged only after a frame,
    // so awaiting them one by one would cost a frame each.
    let mut events = Vec::new();
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

/// Presses a key combo: modifiers down, the key down and up, modifiers up.
/// Events go out in one ordered batch, like a click's.
pub async fn press(tab: &Tab, budget: &Budget, combo: &Combo) -> Result<(), ActionError> {
    let event = |kind: &str, key: &Key, mask: u32, text: Option<String>| input::DispatchKeyEvent {
        kind: kind.into(),
        key: key.key.clone(),
        code: key.code.clone(),
        text,
        windows_virtual_key_code: key.key_code,
        native_virtual_key_code: key.key_code,
        modifiers: mask,
    };
    let mut events = Vec::new();
    let mut held = 0;
    for (m, bit) in combo.modifiers.iter().zip(modifier_bits(combo)) {
        held |= bit;
        events.push(event("rawKeyDown", m, held, None));
    }
    // With Control, Alt or Meta held a key types nothing: it is a shortcut.
    let types = combo.key.text.clone().filter(|_| combo.mask & 0b0111 == 0);
    let down = if types.is_some() { "keyDown" } else { "rawKeyDown" };
    events.push(event(down, &combo.key, combo.mask, types));
    events.push(event("keyUp", &combo.key, combo.mask, None));
    for (m, bit) in combo.modifiers.iter().zip(modifier_bits(combo)).rev() {
        events.push(event("keyUp", m, held & !bit, None));
        held &= !bit;
    }
    let sends = events
        .into_iter()
        .map(|e| budget.cdp("pressing keys", &tab.session, e));
    futures_util::future::try_join_all(sends).await?;
    Ok(())
}

fn modifier_bits(combo: &Combo) -> Vec<u32> {
    combo
        .modifiers
        .iter()
        .map(|m| match m.key.as_str() {
            "Alt" => 1,
            "Control" => 2,
            "Meta" => 4,
            _ => 8,
        })
        .collect()
}

/// Presses and releases Enter (the form-submitting key).
pub async fn press_enter(tab: &Tab, budget: &Budget) -> Result<(), ActionError> {
    press(tab, budget, &keys::parse("Enter")?).await
}

/// Presses Delete, to remove a selection when there is no text to insert.
pub async fn press_delete(tab: &Tab, budget: &Budget) -> Result<(), ActionError> {
    press(tab, budget, &keys::parse("Delete")?).await
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

/// Moves the mouse to `(x, y)` (hover).
pub async fn move_to(tab: &Tab, budget: &Budget, (x, y): (f64, f64)) -> Result<(), ActionError> {
    let event = input::DispatchMouseEvent {
        kind: "mouseMoved".into(),
        x,
        y,
        button: "none".into(),
        ..Default::default()
    };
    budget.cdp("moving the mouse", &tab.session, event).await?;
    Ok(())
}

/// Turns the mouse wheel at `(x, y)` by `delta` pixels (x, y).
pub async fn wheel(
    tab: &Tab,
    budget: &Budget,
    (x, y): (f64, f64),
    (delta_x, delta_y): (f64, f64),
) -> Result<(), ActionError> {
    let event = input::DispatchMouseWheel {
        kind: "mouseWheel".into(),
        x,
        y,
        delta_x,
        delta_y,
    };
    budget.cdp("turning the mouse wheel", &tab.session, event).await?;
    Ok(())
}

/// One mouse event with the left button: `mouseMoved` (held down when
/// `pressed`), `mousePressed` or `mouseReleased`. A drag is made of these.
pub async fn left_mouse(
    tab: &Tab,
    budget: &Budget,
    kind: &str,
    (x, y): (f64, f64),
    pressed: bool,
) -> Result<(), ActionError> {
    let moving = kind == "mouseMoved";
    let event = input::DispatchMouseEvent {
        kind: kind.into(),
        x,
        y,
        button: if moving && !pressed { "none" } else { "left" }.into(),
        buttons: u32::from(pressed),
        click_count: u32::from(!moving),
        modifiers: 0,
    };
    budget.cdp("dragging", &tab.session, event).await?;
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
