//! Definitions and their kinds.

pub use maguyva_core::SymbolKind;
use maguyva_core::{FileId, LineSpan};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// One definition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Symbol {
    /// The defined name (`bar` for `Foo::bar`).
    pub name: String,
    /// The name with its containers (`Foo::bar`, `pkg.Class.method`).
    pub qualified_name: String,
    /// What it defines.
    pub kind: SymbolKind,
    /// The file.
    pub file: FileId,
    /// The whole definition.
    pub lines: LineSpan,
    /// The line holding the name.
    pub name_line: u32,
    /// The line holding the name, trimmed: usually the signature.
    pub signature: String,
    /// The summary of the documentation comment or docstring (its first
    /// [`DOC_SUMMARY_WORDS`](crate::DOC_SUMMARY_WORDS) words), markers
    /// removed; may be empty.
    pub doc: String,
    /// Index of the innermost enclosing symbol in the same file's list.
    pub container: Option<u32>,
}

/// One definition of a [`SymbolTable`](crate::SymbolTable), borrowed from
/// the index file it is read from: what its record holds. Its signature
/// and doc summary, kept compressed, are read with
/// [`SymbolTable::signature`](crate::SymbolTable::signature) and
/// [`SymbolTable::doc`](crate::SymbolTable::doc).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymbolRef<'a> {
    /// The defined name (`bar` for `Foo::bar`).
    pub name: &'a str,
    /// The name with its containers (`Foo::bar`, `pkg.Class.method`).
    pub qualified_name: Cow<'a, str>,
    /// What it defines.
    pub kind: SymbolKind,
    /// The file.
    pub file: FileId,
    /// The whole definition.
    pub lines: LineSpan,
    /// The line holding the name.
    pub name_line: u32,
    /// The innermost enclosing symbol's id.
    pub container: Option<u32>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_numbered_in_declaration_order() {
        for (i, k) in SymbolKind::ALL.iter().enumerate() {
            assert_eq!(*k as usize, i);
        }
    }
}
