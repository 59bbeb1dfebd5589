//! The semantic modality as a retriever.

use crate::embed::{Embedder, Role};
use crate::index::{SearchOptions, VectorIndex};
use maguyva_core::{ChunkId, FragmentTable, Hit, Modality, Query, Retriever};
use std::sync::Arc;

/// Embeds the query and returns the fragments nearest to it.
#[derive(Debug, Clone)]
pub struct SemanticRetriever {
    index: Arc<VectorIndex>,
    embedder: Arc<dyn Embedder>,
    fragments: Arc<FragmentTable>,
    options: SearchOptions,
}

impl SemanticRetriever {
    /// A retriever over an index and the embedder that built it.
    pub fn new(
        index: Arc<VectorIndex>,
        embedder: Arc<dyn Embedder>,
        fragments: Arc<FragmentTable>,
    ) -> Self {
        SemanticRetriever { index, embedder, fragments, options: SearchOptions::default() }
    }

    /// Searches another way.
    pub fn with_options(mut self, options: SearchOptions) -> Self {
        self.options = options;
        self
    }

    /// The index.
    pub fn index(&self) -> &VectorIndex {
        &self.index
    }

    /// The embedder.
    pub fn embedder(&self) -> &dyn Embedder {
        self.embedder.as_ref()
    }
}

impl Retriever for SemanticRetriever {
    fn modality(&self) -> Modality {
        Modality::SEMANTIC
    }

    fn search(&self, query: &Query, limit: usize) -> maguyva_core::Result<Vec<Hit>> {
        let q = self.embedder.embed(&[query.text()], Role::Query)?;
        let found = self.index.search(&q, limit, self.options)?;
        Ok(found
            .into_iter()
            .filter_map(|(i, score)| {
                let chunk = ChunkId(i);
                let f = self.fragments.try_get(chunk)?;
                Some(Hit { chunk, file: f.file, lines: f.lines, score })
            })
            .collect())
    }
}
