//! What the graph is built from: files, definitions, imports and uses of
//! names. The caller (the engine) fills these from the structural
//! modality's outlines, in the types every modality shares (core's
//! `SymbolKind`, `Import`, `Occurrence`); the graph crate depends on no
//! sibling.

use maguyva_core::{FileId, ImportKind, Language, LineSpan, SymbolKind};
use serde::{Deserialize, Serialize};

/// The role a definition plays in the graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) enum DefKind {
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

impl DefKind {
    /// The role of a definition of kind `kind`.
    pub(crate) fn of(kind: SymbolKind) -> DefKind {
        match kind {
            SymbolKind::Function | SymbolKind::Method | SymbolKind::Macro => DefKind::Callable,
            SymbolKind::Class
            | SymbolKind::Struct
            | SymbolKind::Enum
            | SymbolKind::Interface
            | SymbolKind::Trait
            | SymbolKind::Type => DefKind::Type,
            SymbolKind::Module => DefKind::Module,
            SymbolKind::Constant | SymbolKind::Property => DefKind::Value,
            SymbolKind::Reexport => DefKind::Reexport,
        }
    }
}

/// A definition, in the order of the structural modality's symbol ids.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Definition {
    /// Its name.
    pub name: String,
    /// Its name with containers.
    pub qualified_name: String,
    /// What it defines.
    pub kind: SymbolKind,
    /// The file.
    pub file: FileId,
    /// The whole definition.
    pub lines: LineSpan,
    /// The line of the name.
    pub name_line: u32,
    /// The enclosing definition (an index into the same list).
    pub container: Option<u32>,
}

/// One import of one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Import {
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
pub(crate) struct Use {
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
