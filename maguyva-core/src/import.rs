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
