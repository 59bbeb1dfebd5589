//! Fusion for Maguyva: weighted Reciprocal Rank Fusion of the modalities'
//! ranked lists, with the seed's constants. A pure function: ranked lists,
//! weights, k and centralities in, a fused ranking out; no I/O.
//!
//! ```
//! use maguyva_core::{ChunkId, FileId, Hit, LineSpan, Modality};
//! use maguyva_fusion::{FusionParams, ModalityWeights, NoContext, fuse};
//! let hit = |f| Hit { chunk: ChunkId(f), file: FileId(f), lines: LineSpan::line(1), score: 1.0 };
//! let lists = vec![(Modality::TEXT, vec![hit(1), hit(2)]), (Modality::STRUCTURAL, vec![hit(2)])];
//! let weights = ModalityWeights::of(&[(Modality::TEXT, 0.1), (Modality::STRUCTURAL, 0.6)]);
//! let fused = fuse(&lists, &weights, &FusionParams::default(), &NoContext);
//! assert_eq!(fused[0].file, FileId(2));
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub use crate::{
    classify::{
        CONFIDENCE_BARE_IDENTIFIER, CONFIDENCE_DEFINITION_KEYWORD, CONFIDENCE_ERROR_TOKEN,
        CONFIDENCE_FALLBACK, CONFIDENCE_IDENTIFIER_MIN, CONFIDENCE_IMPACT, CONFIDENCE_QUOTED,
        CONFIDENCE_REFERENCES, CONFIDENCE_SIMILAR, CONFIDENCE_UNDERSTAND, Classification,
        DIRECT_THRESHOLD, IntentClassifier, Rule,
    },
    intent::{Intent, WeightProfile},
    plan::{Plan, PlanRequest, fallback_plan, plan},
    preset::{FusionStrategy, Preset},
    query_text::{
        DEFINITION_QUESTION_WORDS, bare_name, definition_name, has_quoted_span, is_identifier_like,
        last_segment, named_identifiers, whole_quoted,
    },
    report::{
        Frame, REPORT_PROSE_WORDS, REPORT_PROSE_WORDS_WITH_CODE, ReportAnalysis, ReportIdentifier,
        fuse_evidence,
    },
    rerank::{
        FEATURE_COUNT, FEATURE_NAMES, FUSED_FEATURE, Features, FitParams, ModelMismatch,
        QUESTION_KINDS, QuestionKind, RerankModel, TrainingQuestion,
    },
    rrf::{Contribution, FusedHit, FusionContext, FusionParams, NoContext, fuse},
    signals::{
        FileFacts, NAMED_FILE_LIFT, PATH_WORDS_LIFT, QUERY_SYMBOL_LIFT, Signals, TEST_FILE_FACTOR,
        file_prior, folded_name, is_test_path, path_word_share,
    },
    trees::{Tree, TreeParams},
    weights::{
        BOOST_SCALE, MAX_BOOST, ModalityWeights, RRF_K_DEFAULT, RRF_K_THOROUGH, VENDOR_FACTOR,
        centrality_boost, is_vendor_path,
    },
};

mod classify;
mod intent;
mod plan;
mod preset;
mod query_text;
mod report;
mod rerank;
mod rrf;
mod signals;
mod trees;
mod weights;
