//! The graph modality of Maguyva: a dependency and call graph of files and
//! definitions, with precomputed PageRank and degree centrality.
//!
//! - [`GraphBuilder`] takes files, [`Definition`]s, [`Import`]s and [`Use`]s
//!   of names (the CLI fills them from the structural modality) and builds a
//!   [`CallGraph`]: imports are resolved to files of the repository
//!   ([`ModuleIndex`]); a use of a name is bound to a definition in the same
//!   file first, then in the files it imports (or its package), then to the
//!   only definition of that name in the repository; when several fit, every
//!   candidate is recorded as ambiguous, never chosen silently.
//! - [`page_rank`] is a sparse power iteration (petgraph's is quadratic).
//! - [`GraphRetriever`] answers "who calls X" and "what breaks if I change X".
//!
//! ```
//! use maguyva_core::{FileId, Language, LineSpan, Occurrence, SymbolKind};
//! use maguyva_graph::*;
//! let mut b = GraphBuilder::new();
//! b.add_file(FileInfo { path: "a.py".into(), language: Some(Language::Python), package: None });
//! for name in ["f", "g"] {
//!     b.add_definition(Definition {
//!         name: name.into(), qualified_name: name.into(), kind: SymbolKind::Function,
//!         file: FileId(0), lines: LineSpan::line(1), name_line: 1, container: None,
//!     });
//! }
//! // g calls f.
//! let call = Occurrence { name: "f".into(), line: 1, call: true, enclosing: Some(1), count: 1 };
//! b.add_use(FileId(0), 0, &call);
//! let graph = b.build()?;
//! assert_eq!(graph.callers(0)[0].node, graph.def_node(1));
//! # Ok::<(), maguyva_graph::Error>(())
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub use crate::{
    dependents::{Dependent, ImpactTarget},
    error::{Error, Result},
    graph::{
        CallGraph, Edge, EdgeKind, GRAPH_FILE, GRAPH_FORMAT, GraphBuilder, MAX_AMBIGUOUS,
        ModuleRoot, PreviousGraph, Site, UnresolvedImport, normalize,
    },
    input::{Definition, FileInfo},
    manifests::{SourceFile, cargo_package_name, go_module_path, js_module_roots, module_roots},
    pagerank::{DAMPING, page_rank},
    resolve::ModuleIndex,
    retriever::{GraphParams, GraphRetriever, GraphTargets},
};

mod dependents;
mod error;
mod graph;
mod input;
mod manifests;
mod pagerank;
mod python;
mod resolve;
mod retriever;
mod rust;
