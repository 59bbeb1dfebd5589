//! The generation a refresh replaces: what it recorded of each file, its
//! symbols and fragments, and how this build's files and fragments stand
//! to its own.

use crate::modalities::graph::graph_definitions;
use crate::settings::IndexSettings;
use crate::{FRAGMENTS_FILE, FRAGMENTS_FORMAT};
use maguyva_ast::SymbolTable;
use maguyva_core::{Analyzer, FileEntry, FileId, FragmentTable, Manifest, Skipped, store};
use maguyva_graph::{CallGraph, PreviousGraph};
use maguyva_trigram::TextIndex;

/// How this build's files and fragments stand to the previous
/// generation's: which are the same ones (renumbered) and which are new.
pub(crate) struct ChunkChanges {
    /// For each previous file, its id now when it and its fragments are
    /// unchanged.
    pub(crate) kept_files: Vec<Option<u32>>,
    /// For each previous fragment, its id now when it is unchanged.
    pub(crate) kept_chunks: Vec<Option<u32>>,
    /// The files changed or added, in id order.
    pub(crate) fresh_files: Vec<u32>,
    /// Their fragments, in id order.
    pub(crate) fresh_chunks: Vec<u32>,
    /// For each fragment, the previous fragment it is, when unchanged.
    pub(crate) was: Vec<Option<u32>>,
}

impl ChunkChanges {
    /// A file is unchanged when it is a kept file (`kept[f]`, the file it
    /// was) cut into the same fragments, and comes after the unchanged
    /// files before it there too (so that renumbered lists stay sorted;
    /// both builds order files by path, but check).
    pub(crate) fn new(
        previous: &Previous,
        kept: &[Option<FileId>],
        fragments: &FragmentTable,
    ) -> Self {
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

/// What a refresh takes the symbols, fragments and links of unchanged files
/// from: the current generation, when it was built with the same settings.
pub(crate) struct Previous {
    pub(crate) generation: std::path::PathBuf,
    pub(crate) manifest: Manifest,
    pub(crate) symbols: SymbolTable,
    pub(crate) fragments: FragmentTable,
}

impl Previous {
    pub(crate) fn open(
        generation: std::path::PathBuf,
        settings: &IndexSettings,
    ) -> Option<Previous> {
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
    pub(crate) fn likely_changed_languages(
        &self,
        files: &[maguyva_core::FileStat],
    ) -> Vec<maguyva_core::Language> {
        let changed = files.iter().filter(|f| {
            self.entry(&f.path)
                .is_none_or(|(_, old)| (old.size, old.mtime_ns) != (f.size, f.mtime_ns))
        });
        super::languages_of(Some(&self.manifest), changed.map(|f| f.path.as_str()))
    }

    /// For each file, the file of the previous generation it is when that
    /// one had the same path, text and language (its outline, symbols,
    /// fragments and links are the ones it had there).
    pub(crate) fn kept_files(&self, files: &[maguyva_core::SourceFile]) -> Vec<Option<FileId>> {
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
    pub(crate) fn unchanged(&self, stat: &maguyva_core::FileStat) -> Option<&FileEntry> {
        let (_, old) = self.entry(&stat.path)?;
        self.vouches_for(old.size, old.mtime_ns, stat).then_some(old)
    }

    /// The previous generation's reason for skipping a file for what it
    /// held, if the walk found it with the size and time it had then
    /// (settled as for [`Previous::unchanged`]).
    pub(crate) fn skipped_unchanged(&self, stat: &maguyva_core::FileStat) -> Option<Skipped> {
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
        let id = self.manifest.file_id(path)?;
        Some((id.0, self.manifest.files.get(id.index())?))
    }

    /// The previous text index, to patch.
    pub(crate) fn text_index(&self) -> Option<TextIndex> {
        TextIndex::load(&self.generation, self.manifest.files.len(), self.fragments.len()).ok()
    }

    /// The previous graph, to take the links of the files that did not
    /// change from (`changed[f]` by the new file ids).
    pub(crate) fn graph(&self, changed: Vec<bool>) -> Option<PreviousGraph> {
        let file = CallGraph::open_file(&self.generation).ok()?;
        PreviousGraph::read(&file, graph_definitions(&self.symbols), changed).ok()
    }
}
