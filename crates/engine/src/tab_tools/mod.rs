//! One file per tab-scoped tool: its declaration (`TOOL`), its checks and
//! its handler (`perform`, given the call's tab and budget), listed in
//! `crate::calls`'s list of tools; the dispatch of a tab's tool to its
//! handler ([`Action::in_tab`], generated from that list); and the helpers
//! they share (element resolution, geometry across frames, keys, trusted
//! input, widgets).

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
pub mod field;
pub mod fill_form;
pub mod front;
pub mod geometry;
pub mod hover;
pub mod input;
pub mod keys;
pub mod navigate;
pub mod network;
pub mod page_tool;
pub mod pdf;
pub mod press_key;
pub mod screenshot;
pub mod scroll;
pub mod select_option;
pub mod selection;
pub mod slider;
pub mod snapshot;
pub mod type_text;
pub mod upload;
pub mod wait;

use crate::calls::{dispatch, tool_list};
use crate::tool::TabCall;

// `Action::in_tab`: a tab tool's dispatch to its `perform`.
tool_list!(dispatch tab in_tab TabCall);
