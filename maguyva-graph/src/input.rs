//! What the graph is built from: files, definitions, imports and uses of
//! names. The caller (the CLI) fills these from the structural modality; the
//! graph crate depends on no sibling.

use maguyva_core::{FileId, ImportKind, Language, LineSpan};
use serde::{Deserialize, Serialize};

/// The role a definition plays in the graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DefKind {
    /// A function, method or macro: it can be called.
    Callable,
    /// A class, struct, enum, interface, trait or type alias.
    Type,
    /// A module or namespace.
    Module,
    /// A constant, property or top-level value.
    Value,
    /// A name re-exported from elsewhere.
    Reexport,
}

/// A definition, in the order of the structural modality's symbol ids.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Definition {
    /// Its name.
    pub name: String,
    /// Its name with containers.
    pub qualified_name: String,
    /// Its role.
    pub kind: DefKind,
    /// The file.
    pub file: FileId,
    /// The whole definition.
    pub lines: LineSpan,
    /// The line of the name.
    pub name_line: u32,
    /// The enclosing definition (an index into the same list).
    pub container: Option<u32>,
}

/// One import.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Import {
    /// The importing file.
    pub file: FileId,
    /// The imported path.
    pub path: String,
    /// A name imported from it, which may itself be a module.
    pub name: Option<String>,
    /// How to read `path`.
    pub kind: ImportKind,
    /// The line of the import.
    pub line: u32,
}

/// Uses of one name inside one definition (or at a file's top level).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Use {
    /// The file.
    pub file: FileId,
    /// The name.
    pub name: String,
    /// The first line it is used on.
    pub line: u32,
    /// Whether it is called.
    pub call: bool,
    /// The definition it occurs in (an index into the definitions).
    pub enclosing: Option<u32>,
    /// How many times.
    pub count: u32,
}

/// Files of one language at `paths`, declaring no package (tests' corpora).
#[cfg(test)]
pub(crate) fn files_in(language: Language, paths: &[&str]) -> Vec<FileInfo> {
    paths
        .iter()
        .map(|p| FileInfo { path: p.to_string(), language: Some(language), package: None })
        .collect()
}

/// A file of the corpus.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileInfo {
    /// Path relative to the root.
    pub path: String,
    /// Its language.
    pub language: Option<Language>,
    /// The package, namespace or module it declares (`com.acme.codec`,
    /// `Acme.Billing`), segments joined with `.`.
    pub package: Option<String>,
}
