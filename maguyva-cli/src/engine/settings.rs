//! Settings that shape an index; changing any of them makes an index stale.

use maguyva_core::{DEFAULT_MAX_FILE_SIZE, LineChunker};
use std::collections::BTreeMap;

/// How an index is built.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexSettings {
    /// Files larger than this many bytes are skipped.
    pub max_file_size: u64,
    /// How files are cut into fragments.
    pub chunker: LineChunker,
}

impl Default for IndexSettings {
    fn default() -> Self {
        IndexSettings { max_file_size: DEFAULT_MAX_FILE_SIZE, chunker: LineChunker::default() }
    }
}

impl IndexSettings {
    /// The identity of every component the settings select, recorded in the
    /// manifest; an index whose record differs is rebuilt.
    pub fn components(&self) -> BTreeMap<String, String> {
        let mut c = BTreeMap::new();
        c.insert("maguyva".into(), env!("CARGO_PKG_VERSION").into());
        c.insert("corpus".into(), format!("v{}", maguyva_core::CORPUS_VERSION));
        c.insert(
            "fragments".into(),
            format!("lines:{}:{}", self.chunker.window_lines, self.chunker.max_bytes),
        );
        c.insert("text".into(), format!("v{}", maguyva_trigram::TEXT_FORMAT.current));
        c
    }
}
