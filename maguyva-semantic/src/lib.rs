//! The semantic modality of Maguyva: code found by meaning.
//!
//! - [`Embedder`]s turn text into vectors: [`CorpusModel`] learns from the
//!   indexed corpus itself (no download), [`StaticModel`] loads a
//!   model2vec-format model from a folder, [`VoyageClient`] calls Voyage AI.
//! - [`VectorIndex`] packs vectors into binary codes (centred signs in
//!   `u64` words) and finds the nearest by Hamming distance: an exact
//!   popcount scan, or HNSW above a size threshold; full-precision (int8)
//!   copies rescore the best candidates.
//! - [`SemanticRetriever`] serves it as a `maguyva_core::Retriever`.
//!
//! ```
//! use maguyva_semantic::{Role, SearchOptions, VectorIndexBuilder};
//! let docs = ["fn open_socket() { connect(host) }", "fn draw_chart() { render(axis) }",
//!             "fn close_socket() { disconnect(host) }"];
//! let (index, _) = VectorIndexBuilder::new().build_corpus(&docs, 8)?;
//! let model = index.corpus_model().expect("a corpus index has its model");
//! use maguyva_semantic::Embedder;
//! let q = model.embed(&["connect to the host"], Role::Query)?;
//! let best = index.search(&q, 1, SearchOptions::default())?;
//! assert_ne!(best[0].0, 1);
//! # Ok::<(), maguyva_semantic::Error>(())
//! ```
#![deny(missing_docs)]

pub use crate::{
    embed::{
        CorpusModel, DEFAULT_CORPUS_DIMENSIONS, Embedder, Role, StaticModel, VOYAGE_DIMENSIONS,
        Vectors, VoyageClient, VoyageConfig,
    },
    error::{Error, Result},
    hnsw::{BitHamming, EF_SEARCH, HnswIndex},
    index::{
        DEFAULT_HNSW_THRESHOLD, EmbedStats, RESCORE_OVERSAMPLING, SEMANTIC_FILE, SEMANTIC_FORMAT,
        SearchOptions, VectorIndex, VectorIndexBuilder,
    },
    pack::{pack, words_for},
    retriever::SemanticRetriever,
    scan::{hamming, nearest},
};

mod embed;
mod error;
mod hnsw;
mod index;
mod pack;
mod retriever;
mod scan;
