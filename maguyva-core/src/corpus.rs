//! The corpus pipeline: a gitignore-aware walk, then parallel reading with
//! binary detection, a size cap, lossy decoding and language detection.
//!
//! Walking and reading are separate steps: [`CorpusBuilder::scan`] only stats
//! files, which is enough to tell whether an index is stale, and
//! [`CorpusBuilder::read`] reads what a scan found.

use crate::error::{Error, Result};
use crate::guards::{self, WalkGuards};
use crate::ids::FileId;
use crate::language::Language;
use crate::progress::{NoProgress, Progress};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Version of how files are read and decoded; recorded in the manifest so
/// that an index read another way is rebuilt. Changelog: v1 initial; v2 keeps
/// the byte-order mark in the text; v3 skips generated files; v4 skips
/// rendered or minified HTML and bundles in `dist` folders too (a refresh
/// takes unchanged files as the previous build judged them).
pub const CORPUS_VERSION: u32 = 4;

/// Files larger than this are skipped unless configured otherwise (issue 2:
/// "a per-file size cap (default 1 MiB, configurable)").
pub const DEFAULT_MAX_FILE_SIZE: u64 = 1 << 20;

/// How many leading bytes are searched for a NUL to call a file binary; the
/// same rule git and ripgrep use.
const BINARY_SNIFF_BYTES: usize = 8 * 1024;

/// Configures and runs the corpus walk.
#[derive(Debug, Clone)]
pub struct CorpusBuilder {
    max_file_size: u64,
    exclude: Vec<PathBuf>,
}

impl Default for CorpusBuilder {
    fn default() -> Self {
        CorpusBuilder { max_file_size: DEFAULT_MAX_FILE_SIZE, exclude: Vec::new() }
    }
}

/// A file found by a scan, not yet read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileStat {
    /// Path relative to the root, with `/` separators.
    pub path: String,
    /// Size in bytes when stat'ed.
    pub size: u64,
    /// Modification time in nanoseconds since the Unix epoch (0 when unknown).
    pub mtime_ns: i64,
}

/// Why a file was left out of the corpus.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum SkipReason {
    /// Larger than the size cap.
    TooLarge {
        /// The file's size in bytes.
        size: u64,
    },
    /// Contains a NUL byte near its start.
    Binary,
    /// Could not be read (permissions, vanished, I/O error).
    Unreadable {
        /// The operating system's message.
        error: String,
    },
    /// A symbolic link; links are not followed, so a link loop or a link out
    /// of the tree can never be walked into.
    Symlink,
    /// Not a regular file (socket, fifo, device).
    NotRegular,
    /// Made by a tool, not written: a source map, minified JavaScript, CSS
    /// or HTML, a bundle in a `dist` folder, or HTML a documentation tool
    /// rendered ([`is_generated`]). Its text is noise to every retriever.
    Generated,
}

impl SkipReason {
    /// A short label for summaries ("too large", "binary" ...).
    pub fn label(&self) -> &'static str {
        match self {
            SkipReason::TooLarge { .. } => "too large",
            SkipReason::Binary => "binary",
            SkipReason::Unreadable { .. } => "unreadable",
            SkipReason::Symlink => "symlink",
            SkipReason::NotRegular => "not a regular file",
            SkipReason::Generated => "generated",
        }
    }
}

/// A path that was skipped, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    /// Path relative to the root.
    pub path: String,
    /// The reason.
    #[serde(flatten)]
    pub reason: SkipReason,
}

/// The result of a walk: what would be read, and what was left out.
#[derive(Debug, Clone)]
pub struct Scan {
    /// The walked root, canonicalized.
    pub root: PathBuf,
    /// Candidate files in path order.
    pub files: Vec<FileStat>,
    /// Paths left out during the walk.
    pub skipped: Vec<Skipped>,
    /// What the walk's result rests on, to tell later without walking
    /// whether the tree kept its shape.
    pub guards: WalkGuards,
}

/// A file of the corpus, read and decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFile {
    /// Path relative to the root, with `/` separators.
    pub path: String,
    /// Detected language, if it is one Maguyva parses.
    pub language: Option<Language>,
    /// The text; invalid UTF-8 sequences were replaced by U+FFFD.
    pub text: String,
    /// Size in bytes on disk.
    pub size: u64,
    /// Modification time, nanoseconds since the Unix epoch.
    pub mtime_ns: i64,
    /// xxh3 hash of the bytes on disk.
    pub hash: u64,
    /// Whether decoding replaced invalid UTF-8.
    pub lossy: bool,
}

/// The files of a tree, read, in path order; a file's [`FileId`] is its
/// position.
#[derive(Debug, Clone, Default)]
pub struct Corpus {
    /// The root, canonicalized.
    pub root: PathBuf,
    /// The files.
    pub files: Vec<SourceFile>,
    /// Everything left out, from the walk and from reading.
    pub skipped: Vec<Skipped>,
}

impl Corpus {
    /// The file with id `id`.
    pub fn file(&self, id: FileId) -> &SourceFile {
        &self.files[id.index()]
    }

    /// How many files were decoded lossily.
    pub fn lossy_count(&self) -> usize {
        self.files.iter().filter(|f| f.lossy).count()
    }

    /// Total bytes of the files read.
    pub fn total_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.size).sum()
    }
}

impl CorpusBuilder {
    /// A builder with the default size cap and no exclusions.
    pub fn new() -> CorpusBuilder {
        CorpusBuilder::default()
    }

    /// Files larger than `bytes` are skipped.
    pub fn max_file_size(&mut self, bytes: u64) -> &mut CorpusBuilder {
        self.max_file_size = bytes;
        self
    }

    /// The configured size cap.
    pub fn file_size_limit(&self) -> u64 {
        self.max_file_size
    }

    /// Never walk into `path` (the index folder when it lies inside the tree).
    pub fn exclude(&mut self, path: impl Into<PathBuf>) -> &mut CorpusBuilder {
        let path = path.into();
        self.exclude.push(path.canonicalize().unwrap_or(path));
        self
    }

    /// Walks `root` and stats every file, honouring .gitignore, .ignore and
    /// git's exclude file (also outside a git checkout), skipping hidden
    /// files and `.git`, and never following symbolic links.
    pub fn scan(&self, root: &Path) -> Result<Scan> {
        let root = canonical_root(root)?;
        let exclude = self.exclude.clone();
        let mut walker = ignore::WalkBuilder::new(&root);
        walker
            .hidden(true)
            .git_ignore(true)
            .git_exclude(true)
            .git_global(false)
            .ignore(true)
            .parents(true)
            .require_git(false)
            .follow_links(false)
            .filter_entry(move |e| !exclude.iter().any(|x| e.path() == x));
        let started_ns = guards::now_ns();
        // The walk is a stat per file: it runs on every core.
        type Found = (Vec<FileStat>, Vec<Skipped>, Vec<FileStat>);
        let found: std::sync::Mutex<Found> = Default::default();
        walker.build_parallel().run(|| {
            let (root, found) = (&root, &found);
            Box::new(move |entry| {
                let folder = match &entry {
                    Ok(e) if e.file_type().is_some_and(|t| t.is_dir()) => {
                        guards::folder_guards(e.path())
                    }
                    _ => Vec::new(),
                };
                let item = scanned(root, entry);
                let mut found = found.lock().unwrap_or_else(|p| p.into_inner());
                found.2.extend(folder);
                match item {
                    Some(Ok(stat)) => found.0.push(stat),
                    Some(Err(skip)) => found.1.push(skip),
                    None => {}
                }
                ignore::WalkState::Continue
            })
        });
        let (mut files, mut skipped, mut entries) =
            found.into_inner().unwrap_or_else(|p| p.into_inner());
        let (above, absent) = guards::ancestor_guards(&root);
        entries.extend(above);
        entries.sort_by(|a, b| a.path.cmp(&b.path));
        let guards = WalkGuards { started_ns, entries, absent };
        files.sort_by(|a, b| a.path.cmp(&b.path));
        // Oversized files are known from the stat alone; they are never opened.
        let max = self.max_file_size;
        files.retain(|f| {
            if f.size > max {
                skipped.push(Skipped {
                    path: f.path.clone(),
                    reason: SkipReason::TooLarge { size: f.size },
                });
                false
            } else {
                true
            }
        });
        skipped.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(Scan { root, files, skipped, guards })
    }

    /// Reads the files of a scan in parallel.
    pub fn read(&self, scan: &Scan, progress: &dyn Progress) -> Corpus {
        progress.stage("reading", scan.files.len() as u64);
        let results: Vec<std::result::Result<SourceFile, Skipped>> = scan
            .files
            .par_iter()
            .map(|stat| {
                let out = read_one(&scan.root, stat, self.max_file_size);
                progress.advance(1);
                out
            })
            .collect();
        let mut corpus =
            Corpus { root: scan.root.clone(), files: Vec::new(), skipped: scan.skipped.clone() };
        for r in results {
            match r {
                Ok(f) => corpus.files.push(f),
                Err(s) => corpus.skipped.push(s),
            }
        }
        corpus.skipped.sort_by(|a, b| a.path.cmp(&b.path));
        corpus
    }

    /// Scans and reads `root` in one call.
    pub fn build(&self, root: &Path) -> Result<Corpus> {
        let scan = self.scan(root)?;
        Ok(self.read(&scan, &NoProgress))
    }
}

/// Checks that `root` is a folder that can be walked and returns its
/// canonical path; an [`Error::BadRoot`] otherwise.
pub fn canonical_root(root: &Path) -> Result<PathBuf> {
    let meta = std::fs::metadata(root)
        .map_err(|e| Error::BadRoot { path: root.to_path_buf(), reason: e.to_string() })?;
    if !meta.is_dir() {
        return Err(Error::BadRoot { path: root.to_path_buf(), reason: "not a folder".into() });
    }
    root.canonicalize().map_err(|e| Error::io("resolving", root, e))
}

/// What the walk makes of one entry: a file's stat, a file skipped and
/// why, or nothing (the root, folders).
fn scanned(
    root: &Path,
    entry: std::result::Result<ignore::DirEntry, ignore::Error>,
) -> Option<std::result::Result<FileStat, Skipped>> {
    let entry = match entry {
        Ok(e) => e,
        Err(err) => {
            let path = error_path(&err).map(|p| relative(root, p)).unwrap_or_default();
            return Some(Err(Skipped {
                path,
                reason: SkipReason::Unreadable { error: err.to_string() },
            }));
        }
    };
    if entry.depth() == 0 {
        return None;
    }
    let ft = entry.file_type()?;
    if ft.is_dir() {
        return None;
    }
    let path = relative(root, entry.path());
    if ft.is_symlink() {
        return Some(Err(Skipped { path, reason: SkipReason::Symlink }));
    }
    if !ft.is_file() {
        return Some(Err(Skipped { path, reason: SkipReason::NotRegular }));
    }
    Some(match entry.metadata() {
        Ok(meta) => Ok(FileStat { path, size: meta.len(), mtime_ns: mtime_ns(&meta) }),
        Err(err) => {
            Err(Skipped { path, reason: SkipReason::Unreadable { error: err.to_string() } })
        }
    })
}

fn error_path(err: &ignore::Error) -> Option<&Path> {
    match err {
        ignore::Error::WithPath { path, .. } => Some(path),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err)
        }
        ignore::Error::Loop { child, .. } => Some(child),
        _ => None,
    }
}

/// `path` relative to `root`, with `/` separators on every platform.
pub fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let parts: Vec<String> =
        rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    parts.join("/")
}

pub(crate) fn mtime_ns(meta: &std::fs::Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

fn read_one(root: &Path, stat: &FileStat, max: u64) -> std::result::Result<SourceFile, Skipped> {
    let skip = |reason| Skipped { path: stat.path.clone(), reason };
    let abs = root.join(&stat.path);
    let file = std::fs::File::open(&abs)
        .map_err(|e| skip(SkipReason::Unreadable { error: e.to_string() }))?;
    let meta =
        file.metadata().map_err(|e| skip(SkipReason::Unreadable { error: e.to_string() }))?;
    // The file may have grown since the scan; never read past the cap.
    let mut bytes = Vec::with_capacity(meta.len().min(max) as usize);
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| skip(SkipReason::Unreadable { error: e.to_string() }))?;
    if bytes.len() as u64 > max {
        return Err(skip(SkipReason::TooLarge { size: meta.len() }));
    }
    if is_binary(&bytes) {
        return Err(skip(SkipReason::Binary));
    }
    if is_generated(&stat.path, &bytes) {
        return Err(skip(SkipReason::Generated));
    }
    let hash = xxhash_rust::xxh3::xxh3_64(&bytes);
    let size = bytes.len() as u64;
    let (text, lossy) = decode(bytes);
    let name = stat.path.rsplit('/').next().unwrap_or(&stat.path);
    let head_end = text.char_indices().nth(4096).map_or(text.len(), |(i, _)| i);
    let head = text[..head_end].trim_start_matches('\u{FEFF}');
    let language = Language::detect(name, head);
    Ok(SourceFile {
        path: stat.path.clone(),
        language,
        text,
        size,
        mtime_ns: mtime_ns(&meta),
        hash,
        lossy,
    })
}

/// Whether the bytes look binary: a NUL byte among the first 8 KiB.
pub fn is_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0)
}

/// Whether a file is machine-made text no one reads or searches for: a
/// source map (`.map`, a JSON object with a `"version"`); a bundle
/// ([`is_bundled`]); JavaScript, CSS or HTML that is minified (`.min.` in
/// its name, or lines of more than [`MINIFIED_LINE_BYTES`] on average, the
/// rule GitHub's linguist uses); or HTML that a tool rendered
/// ([`is_rendered_html`]: API references, coverage reports), whose words are
/// the source's own doc comments again.
pub fn is_generated(path: &str, bytes: &[u8]) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let head = &bytes[..bytes.len().min(256)];
    let head = head.trim_ascii_start();
    if name.ends_with(".map") {
        return head.starts_with(b"{") && memchr::memmem::find(head, b"\"version\"").is_some();
    }
    if is_bundled(path) {
        return true;
    }
    let lower = name.to_ascii_lowercase();
    let html = [".html", ".htm", ".xhtml"].iter().any(|e| lower.ends_with(e));
    let minifiable = html || [".js", ".mjs", ".cjs", ".css"].iter().any(|e| name.ends_with(e));
    if !minifiable || bytes.is_empty() {
        return false;
    }
    if html && is_rendered_html(bytes) {
        return true;
    }
    let lines = memchr::memchr_iter(b'\n', bytes).count() + usize::from(!bytes.ends_with(b"\n"));
    name.contains(".min.") || bytes.len() / lines.max(1) > MINIFIED_LINE_BYTES
}

/// Whether a path is JavaScript, its type declarations or CSS in a `dist`
/// folder, where bundlers put what they build from the sources beside it:
/// indexed, each bundle repeats the code it was made from.
pub fn is_bundled(path: &str) -> bool {
    const BUILT: [&str; 7] = [".js", ".mjs", ".cjs", ".css", ".d.ts", ".d.mts", ".d.cts"];
    let mut parts = path.split('/');
    let name = parts.next_back().unwrap_or(path);
    parts.any(|p| p == "dist") && BUILT.iter().any(|e| name.ends_with(e))
}

/// Whether HTML says a tool made it: a `<meta name="generator">` tag, or
/// the credit that documentation and report generators print ("Generated
/// by" from Doxygen, javadoc, jazzy and Dokka, "Generated using" from
/// TypeDoc, "Created using <a" from Sphinx).
pub fn is_rendered_html(bytes: &[u8]) -> bool {
    const CREDITS: [&[u8]; 3] = [b"Generated by", b"Generated using", b"Created using <a"];
    let head = &bytes[..bytes.len().min(4096)];
    let meta = memchr::memmem::find_iter(head, b"<meta").any(|at| {
        let tag = &head[at..head.len().min(at + 200)];
        let tag = &tag[..memchr::memchr(b'>', tag).unwrap_or(tag.len())];
        tag.windows(16).any(|w| w.eq_ignore_ascii_case(b"name=\"generator\""))
    });
    meta || CREDITS.iter().any(|c| memchr::memmem::find(bytes, c).is_some())
}

/// Average line length past which JavaScript or CSS counts as minified.
pub const MINIFIED_LINE_BYTES: usize = 110;

/// Decodes UTF-8, replacing invalid sequences; the flag says whether any were.
/// A byte-order mark is kept, so that the text stays byte-for-byte the file
/// and a literal search matches exactly what is on disk.
fn decode(bytes: Vec<u8>) -> (String, bool) {
    match String::from_utf8(bytes) {
        Ok(s) => (s, false),
        Err(e) => (String::from_utf8_lossy(e.as_bytes()).into_owned(), true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn tree(files: &[(&str, &[u8])]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, bytes) in files {
            let p = dir.path().join(path);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, bytes).unwrap();
        }
        dir
    }

    #[test]
    fn walk_honours_ignores_hidden_and_git() {
        let dir = tree(&[
            ("src/main.rs", b"fn main() {}"),
            ("target/out.rs", b"fn gen() {}"),
            (".gitignore", b"target/\n*.log\n"),
            ("debug.log", b"log"),
            (".hidden/x.rs", b"fn x() {}"),
            (".git/config", b"[core]"),
            ("notes/.ignore", b"secret.txt\n"),
            ("notes/secret.txt", b"s"),
            ("notes/readme.txt", b"r"),
        ]);
        let corpus = CorpusBuilder::new().build(dir.path()).unwrap();
        let paths: Vec<_> = corpus.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, vec!["notes/readme.txt", "src/main.rs"]);
        assert_eq!(corpus.files[1].language, Some(Language::Rust));
    }

    #[test]
    fn binary_large_and_lossy() {
        let mut big = vec![b'a'; 2048];
        big.push(b'\n');
        let dir = tree(&[
            ("bin.dat", b"abc\0def"),
            ("big.txt", &big),
            ("latin1.py", b"name = '\xe9t\xe9'\n"),
            ("bom.py", b"\xEF\xBB\xBFx = 1\n"),
            ("bom-script", b"\xEF\xBB\xBF#!/bin/sh\necho\n"),
        ]);
        let corpus = CorpusBuilder::new().max_file_size(1024).build(dir.path()).unwrap();
        let paths: Vec<_> = corpus.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, vec!["bom-script", "bom.py", "latin1.py"]);
        assert_eq!(corpus.files[0].language, Some(Language::Bash));
        assert_eq!(corpus.files[1].text, "\u{FEFF}x = 1\n");
        assert_eq!(corpus.files[1].language, Some(Language::Python));
        assert!(corpus.files[2].lossy && corpus.files[2].text.contains('\u{FFFD}'));
        assert_eq!(corpus.lossy_count(), 1);
        let reasons: Vec<_> =
            corpus.skipped.iter().map(|s| (s.path.as_str(), s.reason.label())).collect();
        assert_eq!(reasons, vec![("big.txt", "too large"), ("bin.dat", "binary")]);
    }

    #[test]
    fn rendered_and_minified_html_is_generated() {
        let page =
            |body: &str| format!("<!DOCTYPE html>\n<html>\n<body>\n{body}\n</body>\n</html>\n");
        let footer =
            page(r#"<p>Generated by <a href="https://github.com/realm/jazzy">jazzy</a></p>"#);
        assert!(is_generated("docs/Classes/Session.html", footer.as_bytes()));
        let meta = r#"<html><head><meta content="rustdoc" NAME="generator"></head>"#;
        assert!(is_generated("doc/index.html", meta.as_bytes()), "in any attribute order");
        let meta = r#"<html><head><meta Name="Generator" content="ExDoc v0.34"></head>"#;
        assert!(is_generated("doc/index.HTML", meta.as_bytes()));
        let sphinx = page(r#"Created using <a href="https://www.sphinx-doc.org/">Sphinx</a>"#);
        assert!(is_generated("_build/html/api.htm", sphinx.as_bytes()));
        let wide =
            page(&format!("<div class=\"toc\">{}</div>", "<a href=\"x.html\">x</a>".repeat(60)));
        assert!(is_generated("docs/api/navigation.html", wide.as_bytes()));
        let written = page("<form id=\"login\">\n  <input name=\"user\">\n</form>");
        assert!(!is_generated("templates/login.html", written.as_bytes()));
        assert!(!is_generated("docs/generated.md", footer.as_bytes()), "HTML only");
    }

    #[test]
    fn source_maps_and_minified_code_are_generated() {
        let long = format!("var a={};\n", "x".repeat(300));
        assert!(is_generated("dist/app.js.map", br#"{"version":3,"sources":["a.ts"]}"#));
        assert!(is_generated("app.map", b"  {\n  \"version\": 3 }"));
        assert!(!is_generated("game/world.map", b"#####\n#...#\n"));
        assert!(is_generated("dist/app.min.js", b"function a(){}\n"));
        assert!(is_generated("dist/app.js", long.as_bytes()));
        assert!(is_generated("style.css", long.trim_end().as_bytes()));
        assert!(!is_generated("src/app.js", b"function a() {\n  return 1;\n}\n"));
        assert!(!is_generated("notes.md", long.as_bytes()), "only code that minifiers make");
        assert!(!is_generated("src/empty.js", b""));
        assert!(is_generated("dist/esm/app.js", b"function a() {\n  return 1;\n}\n"));
        assert!(is_generated("packages/ui/dist/index.d.ts", b"export declare const a: 1;\n"));
        assert!(!is_generated("dist/install.sh", b"echo hi\n"), "only what bundlers make");
        assert!(!is_generated("src/distance.js", b"function a() {}\n"));
        assert!(!is_generated("tools/dist.js", b"function a() {}\n"));
        let dir = tree(&[
            ("src/app.js", b"export function start() {}\n"),
            ("dist/app.min.js", b"export function start(){}\n"),
            ("dist/app.js.map", br#"{"version":3,"mappings":"AAAA"}"#),
        ]);
        let corpus = CorpusBuilder::new().build(dir.path()).unwrap();
        let paths: Vec<_> = corpus.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, vec!["src/app.js"]);
        assert!(corpus.skipped.iter().all(|s| s.reason == SkipReason::Generated));
        assert_eq!(corpus.skipped.len(), 2);
    }

    #[cfg(unix)]
    #[test]
    fn symlink_loops_are_skipped_not_followed() {
        let dir = tree(&[("a/x.go", b"package a")]);
        std::os::unix::fs::symlink(dir.path().join("a"), dir.path().join("a/loop")).unwrap();
        let corpus = CorpusBuilder::new().build(dir.path()).unwrap();
        assert_eq!(corpus.files.len(), 1);
        assert_eq!(corpus.skipped[0].path, "a/loop");
        assert_eq!(corpus.skipped[0].reason, SkipReason::Symlink);
    }

    #[test]
    fn a_file_that_cannot_be_read_is_skipped_with_the_os_error() {
        let dir = tree(&[("gone.rs", b"fn gone() {}"), ("kept.rs", b"fn kept() {}")]);
        let builder = CorpusBuilder::new();
        let scan = builder.scan(dir.path()).unwrap();
        fs::remove_file(dir.path().join("gone.rs")).unwrap();
        let corpus = builder.read(&scan, &NoProgress);
        assert_eq!(corpus.files.len(), 1);
        assert_eq!(corpus.skipped.len(), 1);
        assert_eq!(corpus.skipped[0].path, "gone.rs");
        assert!(
            matches!(&corpus.skipped[0].reason, SkipReason::Unreadable { error } if !error.is_empty())
        );
    }

    #[test]
    fn excluded_folder_is_not_walked() {
        let dir = tree(&[("idx/data.txt", b"x"), ("a.txt", b"y")]);
        let corpus =
            CorpusBuilder::new().exclude(dir.path().join("idx")).build(dir.path()).unwrap();
        assert_eq!(corpus.files.len(), 1);
    }

    #[test]
    fn bad_root_is_an_error() {
        let dir = tree(&[("f.txt", b"x")]);
        assert!(matches!(
            CorpusBuilder::new().build(&dir.path().join("f.txt")),
            Err(Error::BadRoot { .. })
        ));
        assert!(matches!(
            CorpusBuilder::new().build(&dir.path().join("missing")),
            Err(Error::BadRoot { .. })
        ));
    }
}
