//! The graph modality: a dependency and call graph of files and symbols with
//! precomputed centrality. Filled in by the graph-modality work.
#![deny(missing_docs)]
