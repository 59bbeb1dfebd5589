//! Building an index generation: walk, read, fragment, index each modality,
//! write everything into a staging folder, and commit it atomically.

use super::settings::IndexSettings;
use super::{FRAGMENTS_FILE, FRAGMENTS_FORMAT, Index};
use maguyva_ast::{FileOutline, SymbolTable};
use maguyva_core::{
    Analyzer, ContentStore, CorpusBuilder, FileEntry, FileId, FragmentTable, IndexDir, Manifest,
    OutlineSpan, Progress, Result, Skipped, store,
};
use maguyva_trigram::TextIndexBuilder;
use rayon::prelude::*;
use serde::Serialize;
use std::path::Path;
use std::time::{Duration, Instant};

/// What a build did.
#[derive(Debug, Clone, Serialize)]
pub struct BuildReport {
    /// The indexed root.
    pub root: String,
    /// The generation folder written.
    pub index: String,
    /// Files indexed.
    pub files: usize,
    /// Fragments made.
    pub fragments: usize,
    /// Definitions found.
    pub symbols: usize,
    /// Files whose parse failed, and why; they keep line-window fragments.
    pub parse_failures: Vec<(String, String)>,
    /// Bytes of the files indexed.
    pub bytes: u64,
    /// Files whose invalid UTF-8 was replaced.
    pub lossy_files: usize,
    /// Files left out, and why.
    pub skipped: Vec<Skipped>,
    /// Time of each stage, in milliseconds.
    pub stages_ms: Vec<(String, f64)>,
    /// Total time, in milliseconds.
    pub total_ms: f64,
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Builds a fresh index of `root` into `dir`, replacing the current
/// generation only once the new one is complete.
pub fn build_index(
    root: &Path,
    dir: &IndexDir,
    settings: &IndexSettings,
    progress: &dyn Progress,
) -> Result<(Index, BuildReport)> {
    let start = Instant::now();
    // Refuse a bad root before anything is created on disk.
    maguyva_core::canonical_root(root)?;
    let lock = dir.lock()?;
    let mut stages = Vec::new();
    let mut stage = |name: &str, since: &mut Instant| {
        stages.push((name.to_string(), ms(since.elapsed())));
        *since = Instant::now();
    };
    let mut t = Instant::now();

    let mut walker = CorpusBuilder::new();
    walker.max_file_size(settings.max_file_size).exclude(dir.path());
    progress.stage("scanning", 0);
    let scan = walker.scan(root)?;
    stage("scan", &mut t);
    let corpus = walker.read(&scan, progress);
    stage("read", &mut t);

    progress.stage("parsing", corpus.files.len() as u64);
    let outlines: Vec<FileOutline> = corpus
        .files
        .par_iter()
        .enumerate()
        .map(|(i, f)| {
            let outline = match f.language {
                Some(lang) => maguyva_ast::outline(lang, &f.text, FileId(i as u32)),
                None => FileOutline::default(),
            };
            progress.advance(1);
            outline
        })
        .collect();
    let parse_failures: Vec<(String, String)> = outlines
        .iter()
        .zip(&corpus.files)
        .filter_map(|(o, f)| o.failure.clone().map(|why| (f.path.clone(), why)))
        .collect();
    stage("parse", &mut t);

    progress.stage("fragmenting", 0);
    let spans = corpus
        .files
        .par_iter()
        .zip(&outlines)
        .map(|(f, o)| {
            let outline: Vec<OutlineSpan> =
                o.items.iter().map(|i| OutlineSpan { lines: i.lines, header: i.header }).collect();
            settings.chunker.chunk(&f.text, &outline)
        })
        .collect();
    let fragments = FragmentTable::from_spans(spans);
    let symbols = SymbolTable::build(&outlines, Analyzer::default())?;
    drop(outlines);
    stage("fragment", &mut t);

    let files: Vec<FileEntry> = corpus
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
    let bytes = corpus.total_bytes();
    let lossy_files = corpus.lossy_count();
    let skipped = corpus.skipped.clone();
    let content = ContentStore::new(corpus.files.into_iter().map(|f| f.text).collect());

    progress.stage("indexing text", 0);
    let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
    let documents = content.fragment_documents(&fragments);
    let text = TextIndexBuilder::new().build(&content, &documents, &paths)?;
    drop(documents);
    stage("text index", &mut t);

    progress.stage("writing", 0);
    let staging = lock.stage()?;
    let manifest = Manifest {
        maguyva_version: env!("CARGO_PKG_VERSION").into(),
        root: scan.root.clone(),
        created_unix_ms: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or_default(),
        build_ms: start.elapsed().as_millis() as u64,
        max_file_size: settings.max_file_size,
        scanned: scan.files.clone(),
        files,
        skipped: skipped.clone(),
        fragments: fragments.len(),
        components: settings.components(),
    };
    content.save(staging.path())?;
    store::save(&staging.path().join(FRAGMENTS_FILE), FRAGMENTS_FORMAT, "fragments", &fragments)?;
    text.save(staging.path())?;
    symbols.save(staging.path())?;
    // The manifest goes last: a generation is only ever renamed into place
    // whole, but writing it last also keeps a half-copied folder unreadable.
    manifest.save(staging.path())?;
    let gen_dir = staging.commit()?;
    stage("write", &mut t);

    let report = BuildReport {
        root: scan.root.display().to_string(),
        index: gen_dir.display().to_string(),
        files: manifest.files.len(),
        fragments: fragments.len(),
        symbols: symbols.len(),
        parse_failures,
        bytes,
        lossy_files,
        skipped,
        stages_ms: stages,
        total_ms: ms(start.elapsed()),
    };
    let index = Index::assemble(manifest, content, fragments, text, symbols);
    Ok((index, report))
}
