//! The index manifest: what was indexed, with which settings and component
//! versions, so that staleness and incompatibility are detected instead of
//! giving wrong results. Format: `doc/format/manifest.md`.

use crate::corpus::{FileStat, Scan, SkipReason, Skipped};
use crate::error::Result;
use crate::guards::WalkGuards;
use crate::language::Language;
use crate::store::{self, FormatVersion};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// The manifest file's name inside a generation folder.
pub const MANIFEST_FILE: &str = "manifest.mgv";

/// Manifest format. Changelog: v1 initial; v2 the build options
/// (`options`), reused by later runs that do not name their own; v3 the
/// walk's guards (`guards`), to tell staleness without walking; v4 the JSON
/// compressed.
pub const MANIFEST_FORMAT: FormatVersion = FormatVersion { kind: *b"MANI", current: 5, oldest: 5 };

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
    /// The folders and ignore files the walk's result rests on.
    #[serde(default)]
    pub guards: WalkGuards,
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
    /// The id of the indexed file at `path` (files are listed in path
    /// order, as the walk gives them).
    pub fn file_id(&self, path: &str) -> Option<crate::FileId> {
        let i = self.files.binary_search_by(|f| f.path.as_str().cmp(path)).ok()?;
        Some(crate::FileId(i as u32))
    }

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

    /// The changes since the index was built, found by stat'ing the files it
    /// recorded instead of walking ([`Manifest::restat`]), or `None` when
    /// only a new walk can tell. When `Some`, it equals
    /// [`Manifest::changes`] of a new scan.
    pub fn quick_changes(&self) -> Option<Changes> {
        Some(self.changes(&self.restat()?))
    }

    /// The scan a new walk of the root would make, made by stat'ing the
    /// files the index recorded where they are, or `None` when only a walk
    /// can tell: the tree's shape may have changed (a folder or an ignore
    /// file did; see [`WalkGuards`]), a recorded file is gone or no longer
    /// a file, or the walk could not read an entry (a change of permissions
    /// shows in no folder's time).
    pub fn restat(&self) -> Option<Scan> {
        // The guards are checked after this time, as a walk starting now
        // would have stat'ed them.
        let started_ns = crate::guards::now_ns();
        if !self.guards.hold() {
            return None;
        }
        // What the walk itself left out is not among the files it offered
        // (the read's skips are).
        let offered = |p: &str| self.scanned.binary_search_by(|f| f.path.as_str().cmp(p)).is_ok();
        let (mut skipped, mut too_large) = (Vec::new(), Vec::new());
        for s in self.skipped.iter().filter(|s| !offered(&s.path)) {
            match s.reason {
                // Stat'ed again: it may have shrunk under the cap.
                SkipReason::TooLarge { .. } => too_large.push(s.path.as_str()),
                SkipReason::Symlink | SkipReason::NotRegular => skipped.push(s.clone()),
                _ => return None,
            }
        }
        let paths: Vec<&str> =
            self.scanned.iter().map(|f| f.path.as_str()).chain(too_large).collect();
        let now: Vec<Option<(u64, i64)>> = paths
            .par_iter()
            .map(|p| {
                let meta = std::fs::symlink_metadata(self.root.join(p)).ok()?;
                meta.is_file().then(|| (meta.len(), crate::corpus::mtime_ns(&meta)))
            })
            .collect();
        let mut files = Vec::with_capacity(paths.len());
        for (path, stat) in paths.into_iter().zip(now) {
            // Gone while its folder kept its time: the folder changed within
            // its clock's tick, which a walk sees.
            let (size, mtime_ns) = stat?;
            match size > self.max_file_size {
                true => skipped.push(Skipped {
                    path: path.to_string(),
                    reason: SkipReason::TooLarge { size },
                }),
                false => files.push(FileStat { path: path.to_string(), size, mtime_ns }),
            }
        }
        files.sort_by(|a, b| a.path.cmp(&b.path));
        skipped.sort_by(|a, b| a.path.cmp(&b.path));
        let guards = WalkGuards { started_ns, ..self.guards.clone() };
        Some(Scan { root: self.root.clone(), files, skipped, guards })
    }

    /// Writes the manifest into a generation folder.
    pub fn save(&self, gen_dir: &Path) -> Result<()> {
        let json = serde_json::to_vec(self)
            .map_err(|e| crate::Error::Encode { what: "manifest", reason: e.to_string() })?;
        // Paths, folder after folder, compress several times over.
        store::write_framed(&gen_dir.join(MANIFEST_FILE), MANIFEST_FORMAT, &store::compress(&json)?)
    }

    /// Reads the manifest of a generation folder.
    pub fn load(gen_dir: &Path) -> Result<Manifest> {
        let path = gen_dir.join(MANIFEST_FILE);
        let (_, packed) = store::read_framed(&path, MANIFEST_FORMAT)?;
        let json = store::decompress(&path, &packed)?;
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
            guards: WalkGuards::default(),
        }
    }

    #[test]
    fn changes_are_classified() {
        let m = manifest(vec![stat("a", 1, 1), stat("b", 2, 2), stat("c", 3, 3)]);
        let scan = Scan {
            root: PathBuf::from("/r"),
            files: vec![stat("a", 1, 1), stat("b", 2, 9), stat("d", 4, 4)],
            skipped: vec![],
            guards: WalkGuards::default(),
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
    fn files_are_found_by_path() {
        let entry = |path: &str| FileEntry {
            path: path.into(),
            size: 0,
            mtime_ns: 0,
            hash: 0,
            language: None,
            lossy: false,
        };
        let m = Manifest {
            files: vec![entry("a/b.rs"), entry("a/c.rs"), entry("d")],
            ..manifest(vec![])
        };
        assert_eq!(m.file_id("a/c.rs"), Some(crate::FileId(1)));
        assert_eq!(m.file_id("d"), Some(crate::FileId(2)));
        assert_eq!(m.file_id("a"), None);
    }

    /// The manifest a build with this walk would record (no read skips).
    fn recorded(scan: &Scan, max_file_size: u64) -> Manifest {
        let mut m = manifest(scan.files.clone());
        m.root = scan.root.clone();
        m.skipped = scan.skipped.clone();
        m.max_file_size = max_file_size;
        m.guards = scan.guards.clone();
        m
    }

    fn age(path: &Path) {
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        let file = std::fs::File::options().write(true).open(path);
        file.or_else(|_| std::fs::File::open(path)).unwrap().set_modified(old).unwrap();
    }

    #[test]
    fn quick_changes_agree_with_a_walk_or_decline() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.rs"), "fn a() {}\n").unwrap();
        std::fs::write(root.join("src/big.txt"), "x".repeat(200)).unwrap();
        for p in ["src/a.rs", "src/big.txt", "src", ""] {
            age(&root.join(p));
        }
        let mut walker = crate::CorpusBuilder::new();
        walker.max_file_size(100);
        let m = recorded(&walker.scan(root).unwrap(), 100);
        assert_eq!(m.quick_changes(), Some(Changes::default()));
        // Edited in place: the folder keeps its time; the walk is not needed.
        std::fs::write(root.join("src/a.rs"), "fn a() { changed() }\n").unwrap();
        std::fs::write(root.join("src/big.txt"), "small").unwrap();
        let quick = m.quick_changes().expect("the folders kept their shape");
        assert_eq!(quick, m.changes(&walker.scan(root).unwrap()));
        assert_eq!(quick.modified, vec!["src/a.rs"]);
        assert_eq!(quick.added, vec!["src/big.txt"]);
        // A new file changes its folder: only a walk can tell.
        std::fs::write(root.join("src/b.rs"), "fn b() {}\n").unwrap();
        assert_eq!(m.quick_changes(), None);
    }

    #[test]
    fn a_restat_is_the_scan_a_walk_makes_or_declines() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.rs"), "fn a() {}\n").unwrap();
        std::fs::write(root.join("src/big.txt"), "x".repeat(200)).unwrap();
        std::fs::write(root.join("src/grows.rs"), "fn g() {}\n").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink("a.rs", root.join("src/link.rs")).unwrap();
        for p in ["src/a.rs", "src/big.txt", "src/grows.rs", "src", ""] {
            age(&root.join(p));
        }
        let mut walker = crate::CorpusBuilder::new();
        walker.max_file_size(100);
        let mut m = recorded(&walker.scan(root).unwrap(), 100);
        // The read's skips are among the files the walk offered.
        m.skipped.push(Skipped { path: "src/a.rs".into(), reason: SkipReason::Binary });
        m.skipped.sort_by(|a, b| a.path.cmp(&b.path));
        let same = |a: &Scan, b: &Scan| {
            (&a.root, &a.files, &a.skipped, &a.guards.entries, &a.guards.absent)
                == (&b.root, &b.files, &b.skipped, &b.guards.entries, &b.guards.absent)
        };
        let restat = m.restat().expect("nothing changed");
        assert!(same(&restat, &walker.scan(root).unwrap()), "{restat:?}");
        assert!(restat.guards.started_ns > m.guards.started_ns);

        // Edited in place, shrunk under the cap, grown past it.
        std::fs::write(root.join("src/a.rs"), "fn a() { changed() }\n").unwrap();
        std::fs::write(root.join("src/big.txt"), "small").unwrap();
        std::fs::write(root.join("src/grows.rs"), "y".repeat(300)).unwrap();
        let restat = m.restat().expect("the folders kept their shape");
        assert!(same(&restat, &walker.scan(root).unwrap()), "{restat:?}");
        assert!(restat.files.iter().any(|f| f.path == "src/big.txt"));
        assert!(restat.skipped.iter().any(|s| s.path == "src/grows.rs"));

        // An entry the walk could not read may be readable now.
        let mut unreadable = m.clone();
        let error = "permission denied".to_string();
        unreadable
            .skipped
            .push(Skipped { path: "x".into(), reason: SkipReason::Unreadable { error } });
        assert!(unreadable.restat().is_none());
        // A recorded file that is gone: only a walk can tell what else is.
        let mut gone = m.clone();
        gone.scanned.push(stat("src/zz.rs", 1, 1));
        assert!(gone.restat().is_none());
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
