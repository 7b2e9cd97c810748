//! One file per action. Each takes the tab, its arguments and the call's
//! budget, and returns an [`crate::ActionOutput`] or a contract error.

pub mod click;
pub mod dialog;
pub mod element;
pub mod evaluate;
pub mod input;
pub mod navigate;
pub mod screenshot;
pub mod type_text;
pub mod wait;
