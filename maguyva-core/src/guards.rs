//! Telling whether a tree changed without walking it again. Adding, removing
//! or renaming an entry changes its folder's modification time, and what a
//! walk leaves out is decided by ignore files, so a scan records the stat of
//! every folder it walked, of the folders above the root, and of every
//! ignore file it could have read. While all of those are unchanged, the
//! files the scan found are the files a new walk would find, and stat'ing
//! them in place tells what changed, much faster than walking (no directory
//! listing, no ignore matching). Git's index and untracked cache rest on the
//! same facts.

use crate::corpus::{FileStat, mtime_ns};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Ignore files a walk reads in a folder (git's exclude file is under
/// `.git/info/`).
const IGNORE_FILES: [&str; 3] = [".gitignore", ".ignore", ".git/info/exclude"];

/// A folder modified this close to the scan may have changed again within
/// the same tick of the file system's clock; its stat proves nothing.
const RACY_NS: i64 = 100_000_000;
/// The same on a file system that keeps whole seconds (FAT keeps two).
const RACY_COARSE_NS: i64 = 2_000_000_000;

/// What a scan's result rests on besides the files' own stats.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WalkGuards {
    /// When the scan started, nanoseconds since the Unix epoch.
    pub started_ns: i64,
    /// Absolute paths of folders and ignore files, with their stats.
    pub entries: Vec<FileStat>,
    /// Ignore files above the root that did not exist and must not.
    #[serde(default)]
    pub absent: Vec<String>,
}

/// The stat of `path` as a guard, or `None` when it does not exist.
pub(crate) fn guard(path: &Path) -> Option<FileStat> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    Some(FileStat {
        path: path.to_string_lossy().into_owned(),
        size: if meta.is_dir() { 0 } else { meta.len() },
        mtime_ns: mtime_ns(&meta),
    })
}

/// The guards of one walked folder: the folder and its existing ignore
/// files (one created later changes the folder's time).
pub(crate) fn folder_guards(dir: &Path) -> Vec<FileStat> {
    let mut out: Vec<FileStat> = guard(dir).into_iter().collect();
    out.extend(IGNORE_FILES.iter().filter_map(|f| guard(&dir.join(f))));
    if let Some(info) = guard(&dir.join(".git/info")) {
        out.push(info);
    }
    out
}

/// Waits until `folder`'s modification time is old enough for a scan
/// starting now to trust it, at most [`RACY_NS`]. Creating the index folder
/// inside a root changes the root's time just before the first build's
/// walk; without the wait, that build's guards could never hold, and every
/// search would walk the tree until the next build. Nothing is waited for
/// on a file system that keeps whole seconds.
pub fn settle_before_scan(folder: &Path) {
    let Ok(meta) = std::fs::symlink_metadata(folder) else { return };
    let modified = mtime_ns(&meta);
    if modified % 1_000_000_000 == 0 {
        return;
    }
    let wait = modified.saturating_add(RACY_NS).saturating_sub(now_ns());
    if wait > 0 {
        std::thread::sleep(std::time::Duration::from_nanos(wait.min(RACY_NS) as u64));
    }
}

/// The guards above the root: ignore files of enclosing folders count too,
/// present (with their stats) or absent. The folders' own times do not:
/// they change whenever a sibling of the root does.
pub(crate) fn ancestor_guards(root: &Path) -> (Vec<FileStat>, Vec<String>) {
    let (mut present, mut absent) = (Vec::new(), Vec::new());
    for dir in root.ancestors().skip(1) {
        for f in IGNORE_FILES {
            let path = dir.join(f);
            match guard(&path) {
                Some(g) => present.push(g),
                None => absent.push(path.to_string_lossy().into_owned()),
            }
        }
    }
    (present, absent)
}

/// The time now, nanoseconds since the Unix epoch.
pub(crate) fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

impl WalkGuards {
    /// Whether a time the scan saw, `mtime_ns`, is old enough to vouch for
    /// what it stamps: modified before the scan began by more than the
    /// file system's clock could hide an edit in (two seconds for a time in
    /// whole seconds), so that an edit since would show in it.
    pub fn settled(&self, mtime_ns: i64) -> bool {
        let racy = if mtime_ns % 1_000_000_000 == 0 { RACY_COARSE_NS } else { RACY_NS };
        self.started_ns > 0 && mtime_ns > 0 && mtime_ns < self.started_ns.saturating_sub(racy)
    }

    /// Whether the tree's shape is as the scan saw it: every guard has the
    /// stat it had, and none was modified so close to the scan that its
    /// time cannot tell. `false` means walk again.
    pub fn hold(&self) -> bool {
        if self.entries.is_empty() || self.started_ns == 0 {
            return false;
        }
        let coarse = self.entries.iter().all(|e| e.mtime_ns % 1_000_000_000 == 0);
        let racy = if coarse { RACY_COARSE_NS } else { RACY_NS };
        if self.entries.iter().any(|e| e.mtime_ns >= self.started_ns.saturating_sub(racy)) {
            return false;
        }
        self.entries.par_iter().all(|e| guard(&PathBuf::from(&e.path)).as_ref() == Some(e))
            && self.absent.iter().all(|p| guard(Path::new(p)).is_none())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_is_settled_once_older_than_the_clock_could_hide_an_edit_in() {
        let start = 1_700_000_000_500_000_000;
        let guards = WalkGuards { started_ns: start, entries: Vec::new(), absent: Vec::new() };
        assert!(guards.settled(start - 200_000_000));
        assert!(!guards.settled(start - 50_000_000), "within 0.1 s of the walk");
        let whole = |s: i64| (start / 1_000_000_000 - s) * 1_000_000_000;
        assert!(!guards.settled(whole(1)), "a time in whole seconds needs two");
        assert!(guards.settled(whole(3)));
        assert!(!guards.settled(0), "no time known");
        let unknown = WalkGuards { started_ns: 0, ..guards };
        assert!(!unknown.settled(start - 200_000_000));
    }

    fn guards_of(root: &Path) -> WalkGuards {
        let mut entries = folder_guards(root);
        entries.extend(folder_guards(&root.join("src")));
        // Pretend the scan ran a minute after everything was written.
        WalkGuards { started_ns: now_ns() + 60_000_000_000, entries, absent: Vec::new() }
    }

    fn touch_back(path: &Path) {
        // A time well before the scan, as if written long ago.
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        std::fs::File::options()
            .write(true)
            .open(path)
            .or_else(|_| std::fs::File::open(path))
            .unwrap()
            .set_modified(old)
            .unwrap();
    }

    #[test]
    fn a_new_file_an_ignore_edit_or_a_removal_breaks_the_guards() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir(root.join("src")).unwrap();
        std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
        std::fs::write(root.join("src/a.rs"), "fn a() {}\n").unwrap();
        for p in [root.join(".gitignore"), root.join("src"), root.to_path_buf()] {
            touch_back(&p);
        }
        let mut g = guards_of(root);
        g.started_ns = now_ns();
        assert!(g.hold(), "nothing changed");

        std::fs::write(root.join("src/b.rs"), "fn b() {}\n").unwrap();
        assert!(!g.hold(), "a new file changes its folder");

        touch_back(&root.join("src"));
        let mut g = guards_of(root);
        g.started_ns = now_ns();
        assert!(g.hold());
        std::fs::write(root.join(".gitignore"), "target/\nsrc/b.rs\n").unwrap();
        touch_back(&root.join(".gitignore"));
        assert!(!g.hold(), "an edited ignore file counts, whatever its time");

        let mut g = guards_of(root);
        g.started_ns = now_ns();
        assert!(g.hold());
        std::fs::remove_file(root.join("src/a.rs")).unwrap();
        assert!(!g.hold(), "a removal changes its folder");
    }

    #[test]
    fn guards_too_close_to_the_scan_prove_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let g = WalkGuards {
            started_ns: now_ns(),
            entries: folder_guards(tmp.path()),
            absent: Vec::new(),
        };
        assert!(!g.hold(), "the folder was made just now");
        assert!(!WalkGuards::default().hold());
    }
}
