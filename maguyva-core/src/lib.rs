//! The shared layer of Maguyva, a code-search engine that fuses four
//! retrievers. Every modality crate depends on this one and on no sibling.
//!
//! - [`Hit`] and [`Rank`]: what retrievers return, and positions in their lists;
//! - [`Retriever`]: the trait each modality implements, over a [`Query`];
//! - [`CorpusBuilder`]: the gitignore-aware walk and parallel reading that
//!   yields a [`Corpus`] of decoded [`SourceFile`]s with their [`Language`];
//! - [`FragmentTable`]: the fragments every modality indexes, by [`ChunkId`];
//! - [`tokens`]: code-aware tokenization shared by text and semantic search;
//! - [`IndexDir`], [`Manifest`], [`ContentStore`] and [`store`]: the on-disk
//!   index, written as immutable generations of checksummed files;
//! - [`SectionFile`]: index files mapped into memory and read in place, and
//!   [`PackedStrings`]: strings in zstd blocks, opened when first read.
//!
//! ```no_run
//! use maguyva_core::{CorpusBuilder, FragmentTable, LineChunker};
//! let corpus = CorpusBuilder::new().max_file_size(512 * 1024).build(".".as_ref())?;
//! let fragments = FragmentTable::line_windows(&corpus, &LineChunker::default());
//! println!("{} files, {} fragments", corpus.files.len(), fragments.len());
//! # Ok::<(), maguyva_core::Error>(())
//! ```
#![deny(missing_docs)]

pub use crate::{
    analyzer::Analyzer,
    content::ContentStore,
    corpus::{
        CORPUS_VERSION, Corpus, CorpusBuilder, DEFAULT_MAX_FILE_SIZE, FileStat, Scan, SkipReason,
        Skipped, SourceFile, canonical_root, is_binary,
    },
    error::{Error, Result, error_chain},
    fragment::{Fragment, FragmentSpan, FragmentTable, LineChunker, line_starts},
    guards::{WalkGuards, settle_before_scan},
    hit::{Hit, Rank, sort_hits},
    ids::{ChunkId, FileId, SymbolId},
    ignore_rules::IgnoreRules,
    import::{Import, ImportKind, Occurrence},
    index_dir::{IndexDir, ReadGeneration, Staging, WriteLock, remove_unfinished_generations},
    language::Language,
    lexer::{Lexed, Region, lex, whole_words, word_occurrences},
    manifest::{Changes, FileEntry, MANIFEST_FILE, MANIFEST_FORMAT, Manifest},
    modality::{MAX_MODALITIES, Modality, ModalityError, ParseModalityError},
    outline::{OutlineSpan, SyntaxChunker},
    packed::PackedStrings,
    paths::{
        FileRole, file_stem, holds_no_code, is_data_path, is_doc_path, is_test_path, join_relative,
    },
    plugin::{
        BuildInput, Built, BuiltModalities, IndexFile, ModalityPlugin, ModalityReader, OpenInput,
        OpenedModalities, ParamSpec, Params,
    },
    progress::{NoProgress, Progress},
    query::{MAX_QUERY_CHARS, MatchMode, Query},
    retriever::Retriever,
    sections::{Array, Bytes, SectionFile, SectionWriter, Text},
    span::LineSpan,
    symbol_kind::SymbolKind,
    term_matrix::TermMatrix,
};

mod analyzer;
mod content;
mod corpus;
mod error;
mod fragment;
mod guards;
mod hit;
mod ids;
mod ignore_rules;
mod import;
mod index_dir;
mod language;
mod lexer;
mod manifest;
mod modality;
mod outline;
pub mod packed;
mod paths;
mod plugin;
mod progress;
mod query;
mod retriever;
pub mod sections;
mod span;
pub mod store;
mod symbol_kind;
mod term_matrix;
pub mod tokens;
pub mod varint;
