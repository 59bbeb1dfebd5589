//! Settings that shape an index; changing any of them makes an index stale.

use super::embedder::EmbedderChoice;
use maguyva_core::{DEFAULT_MAX_FILE_SIZE, IndexDir, Language, Manifest, SyntaxChunker};
use std::collections::BTreeMap;

const MAX_FILE_SIZE: &str = "max_file_size";
const EMBEDDER: &str = "embedder";
const HNSW_THRESHOLD: &str = "hnsw_threshold";

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

/// The semantic format from which the default embedder joins the code
/// model.
const CODE_MODEL_SINCE: u32 = 9;

/// Whether a manifest's `semantic` component (`vN:...`) names a format
/// older than [`CODE_MODEL_SINCE`].
fn predates_code_model(component: &str) -> bool {
    let version = component.strip_prefix('v').and_then(|v| v.split(':').next());
    version.and_then(|v| v.parse::<u32>().ok()).is_some_and(|v| v < CODE_MODEL_SINCE)
}

/// A short hash of every extraction query and of which grammars the build
/// has, so that changing either rebuilds indexes made without the change.
pub(crate) fn queries_hash() -> String {
    let mut all = String::new();
    for l in Language::ALL {
        all.push_str(maguyva_ast::query_source(l));
        // A build without a language's grammar indexes it differently.
        all.push(if maguyva_ast::has_grammar(l) { '+' } else { '-' });
    }
    format!("{:08x}", crc32fast::hash(all.as_bytes()))
}

impl IndexSettings {
    /// The options recorded in the manifest, by name, so that later runs
    /// can build the same index ([`IndexSettings::recorded`]).
    pub fn options(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            (MAX_FILE_SIZE.to_string(), self.max_file_size.to_string()),
            (EMBEDDER.to_string(), self.embedder.spec()),
            (HNSW_THRESHOLD.to_string(), self.hnsw_threshold.to_string()),
        ])
    }

    /// The settings an index was built with, from its manifest's options;
    /// an option that is missing or unreadable keeps its default.
    pub fn from_options(options: &BTreeMap<String, String>) -> IndexSettings {
        let mut s = IndexSettings::default();
        if let Some(n) = options.get(MAX_FILE_SIZE).and_then(|v| v.parse().ok()) {
            s.max_file_size = n;
        }
        if let Some(e) = options.get(EMBEDDER).and_then(|v| EmbedderChoice::parse(v).ok()) {
            s.embedder = e;
        }
        if let Some(n) = options.get(HNSW_THRESHOLD).and_then(|v| v.parse().ok()) {
            s.hnsw_threshold = n;
        }
        s
    }

    /// The settings the current index in `dir` was built with, or `None`
    /// when there is no readable index there.
    pub fn recorded(dir: &IndexDir) -> Option<IndexSettings> {
        let gen_dir = dir.current().ok()??;
        let manifest = Manifest::load(&gen_dir).ok()?;
        let mut settings = IndexSettings::from_options(&manifest.options);
        // Before the code model, the default embedder was the corpus model
        // alone, recorded as `corpus:N` like an explicit choice of it (the
        // same embedder then): such an index takes today's default.
        let semantic = manifest.components.get("semantic").map(String::as_str);
        if let EmbedderChoice::Corpus { dimensions } = settings.embedder
            && semantic.is_some_and(predates_code_model)
        {
            settings.embedder = EmbedderChoice::Joined { dimensions };
        }
        Some(settings)
    }

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
        // Each modality's identity: its files' formats and what shapes it.
        for plugin in crate::plugins() {
            c.insert(plugin.modality().as_str().into(), plugin.component(self)?);
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_round_trip() {
        let s = IndexSettings {
            max_file_size: 100 << 20,
            embedder: EmbedderChoice::Voyage { dimensions: 512 },
            hnsw_threshold: 7,
            ..IndexSettings::default()
        };
        assert_eq!(IndexSettings::from_options(&s.options()), s);
        let mut garbled = s.options();
        garbled.insert(MAX_FILE_SIZE.into(), "lots".into());
        garbled.insert(EMBEDDER.into(), "/no/such/model".into());
        let back = IndexSettings::from_options(&garbled);
        assert_eq!(back.max_file_size, DEFAULT_MAX_FILE_SIZE);
        assert_eq!(back.embedder, IndexSettings::default().embedder);
        assert_eq!(back.hnsw_threshold, 7);
    }
}
