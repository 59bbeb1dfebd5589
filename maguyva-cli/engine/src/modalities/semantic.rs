//! The semantic modality (`maguyva-semantic`) as the engine runs it: each
//! fragment's document embedded (its file's path, then the document), the
//! vectors of unchanged fragments reused and the corpus model kept until
//! the corpus drifts.

use super::text::{TextBuilt, engine_build, engine_open, ranking, unchanged};
use crate::embedder::EmbedderChoice;
use crate::settings::IndexSettings;
use crate::{BuildOptions, MODEL_DRIFT_LIMIT, semantic_text};
use maguyva_core::{
    BuildInput, Built, ChunkId, Error, IndexDir, IndexFile, Manifest, Modality, ModalityPlugin,
    ModalityReader, OpenInput, Params, Result, Retriever, TermMatrix,
};
use maguyva_semantic::{
    EmbedStats, Embedder, SEMANTIC_FILE, SEMANTIC_FORMAT, SemanticRetriever, VectorIndex,
    VectorIndexBuilder,
};
use std::any::Any;
use std::path::Path;
use std::sync::Arc;

/// The semantic modality.
pub(crate) struct SemanticModality;

/// What a build of the semantic modality made.
pub(crate) struct SemanticBuilt {
    pub(crate) vectors: Arc<VectorIndex>,
    pub(crate) embedder: Arc<dyn Embedder>,
    pub(crate) stats: EmbedStats,
    /// Whether the previous corpus model was kept.
    pub(crate) model_kept: bool,
}

/// The opened semantic modality.
pub(crate) struct SemanticReader(pub(crate) SemanticRetriever);

/// The documents vectors are made of: each fragment's path and text. A
/// refresh leaves the unchanged fragments' texts empty and names the
/// previous fragment each one is (`was`); the previous index has its hash.
struct SemanticDocuments<'a> {
    texts: Vec<String>,
    /// Each document's file, whose vector it takes in.
    files: Arc<[u32]>,
    was: Option<&'a [Option<u32>]>,
    /// Every document, for when the empty ones are needed after all.
    all: &'a dyn Fn() -> Vec<String>,
}

impl SemanticDocuments<'_> {
    /// Every document's text.
    fn complete(&mut self) -> &[String] {
        if self.was.take().is_some() {
            self.texts = (self.all)();
        }
        &self.texts
    }

    /// Each document's hash as `builder` makes it, the previous index's
    /// for an unchanged fragment; `None` when `previous` does not have that
    /// fragment, or when a file has both (a document's hash takes in its
    /// file's, so a file is fresh or unchanged as a whole).
    fn hashes(&self, previous: &VectorIndex, builder: &VectorIndexBuilder) -> Option<Vec<u64>> {
        let known = previous.document_hashes();
        let was = |c: usize| self.was.and_then(|w| w.get(c).copied().flatten());
        let mut fresh_files = std::collections::HashMap::new();
        for (c, &file) in self.files.iter().enumerate() {
            if *fresh_files.entry(file).or_insert(was(c).is_none()) != was(c).is_none() {
                return None;
            }
        }
        let fresh = builder.document_hashes(&self.texts).ok()?;
        (0..self.texts.len())
            .map(|c| match was(c) {
                Some(old) => known.get(old as usize).copied(),
                None => fresh.get(c).copied(),
            })
            .collect()
    }
}

/// The semantic index of the fragments' documents, reusing the vectors of
/// unchanged fragments from the current generation when its embedder is the
/// same one, and keeping its corpus model when `options` allow.
fn embed(
    dir: &IndexDir,
    settings: &IndexSettings,
    options: BuildOptions,
    mut documents: SemanticDocuments<'_>,
    terms: impl FnOnce() -> Option<TermMatrix>,
) -> Result<SemanticBuilt> {
    let mut builder = VectorIndexBuilder::new();
    builder.hnsw_threshold(settings.hnsw_threshold).files(Some(documents.files.clone()));
    let previous = || {
        dir.current()
            .ok()
            .flatten()
            .and_then(|g| Manifest::load(&g).ok().map(|m| (g, m)))
            .and_then(|(g, m)| VectorIndex::load(&g, m.fragments).ok())
    };
    let Some(dimensions) = settings.embedder.corpus_dimensions() else {
        let embedder = settings
            .embedder
            .open()?
            .ok_or_else(|| maguyva_core::Error::corrupt(dir.path(), "no embedder"))?;
        let documents = documents.complete();
        let (vectors, stats) = builder.build(embedder.as_ref(), documents, previous().as_ref())?;
        return Ok(SemanticBuilt {
            vectors: Arc::new(vectors),
            embedder,
            stats,
            model_kept: false,
        });
    };
    if let EmbedderChoice::Joined { .. } = settings.embedder {
        builder.code_model(Some(crate::embedder::builtin_code_model()?));
    }
    let mut kept = None;
    if let Some(p) = options.reuse_model.then(previous).flatten() {
        let hashes = documents.hashes(&p, &builder).or_else(|| {
            documents.complete();
            documents.hashes(&p, &builder)
        });
        if let Some(hashes) = hashes.filter(|h| keepable_model(&p, dimensions, h)) {
            kept = builder.build_with_kept_model_hashed(&p, &documents.texts, &hashes)?;
        }
    }
    let model_kept = kept.is_some();
    let (vectors, stats) = match kept {
        Some(built) => built,
        None => {
            let documents = documents.complete();
            match terms() {
                Some(terms) => builder.build_corpus_from_terms(documents, &terms, dimensions)?,
                None => builder.build_corpus(documents, dimensions)?,
            }
        }
    };
    let embedder = vectors
        .model_embedder()
        .ok_or_else(|| maguyva_core::Error::corrupt(dir.path(), "no corpus model"))?;
    Ok(SemanticBuilt { vectors: Arc::new(vectors), embedder, stats, model_kept })
}

/// Whether the previous index's corpus model may be kept: it has the
/// dimensions asked for at most, and at most [`MODEL_DRIFT_LIMIT`] of the
/// documents (by their `hashes`) are new to it.
fn keepable_model(previous: &VectorIndex, dimensions: usize, hashes: &[u64]) -> bool {
    let Some(model) = previous.corpus_model() else { return false };
    if model.dimension() > dimensions || hashes.is_empty() {
        return false;
    }
    let known: std::collections::HashSet<u64> =
        previous.document_hashes().iter().copied().collect();
    let new = hashes.iter().filter(|h| !known.contains(h)).count();
    new as f64 <= MODEL_DRIFT_LIMIT * hashes.len() as f64
}

/// The embedder of queries: the one `settings` name, or the corpus model
/// the index was built with; it must be the one that made the vectors.
pub(crate) fn query_embedder(
    vectors: &VectorIndex,
    settings: &IndexSettings,
    path: &Path,
) -> Result<Arc<dyn Embedder>> {
    let embedder: Arc<dyn Embedder> = match (vectors.model_embedder(), settings.embedder.open()?) {
        (_, Some(e)) => e,
        (Some(model), None) => model,
        (None, None) => return Err(Error::corrupt(path, "the semantic index has no corpus model")),
    };
    if embedder.identity() != vectors.identity() {
        return Err(Error::corrupt(path, "the semantic index was built by another embedder"));
    }
    Ok(embedder)
}

impl ModalityPlugin for SemanticModality {
    fn modality(&self) -> Modality {
        Modality::SEMANTIC
    }

    fn summary(&self) -> &'static str {
        "code by meaning: embeddings, packed binary codes, Hamming search"
    }

    fn files(&self) -> Vec<IndexFile> {
        vec![IndexFile { name: SEMANTIC_FILE, format: SEMANTIC_FORMAT, sectioned: true }]
    }

    fn component(&self, engine: &(dyn Any + Send + Sync)) -> Result<String> {
        let settings = engine
            .downcast_ref::<IndexSettings>()
            .ok_or_else(|| Error::InvalidQuery("the semantic modality needs settings".into()))?;
        Ok(format!(
            "v{}:{}:hnsw>={}",
            SEMANTIC_FORMAT.current,
            settings.embedder.identity()?,
            settings.hnsw_threshold
        ))
    }

    fn builds_on(&self) -> Vec<Modality> {
        vec![Modality::TEXT]
    }

    /// The documents the text modality made (the changed fragments' only,
    /// in a refresh), with their file's path; in a full build, the terms it
    /// analyzed them into, with the paths' terms, train the corpus model.
    fn build(&self, input: &BuildInput<'_>, out: &Path) -> Result<Built> {
        let e = engine_build(input)?;
        let text = input.others.built(Modality::TEXT)?;
        let text = text
            .downcast_ref::<TextBuilt>()
            .ok_or_else(|| Error::InvalidQuery("the text modality built no documents".into()))?;
        let fragments = input.fragments;
        let paths: Vec<&str> = input.files.iter().map(|f| f.path.as_str()).collect();
        let path = |f: maguyva_core::FileId| paths.get(f.index()).copied().unwrap_or("");
        let semantic = |documents: &[String], made: &dyn Fn(usize) -> bool| -> Vec<String> {
            (fragments.iter().zip(documents).enumerate())
                .map(|(c, ((_, f), d))| match made(c) {
                    true => semantic_text(path(f.file), d),
                    false => String::new(),
                })
                .collect()
        };
        let was = text.was.as_deref();
        let all = || semantic(&input.content.fragment_documents(fragments), &|_| true);
        let (texts, was) = match text.documents.lock().ok().and_then(|mut d| d.take()) {
            Some(documents) => (semantic(&documents, &|c| !unchanged(was, c)), was),
            // Taken already (a build run twice): made again, every one.
            None => (all(), None),
        };
        let files: Arc<[u32]> = fragments.iter().map(|(_, f)| f.file.0).collect();
        let semantic_docs = SemanticDocuments { texts, files, was, all: &all };
        let terms = || {
            let terms = text.terms.lock().ok().and_then(|mut t| t.take())?;
            let paths = TermMatrix::build(&paths, maguyva_core::Analyzer::default());
            Some(terms.with_prefixes(&paths, |c| {
                fragments.try_get(ChunkId(c as u32)).map_or(0, |f| f.file.index())
            }))
        };
        let built = embed(&e.dir, &e.settings, e.options, semantic_docs, terms)?;
        built.vectors.save(out)?;
        Ok(Arc::new(built))
    }

    fn open(&self, input: &OpenInput<'_>) -> Result<Arc<dyn ModalityReader>> {
        let e = engine_open(input)?;
        let file = e.section(input.gen_dir, SEMANTIC_FILE, SEMANTIC_FORMAT)?;
        let vectors = VectorIndex::read(&file, input.gen_dir, input.fragments.len())?;
        let embedder = query_embedder(&vectors, &e.settings, file.path())?;
        let retriever =
            SemanticRetriever::new(Arc::new(vectors), embedder, input.fragments.clone());
        Ok(Arc::new(SemanticReader(retriever)))
    }
}

impl ModalityReader for SemanticReader {
    fn retriever(
        &self,
        _: Params<'_>,
        engine: &(dyn Any + Send + Sync),
    ) -> Result<Box<dyn Retriever + '_>> {
        let options = ranking(engine)?.semantic.options();
        Ok(Box::new(self.0.clone().with_options(options)))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
