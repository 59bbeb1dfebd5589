//! The structural modality: tree-sitter parsing of every supported file and a
//! symbol table of definitions. Filled in by the structural-modality work.
#![deny(missing_docs)]
