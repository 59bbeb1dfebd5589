//! The text modality of Maguyva: literals, error strings, regexes and exact
//! identifiers, and BM25 ranking of keyword queries.
//!
//! - [`TrigramPostings`]: for each trigram (three bytes, ASCII case folded),
//!   a roaring bitmap of the files holding it. Literal and regex queries are
//!   planned into a [`TrigramQuery`] of required trigrams; the candidate files
//!   are then verified against their text, so a literal hit is never false and
//!   never missed.
//! - [`Bm25Index`]: BM25 over code-aware tokens (see `maguyva_core::tokens`)
//!   with the term dictionary in an fst.
//! - [`TextIndex`], built by [`TextIndexBuilder`], holds both; [`TextRetriever`]
//!   serves it as a `maguyva_core::Retriever`.
//!
//! ```no_run
//! # use maguyva_core::*;
//! let corpus = CorpusBuilder::new().build(".".as_ref())?;
//! let fragments = FragmentTable::line_windows(&corpus, &LineChunker::default());
//! let content = ContentStore::new(corpus.files.iter().map(|f| f.text.clone()).collect());
//! let paths: Vec<&str> = corpus.files.iter().map(|f| f.path.as_str()).collect();
//! let roles: Vec<FileRole> = corpus.files.iter().map(|f| FileRole::of(&f.path, f.language)).collect();
//! let documents = content.fragment_documents(&fragments);
//! let index = maguyva_trigram::TextIndexBuilder::new().build(&content, &documents, &paths, &roles)?;
//! let hits = index.literal(&content, &fragments, "ECONNREFUSED", false, 10)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub use crate::{
    bm25::{Bm25Index, Bm25Params, DEFAULT_B, DEFAULT_K1, Scored, top_k},
    error::{Error, Result},
    index::{
        DEFAULT_PATH_WEIGHT, KeywordParams, TEXT_FILE, TEXT_FORMAT, TextChanges, TextIndex,
        TextIndexBuilder, TextRetriever,
    },
    plan::{TrigramQuery, plan},
    postings::TrigramPostings,
};

mod bm25;
mod error;
mod index;
mod plan;
mod postings;
pub mod trigram;
