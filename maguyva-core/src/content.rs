//! The content store: the text of every indexed file, as it was indexed.
//!
//! The index keeps no copy of the source. A store built with the index
//! holds the texts it read; a store opened with an index reads each file
//! from the indexed tree when it is first needed and checks it against the
//! size and xxh3 hash the manifest recorded, so literal matches are
//! verified, and snippets cut, against exactly the bytes that were indexed.
//! A file that no longer matches reads as no text, and
//! [`ContentStore::damage`] reports it as changed.

use crate::error::Error;
use crate::fragment::{Fragment, FragmentTable, line_starts};
use crate::ids::{ChunkId, FileId};
use crate::manifest::FileEntry;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// The text of every file, by [`FileId`].
#[derive(Debug, Default)]
pub struct ContentStore {
    source: Source,
}

#[derive(Debug)]
enum Source {
    /// The texts themselves, as read by a build.
    Memory(Vec<String>),
    /// The indexed tree, read on demand.
    Tree(Tree),
}

impl Default for Source {
    fn default() -> Source {
        Source::Memory(Vec::new())
    }
}

/// What a store opened with an index knows of each file, and what it has
/// read.
#[derive(Debug)]
struct Tree {
    root: PathBuf,
    files: Vec<Recorded>,
    texts: Vec<OnceLock<Box<str>>>,
    /// The files found changed or unreadable.
    damaged: Mutex<Damaged>,
}

/// What reads found wrong: the first damage in full, and every file.
#[derive(Debug, Default)]
struct Damaged {
    first: Option<Damage>,
    files: BTreeSet<usize>,
}

/// A file found changed or unreadable: its path, and the error that kept it
/// from being read, if that was the problem.
type Damage = (PathBuf, Option<(std::io::ErrorKind, String)>);

#[derive(Debug)]
struct Recorded {
    path: String,
    size: u64,
    hash: u64,
}

impl Tree {
    /// Reads file `i` into `buf` and checks it is the one indexed; on any
    /// difference records it and returns false.
    fn read_into(&self, i: usize, buf: &mut Vec<u8>) -> bool {
        use std::io::Read;
        let Some(file) = self.files.get(i) else { return false };
        buf.clear();
        let path = self.root.join(&file.path);
        let read = std::fs::File::open(&path).and_then(|f| {
            // Up to one byte more than recorded, to see a file that grew,
            // read into room reserved once and not zeroed first (zeroing
            // and growing the buffer were a quarter of reading a file).
            // The reservation is capped, so that a damaged size cannot ask
            // for more memory than reading the file takes.
            let want = file.size.saturating_add(1);
            buf.reserve_exact(want.min(1 << 26) as usize);
            f.take(want).read_to_end(buf)
        });
        let problem = match read {
            Ok(_)
                if buf.len() as u64 == file.size
                    && xxhash_rust::xxh3::xxh3_64(buf) == file.hash =>
            {
                return true;
            }
            Ok(_) => None,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => Some((e.kind(), e.to_string())),
        };
        if let Ok(mut damaged) = self.damaged.lock() {
            damaged.first.get_or_insert((path, problem));
            damaged.files.insert(i);
        }
        false
    }

    /// File `i`'s text, or `None` (recorded) when it is not the one indexed.
    fn read(&self, i: usize) -> Option<String> {
        let mut buf = Vec::new();
        self.read_into(i, &mut buf).then(|| decode(buf))
    }
}

/// The text of indexed bytes: invalid UTF-8 replaced as the build replaced
/// it, so that offsets agree.
fn decode(bytes: Vec<u8>) -> String {
    match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

/// The largest scan buffer kept between reads.
const SCAN_BUFFER_LIMIT: usize = 4 << 20;

thread_local! {
    /// A buffer for scans, so that reading file after file does not map
    /// and unmap fresh memory for each.
    static SCAN_BUFFER: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

impl ContentStore {
    /// A store holding `texts`, indexed by file id.
    pub fn new(texts: Vec<String>) -> ContentStore {
        ContentStore { source: Source::Memory(texts) }
    }

    /// A store that reads `files`, as recorded in a manifest, from the tree
    /// at `root`, each when first needed.
    pub fn from_tree(root: &Path, files: &[FileEntry]) -> ContentStore {
        let files: Vec<Recorded> = files
            .iter()
            .map(|f| Recorded { path: f.path.clone(), size: f.size, hash: f.hash })
            .collect();
        let texts = (0..files.len()).map(|_| OnceLock::new()).collect();
        ContentStore {
            source: Source::Tree(Tree {
                root: root.to_path_buf(),
                files,
                texts,
                damaged: Mutex::default(),
            }),
        }
    }

    /// A store of `files` (as a manifest records them) in the tree at
    /// `root` whose texts are `texts` where given, and read from the tree
    /// when first needed otherwise: for a build that trusts files whose
    /// size and modification time did not change, and reads them only if
    /// it must.
    pub fn partly_read(
        root: &Path,
        files: &[FileEntry],
        texts: Vec<Option<String>>,
    ) -> ContentStore {
        let mut store = ContentStore::from_tree(root, files);
        if let Source::Tree(tree) = &mut store.source {
            for (cell, text) in tree.texts.iter_mut().zip(texts) {
                if let Some(text) = text {
                    *cell = OnceLock::from(text.into_boxed_str());
                }
            }
        }
        store
    }

    /// The text of a file; empty for an unknown id, and for a file that
    /// changed or became unreadable since it was indexed (see
    /// [`ContentStore::damage`]). Kept for later reads.
    pub fn text(&self, file: FileId) -> &str {
        let i = file.index();
        match &self.source {
            Source::Memory(texts) => texts.get(i).map_or("", String::as_str),
            Source::Tree(tree) => match tree.texts.get(i) {
                Some(cell) => cell.get_or_init(|| tree.read(i).unwrap_or_default().into()),
                None => "",
            },
        }
    }

    /// Calls `f` with the text of a file, as [`ContentStore::text`] gives
    /// it, without keeping a text it had to read: for scans over many files.
    pub fn with_text<R>(&self, file: FileId, f: impl FnOnce(&str) -> R) -> R {
        let i = file.index();
        match &self.source {
            Source::Tree(tree) => match tree.texts.get(i).and_then(OnceLock::get) {
                Some(kept) => f(kept),
                None => {
                    let mut buf = SCAN_BUFFER.take();
                    let answer = match tree.read_into(i, &mut buf) {
                        // Checked first: the lossy decoder is several times slower.
                        true => match std::str::from_utf8(&buf) {
                            Ok(text) => f(text),
                            Err(_) => f(&String::from_utf8_lossy(&buf)),
                        },
                        false => f(""),
                    };
                    // Kept for the next scan unless one file made it huge.
                    if buf.capacity() <= SCAN_BUFFER_LIMIT {
                        SCAN_BUFFER.set(buf);
                    }
                    answer
                }
            },
            Source::Memory(_) => f(self.text(file)),
        }
    }

    /// The first file that a read found changed since it was indexed, or
    /// could not read, to report once an answer is complete.
    pub fn damage(&self) -> Option<Error> {
        match &self.source {
            Source::Memory(_) => None,
            Source::Tree(tree) => {
                let damaged = tree.damaged.lock().ok()?;
                damaged.first.as_ref().map(|(path, problem)| match problem {
                    None => Error::Changed { path: path.clone() },
                    Some((kind, why)) => {
                        Error::io("reading", path.clone(), std::io::Error::new(*kind, why.clone()))
                    }
                })
            }
        }
    }

    /// Every file that reads so far found changed or unreadable (the first
    /// of them is [`ContentStore::damage`]'s), in id order.
    pub fn changed_files(&self) -> Vec<FileId> {
        match &self.source {
            Source::Memory(_) => Vec::new(),
            Source::Tree(tree) => tree
                .damaged
                .lock()
                .map(|d| d.files.iter().map(|&i| FileId(i as u32)).collect())
                .unwrap_or_default(),
        }
    }

    /// The text of a fragment; empty if the fragment does not fit its file.
    pub fn fragment_text(&self, fragment: &Fragment) -> &str {
        self.text(fragment.file).get(fragment.bytes()).unwrap_or("")
    }

    /// The text every modality indexes for each fragment, in chunk order:
    /// the fragment's context line (its container's signature), if any,
    /// followed by the fragment's own text.
    pub fn fragment_documents(&self, fragments: &FragmentTable) -> Vec<String> {
        self.fragment_documents_where(fragments, |_| true)
    }

    /// [`ContentStore::fragment_documents`] of the fragments `wanted`
    /// accepts, and an empty text for the others (a refresh needs only the
    /// changed fragments' documents).
    pub fn fragment_documents_where(
        &self,
        fragments: &FragmentTable,
        wanted: impl Fn(ChunkId) -> bool + Sync,
    ) -> Vec<String> {
        use rayon::prelude::*;
        let per_file: Vec<Vec<String>> = (0..fragments.file_count())
            .into_par_iter()
            .map(|f| {
                let file = FileId(f as u32);
                // Not read until a fragment of the file is wanted.
                let text = std::cell::OnceCell::new();
                let text = || *text.get_or_init(|| self.text(file));
                let mut starts: Option<Vec<usize>> = None;
                fragments
                    .of_file(file)
                    .map(|c| {
                        if !wanted(c) {
                            return String::new();
                        }
                        let frag = fragments.get(c);
                        let body = self.fragment_text(frag);
                        let Some(line) = frag.context_line else { return body.to_string() };
                        let text = text();
                        let starts = starts.get_or_insert_with(|| line_starts(text));
                        let i = line as usize - 1;
                        let context = match (starts.get(i), starts.get(i + 1)) {
                            (Some(&a), Some(&b)) => &text[a..b],
                            (Some(&a), None) => &text[a..],
                            _ => "",
                        };
                        format!("{}\n{body}", context.trim_end())
                    })
                    .collect()
            })
            .collect();
        per_file.into_iter().flatten().collect()
    }

    /// Number of files.
    pub fn len(&self) -> usize {
        match &self.source {
            Source::Memory(texts) => texts.len(),
            Source::Tree(tree) => tree.files.len(),
        }
    }

    /// Whether the store is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Total bytes of text.
    pub fn total_bytes(&self) -> usize {
        match &self.source {
            Source::Memory(texts) => texts.iter().map(String::len).sum(),
            Source::Tree(tree) => tree.files.iter().map(|f| f.size as usize).sum(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FragmentSpan, LineSpan};

    #[test]
    fn documents_carry_their_context_line() {
        let text = "class Big:\n    a = 1\n    def m(self):\n        pass\n";
        let content = ContentStore::new(vec![text.to_string()]);
        let fragments = FragmentTable::from_spans(vec![vec![
            FragmentSpan { lines: LineSpan::new(1, 2), bytes: 0..21, context_line: None },
            FragmentSpan {
                lines: LineSpan::new(3, 4),
                bytes: 21..text.len(),
                context_line: Some(1),
            },
        ]]);
        let docs = content.fragment_documents(&fragments);
        assert_eq!(docs[0], "class Big:\n    a = 1\n");
        assert_eq!(docs[1], "class Big:\n    def m(self):\n        pass\n");
        let some = content.fragment_documents_where(&fragments, |c| c == ChunkId(1));
        assert_eq!(some, vec![String::new(), docs[1].clone()]);
    }

    fn entry(path: &str, bytes: &[u8]) -> FileEntry {
        FileEntry {
            path: path.into(),
            size: bytes.len() as u64,
            mtime_ns: 0,
            hash: xxhash_rust::xxh3::xxh3_64(bytes),
            language: None,
            lossy: false,
        }
    }

    #[test]
    fn reads_the_indexed_files_from_the_tree() {
        let dir = tempfile::tempdir().unwrap();
        let files: [(&str, &[u8]); 3] =
            [("a.rs", b"fn a() {}\n"), ("empty.txt", b""), ("bad.txt", b"\xff\xfe ok\n")];
        for (path, bytes) in files {
            std::fs::write(dir.path().join(path), bytes).unwrap();
        }
        let entries: Vec<FileEntry> = files.iter().map(|(p, b)| entry(p, b)).collect();
        let store = ContentStore::from_tree(dir.path(), &entries);
        assert_eq!(store.len(), 3);
        assert_eq!(store.text(FileId(0)), "fn a() {}\n");
        assert_eq!(store.text(FileId(1)), "");
        // Invalid UTF-8 is replaced as the build replaced it.
        assert_eq!(store.text(FileId(2)), "\u{FFFD}\u{FFFD} ok\n");
        assert_eq!(store.with_text(FileId(0), str::len), 10);
        assert_eq!(store.text(FileId(9)), "");
        assert!(store.damage().is_none());
    }

    #[test]
    fn a_file_changed_or_removed_since_indexing_reads_as_damage() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.rs"), "fn a() {}\n").unwrap();
        std::fs::write(dir.path().join("b.rs"), "fn b() {}\n").unwrap();
        let entries = [entry("a.rs", b"fn a() {}\n"), entry("b.rs", b"fn b() {}\n")];
        let store = ContentStore::from_tree(dir.path(), &entries);
        // Same size, other bytes: only the hash tells.
        std::fs::write(dir.path().join("a.rs"), "fn x() {}\n").unwrap();
        assert_eq!(store.with_text(FileId(0), str::len), 0);
        assert!(matches!(store.damage(), Some(Error::Changed { path }) if path.ends_with("a.rs")));
        let store = ContentStore::from_tree(dir.path(), &entries);
        std::fs::remove_file(dir.path().join("b.rs")).unwrap();
        assert_eq!(store.text(FileId(1)), "");
        assert!(matches!(store.damage(), Some(Error::Changed { path }) if path.ends_with("b.rs")));
        assert_eq!(store.text(FileId(0)), "");
        assert_eq!(store.changed_files(), [FileId(0), FileId(1)]);
        // A text read before the change stays the one indexed.
        let store = ContentStore::from_tree(dir.path(), &entries[..1]);
        std::fs::write(dir.path().join("a.rs"), "fn a() {}\n").unwrap();
        assert_eq!(store.text(FileId(0)), "fn a() {}\n");
        std::fs::write(dir.path().join("a.rs"), "changed!!\n").unwrap();
        assert_eq!(store.text(FileId(0)), "fn a() {}\n");
        assert!(store.damage().is_none());
        // Grown by a byte past the indexed text, and cut short of it.
        for text in ["fn a() {}\n\n", "fn a() {"] {
            std::fs::write(dir.path().join("a.rs"), text).unwrap();
            let store = ContentStore::from_tree(dir.path(), &entries[..1]);
            assert_eq!(store.text(FileId(0)), "", "{text:?}");
            assert_eq!(store.changed_files(), [FileId(0)]);
        }
    }
}
