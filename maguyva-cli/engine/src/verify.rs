//! `maguyva index --verify`: every file of the current generation checked
//! against its checksums, and the whole index opened and cross-checked,
//! without trusting anything a search would check lazily.

use super::{FRAGMENTS_FILE, FRAGMENTS_FORMAT, Index, IndexSettings};
use maguyva_core::store::{self, FormatVersion};
use maguyva_core::{IndexDir, MANIFEST_FILE, MANIFEST_FORMAT, Result, SectionFile};
use serde::Serialize;
use std::path::Path;

/// What a verification checked.
#[derive(Debug, Clone, Serialize)]
pub struct VerifyReport {
    /// The generation's folder.
    pub generation: String,
    /// Every file checked.
    pub files: Vec<VerifiedFile>,
}

/// One checked file.
#[derive(Debug, Clone, Serialize)]
pub struct VerifiedFile {
    /// Its name in the generation folder.
    pub name: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// Sections checked (1 for a framed file).
    pub sections: usize,
}

fn sectioned() -> [(&'static str, FormatVersion); 5] {
    [
        (crate::OUTLINES_FILE, crate::OUTLINES_FORMAT),
        (maguyva_trigram::TEXT_FILE, maguyva_trigram::TEXT_FORMAT),
        (maguyva_ast::SYMBOLS_FILE, maguyva_ast::SYMBOLS_FORMAT),
        (maguyva_graph::GRAPH_FILE, maguyva_graph::GRAPH_FORMAT),
        (maguyva_semantic::SEMANTIC_FILE, maguyva_semantic::SEMANTIC_FORMAT),
    ]
}

fn size(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// Checks every section of every file of the current generation in `dir`,
/// then opens the index and decodes every modality, so that damage a search
/// would meet only later is reported now.
pub fn verify(dir: &IndexDir, settings: &IndexSettings) -> Result<VerifyReport> {
    let generation = dir
        .read_current()?
        .ok_or_else(|| maguyva_core::Error::NoIndex { path: dir.path().into() })?;
    let gen_dir = generation.path();
    let mut files = Vec::new();
    for (name, format) in [(MANIFEST_FILE, MANIFEST_FORMAT), (FRAGMENTS_FILE, FRAGMENTS_FORMAT)] {
        let path = gen_dir.join(name);
        store::read_framed(&path, format)?;
        files.push(VerifiedFile { name: name.into(), bytes: size(&path), sections: 1 });
    }
    for (name, format) in sectioned() {
        let path = gen_dir.join(name);
        let file = SectionFile::open(&path, format)?;
        file.verify()?;
        files.push(VerifiedFile {
            name: name.into(),
            bytes: size(&path),
            sections: file.names().count(),
        });
    }
    let index = Index::open(dir, settings)?;
    index.graph()?;
    index.symbols()?.verify(&gen_dir.join(maguyva_ast::SYMBOLS_FILE))?;
    Ok(VerifyReport { generation: gen_dir.display().to_string(), files })
}
