//! `browser_press_key`: a key or combo sent to whatever has focus.

use serde_json::json;

use crate::action::PressKeyArgs;
use crate::actions::{input, keys};
use crate::tab::Tab;
use crate::{ActionError, ActionOutput, Budget};

pub async fn run(tab: &Tab, args: &PressKeyArgs, budget: &Budget) -> Result<ActionOutput, ActionError> {
    let combo = keys::parse(&args.key)?;
    input::press(tab, budget, &combo).await?;
    Ok(ActionOutput::new(
        format!("Pressed {}.", args.key),
        json!({ "ok": true }),
    ))
}
