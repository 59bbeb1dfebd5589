//! Maguyva's engine as a library: builds, opens and refreshes an index, and
//! answers queries by running the modalities over it. The `maguyva` command
//! and `maguyva eval` both go through here, so the evaluation measures
//! exactly what users run.
//!
//! ```no_run
//! use maguyva_engine::{IndexDir, IndexSettings, NoProgress, SearchRequest};
//! use maguyva_engine::{default_index_dir, open_fresh};
//! let root = std::path::Path::new(".");
//! let dir = IndexDir::new(default_index_dir(root));
//! let settings = IndexSettings::recorded(&dir).unwrap_or_default();
//! let (index, _refresh) = open_fresh(root, &dir, &settings, &NoProgress)?;
//! for r in index.search(&SearchRequest::new("where is the config parsed"))?.results {
//!     println!("{}:{}", r.path, r.start_line);
//! }
//! # Ok::<(), maguyva_engine::Error>(())
//! ```
//!
//! Cargo features (all on by default): `voyage` (the Voyage AI client),
//! `model2vec` (static models from a folder), `hnsw` (HNSW graphs for very
//! large indexes) and `all-languages` (every tree-sitter grammar; each
//! language is a feature of `maguyva-ast`). With default features off the
//! engine needs no HTTP, TLS or tokenizer library.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod admission;
pub mod benchmark;
pub mod budget;
mod build;
mod embedder;
mod graph_report;
mod locate;
mod modalities;
mod outlines;
mod ranking;
mod references;
mod rerank;
pub mod search;
mod settings;
pub mod units;
mod verify;

/// What a program that depends on the engine alone needs of the shared
/// layer: the index folder, progress reports, and the error type.
pub use maguyva_core::{Error, IndexDir, NoProgress, Progress, Result};
pub use modalities::{modalities, plugin, plugins};

/// The README's examples, compiled as tests, so that they keep to the API.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeExamples;

pub use budget::BudgetReport;
pub use build::{
    BuildOptions, BuildReport, MODEL_DRIFT_LIMIT, build_index, build_index_with, semantic_text,
};
pub use embedder::{EmbedderChoice, VOYAGE_KEY_VAR, VOYAGE_URL_VAR};
pub use graph_report::{
    CallerRef, CallersReport, DefinitionRef, DependentRef, FileRef, ImpactReport,
};
pub use locate::{ReportReport, ReportWeights, Tie, TieKind};
pub use outlines::{OUTLINES_FILE, OUTLINES_FORMAT};
pub use ranking::{Base, CentralityScale, DEFAULT_CENTRALITY_FACTOR, RankingConfig};
pub use references::{Confidence, FileReference, ReferenceKind};
pub use search::{SearchRequest, SearchResponse, SearchResult};
pub use settings::IndexSettings;
pub use verify::{VerifiedFile, VerifyReport, verify};

use maguyva_ast::{StructuralRetriever, SymbolTable};
use maguyva_core::store::{self, FormatVersion};
use maguyva_core::{
    Array, Changes, ContentStore, CorpusBuilder, FragmentTable, Language, Manifest, Modality,
    ModalityReader, ReadGeneration, SectionFile, canonical_root,
};
use maguyva_graph::{CallGraph, GraphRetriever};
use maguyva_semantic::SemanticRetriever;
use maguyva_trigram::TextIndex;
use modalities::graph::GraphReader;
use modalities::semantic::{SemanticBuilt, SemanticReader};
use modalities::structural::{StructuralReader, structural_retriever};
use modalities::text::{TextBuilt, TextReader};
use modalities::{EngineOpen, OpenSet};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The fragment table's file inside a generation folder.
pub const FRAGMENTS_FILE: &str = "fragments.mgv";

/// Fragment table format. Changelog: v1 initial (line windows); v2 context
/// lines of syntax-aware fragments.
pub const FRAGMENTS_FORMAT: FormatVersion = FormatVersion { kind: *b"FRAG", current: 2, oldest: 2 };

/// A duration in milliseconds, to the microsecond: what timings report
/// (more digits are noise, and print as such).
pub fn millis(d: std::time::Duration) -> f64 {
    round_millis(d.as_secs_f64() * 1000.0)
}

/// Milliseconds rounded to the microsecond (a sum of rounded timings is
/// rounded again).
pub(crate) fn round_millis(ms: f64) -> f64 {
    (ms * 1000.0).round() / 1000.0
}

/// The index folder used when none is given: `<root>/.maguyva`.
pub fn default_index_dir(root: &Path) -> PathBuf {
    root.join(".maguyva")
}

/// The folder whose index a command run in `start` means: `start` or the
/// nearest folder above it with an index in its default place (as git finds
/// `.git`); `None` when none has one.
pub fn find_indexed_root(start: &Path) -> Option<PathBuf> {
    let start = start.canonicalize().ok()?;
    // A damaged index is still the one meant: it is rebuilt where it is.
    let has_index = |a: &&Path| !matches!(IndexDir::new(default_index_dir(a)).current(), Ok(None));
    start.ancestors().find(has_index).map(Path::to_path_buf)
}

/// An opened index generation. Its modalities are read on first use: a
/// search pays only for the ones its plan runs.
#[derive(Debug, Clone)]
pub struct Index {
    /// What was indexed.
    pub manifest: Manifest,
    /// The text of every file.
    pub content: Arc<ContentStore>,
    /// The fragments all modalities share.
    pub fragments: Arc<FragmentTable>,
    /// Every registered modality, opened on first use.
    modalities: Arc<OpenSet>,
    /// Centrality of each file, on the scale of the fusion boost.
    pub file_centrality: Array<f32>,
    /// The largest of `file_centrality` (0 when there are no files).
    pub max_centrality: f32,
    /// Each language's file count over the most common language's: 1 for
    /// the repository's main language, less for side languages (a build
    /// script in a Java project).
    pub language_share: HashMap<Language, f32>,
    /// The generation on disk this was read from, held so that no writer
    /// removes it while it is used; `None` for an index just built.
    generation: Option<Arc<ReadGeneration>>,
}

impl Index {
    /// The index a build just committed at `gen_dir`, from what its
    /// modalities made (the engine's own are ready; any other is opened
    /// from its files on first use).
    pub(crate) fn built(
        manifest: Manifest,
        content: ContentStore,
        fragments: FragmentTable,
        gen_dir: PathBuf,
        settings: &IndexSettings,
        built: &[(Modality, maguyva_core::Built)],
    ) -> Result<Index> {
        use modalities::built_as;
        let fragments = Arc::new(fragments);
        let content = Arc::new(content);
        let text = built_as::<TextBuilt>(built, Modality::TEXT)?;
        let symbols = built_as::<SymbolTable>(built, Modality::STRUCTURAL)?;
        let graph = built_as::<CallGraph>(built, Modality::GRAPH)?;
        let semantic = built_as::<SemanticBuilt>(built, Modality::SEMANTIC)?;
        let file_centrality = Array::from(graph.file_centrality());
        let structural = structural_retriever(&manifest, symbols, fragments.clone());
        let engine = EngineOpen {
            settings: settings.clone(),
            manifest: Arc::new(manifest.clone()),
            sections: Default::default(),
        };
        let files = manifest.files.len();
        let set = OpenSet::new(Some(gen_dir), files, fragments.clone(), content.clone(), engine)
            .ready(
                Modality::TEXT,
                Arc::new(TextReader::new(text.index.clone(), content.clone(), fragments.clone())),
            )
            .ready(Modality::STRUCTURAL, Arc::new(StructuralReader(structural)))
            .ready(
                Modality::GRAPH,
                Arc::new(GraphReader(GraphRetriever::new(graph, fragments.clone()))),
            )
            .ready(
                Modality::SEMANTIC,
                Arc::new(SemanticReader(SemanticRetriever::new(
                    semantic.vectors.clone(),
                    semantic.embedder.clone(),
                    fragments.clone(),
                ))),
            );
        Ok(Index::from_parts(manifest, content, fragments, set, file_centrality))
    }

    fn from_parts(
        manifest: Manifest,
        content: Arc<ContentStore>,
        fragments: Arc<FragmentTable>,
        modalities: OpenSet,
        file_centrality: Array<f32>,
    ) -> Index {
        let max_centrality = file_centrality.iter().copied().fold(0.0, f32::max);
        let language_share = language_share(manifest.files.iter().map(|f| f.language));
        Index {
            manifest,
            content,
            fragments,
            modalities: Arc::new(modalities),
            file_centrality,
            max_centrality,
            language_share,
            generation: None,
        }
    }

    /// Modality `m`, opened (on its first use).
    pub fn modality(&self, m: Modality) -> Result<&Arc<dyn ModalityReader>> {
        self.modalities.reader(m)
    }

    /// Reads every modality now instead of on first use, so that a
    /// server keeps answering from this index even when its folder goes
    /// away (a refresh that failed half-way, a disk unmounted).
    pub fn warm(&self) -> Result<()> {
        for m in modalities::modalities() {
            self.modality(m)?;
        }
        Ok(())
    }

    /// The text modality's index.
    pub fn text(&self) -> Result<&Arc<TextIndex>> {
        Ok(&self.modalities.engine_reader::<TextReader>(Modality::TEXT)?.index)
    }

    /// The structural modality.
    pub fn structural(&self) -> Result<&StructuralRetriever> {
        Ok(&self.modalities.engine_reader::<StructuralReader>(Modality::STRUCTURAL)?.0)
    }

    /// The structural modality, if a query has opened it already.
    pub(crate) fn structural_if_open(&self) -> Option<&StructuralRetriever> {
        Some(&self.modalities.opened_reader::<StructuralReader>(Modality::STRUCTURAL)?.0)
    }

    /// The graph modality.
    pub fn graph(&self) -> Result<&GraphRetriever> {
        Ok(&self.modalities.engine_reader::<GraphReader>(Modality::GRAPH)?.0)
    }

    /// The semantic modality.
    pub fn semantic(&self) -> Result<&SemanticRetriever> {
        Ok(&self.modalities.engine_reader::<SemanticReader>(Modality::SEMANTIC)?.0)
    }

    /// The symbol table.
    pub fn symbols(&self) -> Result<&SymbolTable> {
        Ok(self.structural()?.table())
    }
}

impl Index {
    /// Opens the current generation of `dir`, with the embedder that
    /// `settings` name for queries.
    pub fn open(dir: &IndexDir, settings: &IndexSettings) -> Result<Index> {
        let generation =
            dir.read_current()?.ok_or_else(|| Error::NoIndex { path: dir.path().to_path_buf() })?;
        Index::open_generation(generation, settings)
    }

    fn open_generation(generation: ReadGeneration, settings: &IndexSettings) -> Result<Index> {
        let mut index = Index::read_generation(generation.path(), settings)?;
        index.generation = Some(Arc::new(generation));
        Ok(index)
    }

    /// Maps every file of a generation and checks what every search uses
    /// (the manifest, the fragments, the content, each modality file's
    /// header and table of contents); each modality is read on its first
    /// use.
    fn read_generation(gen_dir: &Path, settings: &IndexSettings) -> Result<Index> {
        let manifest = Manifest::load(gen_dir)?;
        let frag_path = gen_dir.join(FRAGMENTS_FILE);
        let fragments: FragmentTable = store::load(&frag_path, FRAGMENTS_FORMAT)?;
        if fragments.file_count() != manifest.files.len()
            || fragments.len() != manifest.fragments
            || !fragments.is_consistent()
        {
            return Err(Error::corrupt(gen_dir, "files and fragments disagree with the manifest"));
        }
        let files = manifest.files.len();
        let content = Arc::new(ContentStore::from_tree(&manifest.root, &manifest.files));
        let fragments = Arc::new(fragments);
        let mut sections = Vec::new();
        for plugin in modalities::plugins() {
            for file in plugin.files().into_iter().filter(|f| f.sectioned) {
                sections
                    .push((file.name, SectionFile::open(&gen_dir.join(file.name), file.format)?));
            }
        }
        let graph_file = sections
            .iter()
            .find(|(name, _)| *name == maguyva_graph::GRAPH_FILE)
            .map(|(_, file)| file)
            .ok_or_else(|| Error::corrupt(gen_dir, "no graph file"))?;
        let file_centrality = CallGraph::read_file_centrality(graph_file, files)?;
        let engine = EngineOpen {
            settings: settings.clone(),
            manifest: Arc::new(manifest.clone()),
            sections: std::sync::Mutex::new(sections),
        };
        let set = OpenSet::new(
            Some(gen_dir.to_path_buf()),
            files,
            fragments.clone(),
            content.clone(),
            engine,
        );
        Ok(Index::from_parts(manifest, content, fragments, set, file_centrality))
    }
}

/// How [`open_fresh`] got its index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refresh {
    /// The current index matched the tree.
    Fresh,
    /// There was no index; one was built.
    Built,
    /// The tree had changed; the index was refreshed, parsing only the
    /// files that changed.
    Refreshed {
        /// What changed.
        changes: Changes,
        /// Files parsed.
        parsed: usize,
        /// Files whose parse was reused.
        reused: usize,
        /// Files whose imports and uses were resolved again (the others'
        /// links were kept).
        relinked: usize,
        /// Whether the corpus embedding model was kept.
        model_kept: bool,
    },
    /// The index was unreadable or built with other settings; rebuilt.
    Replaced(String),
    /// The tree had changed, and the refresh could not take over what it
    /// meant to from the current index (the reason); the index was built
    /// again from scratch.
    Recovered {
        /// What changed.
        changes: Changes,
        /// Why the refresh failed.
        why: String,
    },
    /// Another process is writing the index; the current one was used as is.
    UsedWhileLocked,
    /// The tree had changed but the index could not be written (no write
    /// permission, a read-only file system); the current one was used as
    /// is. Searches should leave out the files that changed
    /// ([`Index::search_as_indexed`]).
    ReadOnly {
        /// What changed.
        changes: Changes,
        /// Why the index could not be refreshed.
        why: String,
    },
}

impl Refresh {
    /// A one-line note for the user, or `None` when nothing happened.
    pub fn note(&self) -> Option<String> {
        match self {
            Refresh::Fresh => None,
            Refresh::Built => Some("no index yet: built one".into()),
            Refresh::Refreshed { changes: c, parsed, reused, relinked, model_kept } => Some(format!(
                "index refreshed ({} added, {} removed, {} modified): parsed {parsed} and \
                 relinked {relinked} of {} source files{}",
                c.added.len(),
                c.removed.len(),
                c.modified.len(),
                parsed + reused,
                if *model_kept { ", kept the embedding model" } else { "" }
            )),
            Refresh::Replaced(why) => Some(format!(
                "index rebuilt: {}",
                why.split("; run `maguyva index`").next().unwrap_or(why)
            )),
            Refresh::Recovered { changes, why } => Some(format!(
                "{} files changed, and the refresh failed ({}); rebuilt the whole index",
                changes.len(),
                why.split("; run `maguyva index`").next().unwrap_or(why)
            )),
            Refresh::ReadOnly { changes, why } => Some(format!(
                "the index is out of date ({} files changed) and cannot be refreshed ({why}); \
                 answering from it as it is",
                changes.len()
            )),
            Refresh::UsedWhileLocked => {
                Some("another maguyva process is indexing; searched the current index, which may be stale".into())
            }
        }
    }
}

/// Opens the index of `root` in `dir`, building it when missing and
/// rebuilding it when the tree, the settings or the format changed, or when
/// a file of it is damaged.
pub fn open_fresh(
    root: &Path,
    dir: &IndexDir,
    settings: &IndexSettings,
    progress: &dyn Progress,
) -> Result<(Index, Refresh)> {
    let opened = match dir.read_current() {
        Ok(None) => Err(Stale::Missing),
        Ok(Some(generation)) => {
            Index::open_generation(generation, settings).map_err(|e| Stale::Unusable(e.to_string()))
        }
        Err(e) => Err(Stale::Unusable(e.to_string())),
    };
    let (stale, current) = match opened {
        Ok(index) => match staleness(root, &index, settings, dir)? {
            None => return Ok((index, Refresh::Fresh)),
            Some(_) if dir.is_locked() => return Ok((index, Refresh::UsedWhileLocked)),
            Some(stale) => (stale, Some(index)),
        },
        Err(stale) => (stale, None),
    };
    match stale {
        // A tree that changed under an index built the same way: take what
        // did not change.
        Stale::Changed(changes) => {
            // The queries of the changed files' languages, which their parse
            // waits for, are compiled from now on, not from when the
            // refresh has walked the tree again.
            if let Some(index) = &current {
                let changed = changes.added.iter().chain(&changes.modified);
                build::compile_queries_ahead(build::languages_of(
                    Some(&index.manifest),
                    changed.map(String::as_str),
                ));
            }
            // Not held while the new generation is written, so that the
            // writer can remove the one it supersedes.
            let had_index = current.is_some();
            drop(current);
            let built = build_index_with(root, dir, settings, BuildOptions::REFRESH, progress);
            let (index, report) = match built {
                Err(e) if had_index && cannot_write(&e) => {
                    let why = e.to_string();
                    let current = Index::open(dir, settings)?;
                    return Ok((current, Refresh::ReadOnly { changes, why }));
                }
                built => built?,
            };
            let refresh = match report.recovered {
                Some(why) => Refresh::Recovered { changes, why },
                None => Refresh::Refreshed {
                    changes,
                    parsed: report.parsed_files,
                    reused: report.reused_outlines,
                    relinked: report.relinked_files,
                    model_kept: report.model_kept,
                },
            };
            Ok((index, refresh))
        }
        Stale::Missing => Ok((build_index(root, dir, settings, progress)?.0, Refresh::Built)),
        Stale::Unusable(why) => {
            drop(current);
            Ok((build_index(root, dir, settings, progress)?.0, Refresh::Replaced(why)))
        }
    }
}

/// Whether `e` says the index folder cannot be written, which leaves an
/// index that is there usable as it is.
fn cannot_write(e: &Error) -> bool {
    use std::io::ErrorKind::{PermissionDenied, ReadOnlyFilesystem};
    matches!(e, Error::Io { source, .. } if matches!(source.kind(), PermissionDenied | ReadOnlyFilesystem))
}

/// Whether `index` still describes the tree at `root` as `settings` would
/// index it: the same settings, and no file added, removed or changed (by
/// size or time; a change that keeps both is caught when the file is read).
/// Costs a stat of every indexed file while no folder changed.
pub fn is_current(
    root: &Path,
    index: &Index,
    settings: &IndexSettings,
    dir: &IndexDir,
) -> Result<bool> {
    Ok(staleness(root, index, settings, dir)?.is_none())
}

/// Why an index cannot answer for the tree as it is.
enum Stale {
    /// There is none.
    Missing,
    /// It is damaged, or was built by other components or settings.
    Unusable(String),
    /// Files changed since it was built.
    Changed(Changes),
}

fn staleness(
    root: &Path,
    index: &Index,
    settings: &IndexSettings,
    dir: &IndexDir,
) -> Result<Option<Stale>> {
    let m = &index.manifest;
    if m.components != settings.components()? || m.max_file_size != settings.max_file_size {
        return Ok(Some(Stale::Unusable(
            "it was built by another version or with other settings".into(),
        )));
    }
    let root = canonical_root(root)?;
    if root != m.root {
        return Ok(Some(Stale::Unusable(format!(
            "it indexed {}, not {}",
            m.root.display(),
            root.display()
        ))));
    }
    // Stat'ing the recorded files is enough while no folder or ignore file
    // changed; otherwise walk.
    let changes = match m.quick_changes() {
        Some(changes) => changes,
        None => {
            let mut walker = CorpusBuilder::new();
            walker.max_file_size(settings.max_file_size).exclude(dir.path());
            m.changes(&walker.scan(&root)?)
        }
    };
    Ok((!changes.is_empty()).then_some(Stale::Changed(changes)))
}

/// Each language's file count over the most common language's (see
/// [`Index::language_share`]), from each file's language.
fn language_share(languages: impl Iterator<Item = Option<Language>>) -> HashMap<Language, f32> {
    let mut counts: HashMap<Language, usize> = HashMap::new();
    for l in languages.flatten() {
        *counts.entry(l).or_default() += 1;
    }
    let top = counts.values().copied().max().unwrap_or(1).max(1) as f32;
    counts.into_iter().map(|(l, n)| (l, n as f32 / top)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_main_language_has_share_one_and_side_languages_less() {
        let files = [Some(Language::Java), None, Some(Language::Java), Some(Language::Bash)];
        let share = language_share(files.into_iter());
        assert_eq!(share.get(&Language::Java), Some(&1.0));
        assert_eq!(share.get(&Language::Bash), Some(&0.5));
        assert_eq!(share.len(), 2, "a file of no language counts for none");
        assert!(language_share(std::iter::empty()).is_empty());
    }
}
