//! What kind of thing a definition defines: the structural modality's
//! symbols and the graph's definitions share it.

use serde::{Deserialize, Serialize};

/// What kind of thing a definition defines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SymbolKind {
    /// A free function.
    Function,
    /// A function inside a class, struct, trait, interface or impl.
    Method,
    /// A class (or an object, a record).
    Class,
    /// A struct or union.
    Struct,
    /// An enumeration.
    Enum,
    /// An interface, protocol or type class.
    Interface,
    /// A trait.
    Trait,
    /// A type alias or type declaration.
    Type,
    /// A module, namespace or package-level object.
    Module,
    /// A constant or top-level value.
    Constant,
    /// A macro.
    Macro,
    /// A property.
    Property,
    /// A name re-exported from elsewhere (`pub use`, `export { x } from`);
    /// where the definition itself lies outside the corpus, this is where
    /// the name enters it.
    Reexport,
}

impl SymbolKind {
    /// Every kind, in the order of their numbers in the index file.
    pub const ALL: [SymbolKind; 13] = [
        SymbolKind::Function,
        SymbolKind::Method,
        SymbolKind::Class,
        SymbolKind::Struct,
        SymbolKind::Enum,
        SymbolKind::Interface,
        SymbolKind::Trait,
        SymbolKind::Type,
        SymbolKind::Module,
        SymbolKind::Constant,
        SymbolKind::Macro,
        SymbolKind::Property,
        SymbolKind::Reexport,
    ];

    /// The name used in query files, output and kind hints.
    pub fn name(self) -> &'static str {
        match self {
            SymbolKind::Function => "function",
            SymbolKind::Method => "method",
            SymbolKind::Class => "class",
            SymbolKind::Struct => "struct",
            SymbolKind::Enum => "enum",
            SymbolKind::Interface => "interface",
            SymbolKind::Trait => "trait",
            SymbolKind::Type => "type",
            SymbolKind::Module => "module",
            SymbolKind::Constant => "constant",
            SymbolKind::Macro => "macro",
            SymbolKind::Property => "property",
            SymbolKind::Reexport => "reexport",
        }
    }

    /// The kind named in a query file's `@definition.NAME` capture.
    pub fn from_capture(name: &str) -> Option<SymbolKind> {
        Some(match name {
            "function" => SymbolKind::Function,
            "method" => SymbolKind::Method,
            "class" => SymbolKind::Class,
            "struct" => SymbolKind::Struct,
            "enum" => SymbolKind::Enum,
            "interface" => SymbolKind::Interface,
            "trait" => SymbolKind::Trait,
            "type" => SymbolKind::Type,
            "module" => SymbolKind::Module,
            "constant" => SymbolKind::Constant,
            "macro" => SymbolKind::Macro,
            "property" => SymbolKind::Property,
            "reexport" => SymbolKind::Reexport,
            _ => return None,
        })
    }

    /// Whether this kind defines a type (and so can hold methods).
    pub fn is_type(self) -> bool {
        matches!(
            self,
            SymbolKind::Class
                | SymbolKind::Struct
                | SymbolKind::Enum
                | SymbolKind::Interface
                | SymbolKind::Trait
        )
    }

    /// Whether this kind is callable.
    pub fn is_callable(self) -> bool {
        matches!(self, SymbolKind::Function | SymbolKind::Method | SymbolKind::Macro)
    }
}

impl std::fmt::Display for SymbolKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
