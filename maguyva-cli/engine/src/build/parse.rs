//! The parse stage: each file's outline (definitions, the items that shape
//! its fragments, imports and the names it uses), taken from the previous
//! generation for every file whose text and language are unchanged, parsed
//! with tree-sitter for the others; and the fragments cut along them.

use super::previous::Previous;
use super::read::ReadCorpus;
use crate::outlines::{self, OutlineCache};
use maguyva_ast::FileOutline;
use maguyva_core::{
    ContentStore, FileId, FragmentTable, Language, OutlineSpan, Progress, SourceFile,
};
use maguyva_graph::PreviousGraph;
use maguyva_trigram::TextIndex;
use rayon::prelude::*;

/// The outlines of a build's files.
pub(crate) struct Parsed {
    /// Each file's outline; `None` for a kept file whose outline was not
    /// decoded (`undecoded`), and for a file in no language.
    pub(crate) outlines: Vec<Option<FileOutline>>,
    /// For each file, the number of its outline in the previous outline
    /// file, when it is kept there.
    pub(crate) stored: Vec<Option<usize>>,
    /// Kept files whose outline was not decoded: what they define, their
    /// fragments and links come from the previous generation.
    pub(crate) undecoded: Vec<bool>,
    /// The previous outline file, for outlines taken from it.
    pub(crate) cache: Option<OutlineCache>,
    /// Each file's outline key ([`outlines::outline_key`]).
    pub(crate) keys: Vec<u64>,
    /// Files whose outline was taken from the previous generation.
    pub(crate) reused: usize,
    /// Files parsed.
    pub(crate) parsed: usize,
    /// Files whose parse failed, and why.
    pub(crate) failures: Vec<(String, String)>,
    /// The previous graph, read while the queries compiled, when the links
    /// of unchanged files may be taken from it.
    pub(crate) previous_graph: Option<PreviousGraph>,
    /// The previous text index, likewise, to patch.
    pub(crate) previous_text: Option<TextIndex>,
}

/// What the parse stage reads of the previous generation.
pub(crate) struct ParseInput<'a> {
    pub(crate) corpus: &'a ReadCorpus,
    pub(crate) kept: &'a [Option<FileId>],
    pub(crate) cache: Option<OutlineCache>,
    /// The previous generation, when its graph may be taken from.
    pub(crate) graph_from: Option<&'a Previous>,
    /// The previous generation, when its text index may be patched.
    pub(crate) text_from: Option<&'a Previous>,
}

/// Takes the outlines of the kept files from the previous outline file (a
/// kept file's outline is neither decompressed nor decoded: the new file
/// takes it by its number), compiling meanwhile the queries of the
/// languages of the files to parse and reading the previous graph and text
/// index; then parses the others, largest first, so that no thread is left
/// with a large file at the end while the others wait. Files with the same
/// text and language (vendored copies, generated twins) are parsed once.
pub(crate) fn parse(input: ParseInput<'_>, progress: &dyn Progress) -> Parsed {
    let ParseInput { corpus, kept, cache, graph_from, text_from } = input;
    let files = &corpus.files;
    let is_kept = |f: &SourceFile| cache.as_ref().is_some_and(|c| c.has(f));
    let mut languages: Vec<Language> =
        files.iter().filter(|f| !is_kept(f)).filter_map(|f| f.language).collect();
    languages.sort_unstable();
    languages.dedup();
    let read_kept = || -> (Vec<Option<FileOutline>>, Vec<Option<usize>>) {
        files
            .par_iter()
            .zip(kept)
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
    let read_previous = || {
        rayon::join(
            || graph_from.and_then(|p| p.graph(kept.iter().map(Option::is_none).collect())),
            || text_from.and_then(Previous::text_index),
        )
    };
    let (((mut outlines, stored), ()), (previous_graph, previous_text)) =
        rayon::join(|| rayon::join(read_kept, || maguyva_ast::prepare(&languages)), read_previous);
    let undecoded: Vec<bool> =
        outlines.iter().zip(&stored).map(|(o, s)| o.is_none() && s.is_some()).collect();
    let reused = stored.iter().filter(|s| s.is_some()).count();
    progress.advance(reused as u64);
    let parsed = parse_the_others(&mut outlines, &stored, files, &corpus.content, progress);
    // Files in no language have an empty outline.
    progress.advance((outlines.len() - reused - parsed) as u64);
    let failures = outlines
        .iter()
        .zip(files)
        .filter_map(|(o, f)| o.as_ref()?.failure.clone().map(|why| (f.path.clone(), why)))
        .collect();
    let keys = files.iter().map(outlines::outline_key).collect();
    Parsed {
        outlines,
        stored,
        undecoded,
        cache,
        keys,
        reused,
        parsed,
        failures,
        previous_graph,
        previous_text,
    }
}

/// Parses every file in a language whose outline was not taken; returns
/// how many.
fn parse_the_others(
    outlines: &mut [Option<FileOutline>],
    stored: &[Option<usize>],
    files: &[SourceFile],
    content: &ContentStore,
    progress: &dyn Progress,
) -> usize {
    let mut to_parse: Vec<(usize, Language)> = files
        .iter()
        .enumerate()
        .filter(|&(i, _)| stored[i].is_none())
        .filter_map(|(i, f)| Some((i, f.language?)))
        .collect();
    to_parse.sort_by_key(|&(i, _)| std::cmp::Reverse(files[i].size));
    let mut first_with_key: std::collections::HashMap<u64, usize> = Default::default();
    let (mut unique, mut copies) = (Vec::new(), Vec::new());
    for &(i, language) in &to_parse {
        match first_with_key.entry(outlines::outline_key(&files[i])) {
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
    parsed
}

/// The fragments of every file: a kept file's whose outline was not
/// decoded are the previous generation's; the others are cut along their
/// outline by the settings' chunker.
pub(crate) fn fragments(
    parsed: &Parsed,
    content: &ContentStore,
    previous: Option<&Previous>,
    kept: &[Option<FileId>],
    chunker: &maguyva_core::SyntaxChunker,
) -> FragmentTable {
    let no_outline = FileOutline::default();
    let spans = (0..parsed.outlines.len())
        .into_par_iter()
        .map(|i| {
            if let (true, Some(p), Some(old)) = (parsed.undecoded[i], previous, kept[i]) {
                return p.fragments.spans_of(old);
            }
            let o = parsed.outlines[i].as_ref().unwrap_or(&no_outline);
            let outline: Vec<OutlineSpan> =
                o.items.iter().map(|i| OutlineSpan { lines: i.lines, header: i.header }).collect();
            chunker.chunk(content.text(FileId(i as u32)), &outline)
        })
        .collect();
    FragmentTable::from_spans(spans)
}
