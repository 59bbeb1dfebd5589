//! The text modality (`maguyva-trigram`) as the engine runs it: trigram
//! postings and BM25 over every fragment's document, patched by a refresh
//! (the lists of unchanged files renumbered, only changed files analyzed).

use super::EngineOpen;
use crate::build::EngineBuild;
use crate::build::previous::ChunkChanges;
use crate::ranking::RankingConfig;
use maguyva_core::{
    BuildInput, Built, ContentStore, Error, FileRole, FragmentTable, IndexFile, Modality,
    ModalityPlugin, ModalityReader, OpenInput, Params, Result, Retriever, TermMatrix,
};
use maguyva_trigram::{
    TEXT_FILE, TEXT_FORMAT, TextChanges, TextIndex, TextIndexBuilder, TextRetriever,
};
use std::any::Any;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// The text modality.
pub(crate) struct TextModality;

/// What a build of the text modality made, and what the semantic modality
/// takes from it: the fragments' documents (only the changed ones' in a
/// refresh, `was` naming the previous fragment each unchanged one is) and,
/// in a full build, their analyzed terms.
pub(crate) struct TextBuilt {
    pub(crate) index: Arc<TextIndex>,
    pub(crate) documents: Mutex<Option<Vec<String>>>,
    pub(crate) was: Option<Vec<Option<u32>>>,
    pub(crate) terms: Mutex<Option<TermMatrix>>,
}

/// The opened text modality.
pub(crate) struct TextReader {
    pub(crate) index: Arc<TextIndex>,
    content: Arc<ContentStore>,
    fragments: Arc<FragmentTable>,
}

impl TextReader {
    pub(crate) fn new(
        index: Arc<TextIndex>,
        content: Arc<ContentStore>,
        fragments: Arc<FragmentTable>,
    ) -> TextReader {
        TextReader { index, content, fragments }
    }
}

/// The engine's build state, which every built-in modality is given.
pub(crate) fn engine_build<'a>(input: &BuildInput<'a>) -> Result<&'a EngineBuild> {
    input
        .engine
        .downcast_ref::<EngineBuild>()
        .ok_or_else(|| Error::InvalidQuery("a built-in modality built outside the engine".into()))
}

/// The engine's opening state, likewise.
pub(crate) fn engine_open<'a>(input: &OpenInput<'a>) -> Result<&'a EngineOpen> {
    input
        .engine
        .downcast_ref::<EngineOpen>()
        .ok_or_else(|| Error::InvalidQuery("a built-in modality opened outside the engine".into()))
}

/// The engine's ranking, which the built-in modalities' parameters are in.
pub(crate) fn ranking(engine: &(dyn Any + Send + Sync)) -> Result<&RankingConfig> {
    engine
        .downcast_ref::<RankingConfig>()
        .ok_or_else(|| Error::InvalidQuery("a built-in modality asked outside the engine".into()))
}

/// Whether fragment `c` is unchanged since the previous generation.
pub(crate) fn unchanged(was: Option<&[Option<u32>]>, c: usize) -> bool {
    was.is_some_and(|w| w.get(c).is_some_and(Option::is_some))
}

impl ModalityPlugin for TextModality {
    fn modality(&self) -> Modality {
        Modality::TEXT
    }

    fn summary(&self) -> &'static str {
        "literals, regular expressions and keyword ranking: trigrams and BM25"
    }

    fn files(&self) -> Vec<IndexFile> {
        vec![IndexFile { name: TEXT_FILE, format: TEXT_FORMAT, sectioned: true }]
    }

    fn component(&self, _: &(dyn Any + Send + Sync)) -> Result<String> {
        Ok(format!("v{}", TEXT_FORMAT.current))
    }

    /// A refresh makes the documents of the changed fragments only and
    /// patches the previous index; a previous index that cannot be patched
    /// is not trusted, and the index is made from every fragment, as a full
    /// build makes it, analyzing each fragment once (the semantic modality
    /// takes the terms).
    fn build(&self, input: &BuildInput<'_>, out: &Path) -> Result<Built> {
        let e = engine_build(input)?;
        let (content, fragments) = (input.content, input.fragments);
        let paths: Vec<&str> = input.files.iter().map(|f| f.path.as_str()).collect();
        let roles: Vec<FileRole> =
            input.files.iter().map(|f| FileRole::of(&f.path, f.language)).collect();
        let reusable = e.previous.as_ref().filter(|_| e.options.reuse_text);
        let changes = reusable.map(|p| ChunkChanges::new(p, input.kept, fragments));
        let was = changes.as_ref().map(|c| c.was.as_slice());
        let documents = content.fragment_documents_where(fragments, |c| !unchanged(was, c.index()));
        let previous_text = e.previous_text.lock().ok().and_then(|mut t| t.take());
        let patched = changes.as_ref().and_then(|changes| {
            let old = previous_text?;
            let changes = TextChanges {
                kept_files: &changes.kept_files,
                kept_chunks: &changes.kept_chunks,
                fresh_files: &changes.fresh_files,
                fresh_chunks: &changes.fresh_chunks,
            };
            TextIndexBuilder::new()
                .patched(&old, &changes, content, &documents, &paths, &roles)
                .ok()
        });
        let built = match patched {
            Some(text) => TextBuilt {
                index: Arc::new(text),
                documents: Mutex::new(Some(documents)),
                was: changes.map(|c| c.was),
                terms: Mutex::new(None),
            },
            None => {
                let documents = match was {
                    Some(_) => content.fragment_documents(fragments),
                    None => documents,
                };
                let terms = TermMatrix::build(&documents, maguyva_core::Analyzer::default());
                let text =
                    TextIndexBuilder::new().build_from_terms(content, &terms, &paths, &roles)?;
                TextBuilt {
                    index: Arc::new(text),
                    documents: Mutex::new(Some(documents)),
                    was: None,
                    terms: Mutex::new(Some(terms)),
                }
            }
        };
        built.index.save(out)?;
        Ok(Arc::new(built))
    }

    fn open(&self, input: &OpenInput<'_>) -> Result<Arc<dyn ModalityReader>> {
        let file = engine_open(input)?.section(input.gen_dir, TEXT_FILE, TEXT_FORMAT)?;
        let index = TextIndex::read(&file, input.files, input.fragments.len())?;
        Ok(Arc::new(TextReader::new(
            Arc::new(index),
            input.content.clone(),
            input.fragments.clone(),
        )))
    }
}

impl ModalityReader for TextReader {
    fn retriever(
        &self,
        _: Params<'_>,
        engine: &(dyn Any + Send + Sync),
    ) -> Result<Box<dyn Retriever + '_>> {
        let keyword = ranking(engine)?.keyword;
        Ok(Box::new(
            TextRetriever::new(self.index.clone(), self.content.clone(), self.fragments.clone())
                .with_params(keyword),
        ))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
