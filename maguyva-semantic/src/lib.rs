//! The semantic modality of Maguyva: code found by meaning.
//!
//! - [`Embedder`]s turn text into vectors. [`CorpusModel`] learns latent
//!   semantic analysis from the indexed corpus at index time (no download,
//!   no key, no network); [`CodeModel`] holds vectors of the same terms
//!   trained beforehand on public code, and a query map that questions go
//!   through (built into the library); [`JoinedModel`], the default, sets
//!   a text's two vectors end to end; [`StaticModel`] loads a
//!   model2vec-format static model from a local folder; [`VoyageClient`]
//!   calls Voyage AI (`voyage-code-3`) for vectors already packed as bits.
//! - [`VectorIndex`] keeps one binary code per fragment: a full-precision
//!   vector is centred and packed as a random projection (SimHash, four
//!   sign bits per dimension) into `u64` words, a provider's packed bits
//!   are stored as given. The nearest codes by Hamming distance come from
//!   an exact popcount scan ([`nearest`]) or, from
//!   [`DEFAULT_HNSW_THRESHOLD`] vectors up, from an HNSW graph
//!   ([`HnswIndex`]). When the embedder gave full-precision vectors, int8
//!   copies of them rescore [`RESCORE_OVERSAMPLING`] times as many
//!   candidates as wanted by cosine.
//! - Told each fragment's file ([`VectorIndexBuilder::files`]), a build
//!   joins every fragment's vector with its file's direction
//!   ([`FILE_CONTEXT_WEIGHT`]), and keeps [`context_hashes`] so that a
//!   refresh embeds again every fragment of a changed file.
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
    context::{FILE_CONTEXT_WEIGHT, context_hashes},
    embed::{
        CODE_MODEL_FORMAT, CODE_MODEL_WEIGHT, CodeModel, CodeModelMeta, CorpusModel,
        DEFAULT_CORPUS_DIMENSIONS, DOCUMENTS_PER_CODE_DIMENSION, Embedder, JoinedModel,
        MIN_CODE_DIMENSIONS, Role, VOYAGE_DIMENSIONS, Vectors, code_dimensions_for,
    },
    error::{Error, Result},
    index::{
        DEFAULT_DENSE_SCAN_LIMIT, DEFAULT_HNSW_THRESHOLD, EmbedStats, RESCORE_OVERSAMPLING,
        SEMANTIC_FILE, SEMANTIC_FORMAT, SearchOptions, VectorIndex, VectorIndexBuilder,
        document_hash,
    },
    pack::{pack, words_for},
    retriever::SemanticRetriever,
    scan::{hamming, nearest},
};

#[cfg(feature = "model2vec")]
pub use crate::embed::StaticModel;
#[cfg(feature = "voyage")]
pub use crate::embed::{VoyageClient, VoyageConfig};
#[cfg(feature = "hnsw")]
pub use crate::hnsw::{BitHamming, EF_SEARCH, HnswIndex};

mod context;
mod embed;
mod error;
#[cfg(feature = "hnsw")]
mod hnsw;
mod index;
mod pack;
mod retriever;
mod scan;
