//! The index folder: immutable generations, a `CURRENT` pointer swapped by
//! rename, and a write lock.
//!
//! ```text
//! .maguyva/
//!   CURRENT        "gen-000042\n": the generation readers open
//!   LOCK           held (flock) by the one process that writes
//!   gen-000042/    a complete index: manifest, content, one file per modality
//!   gen-000041/    a superseded one, kept only while a reader holds it
//!   tmp-…/         a generation being written; renamed to gen-N when complete
//! ```
//!
//! A writer builds a whole generation in a temporary folder, syncs it,
//! renames it into place, and only then points `CURRENT` at it (write to
//! `CURRENT.tmp`, sync, rename). A crash at any point leaves `CURRENT` naming
//! the previous complete generation, so a failed run never loses a good index.
//!
//! A reader holds a shared lock on its generation's manifest for as long as
//! it uses the generation; a writer removes a superseded generation only when
//! it can lock that manifest exclusively, so the disk holds one generation
//! once nobody reads the older ones.

use crate::error::{Error, Result};
use std::fs::{self, File};
use std::path::{Path, PathBuf};

/// The file of a generation that readers lock (shared) while they use it.
const READ_LOCKED: &str = crate::manifest::MANIFEST_FILE;
const CURRENT: &str = "CURRENT";
const LOCK: &str = "LOCK";
const GEN_PREFIX: &str = "gen-";
const TMP_PREFIX: &str = "tmp-";

/// The folders of generations this process is writing, to remove when it
/// is interrupted before finishing them ([`remove_unfinished_generations`]).
static UNFINISHED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Index folders this process created, to remove with its unfinished
/// generations when no generation was ever committed in them.
static CREATED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

fn unfinished() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    UNFINISHED.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Removes the generations this process has started and not committed:
/// for a process interrupted (Ctrl-C, a signal to end) while it builds an
/// index, so that nothing of the build is left in the index folder. The
/// current generation is untouched. Writers still at work find their folder
/// gone and fail, which is what the interruption asks.
pub fn remove_unfinished_generations() {
    for path in unfinished().drain(..) {
        let _ = fs::remove_dir_all(&path);
    }
    // A folder this process made for an index it never finished.
    let mut created = CREATED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    for path in created.drain(..) {
        if !path.join(CURRENT).exists() {
            let _ = fs::remove_dir_all(&path);
        }
    }
}

/// An index folder (by default `<root>/.maguyva`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexDir {
    path: PathBuf,
}

/// A generation opened for reading: its folder, and a shared lock that keeps
/// writers from removing it until this is dropped.
#[derive(Debug)]
pub struct ReadGeneration {
    path: PathBuf,
    // Held for its shared lock; released when the file is closed.
    _file: File,
}

impl ReadGeneration {
    /// The generation's folder.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The exclusive right to write an index folder, held until dropped.
#[derive(Debug)]
pub struct WriteLock {
    dir: IndexDir,
    // Held for its lock; the OS releases it when the file is closed, also
    // when the process dies.
    _file: File,
}

/// A generation being written. Dropped without [`Staging::commit`], it is
/// removed and the index is unchanged.
#[derive(Debug)]
pub struct Staging<'a> {
    lock: &'a WriteLock,
    path: PathBuf,
    committed: bool,
}

impl IndexDir {
    /// The index folder at `path`; nothing is touched until used.
    pub fn new(path: impl Into<PathBuf>) -> IndexDir {
        IndexDir { path: path.into() }
    }

    /// The folder's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The folder of the current generation, or `None` when no index was
    /// ever completed here.
    pub fn current(&self) -> Result<Option<PathBuf>> {
        let pointer = self.path.join(CURRENT);
        let text = match fs::read_to_string(&pointer) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io("reading", pointer, e)),
        };
        let name = text.trim();
        if generation_number(name).is_none() {
            return Err(Error::corrupt(pointer, format!("names {name:?}, not a generation")));
        }
        let gen_dir = self.path.join(name);
        if !gen_dir.is_dir() {
            return Err(Error::corrupt(pointer, format!("names {name}, which does not exist")));
        }
        Ok(Some(gen_dir))
    }

    /// The current generation, or [`Error::NoIndex`].
    pub fn require_current(&self) -> Result<PathBuf> {
        self.current()?.ok_or_else(|| Error::NoIndex { path: self.path.clone() })
    }

    /// The current generation, locked for reading so that no writer removes
    /// it while it is used; `None` when no index was ever completed here.
    pub fn read_current(&self) -> Result<Option<ReadGeneration>> {
        // A writer may supersede and remove the generation between reading
        // `CURRENT` and locking it; then `CURRENT` names a newer one.
        let mut attempts = 0;
        loop {
            let Some(path) = self.current()? else { return Ok(None) };
            let file_path = path.join(READ_LOCKED);
            let failure = match File::open(&file_path) {
                Ok(file) => match file.try_lock_shared() {
                    Ok(()) => return Ok(Some(ReadGeneration { path, _file: file })),
                    Err(fs::TryLockError::WouldBlock) => None,
                    Err(fs::TryLockError::Error(e)) => Some(Error::io("locking", &file_path, e)),
                },
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => Some(Error::io("opening", &file_path, e)),
            };
            attempts += 1;
            match failure {
                Some(e) => return Err(e),
                None if attempts >= 5 => {
                    return Err(Error::corrupt(&file_path, "missing, or being removed"));
                }
                None => std::thread::sleep(std::time::Duration::from_millis(10)),
            }
        }
    }

    /// Takes the write lock without waiting; [`Error::Locked`] when another
    /// process holds it. Leftovers of a crashed writer are removed.
    pub fn lock(&self) -> Result<WriteLock> {
        if !self.path.exists() {
            fs::create_dir_all(&self.path).map_err(|e| Error::io("creating", &self.path, e))?;
            CREATED
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(self.path.clone());
        }
        // Keep the index out of version control when it sits inside a checkout.
        let gitignore = self.path.join(".gitignore");
        if !gitignore.exists() {
            fs::write(&gitignore, "*\n").map_err(|e| Error::io("writing", &gitignore, e))?;
        }
        let lock_path = self.path.join(LOCK);
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| Error::io("opening", &lock_path, e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => {
                return Err(Error::Locked { path: self.path.clone() });
            }
            Err(fs::TryLockError::Error(e)) => return Err(Error::io("locking", &lock_path, e)),
        }
        let lock = WriteLock { dir: self.clone(), _file: file };
        lock.remove_entries(|name| name.starts_with(TMP_PREFIX))?;
        lock.remove_superseded()?;
        Ok(lock)
    }

    /// Whether another process is writing this index now.
    pub fn is_locked(&self) -> bool {
        let Ok(file) = File::options().write(true).open(self.path.join(LOCK)) else {
            return false;
        };
        matches!(file.try_lock(), Err(fs::TryLockError::WouldBlock))
    }

    fn generations(&self) -> Result<Vec<u64>> {
        let mut out = Vec::new();
        let entries = fs::read_dir(&self.path).map_err(|e| Error::io("listing", &self.path, e))?;
        for entry in entries.flatten() {
            if let Some(n) = entry.file_name().to_str().and_then(generation_number) {
                out.push(n);
            }
        }
        out.sort_unstable();
        Ok(out)
    }
}

fn generation_number(name: &str) -> Option<u64> {
    let digits = name.strip_prefix(GEN_PREFIX)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

fn generation_name(n: u64) -> String {
    format!("{GEN_PREFIX}{n:06}")
}

fn sync_dir(path: &Path) -> Result<()> {
    // Directory fsync makes renames durable; not every platform allows
    // opening a directory, and there it is not needed.
    match File::open(path) {
        Ok(d) => d.sync_all().or_else(|e| if cfg!(unix) { Err(e) } else { Ok(()) }),
        Err(_) if !cfg!(unix) => Ok(()),
        Err(e) => Err(e),
    }
    .map_err(|e| Error::io("syncing", path, e))
}

impl WriteLock {
    /// The locked folder.
    pub fn dir(&self) -> &IndexDir {
        &self.dir
    }

    /// Starts a new generation in a temporary folder.
    pub fn stage(&self) -> Result<Staging<'_>> {
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let path = self.dir.path.join(format!("{TMP_PREFIX}{}-{stamp}", std::process::id()));
        fs::create_dir(&path).map_err(|e| Error::io("creating", &path, e))?;
        unfinished().push(path.clone());
        Ok(Staging { lock: self, path, committed: false })
    }

    /// Removes every generation older than the current one that no reader
    /// holds; one that is held, or cannot be locked or removed, stays for a
    /// later writer to remove.
    fn remove_superseded(&self) -> Result<()> {
        let Some(current) = self.dir.current().ok().flatten() else { return Ok(()) };
        let Some(current) =
            current.file_name().and_then(|n| n.to_str()).and_then(generation_number)
        else {
            return Ok(());
        };
        for n in self.dir.generations()? {
            if n >= current {
                continue;
            }
            let path = self.dir.path.join(generation_name(n));
            // Holding the exclusive lock while removing keeps a reader that
            // comes late from locking a half-removed generation.
            let _held = match File::open(path.join(READ_LOCKED)) {
                Ok(file) => match file.try_lock() {
                    Ok(()) => Some(file),
                    Err(_) => continue,
                },
                Err(_) => None,
            };
            // Best effort: a generation that cannot be removed now (a file
            // still mapped where the system forbids deleting it) is tried
            // again by the next writer; the new index is committed either way.
            let _ = fs::remove_dir_all(&path);
        }
        Ok(())
    }

    fn remove_entries(&self, pred: impl Fn(&str) -> bool) -> Result<()> {
        let entries =
            fs::read_dir(&self.dir.path).map_err(|e| Error::io("listing", &self.dir.path, e))?;
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if pred(name) {
                let p = entry.path();
                fs::remove_dir_all(&p).map_err(|e| Error::io("removing", &p, e))?;
            }
        }
        Ok(())
    }
}

impl Staging<'_> {
    /// The temporary folder to write the generation's files into.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Makes the staged generation current, atomically, and removes the
    /// generations it supersedes that no reader holds. Returns its folder.
    pub fn commit(mut self) -> Result<PathBuf> {
        let dir = &self.lock.dir;
        sync_dir(&self.path)?;
        let next = dir.generations()?.last().map_or(1, |n| n + 1);
        let name = generation_name(next);
        let gen_dir = dir.path.join(&name);
        fs::rename(&self.path, &gen_dir).map_err(|e| Error::io("renaming", &self.path, e))?;
        self.committed = true;
        unfinished().retain(|p| p != &self.path);
        sync_dir(&dir.path)?;
        let tmp = dir.path.join(format!("{CURRENT}.tmp"));
        {
            let mut f = File::create(&tmp).map_err(|e| Error::io("creating", &tmp, e))?;
            std::io::Write::write_all(&mut f, format!("{name}\n").as_bytes())
                .and_then(|()| f.sync_all())
                .map_err(|e| Error::io("writing", &tmp, e))?;
        }
        let pointer = dir.path.join(CURRENT);
        fs::rename(&tmp, &pointer).map_err(|e| Error::io("renaming", &tmp, e))?;
        sync_dir(&dir.path)?;
        // The new generation is current: cleaning up after it cannot undo that.
        let _ = self.lock.remove_superseded();
        Ok(gen_dir)
    }
}

impl Drop for Staging<'_> {
    fn drop(&mut self) {
        if !self.committed {
            // Best effort: a leftover is also removed by the next writer.
            let _ = fs::remove_dir_all(&self.path);
            unfinished().retain(|p| p != &self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generations_being_written_are_known_until_committed_or_dropped() {
        // The registry is the process's: other tests may stage beside this
        // one, so only this test's folders are looked at.
        let tmp = tempfile::tempdir().unwrap();
        let dir = IndexDir::new(tmp.path().join("idx"));
        let lock = dir.lock().unwrap();
        let staging = lock.stage().unwrap();
        let path = staging.path().to_path_buf();
        assert!(unfinished().contains(&path));
        let generation = staging.commit().unwrap();
        assert!(!unfinished().contains(&path) && !unfinished().contains(&generation));
        let staging = lock.stage().unwrap();
        let path = staging.path().to_path_buf();
        assert!(unfinished().contains(&path));
        drop(staging);
        assert!(!unfinished().contains(&path) && !path.exists());
    }

    fn commit(lock: &WriteLock, text: &str) -> PathBuf {
        let s = lock.stage().unwrap();
        fs::write(s.path().join(READ_LOCKED), text).unwrap();
        s.commit().unwrap()
    }

    #[test]
    fn commit_swaps_generations_and_removes_unread_ones() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = IndexDir::new(tmp.path().join("idx"));
        assert_eq!(dir.current().unwrap(), None);
        assert!(dir.read_current().unwrap().is_none());
        assert!(matches!(dir.require_current(), Err(Error::NoIndex { .. })));
        let lock = dir.lock().unwrap();
        let mut gens = Vec::new();
        for i in 0..3 {
            gens.push(commit(&lock, &format!("{i}")));
            assert_eq!(dir.current().unwrap().as_ref(), gens.last());
        }
        assert!(!gens[0].exists() && !gens[1].exists(), "superseded generations are removed");
        assert_eq!(fs::read_to_string(gens[2].join(READ_LOCKED)).unwrap(), "2");
    }

    #[test]
    fn a_read_generation_outlives_its_successor_until_released() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = IndexDir::new(tmp.path());
        let lock = dir.lock().unwrap();
        let first = commit(&lock, "first");
        let reader = dir.read_current().unwrap().unwrap();
        assert_eq!(reader.path(), first);
        let second = commit(&lock, "second");
        assert!(first.exists(), "a generation being read is kept");
        assert_eq!(dir.read_current().unwrap().unwrap().path(), second);
        drop(reader);
        drop(lock);
        // The next writer removes what nobody reads any more.
        let lock = dir.lock().unwrap();
        assert!(!first.exists());
        assert!(second.exists());
        drop(lock);
    }

    #[test]
    fn abandoned_stage_leaves_index_untouched() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = IndexDir::new(tmp.path());
        let lock = dir.lock().unwrap();
        let good = commit(&lock, "good");
        {
            let s = lock.stage().unwrap();
            fs::write(s.path().join(READ_LOCKED), "half").unwrap();
            // dropped: a failed run
        }
        assert_eq!(dir.current().unwrap(), Some(good.clone()));
        assert_eq!(fs::read_to_string(good.join(READ_LOCKED)).unwrap(), "good");
        let leftovers = fs::read_dir(tmp.path())
            .unwrap()
            .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().starts_with(TMP_PREFIX))
            .count();
        assert_eq!(leftovers, 0);
    }

    #[test]
    fn second_writer_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = IndexDir::new(tmp.path());
        let _held = dir.lock().unwrap();
        assert!(dir.is_locked());
        assert!(matches!(IndexDir::new(tmp.path()).lock(), Err(Error::Locked { .. })));
    }

    #[test]
    fn corrupt_pointer_is_reported() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = IndexDir::new(tmp.path());
        fs::write(tmp.path().join(CURRENT), "../../etc\n").unwrap();
        assert!(matches!(dir.current(), Err(Error::Corrupt { .. })));
        fs::write(tmp.path().join(CURRENT), "gen-000009\n").unwrap();
        assert!(matches!(dir.current(), Err(Error::Corrupt { .. })));
    }
}
