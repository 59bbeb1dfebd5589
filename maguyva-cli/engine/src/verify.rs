//! `maguyva index --verify`: every file of the current generation checked
//! against its checksums, and the whole index opened and cross-checked,
//! without trusting anything a search would check lazily.

use super::{FRAGMENTS_FILE, FRAGMENTS_FORMAT, Index, IndexSettings};
use maguyva_core::store;
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
    // The outlines every modality shares, then each modality's own files.
    let path = gen_dir.join(crate::OUTLINES_FILE);
    let file = SectionFile::open(&path, crate::OUTLINES_FORMAT)?;
    file.verify()?;
    files.push(VerifiedFile {
        name: crate::OUTLINES_FILE.into(),
        bytes: size(&path),
        sections: file.names().count(),
    });
    for plugin in crate::plugins() {
        plugin.verify(gen_dir)?;
        for f in plugin.files() {
            let path = gen_dir.join(f.name);
            let sections = match f.sectioned {
                true => SectionFile::open(&path, f.format)?.names().count(),
                false => 1,
            };
            files.push(VerifiedFile { name: f.name.into(), bytes: size(&path), sections });
        }
    }
    // Every modality opened and decoded, against the others.
    let index = Index::open(dir, settings)?;
    for m in crate::modalities() {
        index.modality(m)?;
    }
    Ok(VerifyReport { generation: gen_dir.display().to_string(), files })
}
