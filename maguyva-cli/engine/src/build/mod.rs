//! Building an index generation, stage by stage: scan the tree, read the
//! files that may have changed, parse them (taking the outlines of the
//! others from the previous generation), cut the fragments, build every
//! registered modality (each writes its own files), then write the shared
//! files and the manifest and commit the generation atomically.

pub(crate) mod parse;
pub(crate) mod previous;
pub(crate) mod read;

use crate::modalities::{BuildSet, built_as};
use crate::outlines::{self, OUTLINES_FILE, OutlineCache};
use crate::settings::IndexSettings;
use crate::{FRAGMENTS_FILE, FRAGMENTS_FORMAT, Index};
use maguyva_ast::FileOutline;
use maguyva_core::{
    Built, ContentStore, CorpusBuilder, FileEntry, FileId, FragmentTable, IndexDir, Language,
    Manifest, Modality, Progress, Result, Skipped, store,
};
use maguyva_graph::{CallGraph, PreviousGraph};
use maguyva_trigram::TextIndex;
use parse::Parsed;
use previous::Previous;
use rayon::prelude::*;
use serde::Serialize;
use std::path::Path;
use std::sync::Mutex;
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
    /// Fragments embedded by this build.
    pub embedded: usize,
    /// Fragments whose vectors were reused from the previous index.
    pub reused_vectors: usize,
    /// Files parsed by this build.
    pub parsed_files: usize,
    /// Files whose parse was taken from the previous index, unchanged.
    pub reused_outlines: usize,
    /// Files whose imports and uses were resolved by this build; a refresh
    /// keeps the others' links when no definition they could name changed.
    pub relinked_files: usize,
    /// Whether the corpus model of the previous index was kept.
    pub model_kept: bool,
    /// Files whose parse failed, and why; they keep line-window fragments.
    pub parse_failures: Vec<(String, String)>,
    /// Edges of the dependency graph.
    pub graph_edges: usize,
    /// Imports that matched no file of the repository (standard and
    /// third-party modules), as `(file, import)`.
    pub unresolved_imports: Vec<(String, String)>,
    /// Bytes of the files indexed.
    pub bytes: u64,
    /// Files whose invalid UTF-8 was replaced.
    pub lossy_files: usize,
    /// Files left out, and why.
    pub skipped: Vec<Skipped>,
    /// Time of each stage, in milliseconds. The symbols and graph run
    /// beside the text index and embedding, so those four overlap; `write`
    /// is the longer side's writing, which overlaps the other's work, and
    /// the switch to the new generation.
    pub stages_ms: Vec<(String, f64)>,
    /// Total time, in milliseconds.
    pub total_ms: f64,
    /// Why a refresh could not take what it meant to from the previous
    /// generation, which this build then made from scratch instead.
    pub recovered: Option<String>,
}

/// A corpus model is kept by a refresh until more than this share of the
/// fragments' documents are new to it; then it is learned again. Keeping it
/// keeps every unchanged fragment's vector where it was.
pub const MODEL_DRIFT_LIMIT: f64 = 0.2;

/// What a build may take from the index it replaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BuildOptions {
    /// Take the parse of every file whose text and language are unchanged.
    pub reuse_outlines: bool,
    /// Keep the corpus-learned embedding model while the corpus has not
    /// drifted past [`MODEL_DRIFT_LIMIT`].
    pub reuse_model: bool,
    /// Patch the previous text index (its lists read, the files that
    /// changed indexed anew) instead of indexing every text again; the
    /// result is the same.
    pub reuse_text: bool,
    /// Take a file whose size and modification time are the ones the
    /// previous generation read it with as unchanged, without reading it
    /// (unless its time is too close to that build's walk to tell an edit
    /// by, [`maguyva_core::WalkGuards::settled`]), as the stale check of a
    /// search does.
    pub trust_unchanged_stat: bool,
}

impl BuildOptions {
    /// A build from scratch, as `maguyva index` does.
    pub const FULL: BuildOptions = BuildOptions {
        reuse_outlines: false,
        reuse_model: false,
        reuse_text: false,
        trust_unchanged_stat: false,
    };
    /// A refresh: parse only what changed, and keep the model.
    pub const REFRESH: BuildOptions = BuildOptions {
        reuse_outlines: true,
        reuse_model: true,
        reuse_text: true,
        trust_unchanged_stat: true,
    };
    /// A refresh after a read found a file other than its size and time
    /// say: every file is read, since the stat of another may hide an edit
    /// just the same.
    pub const REREAD: BuildOptions =
        BuildOptions { trust_unchanged_stat: false, ..BuildOptions::REFRESH };

    /// Whether anything is taken from the previous generation.
    pub fn reuses(self) -> bool {
        self.reuse_outlines || self.reuse_model || self.reuse_text
    }
}

/// The languages of files at `paths`: the one `manifest` recorded for the
/// path, or else the one the file's name says (a shebang is read later).
pub(crate) fn languages_of<'a>(
    manifest: Option<&Manifest>,
    paths: impl Iterator<Item = &'a str>,
) -> Vec<Language> {
    let recorded = |path: &str| {
        let manifest = manifest?;
        manifest.files.get(manifest.file_id(path)?.index())?.language
    };
    let named = |path: &str| Language::detect(path.rsplit('/').next().unwrap_or(path), "");
    let mut languages: Vec<Language> =
        paths.filter_map(|p| recorded(p).or_else(|| named(p))).collect();
    languages.sort_unstable();
    languages.dedup();
    languages
}

/// Compiles the queries of `languages` on a thread of its own, for the
/// parse that will need them (tens of milliseconds for a large grammar);
/// without a thread, they are compiled when needed.
pub(crate) fn compile_queries_ahead(languages: Vec<Language>) {
    if !languages.is_empty() {
        let compile = move || maguyva_ast::prepare_serially(&languages);
        let _ = std::thread::Builder::new().name("queries".into()).spawn(compile);
    }
}

/// The text the semantic modality embeds for a fragment: its file's path,
/// then the fragment's document. The path names what its code is about as
/// often as the code does (`float.lua`, `Column.kt`).
pub fn semantic_text(path: &str, document: &str) -> String {
    format!("{path}\n{document}")
}

fn ms(d: Duration) -> f64 {
    crate::millis(d)
}

/// Builds a fresh index of `root` into `dir`, replacing the current
/// generation only once the new one is complete.
pub fn build_index(
    root: &Path,
    dir: &IndexDir,
    settings: &IndexSettings,
    progress: &dyn Progress,
) -> Result<(Index, BuildReport)> {
    build_index_with(root, dir, settings, BuildOptions::FULL, progress)
}

/// Builds a new generation like [`build_index`], taking from the current
/// one what `options` allow: the result is the same as a build from scratch
/// with the same corpus model, at the cost of what changed.
pub fn build_index_with(
    root: &Path,
    dir: &IndexDir,
    settings: &IndexSettings,
    options: BuildOptions,
    progress: &dyn Progress,
) -> Result<(Index, BuildReport)> {
    let built = match build_once(root, dir, settings, options, progress) {
        // A file taken as unchanged changed while the build ran and had to
        // read it after all: the build is made again, reading every file.
        Err(maguyva_core::Error::Changed { .. }) if options.trust_unchanged_stat => {
            let options = BuildOptions { trust_unchanged_stat: false, ..options };
            build_once(root, dir, settings, options, progress)
        }
        built => built,
    };
    match built {
        // A refresh that fails where a build from scratch would not (the
        // previous generation holds something it cannot take over) builds
        // from scratch: a failed refresh never leaves the index stuck.
        Err(e) if options.reuses() && !fails_any_build(&e) => {
            let why = maguyva_core::error_chain(&e);
            let (index, mut report) =
                build_once(root, dir, settings, BuildOptions::FULL, progress)?;
            report.recovered = Some(why);
            Ok((index, report))
        }
        built => built,
    }
}

/// Whether a build from scratch would fail with `e` just the same: the tree
/// or the index folder cannot be read or written, another process writes
/// the index, or the root is not a folder.
fn fails_any_build(e: &maguyva_core::Error) -> bool {
    use maguyva_core::Error;
    matches!(
        e,
        Error::Io { .. } | Error::Locked { .. } | Error::BadRoot { .. } | Error::Changed { .. }
    )
}

/// What the engine gives its own modalities when it builds them: how the
/// build runs, the generation it replaces, and the parse of every file.
pub(crate) struct EngineBuild {
    pub(crate) dir: IndexDir,
    pub(crate) settings: IndexSettings,
    pub(crate) options: BuildOptions,
    pub(crate) previous: Option<Previous>,
    pub(crate) parsed: Parsed,
    /// The previous graph, for the graph modality to take the links of
    /// unchanged files from.
    pub(crate) previous_graph: Mutex<Option<PreviousGraph>>,
    /// The previous text index, for the text modality to patch.
    pub(crate) previous_text: Mutex<Option<TextIndex>>,
}

impl EngineBuild {
    /// File `i`'s outline, when it was not decoded and is needed after
    /// all: read from the previous outline file, or parsed again if its
    /// bytes do not decode.
    pub(crate) fn taken(
        &self,
        i: usize,
        files: &[FileEntry],
        content: &ContentStore,
    ) -> FileOutline {
        let id = FileId(i as u32);
        let key = self.parsed.keys.get(i).copied().unwrap_or_default();
        match self.parsed.cache.as_ref().and_then(|c| c.get_by_key(key, id)) {
            Some(outline) => outline,
            None => files
                .get(i)
                .and_then(|f| f.language)
                .map(|l| maguyva_ast::outline(l, content.text(id), id))
                .unwrap_or_default(),
        }
    }

    /// Every file's outline, the ones not decoded read now: for when what
    /// was to be taken from the previous generation cannot be.
    pub(crate) fn all_outlines(
        &self,
        files: &[FileEntry],
        content: &ContentStore,
    ) -> Vec<Option<FileOutline>> {
        let parsed = &self.parsed;
        (0..parsed.outlines.len())
            .into_par_iter()
            .map(|i| match &parsed.outlines[i] {
                Some(o) => Some(o.clone()),
                None if parsed.undecoded[i] => Some(self.taken(i, files, content)),
                None => None,
            })
            .collect()
    }
}

/// The time each stage took, in milliseconds, in order.
struct Stages {
    since: Instant,
    done: Vec<(String, f64)>,
}

impl Stages {
    fn new() -> Stages {
        Stages { since: Instant::now(), done: Vec::new() }
    }

    /// The stage `name` ends now.
    fn end(&mut self, name: &str) {
        self.done.push((name.to_string(), ms(self.since.elapsed())));
        self.since = Instant::now();
    }
}

fn build_once(
    root: &Path,
    dir: &IndexDir,
    settings: &IndexSettings,
    options: BuildOptions,
    progress: &dyn Progress,
) -> Result<(Index, BuildReport)> {
    let start = Instant::now();
    // Refuse a bad root before anything is created on disk.
    let canonical = maguyva_core::canonical_root(root)?;
    let lock = dir.lock()?;
    // Taking the lock may have just created the index folder in the root.
    maguyva_core::settle_before_scan(&canonical);
    let mut stages = Stages::new();
    let mut walker = CorpusBuilder::new();
    walker.max_file_size(settings.max_file_size).exclude(dir.path());
    progress.stage("scanning", 0);
    // A refresh takes the symbols, fragments and links of every file whose
    // path, text and language are unchanged from the previous generation.
    let previous = match options.reuse_outlines || options.reuse_text {
        true => dir.current().ok().flatten().and_then(|g| Previous::open(g, settings)),
        false => None,
    };
    let scan = read::scan(root, &canonical, &walker, settings, previous.as_ref(), options)?;
    stages.end("scan");
    // The queries of the languages of files that look changed (all of them
    // in a full build) are compiled while the files are read: tens of
    // milliseconds for a large grammar, most of a small refresh. A wrong
    // guess costs only that work.
    compile_queries_ahead(match &previous {
        Some(p) => p.likely_changed_languages(&scan.files),
        None => languages_of(None, scan.files.iter().map(|f| f.path.as_str())),
    });
    let corpus = read::read(scan, &walker, previous.as_ref(), options, progress);
    stages.end("read");

    progress.stage("parsing", corpus.files.len() as u64);
    let extraction = settings.components()?.get("structural").cloned().unwrap_or_default();
    let cache = match options.reuse_outlines {
        true => dir.current().ok().flatten().and_then(|g| OutlineCache::open(&g, &extraction)),
        false => None,
    };
    let kept: Vec<Option<FileId>> = match &previous {
        Some(p) => p.kept_files(&corpus.files),
        None => vec![None; corpus.files.len()],
    };
    let mut parsed = parse::parse(
        parse::ParseInput {
            corpus: &corpus,
            kept: &kept,
            cache,
            graph_from: previous.as_ref().filter(|_| options.reuse_outlines),
            text_from: previous.as_ref().filter(|_| options.reuse_text),
        },
        progress,
    );
    stages.end("parse");
    progress.stage("fragmenting", 0);
    let fragments =
        parse::fragments(&parsed, &corpus.content, previous.as_ref(), &kept, &settings.chunker);
    stages.end("fragment");

    // Every modality builds its files, side by side but for those that
    // build on another, while the files they share are written.
    progress.stage("linking and indexing", 0);
    let staging = lock.stage()?;
    let engine = EngineBuild {
        dir: dir.clone(),
        settings: settings.clone(),
        options,
        previous_graph: Mutex::new(parsed.previous_graph.take()),
        previous_text: Mutex::new(parsed.previous_text.take()),
        previous,
        parsed,
    };
    let set = BuildSet::new(
        root,
        &corpus.entries,
        &corpus.content,
        &fragments,
        engine.previous.as_ref().map(|p| p.generation.as_path()),
        &kept,
        &engine,
        staging.path(),
    );
    let (built, shared) = rayon::join(
        || set.build_all(),
        || write_shared(&engine, &corpus.entries, &corpus.content, &fragments, staging.path()),
    );
    let (modality_ms, shared_ms) = (built?, shared?);
    let built = set.into_built();
    // A file taken as unchanged that had to be read after all, and was not
    // the file recorded: what was made of it is not what the tree holds.
    if let Some(changed) = corpus.content.damage() {
        return Err(changed);
    }
    // Side by side, these stages overlap: each is timed on its own.
    stages.done.extend(modality_ms.iter().map(|(m, t)| (m.as_str().to_string(), *t)));
    let t = Instant::now();
    progress.stage("writing", 2);
    let manifest = manifest(&corpus, &fragments, settings, start)?;
    // The manifest goes last: a generation is only ever renamed into place
    // whole, but writing it last also keeps a half-copied folder unreadable.
    manifest.save(staging.path())?;
    progress.advance(1);
    let gen_dir = staging.commit()?;
    progress.advance(1);
    stages.done.push(("write".to_string(), crate::round_millis(shared_ms + ms(t.elapsed()))));
    let report = report(&built, &engine, &manifest, &corpus, &fragments, &gen_dir, stages, start)?;
    let index = Index::built(manifest, corpus.content, fragments, gen_dir, settings, &built)?;
    Ok((index, report))
}

/// Writes the files every modality shares: the fragments, and the outlines
/// of the parse (outlines kept that cannot be read back are written anew).
/// Returns how long that took, in ms.
fn write_shared(
    engine: &EngineBuild,
    files: &[FileEntry],
    content: &ContentStore,
    fragments: &FragmentTable,
    at: &Path,
) -> Result<f64> {
    let t = Instant::now();
    let parsed = &engine.parsed;
    let extraction = engine.settings.components()?.get("structural").cloned().unwrap_or_default();
    let cache = parsed.cache.as_ref();
    let outline_file = match outlines::writer(
        &extraction,
        &parsed.keys,
        &parsed.outlines,
        &parsed.stored,
        cache,
    ) {
        Ok(file) => file,
        Err(_) if cache.is_some() => {
            let none = vec![None; parsed.outlines.len()];
            let all = engine.all_outlines(files, content);
            outlines::writer(&extraction, &parsed.keys, &all, &none, None)?
        }
        Err(e) => return Err(e),
    };
    let (a, b) = rayon::join(
        || store::save(&at.join(FRAGMENTS_FILE), FRAGMENTS_FORMAT, "fragments", fragments),
        || outline_file.write(&at.join(OUTLINES_FILE)),
    );
    a?;
    b?;
    Ok(ms(t.elapsed()))
}

/// The manifest of a build.
fn manifest(
    corpus: &read::ReadCorpus,
    fragments: &FragmentTable,
    settings: &IndexSettings,
    start: Instant,
) -> Result<Manifest> {
    Ok(Manifest {
        maguyva_version: env!("CARGO_PKG_VERSION").into(),
        root: corpus.scan.root.clone(),
        created_unix_ms: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or_default(),
        build_ms: start.elapsed().as_millis() as u64,
        max_file_size: settings.max_file_size,
        scanned: corpus.scan.files.clone(),
        files: corpus.entries.clone(),
        skipped: corpus.skipped.clone(),
        fragments: fragments.len(),
        components: settings.components()?,
        options: settings.options(),
        guards: corpus.scan.guards.clone(),
    })
}

/// What a build did, from what each stage and modality made.
#[allow(clippy::too_many_arguments)]
fn report(
    built: &[(Modality, Built)],
    engine: &EngineBuild,
    manifest: &Manifest,
    corpus: &read::ReadCorpus,
    fragments: &FragmentTable,
    gen_dir: &Path,
    stages: Stages,
    start: Instant,
) -> Result<BuildReport> {
    let symbols = built_as::<maguyva_ast::SymbolTable>(built, Modality::STRUCTURAL)?;
    let graph = built_as::<CallGraph>(built, Modality::GRAPH)?;
    let semantic =
        built_as::<crate::modalities::semantic::SemanticBuilt>(built, Modality::SEMANTIC)?;
    let parsed = &engine.parsed;
    Ok(BuildReport {
        root: corpus.scan.root.display().to_string(),
        index: gen_dir.display().to_string(),
        files: manifest.files.len(),
        fragments: fragments.len(),
        symbols: symbols.len(),
        embedded: semantic.stats.embedded,
        reused_vectors: semantic.stats.reused,
        parsed_files: parsed.parsed,
        reused_outlines: parsed.reused,
        relinked_files: graph.relinked_files(),
        model_kept: semantic.model_kept,
        parse_failures: parsed.failures.clone(),
        graph_edges: graph.edges().len(),
        unresolved_imports: graph
            .unresolved_imports()
            .iter()
            .map(|u| {
                let file = manifest.files.get(u.file.index()).map(|f| f.path.clone());
                (file.unwrap_or_default(), u.path.clone())
            })
            .collect(),
        bytes: corpus.bytes,
        lossy_files: corpus.lossy_files,
        skipped: corpus.skipped.clone(),
        stages_ms: stages.done,
        total_ms: ms(start.elapsed()),
        recovered: None,
    })
}
