//! How an import names what it imports: the vocabulary shared by the
//! structural modality, which finds imports, and the graph modality, which
//! resolves them to files.

use serde::{Deserialize, Serialize};

/// How an import names what it imports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ImportKind {
    /// A module path (`shop.pricing`, `crate::a::b`, `com.acme.Cart`), or a
    /// path starting with `.` relative to the file.
    Module,
    /// A file path relative to the importing file (`require_relative`,
    /// `#include "x.h"`, `source ./x.sh`).
    Relative,
    /// A Rust `mod name;` declaration.
    ModDecl,
    /// A system include (`#include <stdio.h>`).
    System,
}

/// One import of a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Import {
    /// The imported path, with quotes, keywords and item lists removed.
    pub path: String,
    /// A name imported from it, which may itself be a module.
    pub name: Option<String>,
    /// How `path` is to be read.
    pub kind: ImportKind,
    /// The line of the import.
    pub line: u32,
}

/// Uses of one name inside one definition (or at the top level of the file).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Occurrence {
    /// The name used.
    pub name: String,
    /// The first line where it is used there.
    pub line: u32,
    /// Whether it is called (rather than only mentioned).
    pub call: bool,
    /// The innermost definition it occurs in (index into the file's symbols).
    pub enclosing: Option<u32>,
    /// How many times.
    pub count: u32,
}
