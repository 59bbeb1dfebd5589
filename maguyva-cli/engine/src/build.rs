//! Building an index generation: walk, read, fragment, index each modality,
//! write everything into a staging folder, and commit it atomically.

use super::embedder::EmbedderChoice;
use super::outlines::{self, OUTLINES_FILE, OutlineCache};
use super::settings::IndexSettings;
use super::{FRAGMENTS_FILE, FRAGMENTS_FORMAT, Index, IndexParts};
use maguyva_ast::{FileOutline, SymbolKind, SymbolTable};
use maguyva_core::{
    Analyzer, ChunkId, ContentStore, CorpusBuilder, FileEntry, FileId, FileRole, FragmentTable,
    IndexDir, Language, Manifest, OutlineSpan, Progress, Result, Skipped, TermMatrix, store,
};
use maguyva_graph::{
    CallGraph, DefKind, Definition, FileInfo, GraphBuilder, Import, ModuleRoot, PreviousGraph, Use,
};
use maguyva_semantic::{EmbedStats, Embedder, VectorIndex, VectorIndexBuilder};
use maguyva_trigram::{TextChanges, TextIndex, TextIndexBuilder};
use rayon::prelude::*;
use serde::Serialize;
use std::path::Path;
use std::sync::Arc;
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

/// How this build's files and fragments stand to the previous
/// generation's: which are the same ones (renumbered) and which are new.
struct ChunkChanges {
    /// For each previous file, its id now when it and its fragments are
    /// unchanged.
    kept_files: Vec<Option<u32>>,
    /// For each previous fragment, its id now when it is unchanged.
    kept_chunks: Vec<Option<u32>>,
    /// The files changed or added, in id order.
    fresh_files: Vec<u32>,
    /// Their fragments, in id order.
    fresh_chunks: Vec<u32>,
    /// For each fragment, the previous fragment it is, when unchanged.
    was: Vec<Option<u32>>,
}

impl ChunkChanges {
    /// A file is unchanged when it is a kept file (`kept[f]`, the file it
    /// was) cut into the same fragments, and comes after the unchanged
    /// files before it there too (so that renumbered lists stay sorted;
    /// both builds order files by path, but check).
    fn new(previous: &Previous, kept: &[Option<FileId>], fragments: &FragmentTable) -> Self {
        let old_fragments = &previous.fragments;
        let mut c = ChunkChanges {
            kept_files: vec![None; previous.manifest.files.len()],
            kept_chunks: vec![None; old_fragments.len()],
            fresh_files: Vec::new(),
            fresh_chunks: Vec::new(),
            was: vec![None; fragments.len()],
        };
        let mut last_kept = None;
        let same_fragments = |new_id: FileId, old_id: FileId| {
            let key =
                |f: &maguyva_core::Fragment| (f.lines, f.start_byte, f.end_byte, f.context_line);
            let new = fragments.of_file(new_id).map(|c| key(fragments.get(c)));
            new.eq(old_fragments.of_file(old_id).map(|c| key(old_fragments.get(c))))
        };
        for (i, old_id) in kept.iter().enumerate() {
            let new_id = FileId(i as u32);
            let same = old_id.filter(|&o| same_fragments(new_id, o)).map(FileId::index);
            match same {
                Some(old_id) if last_kept.is_none_or(|l| l < old_id) => {
                    last_kept = Some(old_id);
                    c.kept_files[old_id] = Some(i as u32);
                    let old_chunks = old_fragments.of_file(FileId(old_id as u32));
                    for (o, n) in old_chunks.zip(fragments.of_file(new_id)) {
                        c.kept_chunks[o.index()] = Some(n.0);
                        c.was[n.index()] = Some(o.0);
                    }
                }
                _ => {
                    c.fresh_files.push(i as u32);
                    c.fresh_chunks.extend(fragments.of_file(new_id).map(|c| c.0));
                }
            }
        }
        c
    }
}

/// The previous generation's text index (`old`) patched to describe the
/// files of this build: the lists of the unchanged files and fragments are
/// read and renumbered, and only the others are indexed (`documents` may be
/// empty for the unchanged fragments). `None` when there is no usable previous
/// index (then everything is indexed anew).
fn patched_text_index<S: AsRef<str> + Sync>(
    old: Option<TextIndex>,
    changes: &ChunkChanges,
    content: &ContentStore,
    documents: &[S],
    paths: &[&str],
    roles: &[FileRole],
) -> Option<Result<TextIndex>> {
    let old = old?;
    let changes = TextChanges {
        kept_files: &changes.kept_files,
        kept_chunks: &changes.kept_chunks,
        fresh_files: &changes.fresh_files,
        fresh_chunks: &changes.fresh_chunks,
    };
    let text = TextIndexBuilder::new().patched(&old, &changes, content, documents, paths, roles);
    Some(text.map_err(Into::into))
}

/// The documents vectors are made of: each fragment's path and text. A
/// refresh leaves the unchanged fragments' texts empty and names the
/// previous fragment each one is (`was`); the previous index has its hash.
struct SemanticDocuments<'a> {
    texts: Vec<String>,
    /// Each document's file, whose vector it takes in.
    files: Arc<[u32]>,
    was: Option<&'a [Option<u32>]>,
    /// Every document, for when the empty ones are needed after all.
    all: &'a dyn Fn() -> Vec<String>,
}

impl SemanticDocuments<'_> {
    /// Every document's text.
    fn complete(&mut self) -> &[String] {
        if self.was.take().is_some() {
            self.texts = (self.all)();
        }
        &self.texts
    }

    /// Each document's hash as `builder` makes it, the previous index's
    /// for an unchanged fragment; `None` when `previous` does not have that
    /// fragment, or when a file has both (a document's hash takes in its
    /// file's, so a file is fresh or unchanged as a whole).
    fn hashes(&self, previous: &VectorIndex, builder: &VectorIndexBuilder) -> Option<Vec<u64>> {
        let known = previous.document_hashes();
        let was = |c: usize| self.was.and_then(|w| w.get(c).copied().flatten());
        let mut fresh_files = std::collections::HashMap::new();
        for (c, &file) in self.files.iter().enumerate() {
            if *fresh_files.entry(file).or_insert(was(c).is_none()) != was(c).is_none() {
                return None;
            }
        }
        let fresh = builder.document_hashes(&self.texts).ok()?;
        (0..self.texts.len())
            .map(|c| match was(c) {
                Some(old) => known.get(old as usize).copied(),
                None => fresh.get(c).copied(),
            })
            .collect()
    }
}

/// The semantic index of the fragments' documents, reusing the vectors of
/// unchanged fragments from the current generation when its embedder is the
/// same one, and keeping its corpus model when `options` allow. Returns
/// whether a corpus model was kept.
fn embed(
    dir: &IndexDir,
    settings: &IndexSettings,
    options: BuildOptions,
    mut documents: SemanticDocuments<'_>,
    terms: impl FnOnce() -> Option<TermMatrix>,
) -> Result<(VectorIndex, Arc<dyn Embedder>, EmbedStats, bool)> {
    let mut builder = VectorIndexBuilder::new();
    builder.hnsw_threshold(settings.hnsw_threshold).files(Some(documents.files.clone()));
    let previous = || {
        dir.current()
            .ok()
            .flatten()
            .and_then(|g| Manifest::load(&g).ok().map(|m| (g, m)))
            .and_then(|(g, m)| VectorIndex::load(&g, m.fragments).ok())
    };
    if let Some(dimensions) = settings.embedder.corpus_dimensions() {
        if let EmbedderChoice::Joined { .. } = settings.embedder {
            builder.code_model(Some(maguyva_semantic::CodeModel::builtin()?));
        }
        let mut kept = None;
        if let Some(p) = options.reuse_model.then(previous).flatten() {
            let hashes = documents.hashes(&p, &builder).or_else(|| {
                documents.complete();
                documents.hashes(&p, &builder)
            });
            if let Some(hashes) = hashes.filter(|h| keepable_model(&p, dimensions, h)) {
                kept = builder.build_with_kept_model_hashed(&p, &documents.texts, &hashes)?;
            }
        }
        let was_kept = kept.is_some();
        let (vectors, stats) = match kept {
            Some(built) => built,
            None => {
                let documents = documents.complete();
                match terms() {
                    Some(terms) => {
                        builder.build_corpus_from_terms(documents, &terms, dimensions)?
                    }
                    None => builder.build_corpus(documents, dimensions)?,
                }
            }
        };
        let model = vectors
            .model_embedder()
            .ok_or_else(|| maguyva_core::Error::corrupt(dir.path(), "no corpus model"))?;
        return Ok((vectors, model, stats, was_kept));
    }
    let embedder = settings
        .embedder
        .open()?
        .ok_or_else(|| maguyva_core::Error::corrupt(dir.path(), "no embedder"))?;
    let documents = documents.complete();
    let (vectors, stats) = builder.build(embedder.as_ref(), documents, previous().as_ref())?;
    Ok((vectors, embedder, stats, false))
}

/// Whether the previous index's corpus model may be kept: it has the
/// dimensions asked for at most, and at most [`MODEL_DRIFT_LIMIT`] of the
/// documents (by their `hashes`) are new to it.
fn keepable_model(previous: &VectorIndex, dimensions: usize, hashes: &[u64]) -> bool {
    let Some(model) = previous.corpus_model() else { return false };
    if model.dimension() > dimensions || hashes.is_empty() {
        return false;
    }
    let known: std::collections::HashSet<u64> =
        previous.document_hashes().iter().copied().collect();
    let new = hashes.iter().filter(|h| !known.contains(h)).count();
    new as f64 <= MODEL_DRIFT_LIMIT * hashes.len() as f64
}

/// How a definition takes part in the graph.
fn def_kind(kind: SymbolKind) -> DefKind {
    match kind {
        SymbolKind::Function | SymbolKind::Method | SymbolKind::Macro => DefKind::Callable,
        SymbolKind::Class
        | SymbolKind::Struct
        | SymbolKind::Enum
        | SymbolKind::Interface
        | SymbolKind::Trait
        | SymbolKind::Type => DefKind::Type,
        SymbolKind::Module => DefKind::Module,
        SymbolKind::Constant | SymbolKind::Property => DefKind::Value,
        SymbolKind::Reexport => DefKind::Reexport,
    }
}

/// The module path a `go.mod` declares.
fn go_module_path(text: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let rest = l.trim().strip_prefix("module")?;
        rest.starts_with([' ', '\t']).then_some(())?;
        let path = rest.split("//").next()?.trim().trim_matches('"');
        (!path.is_empty()).then(|| path.to_string())
    })
}

/// JSON with comments and trailing commas (tsconfig.json), read leniently.
fn lenient_json(text: &str) -> Option<serde_json::Value> {
    let lexed = maguyva_core::lex(maguyva_core::Language::JavaScript, text);
    let mut clean = text.as_bytes().to_vec();
    for &(start, end) in lexed.comments() {
        for b in clean.get_mut(start..end)? {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    }
    let clean = String::from_utf8(clean).ok()?;
    // Drop commas that close nothing: `,` then only blanks before `}`/`]`.
    let mut out = String::with_capacity(clean.len());
    let chars: Vec<char> = clean.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c == ','
            && lexed.region_at(out.len()) == maguyva_core::Region::Code
            && chars[i + 1..]
                .iter()
                .find(|c| !c.is_whitespace())
                .is_some_and(|c| matches!(c, '}' | ']'))
        {
            out.push(' ');
            continue;
        }
        out.push(c);
    }
    serde_json::from_str(&out).ok()
}

/// The folder of a root-relative file path, with a trailing `/` ("" at the
/// root).
fn folder_of(path: &str) -> String {
    path.rsplit_once('/').map_or_else(String::new, |(d, _)| format!("{d}/"))
}

/// A file of the corpus as the graph's inputs read it.
#[derive(Debug, Clone, Copy)]
struct Source<'a> {
    path: &'a str,
    language: Option<Language>,
    text: Text<'a>,
}

/// A file's text, or where to get it when it is needed: most files' are
/// not (a refresh has not read the files it takes as unchanged).
#[derive(Debug, Clone, Copy)]
enum Text<'a> {
    #[cfg(test)]
    Given(&'a str),
    Stored(&'a ContentStore, FileId),
}

impl<'a> Source<'a> {
    fn all(files: &'a [FileEntry], content: &'a ContentStore) -> Vec<Source<'a>> {
        files
            .iter()
            .enumerate()
            .map(|(i, f)| Source {
                path: &f.path,
                language: f.language,
                text: Text::Stored(content, FileId(i as u32)),
            })
            .collect()
    }

    fn text(&self) -> &'a str {
        match self.text {
            #[cfg(test)]
            Text::Given(text) => text,
            Text::Stored(content, id) => content.text(id),
        }
    }
}

/// JavaScript and TypeScript module roots: workspace packages by their
/// `package.json` name (the entry for `name`, the folder for `name/sub`),
/// and `tsconfig.json` path aliases (`compilerOptions.paths`, from
/// `baseUrl`).
fn js_module_roots(files: &[Source]) -> Vec<ModuleRoot> {
    use maguyva_core::Language;
    let mut out = Vec::new();
    for f in files {
        let name = f.path.rsplit('/').next().unwrap_or(f.path);
        let folder = folder_of(f.path);
        if name == "package.json" {
            let Some(json) = lenient_json(f.text()) else { continue };
            let Some(pkg) = json.get("name").and_then(|n| n.as_str()) else { continue };
            let entry = ["source", "module", "main", "types"]
                .iter()
                .find_map(|k| json.get(*k).and_then(|v| v.as_str()))
                .map(|e| e.trim_start_matches("./").to_string());
            let entry = entry
                .and_then(|e| maguyva_core::join_relative(&folder, &e))
                .map(|e| e.rsplit_once('.').map_or(e.clone(), |(s, _)| s.to_string()))
                .unwrap_or_else(|| folder.trim_end_matches('/').to_string());
            out.push(ModuleRoot {
                dir: entry,
                path: pkg.to_string(),
                language: Language::JavaScript,
            });
            out.push(ModuleRoot {
                dir: folder.clone(),
                path: format!("{pkg}/"),
                language: Language::JavaScript,
            });
        } else if name.starts_with("tsconfig") && name.ends_with(".json") {
            let Some(json) = lenient_json(f.text()) else { continue };
            let options = json.get("compilerOptions");
            let base = options
                .and_then(|o| o.get("baseUrl"))
                .and_then(|b| b.as_str())
                .and_then(|b| maguyva_core::join_relative(&folder, b))
                .map(|b| if b.is_empty() { b } else { format!("{b}/") })
                .unwrap_or_else(|| folder.clone());
            let Some(paths) = options.and_then(|o| o.get("paths")).and_then(|p| p.as_object())
            else {
                continue;
            };
            for (alias, targets) in paths {
                let Some(target) =
                    targets.as_array().and_then(|t| t.first()).and_then(|t| t.as_str())
                else {
                    continue;
                };
                let (alias, target) = match (alias.strip_suffix('*'), target.strip_suffix('*')) {
                    (Some(a), Some(t)) => (a.to_string(), t.to_string()),
                    (None, None) => (alias.clone(), target.to_string()),
                    _ => continue,
                };
                let Some(dir) = maguyva_core::join_relative(&base, &target) else { continue };
                let dir =
                    if alias.ends_with('/') && !dir.is_empty() { format!("{dir}/") } else { dir };
                out.push(ModuleRoot { dir, path: alias, language: Language::TypeScript });
            }
        }
    }
    out
}

/// The `name` of a `Cargo.toml`'s `[package]` table.
fn cargo_package_name(text: &str) -> Option<String> {
    let mut in_package = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            in_package = t == "[package]";
            continue;
        }
        if in_package
            && let Some(rest) = t.strip_prefix("name")
            && let Some(value) = rest.trim_start().strip_prefix('=')
        {
            let name = value.trim().trim_matches('"').trim_matches('\'');
            return (!name.is_empty()).then(|| name.to_string());
        }
    }
    None
}

/// Go modules and Rust crates: every `go.mod` and `Cargo.toml` in the
/// corpus, and for a root inside a module or crate (a checkout's subfolder),
/// the nearest `go.mod`, or the `Cargo.toml` just above, so that import
/// paths name the root's packages.
fn module_roots(root: &Path, files: &[Source]) -> Vec<ModuleRoot> {
    let mut out: Vec<ModuleRoot> = files
        .iter()
        .filter(|f| f.path == "go.mod" || f.path.ends_with("/go.mod"))
        .filter_map(|f| {
            let dir = f.path.strip_suffix("go.mod")?.trim_end_matches('/').to_string();
            Some(ModuleRoot {
                dir,
                path: go_module_path(f.text())?,
                language: maguyva_core::Language::Go,
            })
        })
        .collect();
    // Rust crates: each Cargo.toml's package name, for its src folder.
    out.extend(
        files
            .iter()
            .filter(|f| f.path == "Cargo.toml" || f.path.ends_with("/Cargo.toml"))
            .filter_map(|f| {
                let dir = f.path.strip_suffix("Cargo.toml")?.trim_end_matches('/');
                let src = if dir.is_empty() { "src".to_string() } else { format!("{dir}/src") };
                Some(ModuleRoot {
                    dir: src,
                    path: cargo_package_name(f.text())?,
                    language: maguyva_core::Language::Rust,
                })
            }),
    );
    out.extend(js_module_roots(files));
    // Python: the packages the root itself is in (a root that holds an
    // `__init__.py`, like a checkout's `src/pkg`), so that imports spelled
    // from the top (`pkg.sub`) name its files.
    if files.iter().any(|f| f.path == "__init__.py") {
        let mut names: Vec<String> = Vec::new();
        for dir in root.ancestors().take(16) {
            if !dir.join("__init__.py").is_file() {
                break;
            }
            match dir.file_name() {
                Some(n) => names.insert(0, n.to_string_lossy().into_owned()),
                None => break,
            }
        }
        if !names.is_empty() {
            out.push(ModuleRoot {
                dir: String::new(),
                path: names.join("."),
                language: maguyva_core::Language::Python,
            });
        }
    }
    let has_rust = files.iter().any(|f| f.language == Some(maguyva_core::Language::Rust));
    if has_rust && !files.iter().any(|f| f.path == "Cargo.toml") {
        // The root is a crate's src folder: its Cargo.toml is just above.
        if let Some(name) = root
            .parent()
            .and_then(|p| std::fs::read_to_string(p.join("Cargo.toml")).ok())
            .and_then(|t| cargo_package_name(&t))
        {
            out.push(ModuleRoot {
                dir: String::new(),
                path: name,
                language: maguyva_core::Language::Rust,
            });
        }
    }
    let has_go = files.iter().any(|f| f.language == Some(maguyva_core::Language::Go));
    if has_go && !out.iter().any(|m| m.dir.is_empty()) {
        for above in root.ancestors().skip(1).take(8) {
            let Ok(text) = std::fs::read_to_string(above.join("go.mod")) else { continue };
            if let Some(path) = go_module_path(&text)
                && let Ok(rel) = root.strip_prefix(above)
            {
                let rel: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                out.push(ModuleRoot {
                    dir: String::new(),
                    path: format!("{path}/{}", rel.join("/")),
                    language: maguyva_core::Language::Go,
                });
            }
            break;
        }
    }
    out
}

/// The graph's definitions: the symbol table's, in its order. The graph
/// file does not keep them; a reader passes them back from the table.
pub(crate) fn graph_definitions(symbols: &SymbolTable) -> Vec<Definition> {
    symbols
        .iter()
        .map(|(_, s)| Definition {
            name: s.name.to_string(),
            qualified_name: s.qualified_name.to_string(),
            kind: def_kind(s.kind),
            file: s.file,
            lines: s.lines,
            name_line: s.name_line,
            container: s.container,
        })
        .collect()
}

/// What a refresh takes the symbols, fragments and links of unchanged files
/// from: the current generation, when it was built with the same settings.
struct Previous {
    generation: std::path::PathBuf,
    manifest: Manifest,
    symbols: SymbolTable,
    fragments: FragmentTable,
}

impl Previous {
    fn open(generation: std::path::PathBuf, settings: &IndexSettings) -> Option<Previous> {
        let manifest = Manifest::load(&generation).ok()?;
        let same = manifest.components == settings.components().ok()?
            && manifest.options == settings.options();
        let symbols = SymbolTable::load(&generation, manifest.files.len()).ok()?;
        let fragments: FragmentTable =
            store::load(&generation.join(FRAGMENTS_FILE), FRAGMENTS_FORMAT).ok()?;
        (same && symbols.analyzer() == Analyzer::default() && fragments.len() == manifest.fragments)
            .then_some(Previous { generation, manifest, symbols, fragments })
    }

    /// The languages of the files that are new or have another size or
    /// modification time than in the previous generation (see
    /// [`languages_of`]).
    fn likely_changed_languages(&self, files: &[maguyva_core::FileStat]) -> Vec<Language> {
        let changed = files.iter().filter(|f| {
            self.entry(&f.path)
                .is_none_or(|(_, old)| (old.size, old.mtime_ns) != (f.size, f.mtime_ns))
        });
        languages_of(Some(&self.manifest), changed.map(|f| f.path.as_str()))
    }

    /// For each file, the file of the previous generation it is when that
    /// one had the same path, text and language (its outline, symbols,
    /// fragments and links are the ones it had there).
    fn kept_files(&self, files: &[maguyva_core::SourceFile]) -> Vec<Option<FileId>> {
        files
            .iter()
            .map(|f| {
                let (i, old) = self.entry(&f.path)?;
                (old.hash == f.hash && old.size == f.size && old.language == f.language)
                    .then_some(FileId(i))
            })
            .collect()
    }

    /// The previous generation's record of a file the walk found with the
    /// size and modification time it had when that generation read it, if
    /// that time is settled ([`Previous::vouches_for`]).
    fn unchanged(&self, stat: &maguyva_core::FileStat) -> Option<&FileEntry> {
        let (_, old) = self.entry(&stat.path)?;
        self.vouches_for(old.size, old.mtime_ns, stat).then_some(old)
    }

    /// The previous generation's reason for skipping a file for what it
    /// held, if the walk found it with the size and time it had then
    /// (settled as for [`Previous::unchanged`]).
    fn skipped_unchanged(&self, stat: &maguyva_core::FileStat) -> Option<Skipped> {
        use maguyva_core::SkipReason;
        let scanned = &self.manifest.scanned;
        let i = scanned.binary_search_by(|f| f.path.as_str().cmp(&stat.path)).ok()?;
        let old = scanned.get(i)?;
        if !self.vouches_for(old.size, old.mtime_ns, stat) {
            return None;
        }
        let skipped = &self.manifest.skipped;
        let j = skipped.binary_search_by(|s| s.path.as_str().cmp(&stat.path)).ok()?;
        skipped
            .get(j)
            .filter(|s| {
                matches!(
                    s.reason,
                    SkipReason::Binary | SkipReason::Generated | SkipReason::TooLarge { .. }
                )
            })
            .cloned()
    }

    /// Whether a file that had `size` and `mtime_ns` when the previous
    /// generation was built still has them, and was modified long enough
    /// before that build's walk for its time to tell an edit
    /// ([`maguyva_core::WalkGuards::settled`]).
    fn vouches_for(&self, size: u64, mtime_ns: i64, now: &maguyva_core::FileStat) -> bool {
        self.manifest.guards.settled(mtime_ns) && (size, mtime_ns) == (now.size, now.mtime_ns)
    }

    /// The previous generation's file at `path`, with its number. A
    /// manifest lists its files in path order, as the walk gives them.
    fn entry(&self, path: &str) -> Option<(u32, &FileEntry)> {
        let files = &self.manifest.files;
        let i = files.binary_search_by(|f| f.path.as_str().cmp(path)).ok()?;
        Some((i as u32, files.get(i)?))
    }

    /// The previous text index, to patch.
    fn text_index(&self) -> Option<TextIndex> {
        TextIndex::load(&self.generation, self.manifest.files.len(), self.fragments.len()).ok()
    }

    /// The previous graph, to take the links of the files that did not
    /// change from (`changed[f]` by the new file ids).
    fn graph(&self, changed: Vec<bool>) -> Option<PreviousGraph> {
        let file = CallGraph::open_file(&self.generation).ok()?;
        PreviousGraph::read(&file, graph_definitions(&self.symbols), changed).ok()
    }
}

/// The walk's files as read, in path order, each with its text: `read`,
/// and in place of each file `trusted` gives the previous generation's
/// record, its text not read (`None`). A file the read skipped is in
/// neither, so the result can be shorter than `walked`.
fn with_trusted(
    walked: &[maguyva_core::FileStat],
    trusted: &[Option<&FileEntry>],
    read: Vec<maguyva_core::SourceFile>,
) -> (Vec<maguyva_core::SourceFile>, Vec<Option<String>>) {
    let mut read = read.into_iter().peekable();
    let mut files = Vec::with_capacity(walked.len());
    let mut texts = Vec::with_capacity(walked.len());
    for (stat, old) in walked.iter().zip(trusted) {
        match old {
            Some(old) => {
                files.push(maguyva_core::SourceFile {
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

/// The languages of files at `paths`: the one `manifest` recorded for the
/// path, or else the one the file's name says (a shebang is read later).
pub(crate) fn languages_of<'a>(
    manifest: Option<&Manifest>,
    paths: impl Iterator<Item = &'a str>,
) -> Vec<Language> {
    let recorded = |path: &str| {
        let files = &manifest?.files;
        let i = files.binary_search_by(|f| f.path.as_str().cmp(path)).ok()?;
        files.get(i)?.language
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

/// The dependency graph of the corpus, from the structural modality's
/// definitions, imports and uses of names.
fn build_graph(
    root: &Path,
    files: &[Source],
    outlines: &[Option<FileOutline>],
    taken: &dyn Fn(usize) -> FileOutline,
    symbols: &SymbolTable,
    previous: Option<PreviousGraph>,
    kept: &[Option<FileId>],
) -> Result<CallGraph> {
    let mut b = GraphBuilder::new();
    let kept_package = |i: usize| -> Option<Option<String>> {
        let old = (*kept.get(i)?)?;
        Some(previous.as_ref()?.declared_package(old)?.map(str::to_string))
    };
    for (i, f) in files.iter().enumerate() {
        b.add_file(FileInfo {
            path: f.path.to_string(),
            language: f.language,
            // A file kept from the previous graph declares what it did
            // there, without being read.
            package: match kept_package(i) {
                Some(package) => package,
                None => f.language.and_then(|l| maguyva_ast::declared_package(l, f.text())),
            },
        });
    }
    for m in module_roots(root, files) {
        b.add_module_root(m);
    }
    for def in graph_definitions(symbols) {
        b.add_definition(def);
    }
    if let Some(previous) = previous {
        b.reuse(previous);
    }
    // The imports and uses of a file whose outline was not decoded (its
    // links are the previous graph's) are needed only when that graph
    // cannot be reused.
    let decode_all = !b.reuses();
    let mut base = 0u32;
    for (i, o) in outlines.iter().enumerate() {
        let file = FileId(i as u32);
        let decoded;
        let o = match o {
            Some(o) => o,
            None if decode_all => {
                decoded = taken(i);
                &decoded
            }
            None => {
                base += symbols.of_file(file).count() as u32;
                continue;
            }
        };
        for imp in &o.imports {
            b.add_import(Import {
                file,
                path: imp.path.clone(),
                name: imp.name.clone(),
                kind: imp.kind,
                line: imp.line,
            });
        }
        for occ in &o.occurrences {
            b.add_use(Use {
                file,
                name: occ.name.clone(),
                line: occ.line,
                call: occ.call,
                enclosing: occ.enclosing.map(|e| e + base),
                count: occ.count,
            });
        }
        base += o.symbols.len() as u32;
    }
    Ok(b.build()?)
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
    let mut stages: Vec<(String, f64)> = Vec::new();
    let stage = |stages: &mut Vec<(String, f64)>, name: &str, since: &mut Instant| {
        stages.push((name.to_string(), ms(since.elapsed())));
        *since = Instant::now();
    };
    let mut t = Instant::now();

    let mut walker = CorpusBuilder::new();
    walker.max_file_size(settings.max_file_size).exclude(dir.path());
    progress.stage("scanning", 0);
    // A refresh takes the symbols, fragments and links of every file whose
    // path, text and language are unchanged from the previous generation:
    // their outlines are copied to the new one undecoded.
    let previous = match options.reuse_outlines || options.reuse_text {
        true => dir.current().ok().flatten().and_then(|g| Previous::open(g, settings)),
        false => None,
    };
    // While the tree keeps its shape, a refresh that trusts stats stat's
    // the files the previous generation recorded instead of walking (the
    // walk, with its ignore rules, is most of a small refresh's scan).
    let restat = previous.as_ref().filter(|p| {
        options.trust_unchanged_stat
            && p.manifest.root == canonical
            && p.manifest.max_file_size == settings.max_file_size
    });
    let scan = match restat.and_then(|p| p.manifest.restat()) {
        Some(scan) => scan,
        None => walker.scan(root)?,
    };
    stage(&mut stages, "scan", &mut t);
    // The queries of the languages of files that look changed (all of them
    // in a full build) are compiled while the files are read: tens of
    // milliseconds for a large grammar, most of a small refresh. A wrong
    // guess costs only that work.
    compile_queries_ahead(match &previous {
        Some(p) => p.likely_changed_languages(&scan.files),
        None => languages_of(None, scan.files.iter().map(|f| f.path.as_str())),
    });
    // Only the files that may have changed are read: not the unchanged
    // files the previous generation indexed, nor those it skipped for what
    // they held (binary, generated, too large).
    let trust = previous.as_ref().filter(|_| options.trust_unchanged_stat);
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
    let content = ContentStore::partly_read(&scan.root, &files, texts);
    stage(&mut stages, "read", &mut t);

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
    // The kept outlines are read while the queries of the languages of the
    // files to parse are compiled (up to 50 ms for one large grammar); then
    // the files are parsed largest first, so that no thread is left with a
    // large file at the end while the others wait.
    let is_kept = |f: &maguyva_core::SourceFile| cache.as_ref().is_some_and(|c| c.has(f));
    let mut languages: Vec<Language> =
        corpus.files.iter().filter(|f| !is_kept(f)).filter_map(|f| f.language).collect();
    languages.sort_unstable();
    languages.dedup();
    // A kept file's outline is neither decompressed nor decoded: the outline
    // file takes it by its number in the previous one.
    let read_kept = || -> (Vec<Option<FileOutline>>, Vec<Option<usize>>) {
        corpus
            .files
            .par_iter()
            .zip(&kept)
            .enumerate()
            .map(|(i, (f, k))| {
                let cache = cache.as_ref()?;
                let at = cache.position(f)?;
                match k {
                    Some(_) => Some((None, at)),
                    None => cache.get(f, FileId(i as u32)).map(|o| (Some(o), at)),
                }
            })
            .map(|read| match read {
                Some((outline, at)) => (outline, Some(at)),
                None => (None, None),
            })
            .unzip()
    };
    // The previous graph and text index, which the link and index stages
    // patch, are read meanwhile too: a refresh's parse is mostly waiting
    // for its queries.
    let reusable_graph = previous.as_ref().filter(|_| options.reuse_outlines);
    let reusable_text = previous.as_ref().filter(|_| options.reuse_text);
    let read_previous = || {
        rayon::join(
            || reusable_graph.and_then(|p| p.graph(kept.iter().map(Option::is_none).collect())),
            || reusable_text.and_then(Previous::text_index),
        )
    };
    let (((mut outlines, stored), ()), (previous_graph, previous_text)) =
        rayon::join(|| rayon::join(read_kept, || maguyva_ast::prepare(&languages)), read_previous);
    // Kept files whose outline was not decoded: what they define, their
    // fragments and links come from the previous generation.
    let undecoded: Vec<bool> =
        outlines.iter().zip(&stored).map(|(o, s)| o.is_none() && s.is_some()).collect();
    let reused = stored.iter().filter(|s| s.is_some()).count();
    progress.advance(reused as u64);
    let mut to_parse: Vec<(usize, Language)> = corpus
        .files
        .iter()
        .enumerate()
        .filter(|&(i, _)| stored[i].is_none())
        .filter_map(|(i, f)| Some((i, f.language?)))
        .collect();
    to_parse.sort_by_key(|&(i, _)| std::cmp::Reverse(corpus.files[i].size));
    // Files with the same text and language (vendored copies, generated
    // twins) have the same outline but for the file's number: each text is
    // parsed once.
    let mut first_with_key: std::collections::HashMap<u64, usize> = Default::default();
    let (mut unique, mut copies) = (Vec::new(), Vec::new());
    for &(i, language) in &to_parse {
        match first_with_key.entry(outlines::outline_key(&corpus.files[i])) {
            std::collections::hash_map::Entry::Occupied(first) => copies.push((i, *first.get())),
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(i);
                unique.push((i, language));
            }
        }
    }
    let parses: Vec<(usize, FileOutline)> = unique
        .par_iter()
        .map(|&(i, language)| {
            let id = FileId(i as u32);
            let outline = maguyva_ast::outline(language, content.text(id), id);
            progress.advance(1);
            (i, outline)
        })
        .collect();
    let parsed = parses.len() + copies.len();
    for (i, outline) in parses {
        outlines[i] = Some(outline);
    }
    for (i, first) in copies {
        let mut outline = outlines[first].clone().unwrap_or_default();
        for s in &mut outline.symbols {
            s.file = FileId(i as u32);
        }
        outlines[i] = Some(outline);
        progress.advance(1);
    }
    // Files in no language have an empty outline.
    progress.advance((outlines.len() - reused - parsed) as u64);
    let parse_failures: Vec<(String, String)> = outlines
        .iter()
        .zip(&corpus.files)
        .filter_map(|(o, f)| o.as_ref()?.failure.clone().map(|why| (f.path.clone(), why)))
        .collect();
    stage(&mut stages, "parse", &mut t);

    progress.stage("fragmenting", 0);
    let no_outline = FileOutline::default();
    let spans = (0..corpus.files.len())
        .into_par_iter()
        .map(|i| {
            if let (true, Some(p), Some(old)) = (undecoded[i], &previous, kept[i]) {
                return p.fragments.spans_of(old);
            }
            let o = outlines[i].as_ref().unwrap_or(&no_outline);
            let outline: Vec<OutlineSpan> =
                o.items.iter().map(|i| OutlineSpan { lines: i.lines, header: i.header }).collect();
            settings.chunker.chunk(content.text(FileId(i as u32)), &outline)
        })
        .collect();
    let fragments = FragmentTable::from_spans(spans);
    stage(&mut stages, "fragment", &mut t);
    let outline_keys: Vec<u64> = corpus.files.iter().map(outlines::outline_key).collect();
    let bytes = corpus.total_bytes();
    let lossy_files = corpus.lossy_count();
    let skipped = corpus.skipped.clone();

    // The symbols and the graph, and the text index and the vectors, need
    // nothing of each other: they are made side by side, and each side
    // writes its files as soon as they are made, while the other works.
    // Each file is synced to disk before the folder is renamed into place.
    progress.stage("linking and indexing", 0);
    let staging = lock.stage()?;
    let at = staging.path();
    let link = || -> Result<_> {
        let t = Instant::now();
        let given: Vec<Option<&FileOutline>> = outlines
            .iter()
            .zip(&undecoded)
            .map(|(o, &u)| (!u).then(|| o.as_ref().unwrap_or(&no_outline)))
            .collect();
        // An outline not decoded, when it is needed after all: read it, or
        // parse the file again if its bytes do not decode.
        let taken = |i: usize| -> FileOutline {
            let id = FileId(i as u32);
            let key = outline_keys.get(i).copied().unwrap_or_default();
            match cache.as_ref().and_then(|c| c.get_by_key(key, id)) {
                Some(outline) => outline,
                None => files
                    .get(i)
                    .and_then(|f| f.language)
                    .map(|l| maguyva_ast::outline(l, content.text(id), id))
                    .unwrap_or_default(),
            }
        };
        // Every outline, the ones not decoded read now: for when what was
        // to be taken from the previous generation cannot be.
        let all_outlines = || -> Vec<Option<FileOutline>> {
            (0..outlines.len())
                .into_par_iter()
                .map(|i| match &outlines[i] {
                    Some(o) => Some(o.clone()),
                    None if undecoded[i] => Some(taken(i)),
                    None => None,
                })
                .collect()
        };
        // The symbols are taken over with the outlines; a previous table
        // that cannot be copied from is not trusted, and the table is made
        // from the outlines as a full build makes it.
        let reusable = previous.as_ref().filter(|_| options.reuse_outlines);
        let patched = reusable
            .map(|p| SymbolTable::patched(&given, Analyzer::default(), &p.symbols, &kept))
            .and_then(Result::ok);
        let symbols = match patched {
            Some(table) => table,
            None if reusable.is_some() => {
                let all = all_outlines();
                SymbolTable::build_from(
                    all.iter().map(|o| o.as_ref().unwrap_or(&no_outline)),
                    Analyzer::default(),
                )?
            }
            None => SymbolTable::build_from(
                outlines.iter().map(|o| o.as_ref().unwrap_or(&no_outline)),
                Analyzer::default(),
            )?,
        };
        let symbols_ms = ms(t.elapsed());
        let t = Instant::now();
        let sources = Source::all(&files, &content);
        let graph =
            build_graph(root, &sources, &outlines, &taken, &symbols, previous_graph, &kept)?;
        // Outlines kept that cannot be read back are written anew.
        let outline_file = match outlines::writer(
            &extraction,
            &outline_keys,
            &outlines,
            &stored,
            cache.as_ref(),
        ) {
            Ok(file) => file,
            Err(_) if cache.is_some() => {
                let none = vec![None; outlines.len()];
                outlines::writer(&extraction, &outline_keys, &all_outlines(), &none, None)?
            }
            Err(e) => return Err(e),
        };
        let graph_ms = ms(t.elapsed());
        let t = Instant::now();
        let writes: [&(dyn Fn() -> Result<()> + Sync); 4] = [
            &|| store::save(&at.join(FRAGMENTS_FILE), FRAGMENTS_FORMAT, "fragments", &fragments),
            &|| Ok(symbols.save(at)?),
            &|| Ok(graph.save(at)?),
            &|| outline_file.write(&at.join(OUTLINES_FILE)),
        ];
        writes.par_iter().map(|write| write()).collect::<Result<Vec<()>>>()?;
        Ok((symbols, symbols_ms, graph, graph_ms, ms(t.elapsed())))
    };
    let index = || -> Result<_> {
        let t = Instant::now();
        let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        let roles: Vec<FileRole> =
            files.iter().map(|f| FileRole::of(&f.path, f.language)).collect();
        // A refresh makes the documents of the changed fragments only.
        let reusable = previous.as_ref().filter(|_| options.reuse_text);
        let changes = reusable.map(|p| ChunkChanges::new(p, &kept, &fragments));
        let mut was = changes.as_ref().map(|c| c.was.as_slice());
        let unchanged = |was: Option<&[Option<u32>]>, c: usize| {
            was.is_some_and(|w| w.get(c).is_some_and(Option::is_some))
        };
        let mut documents =
            content.fragment_documents_where(&fragments, |c| !unchanged(was, c.index()));
        let patched = changes.as_ref().and_then(|changes| {
            patched_text_index(previous_text, changes, &content, &documents, &paths, &roles)
        });
        // A full build analyzes the fragments once, for the keyword index
        // and for the corpus embedder.
        let mut doc_terms = None;
        // A previous text index that cannot be patched is not trusted: the
        // index is made from every fragment, as a full build makes it.
        let text = match patched {
            Some(Ok(text)) => text,
            _ => {
                if was.take().is_some() {
                    documents = content.fragment_documents(&fragments);
                }
                let terms = TermMatrix::build(&documents, Analyzer::default());
                let text =
                    TextIndexBuilder::new().build_from_terms(&content, &terms, &paths, &roles)?;
                doc_terms = Some(terms);
                text
            }
        };
        let text_ms = ms(t.elapsed());
        let t = Instant::now();
        let semantic = |documents: &[String], made: &dyn Fn(usize) -> bool| -> Vec<String> {
            let path = |f: FileId| paths.get(f.index()).copied().unwrap_or("");
            (fragments.iter().zip(documents).enumerate())
                .map(|(c, ((_, f), d))| match made(c) {
                    true => semantic_text(path(f.file), d),
                    false => String::new(),
                })
                .collect()
        };
        let texts = semantic(&documents, &|c| !unchanged(was, c));
        drop(documents);
        let all = || semantic(&content.fragment_documents(&fragments), &|_| true);
        let files: Arc<[u32]> = fragments.iter().map(|(_, f)| f.file.0).collect();
        let semantic_docs = SemanticDocuments { texts, files, was, all: &all };
        let semantic_terms = || {
            let terms = doc_terms.as_ref()?;
            let paths = TermMatrix::build(&paths, Analyzer::default());
            Some(terms.with_prefixes(&paths, |c| {
                fragments.try_get(ChunkId(c as u32)).map_or(0, |f| f.file.index())
            }))
        };
        let embedded = embed(dir, settings, options, semantic_docs, semantic_terms)?;
        let embed_ms = ms(t.elapsed());
        let t = Instant::now();
        let (saved, vectors_saved) = rayon::join(|| text.save(at), || embedded.0.save(at));
        saved?;
        vectors_saved?;
        Ok((text, text_ms, embedded, embed_ms, ms(t.elapsed())))
    };
    let (linked, indexed) = rayon::join(link, index);
    let (symbols, symbols_ms, graph, graph_ms, link_write_ms) = linked?;
    let (text, text_ms, (vectors, embedder, embed_stats, model_kept), embed_ms, index_write_ms) =
        indexed?;
    // A file taken as unchanged that had to be read after all, and was not
    // the file recorded: what was made of it is not what the tree holds.
    if let Some(changed) = content.damage() {
        return Err(changed);
    }
    drop((stored, cache));
    drop(outlines);
    // Side by side, these stages overlap: each is timed on its own.
    stages.extend([
        ("symbols".to_string(), symbols_ms),
        ("graph".to_string(), graph_ms),
        ("text index".to_string(), text_ms),
        ("embed".to_string(), embed_ms),
    ]);
    t = Instant::now();

    // One step for the manifest, and one for the switch to the new
    // generation.
    progress.stage("writing", 2);
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
        components: settings.components()?,
        options: settings.options(),
        guards: scan.guards.clone(),
    };
    // The manifest goes last: a generation is only ever renamed into place
    // whole, but writing it last also keeps a half-copied folder unreadable.
    manifest.save(staging.path())?;
    progress.advance(1);
    let gen_dir = staging.commit()?;
    progress.advance(1);
    // The files written beside the other side's work, then the switch.
    let finish_ms = ms(t.elapsed());
    stages.push((
        "write".to_string(),
        crate::round_millis(link_write_ms.max(index_write_ms) + finish_ms),
    ));

    let report = BuildReport {
        root: scan.root.display().to_string(),
        index: gen_dir.display().to_string(),
        files: manifest.files.len(),
        fragments: fragments.len(),
        symbols: symbols.len(),
        embedded: embed_stats.embedded,
        reused_vectors: embed_stats.reused,
        parsed_files: parsed,
        reused_outlines: reused,
        relinked_files: graph.relinked_files(),
        model_kept,
        parse_failures,
        graph_edges: graph.edges().len(),
        unresolved_imports: graph
            .unresolved_imports()
            .iter()
            .map(|u| {
                (
                    manifest.files.get(u.file.index()).map(|f| f.path.clone()).unwrap_or_default(),
                    u.path.clone(),
                )
            })
            .collect(),
        bytes,
        lossy_files,
        skipped,
        stages_ms: stages,
        total_ms: ms(start.elapsed()),
        recovered: None,
    };
    let index = Index::assemble(IndexParts {
        manifest,
        content,
        fragments,
        text,
        symbols,
        graph,
        vectors,
        embedder,
    });
    Ok((index, report))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file<'a>(path: &'a str, text: &'a str) -> Source<'a> {
        Source { path, language: None, text: Text::Given(text) }
    }

    #[test]
    fn javascript_module_roots_from_package_and_tsconfig_files() {
        let roots = js_module_roots(&[
            file(
                "packages/utils/package.json",
                r#"{"name": "@acme/utils", "main": "./dist/index.js", "source": "./src/index.ts"}"#,
            ),
            file(
                "tsconfig.json",
                "{\n  // aliases\n  \"compilerOptions\": {\n    \"baseUrl\": \".\",\n    \"paths\": { \"@/*\": [\"./src/*\"], \"#cfg\": [\"config/index.ts\"] },\n  },\n}\n",
            ),
        ]);
        let pairs: Vec<(&str, &str)> =
            roots.iter().map(|r| (r.path.as_str(), r.dir.as_str())).collect();
        assert_eq!(
            pairs,
            vec![
                ("@acme/utils", "packages/utils/src/index"),
                ("@acme/utils/", "packages/utils/"),
                ("#cfg", "config/index.ts"),
                ("@/", "src/"),
            ]
        );
    }

    #[test]
    fn module_files_name_their_modules() {
        assert_eq!(
            go_module_path("// x\nmodule example.com/app // c\n").as_deref(),
            Some("example.com/app")
        );
        assert_eq!(go_module_path("go 1.22\n"), None);
        assert_eq!(
            cargo_package_name("[workspace]\nname = \"no\"\n[package]\nname = \"grep-searcher\"\n")
                .as_deref(),
            Some("grep-searcher")
        );
        assert_eq!(cargo_package_name("[workspace]\nmembers = []\n"), None);
    }
}
