//! One file per tab-scoped tool (its arguments, its `impl Tool`: the
//! declaration, checks and handler given the call's tab and budget),
//! declared by its line in the list of tools (`crate::list`); and the
//! helpers they share (element resolution, geometry across frames, keys,
//! trusted input, widgets), declared here.

// The helpers.
pub mod annotate;
pub mod combobox;
pub mod download;
pub mod element;
pub mod field;
pub mod front;
pub mod geometry;
pub mod input;
pub mod keys;
pub mod selection;
pub mod slider;

/// The tab tools' modules, one per tab-scoped line of the list.
macro_rules! tool_modules {
    ([] $( $scope:ident $variant:ident($args:ident) = $module:ident $(, $other:ident)* ;)*) => {
        $(tool_modules!(@ $scope $module);)*
    };
    (@ tab $module:ident) => {
        pub mod $module;
    };
    (@ session $module:ident) => {};
}
crate::list::tool_list!(tool_modules);
