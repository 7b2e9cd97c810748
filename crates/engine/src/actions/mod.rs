//! One file per action. Each takes the tab, its arguments and the call's
//! budget, and returns an [`crate::ActionOutput`] or a contract error.

pub mod annotate;
pub mod cdp;
pub mod click;
pub mod combobox;
pub mod console;
pub mod dialog;
pub mod download;
pub mod drag;
pub mod element;
pub mod emulate;
pub mod evaluate;
pub mod extract;
pub mod fill_form;
pub mod geometry;
pub mod hover;
pub mod input;
pub mod keys;
pub mod navigate;
pub mod network;
pub mod pdf;
pub mod press_key;
pub mod screenshot;
pub mod scroll;
pub mod select_option;
pub mod selection;
pub mod slider;
pub mod storage;
pub mod tabs;
pub mod type_text;
pub mod upload;
pub mod wait;
