//! The structural modality of Maguyva: tree-sitter parsing of 20 languages,
//! a symbol table of definitions, syntax outlines for fragments, and
//! definition search.
//!
//! - [`outline`] parses one file and runs its language's extraction query
//!   (`queries/<language>.scm`), giving [`Symbol`]s (name, kind, qualified
//!   name, signature, doc comment, span) and the outline that syntax-aware
//!   fragments follow;
//! - [`SymbolTable`] holds every definition of a corpus with fst
//!   dictionaries of normalized names and name words;
//! - [`StructuralRetriever`] ranks definitions for a query.
//!
//! ```no_run
//! use maguyva_core::{FileId, Language};
//! let outline = maguyva_ast::outline(Language::Rust, "pub fn parse_config() {}", FileId(0));
//! assert_eq!(outline.symbols[0].name, "parse_config");
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub use crate::{
    error::{Error, Result},
    extract::{
        FileOutline, OutlineItem, PARSE_BUDGET, check_queries, outline, prepare, prepare_serially,
        query_source, separator,
    },
    grammar::{grammar, has_grammar},
    occurrence::{Import, Occurrence, import_path},
    package::declared_package,
    search::{DefinitionQuery, StructuralParams, StructuralRetriever},
    symbol::{Symbol, SymbolKind, SymbolRef},
    table::{DOC_SUMMARY_WORDS, SYMBOLS_FILE, SYMBOLS_FORMAT, SymbolTable, doc_summary, normalize},
};

mod error;
mod extract;
mod grammar;
mod occurrence;
mod package;
mod rewrite;
mod search;
mod symbol;
mod table;
