//! The engine: builds, opens and refreshes an index, and answers queries by
//! running the modalities over it. The CLI and `maguyva eval` both go through
//! here, so the evaluation measures exactly what users run.

mod build;
mod embedder;
mod graph_report;
mod ranking;
mod references;
pub mod search;
mod settings;
mod verify;

pub use build::{BuildReport, build_index};
pub use embedder::{EmbedderChoice, VOYAGE_KEY_VAR, VOYAGE_URL_VAR};
pub use graph_report::{
    CallerRef, CallersReport, DefinitionRef, DependentRef, FileRef, ImpactReport,
};
pub use ranking::{Base, CentralityScale, DEFAULT_CENTRALITY_FACTOR, RankingConfig};
pub use references::{Confidence, FileReference, ReferenceKind};
pub use search::{SearchRequest, SearchResponse, SearchResult};
pub use settings::IndexSettings;
pub use verify::{VerifiedFile, VerifyReport, verify};

use maguyva_ast::{StructuralRetriever, SymbolTable};
use maguyva_core::store::{self, FormatVersion};
use maguyva_core::{
    Array, Changes, ContentStore, CorpusBuilder, Error, FragmentTable, IndexDir, Manifest,
    Progress, ReadGeneration, Result, SectionFile,
};
use maguyva_graph::{CallGraph, GraphRetriever};
use maguyva_semantic::{Embedder, SemanticRetriever, VectorIndex};
use maguyva_trigram::TextIndex;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// The fragment table's file inside a generation folder.
pub const FRAGMENTS_FILE: &str = "fragments.mgv";

/// Fragment table format. Changelog: v1 initial (line windows); v2 context
/// lines of syntax-aware fragments.
pub const FRAGMENTS_FORMAT: FormatVersion = FormatVersion { kind: *b"FRAG", current: 2, oldest: 2 };

/// The index folder used when none is given: `<root>/.maguyva`.
pub fn default_index_dir(root: &Path) -> PathBuf {
    root.join(".maguyva")
}

/// What an index is made of, built or loaded.
#[derive(Debug)]
pub struct IndexParts {
    /// What was indexed.
    pub manifest: Manifest,
    /// The text of every file.
    pub content: ContentStore,
    /// The fragments.
    pub fragments: FragmentTable,
    /// The text modality.
    pub text: TextIndex,
    /// The structural modality.
    pub symbols: SymbolTable,
    /// The graph modality.
    pub graph: CallGraph,
    /// The semantic modality's vectors.
    pub vectors: VectorIndex,
    /// The embedder of its queries.
    pub embedder: Arc<dyn Embedder>,
}

/// An opened index generation.
#[derive(Debug, Clone)]
pub struct Index {
    /// What was indexed.
    pub manifest: Manifest,
    /// The text of every file.
    pub content: Arc<ContentStore>,
    /// The fragments all modalities share.
    pub fragments: Arc<FragmentTable>,
    /// The text modality.
    pub text: Arc<TextIndex>,
    /// The structural modality.
    pub structural: StructuralRetriever,
    /// The graph modality, decoded on first use.
    graph: LazyGraph,
    /// The semantic modality.
    pub semantic: SemanticRetriever,
    /// Centrality of each file, on the scale of the fusion boost.
    pub file_centrality: Array<f32>,
    /// The largest of `file_centrality` (0 when there are no files).
    pub max_centrality: f32,
    /// The generation on disk this was read from, held so that no writer
    /// removes it while it is used; `None` for an index just built.
    generation: Option<Arc<ReadGeneration>>,
}

/// The graph modality of an index: most searches never need it, so an
/// opened index decodes it on first use.
#[derive(Debug, Clone)]
struct LazyGraph {
    /// The graph, or why it could not be read: (file, reason).
    cell: Arc<OnceLock<std::result::Result<GraphRetriever, (PathBuf, String)>>>,
    source: Option<Arc<GraphSource>>,
}

#[derive(Debug)]
struct GraphSource {
    file: SectionFile,
    files: usize,
    definitions: usize,
    fragments: Arc<FragmentTable>,
}

impl LazyGraph {
    fn get(&self) -> Result<&GraphRetriever> {
        let loaded = self.cell.get_or_init(|| {
            let Some(s) = &self.source else { return Err((PathBuf::new(), "no graph".into())) };
            match CallGraph::read(&s.file, s.files, s.definitions) {
                Ok(g) => Ok(GraphRetriever::new(Arc::new(g), s.fragments.clone())),
                // The reason alone, so that it is not wrapped twice.
                Err(maguyva_graph::Error::Core(Error::Corrupt { path, reason })) => {
                    Err((path, reason))
                }
                Err(e) => Err((s.file.path().to_path_buf(), e.to_string())),
            }
        });
        loaded.as_ref().map_err(|(path, reason)| Error::corrupt(path, reason.clone()))
    }
}

impl Index {
    /// Puts an index together from its parts.
    pub fn assemble(parts: IndexParts) -> Index {
        let IndexParts { manifest, content, fragments, text, symbols, graph, vectors, embedder } =
            parts;
        let fragments = Arc::new(fragments);
        let file_centrality = Array::from(graph.file_centrality());
        let graph = GraphRetriever::new(Arc::new(graph), fragments.clone());
        let graph = LazyGraph { cell: Arc::new(OnceLock::from(Ok(graph))), source: None };
        let semantic = SemanticRetriever::new(Arc::new(vectors), embedder, fragments.clone());
        Index::from_parts(
            manifest,
            content,
            fragments,
            text,
            symbols,
            graph,
            file_centrality,
            semantic,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn from_parts(
        manifest: Manifest,
        content: ContentStore,
        fragments: Arc<FragmentTable>,
        text: TextIndex,
        symbols: SymbolTable,
        graph: LazyGraph,
        file_centrality: Array<f32>,
        semantic: SemanticRetriever,
    ) -> Index {
        let paths: Vec<&str> = manifest.files.iter().map(|f| f.path.as_str()).collect();
        let structural = StructuralRetriever::new(Arc::new(symbols), fragments.clone(), &paths);
        let max_centrality = file_centrality.iter().copied().fold(0.0, f32::max);
        Index {
            semantic,
            manifest,
            content: Arc::new(content),
            fragments,
            text: Arc::new(text),
            structural,
            graph,
            file_centrality,
            max_centrality,
            generation: None,
        }
    }

    /// The graph modality; an opened index decodes it on first use.
    pub fn graph(&self) -> Result<&GraphRetriever> {
        self.graph.get()
    }

    /// The symbol table.
    pub fn symbols(&self) -> &SymbolTable {
        self.structural.table()
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
        // Every file is mapped and read in place; what little is decoded
        // (the symbol table's checks, the corpus model's header) runs in
        // parallel.
        let (files, chunks) = (manifest.files.len(), fragments.len());
        let ((content, text), (vectors, symbols_and_graph)) = rayon::join(
            || {
                rayon::join(
                    || ContentStore::load(gen_dir),
                    || TextIndex::load(gen_dir, files, chunks),
                )
            },
            || {
                rayon::join(
                    || VectorIndex::load(gen_dir, chunks),
                    || -> Result<(SymbolTable, SectionFile, Array<f32>)> {
                        let symbols = SymbolTable::load(gen_dir, files)?;
                        let graph = CallGraph::open_file(gen_dir)?;
                        let central = CallGraph::read_file_centrality(&graph, files)?;
                        Ok((symbols, graph, central))
                    },
                )
            },
        );
        let (content, text, vectors, (symbols, graph_file, file_centrality)) =
            (content?, text?, vectors?, symbols_and_graph?);
        if content.len() != files {
            return Err(Error::corrupt(gen_dir, "the content store disagrees with the manifest"));
        }
        let embedder: Arc<dyn Embedder> = match (vectors.corpus_model(), settings.embedder.open()?)
        {
            (_, Some(e)) => e,
            (Some(model), None) => model.clone(),
            (None, None) => {
                return Err(Error::corrupt(gen_dir, "the semantic index has no corpus model"));
            }
        };
        if embedder.identity() != vectors.identity() {
            return Err(Error::corrupt(
                gen_dir,
                "the semantic index was built by another embedder",
            ));
        }
        let fragments = Arc::new(fragments);
        let graph = LazyGraph {
            cell: Arc::new(OnceLock::new()),
            source: Some(Arc::new(GraphSource {
                file: graph_file,
                files,
                definitions: symbols.len(),
                fragments: fragments.clone(),
            })),
        };
        let semantic = SemanticRetriever::new(Arc::new(vectors), embedder, fragments.clone());
        Ok(Index::from_parts(
            manifest,
            content,
            fragments,
            text,
            symbols,
            graph,
            file_centrality,
            semantic,
        ))
    }
}

/// How [`open_fresh`] got its index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refresh {
    /// The current index matched the tree.
    Fresh,
    /// There was no index; one was built.
    Built,
    /// The tree had changed; the index was rebuilt whole.
    Rebuilt(Changes),
    /// The index was unreadable or built with other settings; rebuilt.
    Replaced(String),
    /// Another process is writing the index; the current one was used as is.
    UsedWhileLocked,
}

impl Refresh {
    /// A one-line note for the user, or `None` when nothing happened.
    pub fn note(&self) -> Option<String> {
        match self {
            Refresh::Fresh => None,
            Refresh::Built => Some("no index yet: built one".into()),
            Refresh::Rebuilt(c) => Some(format!(
                "index was stale ({} added, {} removed, {} modified): full rebuild",
                c.added.len(),
                c.removed.len(),
                c.modified.len()
            )),
            Refresh::Replaced(why) => Some(format!(
                "index rebuilt: {}",
                why.split("; run `maguyva index`").next().unwrap_or(why)
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
        Ok(None) => Err(Refresh::Built),
        Ok(Some(generation)) => Index::open_generation(generation, settings)
            .map_err(|e| Refresh::Replaced(format!("{e}"))),
        Err(e) => Err(Refresh::Replaced(format!("{e}"))),
    };
    let why = match opened {
        Ok(index) => match staleness(root, &index, settings, dir)? {
            None => return Ok((index, Refresh::Fresh)),
            Some(why) => {
                if dir.is_locked() {
                    return Ok((index, Refresh::UsedWhileLocked));
                }
                why
            }
        },
        Err(why) => why,
    };
    let (index, _) = build_index(root, dir, settings, progress)?;
    Ok((index, why))
}

fn staleness(
    root: &Path,
    index: &Index,
    settings: &IndexSettings,
    dir: &IndexDir,
) -> Result<Option<Refresh>> {
    let m = &index.manifest;
    if m.components != settings.components()? || m.max_file_size != settings.max_file_size {
        return Ok(Some(Refresh::Replaced(
            "it was built by another version or with other settings".into(),
        )));
    }
    let mut walker = CorpusBuilder::new();
    walker.max_file_size(settings.max_file_size).exclude(dir.path());
    let scan = walker.scan(root)?;
    if scan.root != m.root {
        return Ok(Some(Refresh::Replaced(format!(
            "it indexed {}, not {}",
            m.root.display(),
            scan.root.display()
        ))));
    }
    let changes = m.changes(&scan);
    Ok(if changes.is_empty() { None } else { Some(Refresh::Rebuilt(changes)) })
}
