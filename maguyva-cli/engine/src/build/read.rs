//! The first stages of a build: the walk of the tree (or, while it keeps
//! its shape, a stat of the files the previous generation recorded), and
//! the read of the files that may have changed.

use super::BuildOptions;
use super::previous::Previous;
use crate::settings::IndexSettings;
use maguyva_core::{
    ContentStore, CorpusBuilder, FileEntry, FileStat, Progress, Result, Scan, Skipped, SourceFile,
};
use std::path::Path;

/// The files of a build, read.
pub(crate) struct ReadCorpus {
    /// What the walk found.
    pub(crate) scan: Scan,
    /// The files indexed, in path order; a refresh's unchanged files carry
    /// no text (`text` empty).
    pub(crate) files: Vec<SourceFile>,
    /// Their records, for the manifest.
    pub(crate) entries: Vec<FileEntry>,
    /// Their text: as read, and for the files not read, from the tree when
    /// first needed.
    pub(crate) content: ContentStore,
    /// The files left out, and why, in path order.
    pub(crate) skipped: Vec<Skipped>,
    /// Bytes of the files indexed.
    pub(crate) bytes: u64,
    /// Files whose invalid UTF-8 was replaced.
    pub(crate) lossy_files: usize,
}

/// Walks the tree at `root` (`canonical`, its canonical path), or, for a
/// refresh that trusts stats while no folder or ignore file changed,
/// stat's the files `previous` recorded (the walk, with its ignore rules,
/// is most of a small refresh's scan).
pub(crate) fn scan(
    root: &Path,
    canonical: &Path,
    walker: &CorpusBuilder,
    settings: &IndexSettings,
    previous: Option<&Previous>,
    options: BuildOptions,
) -> Result<Scan> {
    let restat = previous.filter(|p| {
        options.trust_unchanged_stat
            && p.manifest.root == canonical
            && p.manifest.max_file_size == settings.max_file_size
    });
    match restat.and_then(|p| p.manifest.restat()) {
        Some(scan) => Ok(scan),
        None => walker.scan(root),
    }
}

/// Reads the files of `scan` that may have changed: not the unchanged files
/// `previous` indexed, nor those it skipped for what they held (binary,
/// generated, too large), when the build trusts stats.
pub(crate) fn read(
    scan: Scan,
    walker: &CorpusBuilder,
    previous: Option<&Previous>,
    options: BuildOptions,
    progress: &dyn Progress,
) -> ReadCorpus {
    let trust = previous.filter(|_| options.trust_unchanged_stat);
    let (trusted, skipped_again): (Vec<Option<&FileEntry>>, Vec<Option<Skipped>>) = scan
        .files
        .iter()
        .map(|f| trust.map_or((None, None), |p| (p.unchanged(f), p.skipped_unchanged(f))))
        .unzip();
    let to_read = maguyva_core::Scan {
        root: scan.root.clone(),
        files: (scan.files.iter().zip(&trusted).zip(&skipped_again))
            .filter(|((_, t), s)| t.is_none() && s.is_none())
            .map(|((f, _), _)| f.clone())
            .collect(),
        skipped: scan.skipped.clone(),
        guards: scan.guards.clone(),
    };
    let mut corpus = walker.read(&to_read, progress);
    let (files, texts) = with_trusted(&scan.files, &trusted, std::mem::take(&mut corpus.files));
    corpus.files = files;
    corpus.skipped.extend(skipped_again.into_iter().flatten());
    corpus.skipped.sort_by(|a, b| a.path.cmp(&b.path));
    let entries: Vec<FileEntry> = corpus
        .files
        .iter()
        .map(|f| FileEntry {
            path: f.path.clone(),
            size: f.size,
            mtime_ns: f.mtime_ns,
            hash: f.hash,
            language: f.language,
            lossy: f.lossy,
        })
        .collect();
    let content = ContentStore::partly_read(&scan.root, &entries, texts);
    ReadCorpus {
        bytes: corpus.total_bytes(),
        lossy_files: corpus.lossy_count(),
        skipped: corpus.skipped,
        files: corpus.files,
        entries,
        content,
        scan,
    }
}

/// The walk's files as read, in path order, each with its text: `read`,
/// and in place of each file `trusted` gives the previous generation's
/// record, its text not read (`None`). A file the read skipped is in
/// neither, so the result can be shorter than `walked`.
fn with_trusted(
    walked: &[FileStat],
    trusted: &[Option<&FileEntry>],
    read: Vec<SourceFile>,
) -> (Vec<SourceFile>, Vec<Option<String>>) {
    let mut read = read.into_iter().peekable();
    let mut files = Vec::with_capacity(walked.len());
    let mut texts = Vec::with_capacity(walked.len());
    for (stat, old) in walked.iter().zip(trusted) {
        match old {
            Some(old) => {
                files.push(SourceFile {
                    path: old.path.clone(),
                    language: old.language,
                    text: String::new(),
                    size: old.size,
                    mtime_ns: old.mtime_ns,
                    hash: old.hash,
                    lossy: old.lossy,
                });
                texts.push(None);
            }
            // A file the read skipped (binary, too large ...) is not there.
            None => {
                if let Some(mut file) = read.next_if(|f| f.path == stat.path) {
                    texts.push(Some(std::mem::take(&mut file.text)));
                    files.push(file);
                }
            }
        }
    }
    (files, texts)
}
