//! Settings that shape an index; changing any of them makes an index stale.

use super::embedder::EmbedderChoice;
use maguyva_core::{DEFAULT_MAX_FILE_SIZE, Language, SyntaxChunker};
use std::collections::BTreeMap;

/// How an index is built.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexSettings {
    /// Files larger than this many bytes are skipped.
    pub max_file_size: u64,
    /// How files are cut into fragments.
    pub chunker: SyntaxChunker,
    /// The semantic modality's embedder.
    pub embedder: EmbedderChoice,
    /// Vectors from this many fragments up are searched with HNSW.
    pub hnsw_threshold: usize,
}

impl Default for IndexSettings {
    fn default() -> Self {
        IndexSettings {
            max_file_size: DEFAULT_MAX_FILE_SIZE,
            chunker: SyntaxChunker::default(),
            embedder: EmbedderChoice::from_environment(),
            hnsw_threshold: maguyva_semantic::DEFAULT_HNSW_THRESHOLD,
        }
    }
}

/// A short hash of every extraction query, so that changing a query file
/// rebuilds indexes made with the old one.
fn queries_hash() -> String {
    let mut all = String::new();
    for l in Language::ALL {
        all.push_str(maguyva_ast::query_source(l));
    }
    format!("{:08x}", crc32fast::hash(all.as_bytes()))
}

impl IndexSettings {
    /// The identity of every component the settings select, recorded in the
    /// manifest; an index whose record differs is rebuilt.
    pub fn components(&self) -> maguyva_core::Result<BTreeMap<String, String>> {
        let mut c = BTreeMap::new();
        c.insert("maguyva".into(), env!("CARGO_PKG_VERSION").into());
        c.insert("corpus".into(), format!("v{}", maguyva_core::CORPUS_VERSION));
        c.insert(
            "fragments".into(),
            format!(
                "syntax:{}:{}:{}",
                self.chunker.target_lines, self.chunker.max_whole_lines, self.chunker.max_bytes
            ),
        );
        c.insert("text".into(), format!("v{}", maguyva_trigram::TEXT_FORMAT.current));
        c.insert("graph".into(), format!("v{}", maguyva_graph::GRAPH_FORMAT.current));
        c.insert(
            "structural".into(),
            format!("v{}:{}", maguyva_ast::SYMBOLS_FORMAT.current, queries_hash()),
        );
        c.insert(
            "semantic".into(),
            format!(
                "v{}:{}:hnsw>={}",
                maguyva_semantic::SEMANTIC_FORMAT.current,
                self.embedder.identity()?,
                self.hnsw_threshold
            ),
        );
        Ok(c)
    }
}
