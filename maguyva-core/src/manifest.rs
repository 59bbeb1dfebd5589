//! The index manifest: what was indexed, with which settings and component
//! versions, so that staleness and incompatibility are detected instead of
//! giving wrong results. Format: `doc/format/manifest.md`.

use crate::corpus::{FileStat, Scan, Skipped};
use crate::error::Result;
use crate::language::Language;
use crate::store::{self, FormatVersion};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// The manifest file's name inside a generation folder.
pub const MANIFEST_FILE: &str = "manifest.mgv";

/// Manifest format. Changelog: v1 initial; v2 the build options
/// (`options`), reused by later runs that do not name their own.
pub const MANIFEST_FORMAT: FormatVersion = FormatVersion { kind: *b"MANI", current: 2, oldest: 2 };

/// One indexed file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    /// Path relative to the root.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// Modification time, nanoseconds since the Unix epoch.
    pub mtime_ns: i64,
    /// xxh3 hash of the bytes.
    pub hash: u64,
    /// Detected language.
    pub language: Option<Language>,
    /// Whether invalid UTF-8 was replaced.
    pub lossy: bool,
}

/// Describes one index generation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// The version of Maguyva that wrote it.
    pub maguyva_version: String,
    /// The indexed root, canonical.
    pub root: PathBuf,
    /// When the index was written, milliseconds since the Unix epoch.
    pub created_unix_ms: u64,
    /// How long the build took, in milliseconds.
    pub build_ms: u64,
    /// The per-file size cap in effect.
    pub max_file_size: u64,
    /// Every file the walk offered, as stat'ed; compared with a new walk to
    /// tell whether the index is stale.
    pub scanned: Vec<FileStat>,
    /// The files indexed; a file's id is its position.
    pub files: Vec<FileEntry>,
    /// Files left out, and why.
    pub skipped: Vec<Skipped>,
    /// Number of fragments.
    pub fragments: usize,
    /// Identity of every component that shaped the index (a modality's
    /// format version, the fragmenter's settings, the embedder's name and
    /// version); an index built by other components must be rebuilt.
    pub components: BTreeMap<String, String>,
    /// The options the index was built with, by name (`max_file_size`,
    /// `embedder`, ...), so that later runs that do not name their own
    /// build the same index instead of a different one.
    #[serde(default)]
    pub options: BTreeMap<String, String>,
}

/// How a tree differs from what an index recorded.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Changes {
    /// Paths new since the index was built.
    pub added: Vec<String>,
    /// Paths gone.
    pub removed: Vec<String>,
    /// Paths whose size or modification time changed.
    pub modified: Vec<String>,
}

impl Changes {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.modified.is_empty()
    }

    /// Number of changed paths.
    pub fn len(&self) -> usize {
        self.added.len() + self.removed.len() + self.modified.len()
    }
}

impl Manifest {
    /// Compares a fresh scan with what this index recorded.
    pub fn changes(&self, scan: &Scan) -> Changes {
        let old: HashMap<&str, &FileStat> =
            self.scanned.iter().map(|f| (f.path.as_str(), f)).collect();
        let mut changes = Changes::default();
        let mut seen = 0;
        for f in &scan.files {
            match old.get(f.path.as_str()) {
                None => changes.added.push(f.path.clone()),
                Some(o) => {
                    seen += 1;
                    if o.size != f.size || o.mtime_ns != f.mtime_ns {
                        changes.modified.push(f.path.clone());
                    }
                }
            }
        }
        if seen != old.len() {
            let now: std::collections::HashSet<&str> =
                scan.files.iter().map(|f| f.path.as_str()).collect();
            changes.removed = self
                .scanned
                .iter()
                .filter(|f| !now.contains(f.path.as_str()))
                .map(|f| f.path.clone())
                .collect();
        }
        changes
    }

    /// Writes the manifest into a generation folder.
    pub fn save(&self, gen_dir: &Path) -> Result<()> {
        let json = serde_json::to_vec(self)
            .map_err(|e| crate::Error::Encode { what: "manifest", reason: e.to_string() })?;
        store::write_framed(&gen_dir.join(MANIFEST_FILE), MANIFEST_FORMAT, &json)
    }

    /// Reads the manifest of a generation folder.
    pub fn load(gen_dir: &Path) -> Result<Manifest> {
        let path = gen_dir.join(MANIFEST_FILE);
        let (_, json) = store::read_framed(&path, MANIFEST_FORMAT)?;
        serde_json::from_slice(&json).map_err(|e| crate::Error::corrupt(path, e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(path: &str, size: u64, mtime_ns: i64) -> FileStat {
        FileStat { path: path.into(), size, mtime_ns }
    }

    fn manifest(scanned: Vec<FileStat>) -> Manifest {
        Manifest {
            maguyva_version: "0".into(),
            root: PathBuf::from("/r"),
            created_unix_ms: 0,
            build_ms: 0,
            max_file_size: 1,
            scanned,
            files: vec![],
            skipped: vec![],
            fragments: 0,
            components: BTreeMap::new(),
            options: BTreeMap::new(),
        }
    }

    #[test]
    fn changes_are_classified() {
        let m = manifest(vec![stat("a", 1, 1), stat("b", 2, 2), stat("c", 3, 3)]);
        let scan = Scan {
            root: PathBuf::from("/r"),
            files: vec![stat("a", 1, 1), stat("b", 2, 9), stat("d", 4, 4)],
            skipped: vec![],
        };
        let c = m.changes(&scan);
        assert_eq!(c.added, vec!["d"]);
        assert_eq!(c.modified, vec!["b"]);
        assert_eq!(c.removed, vec!["c"]);
        assert_eq!(c.len(), 3);
        let same = Scan { files: m.scanned.clone(), ..scan };
        assert!(m.changes(&same).is_empty());
    }

    #[test]
    fn save_and_load() {
        let dir = tempfile::tempdir().unwrap();
        let mut m = manifest(vec![stat("a", 1, 1)]);
        m.components.insert("text".into(), "v1".into());
        m.options.insert("embedder".into(), "builtin".into());
        m.save(dir.path()).unwrap();
        assert_eq!(Manifest::load(dir.path()).unwrap(), m);
    }
}
