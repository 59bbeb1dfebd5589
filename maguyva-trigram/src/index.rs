//! The text modality's index: trigram postings for literals and regexes, and
//! BM25 for keyword queries, over the fragments shared by all modalities.

use crate::bm25::{Bm25Index, Bm25Params, Bm25Parts};
use crate::error::{Error, Result};
use crate::plan::{TrigramQuery, plan};
use crate::postings::TrigramPostings;
use crate::trigram;
use maguyva_core::store::FormatVersion;
use maguyva_core::{
    Analyzer, Array, ChunkId, ContentStore, FileId, FileRole, FragmentTable, Hit, LineSpan,
    MatchMode, Modality, Query, Retriever, SectionFile, SectionWriter, TermMatrix, file_stem,
    sort_hits,
};
use rayon::prelude::*;
use roaring::RoaringBitmap;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Arc;

/// The text index's file inside a generation folder.
pub const TEXT_FILE: &str = "text.mgv";

/// Text index format. Changelog: v1 initial (trigram postings, BM25 with an fst
/// term dictionary); v2 stored analyzer and a BM25 field over file paths; v3
/// a BM25 field over file names and each file's role; v4 sections read in
/// place; v5 short trigram lists as varint gaps; v6 the trigram table in
/// blocks (`t.first`, `t.start`); v7 dense trigram lists as plain bitmaps
/// instead of roaring ones; v8 BM25 terms mapped to their numbers; v9
/// sectioned-file entries of 40 bytes (small files compressed).
pub const TEXT_FORMAT: FormatVersion = FormatVersion { kind: *b"TEXT", current: 9, oldest: 9 };

/// How much a match in the file's path counts against a match in the
/// fragment's text; set by measurement on the development benchmark.
pub const DEFAULT_PATH_WEIGHT: f32 = 1.0;

/// Query-time settings of keyword ranking. A file's score is its best
/// fragment's, plus a share of its next best fragments' (a long file that
/// answers in several places), times the factor of its role.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct KeywordParams {
    /// BM25 parameters.
    pub bm25: Bm25Params,
    /// Weight of the path field's BM25 score, added to every fragment of the file.
    pub path_weight: f32,
    /// Weight of the file-name field's BM25 score (the name without folders
    /// and extension), added to every fragment of the file.
    pub name_weight: f32,
    /// Share of the file's next best fragments' scores added to its best.
    pub file_evidence: f32,
    /// Factor on the score of tests, examples, benchmarks and generated files.
    pub test_factor: f32,
    /// Factor on the score of text in no recognised language (documentation,
    /// data, configuration).
    pub other_factor: f32,
}

impl Default for KeywordParams {
    fn default() -> Self {
        KeywordParams {
            bm25: Bm25Params::default(),
            path_weight: DEFAULT_PATH_WEIGHT,
            name_weight: 0.0,
            file_evidence: 0.0,
            test_factor: 1.0,
            other_factor: 1.0,
        }
    }
}

/// Fragments beyond a file's best whose scores count as its further
/// evidence: enough to tell a file that answers in several places from one
/// with a single match, without letting a huge file win by size.
const EVIDENCE_FRAGMENTS: usize = 3;

/// Matches counted per file before counting stops; ranking only needs to
/// know that a file matches often.
const MAX_MATCHES_PER_FILE: usize = 10_000;

/// Candidates verified at a time when a literal stops at its first files:
/// enough to keep every core busy.
const MIN_VERIFY_BATCH: usize = 16;

/// Compiled regexes larger than this are refused (the `regex` crate's
/// guard against patterns that explode).
const REGEX_SIZE_LIMIT: usize = 16 << 20;

/// Builds a [`TextIndex`].
#[derive(Debug, Clone, Default)]
pub struct TextIndexBuilder {
    analyzer: Analyzer,
}

impl TextIndexBuilder {
    /// A builder with default settings.
    pub fn new() -> TextIndexBuilder {
        TextIndexBuilder::default()
    }

    /// Uses another analyzer for BM25 terms.
    pub fn analyzer(&mut self, analyzer: Analyzer) -> &mut TextIndexBuilder {
        self.analyzer = analyzer;
        self
    }

    /// Indexes the files of `content`, split into `fragments`.
    /// `documents[c]` is the indexed text of chunk `c` (see
    /// `ContentStore::fragment_documents`); `paths[f]` is file `f`'s path,
    /// indexed as a field of its own, and so is its name; `roles[f]` is its
    /// role (all `Source` when empty).
    pub fn build<S: AsRef<str> + Sync>(
        &self,
        content: &ContentStore,
        documents: &[S],
        paths: &[&str],
        roles: &[FileRole],
    ) -> Result<TextIndex> {
        self.build_from_terms(content, &TermMatrix::build(documents, self.analyzer), paths, roles)
    }

    /// [`TextIndexBuilder::build`] with the documents already analyzed into
    /// `terms` (one row per chunk); BM25 keeps the matrix's analyzer.
    pub fn build_from_terms(
        &self,
        content: &ContentStore,
        terms: &TermMatrix,
        paths: &[&str],
        roles: &[FileRole],
    ) -> Result<TextIndex> {
        let texts: Vec<&str> = (0..content.len()).map(|f| content.text(FileId(f as u32))).collect();
        let trigrams = TrigramPostings::build(&texts);
        let bm25 = Bm25Index::from_terms(terms)?;
        let names: Vec<&str> = paths.iter().map(|p| file_stem(p)).collect();
        let names = Bm25Index::build(&names, self.analyzer)?;
        let paths_index = Bm25Index::build(paths, self.analyzer)?;
        let roles = (0..paths.len())
            .map(|f| roles.get(f).copied().unwrap_or(FileRole::Source) as u8)
            .collect();
        Ok(TextIndex { trigrams, bm25, paths: paths_index, names, roles })
    }

    /// The index [`TextIndexBuilder::build`] would make of the new corpus
    /// (same arguments), made from `old`, the index of the previous corpus:
    /// its lists are read and renumbered, and only the fresh files and
    /// fragments are analyzed. Falls back to a full build when `old` was
    /// made with another analyzer.
    pub fn patched<S: AsRef<str> + Sync>(
        &self,
        old: &TextIndex,
        changes: &TextChanges<'_>,
        content: &ContentStore,
        documents: &[S],
        paths: &[&str],
        roles: &[FileRole],
    ) -> Result<TextIndex> {
        if old.bm25.analyzer() != self.analyzer {
            return self.build(content, documents, paths, roles);
        }
        let files = paths.len();
        let pick = |ids: &[u32]| -> Vec<&str> {
            ids.iter().filter_map(|&f| paths.get(f as usize).copied()).collect()
        };
        let fresh_texts: Vec<&str> =
            changes.fresh_files.iter().map(|&f| content.text(FileId(f))).collect();
        let fresh_docs: Vec<&str> = changes
            .fresh_chunks
            .iter()
            .filter_map(|&c| documents.get(c as usize).map(AsRef::as_ref))
            .collect();
        // The two largest merges, side by side.
        let (trigrams, bm25) = rayon::join(
            || {
                let fresh = TrigramPostings::build(&fresh_texts);
                old.trigrams
                    .merged(changes.kept_files, &fresh, changes.fresh_files, files as u32)
                    .ok_or(Error::DamagedPostings(0))
            },
            || {
                let fresh = Bm25Index::build(&fresh_docs, self.analyzer)?;
                old.bm25.merged(changes.kept_chunks, &fresh, changes.fresh_chunks, documents.len())
            },
        );
        let (trigrams, bm25) = (trigrams?, bm25?);
        // The two fields over files: paths, and names without folders.
        let by_file = |old: &Bm25Index, fresh: &[&str]| -> Result<Bm25Index> {
            let fresh = Bm25Index::build(fresh, self.analyzer)?;
            old.merged(changes.kept_files, &fresh, changes.fresh_files, files)
        };
        let fresh_paths = pick(changes.fresh_files);
        let paths_index = by_file(&old.paths, &fresh_paths)?;
        let fresh_names: Vec<&str> = fresh_paths.iter().map(|p| file_stem(p)).collect();
        let names = by_file(&old.names, &fresh_names)?;
        let roles =
            (0..files).map(|f| roles.get(f).copied().unwrap_or(FileRole::Source) as u8).collect();
        Ok(TextIndex { trigrams, bm25, paths: paths_index, names, roles })
    }
}

/// How a corpus differs from the one a [`TextIndex`] was built from, for
/// [`TextIndexBuilder::patched`]. Ids of kept files and fragments must rise
/// with their old ids; fresh ids are sorted.
#[derive(Debug, Clone, Copy)]
pub struct TextChanges<'a> {
    /// For each old file, its new id when its text is unchanged.
    pub kept_files: &'a [Option<u32>],
    /// For each old fragment, its new id when it is unchanged.
    pub kept_chunks: &'a [Option<u32>],
    /// The new ids of every other file (changed or added).
    pub fresh_files: &'a [u32],
    /// The new ids of every other fragment.
    pub fresh_chunks: &'a [u32],
}

/// Trigram postings and BM25 over one corpus.
#[derive(Debug, Clone)]
pub struct TextIndex {
    trigrams: TrigramPostings,
    bm25: Bm25Index,
    paths: Bm25Index,
    names: Bm25Index,
    roles: Array<u8>,
}

impl TextIndex {
    /// The BM25 part.
    pub fn bm25(&self) -> &Bm25Index {
        &self.bm25
    }

    /// The trigram part.
    pub fn trigrams(&self) -> &TrigramPostings {
        &self.trigrams
    }

    /// Writes the index into a generation folder.
    pub fn save(&self, gen_dir: &Path) -> Result<()> {
        let mut w = SectionWriter::new(TEXT_FORMAT);
        self.trigrams.write(&mut w)?;
        self.bm25.parts().write(&mut w, "b")?;
        self.paths.parts().write(&mut w, "p")?;
        self.names.parts().write(&mut w, "n")?;
        w.array("roles", &self.roles)?;
        Ok(w.write(&gen_dir.join(TEXT_FILE))?)
    }

    /// Opens the index of a generation folder, in place, and checks it
    /// against the corpus it must describe.
    pub fn load(gen_dir: &Path, files: usize, fragments: usize) -> Result<TextIndex> {
        TextIndex::read(&TextIndex::open_file(gen_dir)?, files, fragments)
    }

    /// Maps the text file of a generation folder, checking its header.
    pub fn open_file(gen_dir: &Path) -> Result<SectionFile> {
        Ok(SectionFile::open(&gen_dir.join(TEXT_FILE), TEXT_FORMAT)?)
    }

    /// The index in an opened text file, checked against the corpus it
    /// must describe.
    pub fn read(file: &SectionFile, files: usize, fragments: usize) -> Result<TextIndex> {
        let path = file.path();
        let corrupt = |why: &str| Error::Core(maguyva_core::Error::corrupt(path, why));
        let trigrams = TrigramPostings::open(file, files as u32)?;
        if !trigrams.is_consistent() {
            return Err(corrupt("trigram postings do not match the manifest"));
        }
        let bm25 = Bm25Index::from_parts(Bm25Parts::open(file, "b")?)
            .map_err(|_| corrupt("damaged term dictionary"))?;
        if bm25.document_count() != fragments {
            return Err(corrupt("BM25 documents do not match the fragments"));
        }
        let paths = Bm25Index::from_parts(Bm25Parts::open(file, "p")?)
            .map_err(|_| corrupt("damaged path field"))?;
        if paths.document_count() != files {
            return Err(corrupt("path field does not match the files"));
        }
        let names = Bm25Index::from_parts(Bm25Parts::open(file, "n")?)
            .map_err(|_| corrupt("damaged file-name field"))?;
        let roles: Array<u8> = file.array("roles")?;
        if names.document_count() != files
            || roles.len() != files
            || roles.iter().any(|&r| FileRole::from_byte(r).is_none())
        {
            return Err(corrupt("file names or roles do not match the files"));
        }
        Ok(TextIndex { trigrams, bm25, paths, names, roles })
    }

    /// The files holding `term` (a term of this index's analyzer: a word, a
    /// sub-word of an identifier, or a whole identifier, lowercased and
    /// stemmed) in their text, path or file name.
    pub fn files_with_term(&self, fragments: &FragmentTable, term: &str) -> Result<RoaringBitmap> {
        // Fragments are numbered in file order, so the text's postings give
        // files in order; collecting them sorted and building the bitmap
        // at once is several times faster than inserting one by one.
        let mut files: Vec<u32> = Vec::new();
        self.bm25.for_each_posting(term, |chunk, _| {
            if let Some(frag) = fragments.try_get(chunk)
                && files.last() != Some(&frag.file.0)
            {
                files.push(frag.file.0);
            }
        })?;
        // The path and name fields have one document per file.
        for field in [&self.paths, &self.names] {
            field.for_each_posting(term, |doc, _| files.push(doc.0))?;
        }
        files.sort_unstable();
        files.dedup();
        Ok(RoaringBitmap::from_sorted_iter(files.iter().copied())
            .unwrap_or_else(|_| files.into_iter().collect()))
    }

    /// The files whose text may contain `literal`, by its trigrams alone
    /// (case-folded, so a superset: callers verify); every file when it is
    /// shorter than three bytes.
    pub fn files_possibly_containing(&self, literal: &str) -> Result<Vec<FileId>> {
        let query = TrigramQuery::and_of(trigram::required_case_sensitive(literal.as_bytes()));
        Ok(self
            .trigrams
            .candidates(&query)
            .ok_or(Error::DamagedPostings(0))?
            .iter()
            .map(FileId)
            .collect())
    }

    /// Fragments containing `literal`, verified against the text: each
    /// file's best fragment, most occurrences first, then the files' other
    /// fragments likewise, at most `limit` in all.
    ///
    /// When more than `limit` files may contain it, the candidates are
    /// verified in the order the keyword ranking gives them for the
    /// literal's words (then in file order), and verifying stops once
    /// `limit` files are confirmed: the answer is ranked among those files,
    /// as `rg -l` stops at a file's first match instead of reading on. With
    /// `limit` files or fewer to check, every candidate is verified.
    pub fn literal(
        &self,
        content: &ContentStore,
        fragments: &FragmentTable,
        literal: &str,
        case_insensitive: bool,
        limit: usize,
    ) -> Result<Vec<Hit>> {
        if case_insensitive {
            let pattern = regex::escape(literal);
            let re = compile(&pattern, true)?;
            let query =
                TrigramQuery::and_of(trigram::required_case_insensitive(literal.as_bytes()));
            let files = self.literal_candidates(fragments, &query, literal, limit)?;
            self.verify(content, fragments, &files, limit, limit, |text, out| {
                out.extend(
                    re.find_iter(text).take(MAX_MATCHES_PER_FILE).map(|m| (m.start(), m.end())),
                );
            })
        } else {
            let finder = memchr::memmem::Finder::new(literal.as_bytes());
            let query = TrigramQuery::and_of(trigram::required_case_sensitive(literal.as_bytes()));
            let files = self.literal_candidates(fragments, &query, literal, limit)?;
            let n = literal.len();
            self.verify(content, fragments, &files, limit, limit, |text, out| {
                out.extend(
                    finder
                        .find_iter(text.as_bytes())
                        .take(MAX_MATCHES_PER_FILE)
                        .map(|s| (s, s + n)),
                );
            })
        }
    }

    /// Fragments matching a regular expression, ordered as
    /// [`TextIndex::literal`]'s, at most `limit`. The
    /// pattern's required trigrams narrow the files that are scanned.
    pub fn regex(
        &self,
        content: &ContentStore,
        fragments: &FragmentTable,
        pattern: &str,
        case_insensitive: bool,
        limit: usize,
    ) -> Result<Vec<Hit>> {
        let re = compile(pattern, case_insensitive)?;
        let hir = regex_syntax::ParserBuilder::new()
            .case_insensitive(case_insensitive)
            .build()
            .parse(pattern)
            .map_err(|e| Error::InvalidRegex(e.to_string()))?;
        let files: Vec<u32> = self
            .trigrams
            .candidates(&plan(&hir))
            .ok_or(Error::DamagedPostings(0))?
            .iter()
            .collect();
        self.verify(content, fragments, &files, usize::MAX, limit, |text, out| {
            out.extend(re.find_iter(text).take(MAX_MATCHES_PER_FILE).map(|m| (m.start(), m.end())));
        })
    }

    /// The files that may hold `literal`, in the order to verify them: all
    /// of them in file order when there are at most `limit`, else those the
    /// keyword ranking finds for the literal's words first, best first,
    /// then the rest in file order.
    fn literal_candidates(
        &self,
        fragments: &FragmentTable,
        query: &TrigramQuery,
        literal: &str,
        limit: usize,
    ) -> Result<Vec<u32>> {
        let candidates = self.trigrams.candidates(query).ok_or(Error::DamagedPostings(0))?;
        if candidates.len() <= limit as u64 {
            return Ok(candidates.iter().collect());
        }
        let mut files = Vec::with_capacity(candidates.len() as usize);
        let mut ranked = RoaringBitmap::new();
        // Only the order of reading depends on the ranking, never what is
        // found: damaged keyword postings leave the candidates in file order.
        let ranking = self.keyword(fragments, literal, KeywordParams::default(), usize::MAX);
        for hit in ranking.unwrap_or_default() {
            if candidates.contains(hit.file.0) && ranked.insert(hit.file.0) {
                files.push(hit.file.0);
            }
        }
        files.extend((candidates - ranked).iter());
        Ok(files)
    }

    /// Searches `files` for real, in their order, a batch at a time in
    /// parallel, until `confirm` of them hold a match (all of them with
    /// `usize::MAX`; of the last batch only the first confirmed in order
    /// are kept, so the answer does not depend on timing). The best `limit`
    /// hits of the confirmed files (`best_of_each_file_first`).
    fn verify(
        &self,
        content: &ContentStore,
        fragments: &FragmentTable,
        files: &[u32],
        confirm: usize,
        limit: usize,
        find: impl Fn(&str, &mut Vec<(usize, usize)>) + Sync,
    ) -> Result<Vec<Hit>> {
        let hits_of = |&f: &u32| {
            let file = FileId(f);
            content.with_text(file, |text| {
                let mut found = Vec::new();
                find(text, &mut found);
                hits_for_matches(fragments, file, text, &found)
            })
        };
        let mut hits = Vec::new();
        let (mut confirmed, mut at) = (0, 0);
        while confirmed < confirm && at < files.len() {
            // A batch as large as the files still wanted: one round when
            // most candidates hold the match, or when all are wanted.
            let batch = (confirm - confirmed).max(MIN_VERIFY_BATCH);
            let end = at.saturating_add(batch).min(files.len());
            let found: Vec<Vec<Hit>> = files[at..end].par_iter().map(hits_of).collect();
            for file_hits in found.into_iter().filter(|h| !h.is_empty()) {
                if confirmed == confirm {
                    break;
                }
                confirmed += 1;
                hits.extend(file_hits);
            }
            at = end;
        }
        Ok(best_of_each_file_first(hits, limit))
    }

    /// The best `limit` files for a keyword query, each as its best
    /// fragment: a fragment scores BM25 over its text plus the weighted BM25
    /// of its file's path and name; a file scores its best fragment plus a
    /// share of its next best ones, times its role's factor.
    pub fn keyword(
        &self,
        fragments: &FragmentTable,
        text: &str,
        params: KeywordParams,
        limit: usize,
    ) -> Result<Vec<Hit>> {
        let terms: Vec<(String, f32)> =
            self.bm25.query_terms(text).into_iter().map(|(t, c)| (t, c as f32)).collect();
        let mut scores = self.bm25.score_all(&terms, params.bm25)?;
        let mut by_file = vec![0f32; self.roles.len()];
        for (field, weight) in
            [(&self.paths, params.path_weight), (&self.names, params.name_weight)]
        {
            if weight > 0.0 {
                for (f, s) in field.score_all(&terms, params.bm25)?.into_iter().enumerate() {
                    if let Some(slot) = by_file.get_mut(f) {
                        *slot += weight * s;
                    }
                }
            }
        }
        if by_file.iter().any(|&s| s > 0.0) {
            for (chunk, frag) in fragments.iter() {
                if let (Some(s), Some(p)) =
                    (scores.get_mut(chunk.index()), by_file.get(frag.file.index()))
                {
                    *s += p;
                }
            }
        }
        Ok(self.rank_files(fragments, &scores, params, limit))
    }

    /// Files ranked by their fragments' scores: the best fragment, plus
    /// `file_evidence` times the next best ones, times the role's factor.
    /// Each file is returned once, as its best fragment.
    fn rank_files(
        &self,
        fragments: &FragmentTable,
        scores: &[f32],
        params: KeywordParams,
        limit: usize,
    ) -> Vec<Hit> {
        // Per file: its best fragment and the next EVIDENCE_FRAGMENTS scores.
        #[derive(Clone, Copy)]
        struct FileScore {
            best: (f32, ChunkId),
            next: [f32; EVIDENCE_FRAGMENTS],
        }
        let mut files: Vec<Option<FileScore>> = vec![None; self.roles.len()];
        for (i, &s) in scores.iter().enumerate() {
            if s <= 0.0 {
                continue;
            }
            let chunk = ChunkId(i as u32);
            let Some(frag) = fragments.try_get(chunk) else { continue };
            let Some(slot) = files.get_mut(frag.file.index()) else { continue };
            let entry =
                slot.get_or_insert(FileScore { best: (s, chunk), next: [0.0; EVIDENCE_FRAGMENTS] });
            if entry.best.1 == chunk {
                continue;
            }
            let mut carry = s;
            if s > entry.best.0 {
                carry = entry.best.0;
                entry.best = (s, chunk);
            }
            // Keep the next best scores sorted, largest first.
            for n in entry.next.iter_mut() {
                if carry > *n {
                    std::mem::swap(n, &mut carry);
                }
            }
        }
        let factor = |f: usize| match self.roles.get(f).copied().and_then(FileRole::from_byte) {
            Some(FileRole::Test) => params.test_factor,
            Some(FileRole::Other) => params.other_factor,
            _ => 1.0,
        };
        let mut ranked: Vec<(f32, usize, ChunkId)> = files
            .iter()
            .enumerate()
            .filter_map(|(f, e)| {
                let e = e.as_ref()?;
                let evidence: f32 = e.next.iter().sum();
                let score = (e.best.0 + params.file_evidence * evidence) * factor(f);
                (score > 0.0).then_some((score, f, e.best.1))
            })
            .collect();
        crate::bm25::keep_best(&mut ranked, limit, |a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        ranked
            .into_iter()
            .filter_map(|(score, _, chunk)| {
                let f = fragments.try_get(chunk)?;
                Some(Hit { chunk, file: f.file, lines: f.lines, score })
            })
            .collect()
    }
}

impl TrigramQuery {
    fn and_of(grams: Vec<u32>) -> TrigramQuery {
        match grams.len() {
            0 => TrigramQuery::All,
            _ => TrigramQuery::And(grams.into_iter().map(TrigramQuery::Trigram).collect()),
        }
    }
}

fn compile(pattern: &str, case_insensitive: bool) -> Result<regex::Regex> {
    regex::RegexBuilder::new(pattern)
        .case_insensitive(case_insensitive)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|e| Error::InvalidRegex(e.to_string()))
}

/// The best `limit` of `hits`: each file's best hit, most matches first,
/// then the other hits, most matches first. Files are ranked as by their
/// best hits alone, and a small `limit` still reaches `limit` files.
fn best_of_each_file_first(mut hits: Vec<Hit>, limit: usize) -> Vec<Hit> {
    sort_hits(&mut hits);
    let mut seen = RoaringBitmap::new();
    let (mut best, rest): (Vec<Hit>, Vec<Hit>) =
        hits.into_iter().partition(|h| seen.insert(h.file.0));
    best.extend(rest);
    best.truncate(limit);
    best
}

/// Groups byte-range matches of one file by fragment: one hit per fragment,
/// scored by its number of matches, spanning its matched lines.
fn hits_for_matches(
    fragments: &FragmentTable,
    file: FileId,
    text: &str,
    matches: &[(usize, usize)],
) -> Vec<Hit> {
    let chunks: Vec<ChunkId> = fragments.of_file(file).collect();
    let mut out: Vec<Hit> = Vec::new();
    // Matches come in file order, so lines are counted once, forward from
    // the last position, not from the fragment start for every match.
    let mut cursor: Option<(ChunkId, usize, u32)> = None;
    for &(start, end) in matches {
        // The fragment whose byte range holds the match start.
        let i = chunks.partition_point(|&c| fragments.get(c).end_byte as usize <= start);
        let Some(&chunk) = chunks.get(i) else { continue };
        let frag = fragments.get(chunk);
        let mut line_of = |offset: usize| {
            let offset = offset.min(text.len());
            let (from, line) = match cursor {
                Some((c, at, line)) if c == chunk && at <= offset => (at, line),
                _ => ((frag.start_byte as usize).min(offset), frag.lines.start()),
            };
            let line =
                line + memchr::memchr_iter(b'\n', &text.as_bytes()[from..offset]).count() as u32;
            cursor = Some((chunk, offset, line));
            line
        };
        let first = line_of(start);
        let last = line_of(end.saturating_sub(1).max(start)).min(frag.lines.end());
        match out.last_mut() {
            Some(h) if h.chunk == chunk => {
                h.score += 1.0;
                h.lines = LineSpan::new(h.lines.start(), last.max(h.lines.end()));
            }
            _ => out.push(Hit { chunk, file, lines: LineSpan::new(first, last), score: 1.0 }),
        }
    }
    out
}

/// The text modality as a [`Retriever`]: keyword queries rank by BM25,
/// literal and regex queries return verified matches.
#[derive(Debug, Clone)]
pub struct TextRetriever {
    index: Arc<TextIndex>,
    content: Arc<ContentStore>,
    fragments: Arc<FragmentTable>,
    params: KeywordParams,
}

impl TextRetriever {
    /// A retriever over an index and the corpus it was built from.
    pub fn new(
        index: Arc<TextIndex>,
        content: Arc<ContentStore>,
        fragments: Arc<FragmentTable>,
    ) -> Self {
        TextRetriever { index, content, fragments, params: KeywordParams::default() }
    }

    /// Uses other keyword-ranking parameters.
    pub fn with_params(mut self, params: KeywordParams) -> Self {
        self.params = params;
        self
    }
}

impl Retriever for TextRetriever {
    fn modality(&self) -> Modality {
        Modality::TEXT
    }

    fn search(&self, query: &Query, limit: usize) -> maguyva_core::Result<Vec<Hit>> {
        let (c, f) = (&*self.content, &*self.fragments);
        let ci = query.is_case_insensitive();
        Ok(match query.mode() {
            MatchMode::Keyword => self.index.keyword(f, query.text(), self.params, limit)?,
            MatchMode::Literal => self.index.literal(c, f, query.text(), ci, limit)?,
            MatchMode::Regex => self.index.regex(c, f, query.text(), ci, limit)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use maguyva_core::LineChunker;
    use proptest::prelude::*;

    fn corpus(texts: &[&str]) -> (ContentStore, FragmentTable) {
        let content = ContentStore::new(texts.iter().map(|s| s.to_string()).collect());
        let chunker = LineChunker { window_lines: 3, max_bytes: 1 << 20 };
        let spans = texts
            .iter()
            .map(|t| {
                chunker
                    .chunk(t)
                    .into_iter()
                    .map(|(lines, bytes)| maguyva_core::FragmentSpan {
                        lines,
                        bytes,
                        context_line: None,
                    })
                    .collect()
            })
            .collect();
        (content, FragmentTable::from_spans(spans))
    }

    fn paths(c: &ContentStore) -> Vec<&'static str> {
        vec!["file"; c.len()]
    }

    fn files(hits: &[Hit]) -> Vec<u32> {
        let mut v: Vec<u32> = hits.iter().map(|h| h.file.0).collect();
        v.sort();
        v.dedup();
        v
    }

    #[test]
    fn files_with_term_looks_in_text_path_and_name() {
        let (c, f) = corpus(&["fn parse_config() {}\n", "let sessions = 1;\n", "nothing\n"]);
        let paths = ["a.rs", "b.rs", "src/session/store.rs"];
        let idx =
            TextIndexBuilder::new().build(&c, &c.fragment_documents(&f), &paths, &[]).unwrap();
        let files = |t: &str| idx.files_with_term(&f, t).unwrap().iter().collect::<Vec<u32>>();
        // Sub-words and the whole identifier are terms; words are stemmed.
        assert_eq!(files("config"), [0]);
        assert_eq!(files("parseconfig"), [0]);
        assert_eq!(files("session"), [1, 2]);
        assert_eq!(files("store"), [2]);
        assert!(files("absent").is_empty());
    }

    #[test]
    fn literal_hits_point_at_the_matching_lines() {
        let (c, f) = corpus(&["a\nb\nc\nd\nlet x = ECONNREFUSED;\n", "nothing here\n"]);
        let idx =
            TextIndexBuilder::new().build(&c, &c.fragment_documents(&f), &paths(&c), &[]).unwrap();
        let hits = idx.literal(&c, &f, "ECONNREFUSED", false, 10).unwrap();
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].lines, LineSpan::line(5));
        assert_eq!(hits[0].chunk, ChunkId(1));
        assert!(idx.literal(&c, &f, "econnrefused", false, 10).unwrap().is_empty());
        assert_eq!(idx.literal(&c, &f, "econnrefused", true, 10).unwrap().len(), 1);
    }

    #[test]
    fn regex_search_and_errors() {
        let (c, f) = corpus(&["fn parse_config() {}\n", "fn parse_args() {}\n", "struct X;\n"]);
        let idx =
            TextIndexBuilder::new().build(&c, &c.fragment_documents(&f), &paths(&c), &[]).unwrap();
        let hits = idx.regex(&c, &f, r"fn parse_\w+", false, 10).unwrap();
        assert_eq!(files(&hits), vec![0, 1]);
        assert!(matches!(idx.regex(&c, &f, "(unclosed", false, 10), Err(Error::InvalidRegex(_))));
    }

    #[test]
    fn save_load_and_reject_mismatch() {
        let (c, f) = corpus(&["hello world\n", "second file\n"]);
        let idx =
            TextIndexBuilder::new().build(&c, &c.fragment_documents(&f), &paths(&c), &[]).unwrap();
        let dir = tempfile::tempdir().unwrap();
        idx.save(dir.path()).unwrap();
        let again = TextIndex::load(dir.path(), 2, f.len()).unwrap();
        assert_eq!(
            again.keyword(&f, "hello", KeywordParams::default(), 5).unwrap(),
            idx.keyword(&f, "hello", KeywordParams::default(), 5).unwrap()
        );
        assert!(TextIndex::load(dir.path(), 3, f.len()).is_err());
    }

    /// A corpus of named files, one fragment per three lines.
    fn named(files: &[(&str, &str)], roles: &[FileRole]) -> (TextIndex, FragmentTable) {
        let texts: Vec<&str> = files.iter().map(|f| f.1).collect();
        let (c, f) = corpus(&texts);
        let paths: Vec<&str> = files.iter().map(|f| f.0).collect();
        let idx =
            TextIndexBuilder::new().build(&c, &c.fragment_documents(&f), &paths, roles).unwrap();
        (idx, f)
    }

    fn ranked(idx: &TextIndex, f: &FragmentTable, q: &str, params: KeywordParams) -> Vec<u32> {
        idx.keyword(f, q, params, 10).unwrap().iter().map(|h| h.file.0).collect()
    }

    #[test]
    fn keyword_results_are_one_per_file() {
        let (idx, f) = named(
            &[("a.rs", "retry\nx\ny\nretry again\nz\nw\nretry\n"), ("b.rs", "retry once\n")],
            &[],
        );
        let files = ranked(&idx, &f, "retry", KeywordParams::default());
        assert_eq!(files.len(), 2);
        assert_ne!(files[0], files[1]);
    }

    #[test]
    fn further_evidence_lifts_a_file_that_answers_in_several_places() {
        // File 0 holds one strong fragment; file 1 two slightly weaker ones.
        let strong = "socket timeout socket timeout\nfiller\nfiller\n";
        let weaker = "socket timeout\nfiller\nfiller\nsocket timeout\nfiller\nfiller\n";
        let (idx, f) = named(&[("one.rs", strong), ("two.rs", weaker)], &[]);
        let off = KeywordParams { path_weight: 0.0, ..KeywordParams::default() };
        assert_eq!(ranked(&idx, &f, "socket timeout", off)[0], 0);
        let on = KeywordParams { file_evidence: 0.75, ..off };
        assert_eq!(ranked(&idx, &f, "socket timeout", on)[0], 1);
    }

    #[test]
    fn roles_and_names_move_files() {
        let files = [
            ("src/cart_test.rs", "cart total price\n"),
            ("README.md", "cart total price\n"),
            ("src/billing.rs", "cart total price\n"),
            ("src/cart.rs", "fn add() {}\nprice\n"),
        ];
        let roles = [FileRole::Test, FileRole::Other, FileRole::Source, FileRole::Source];
        let (idx, f) = named(&files, &roles);
        let plain = KeywordParams { path_weight: 0.0, ..KeywordParams::default() };
        let tie = ranked(&idx, &f, "cart total", plain);
        assert_eq!(&tie[..3], &[0, 1, 2], "equal scores keep file order");
        let demoted = KeywordParams { test_factor: 0.5, other_factor: 0.5, ..plain };
        assert_eq!(ranked(&idx, &f, "cart total", demoted)[0], 2);
        let named_after = KeywordParams { name_weight: 5.0, ..demoted };
        assert_eq!(ranked(&idx, &f, "cart total", named_after)[0], 3);
    }

    fn naive(texts: &[String], needle: &str, ci: bool) -> Vec<u32> {
        let re =
            regex::RegexBuilder::new(&regex::escape(needle)).case_insensitive(ci).build().unwrap();
        texts.iter().enumerate().filter(|(_, t)| re.is_match(t)).map(|(i, _)| i as u32).collect()
    }

    proptest! {
        /// The trigram prefilter never loses a match and verification never
        /// reports a false one, in both case modes, including letters whose
        /// Unicode case variants have other byte lengths.
        #[test]
        fn literal_search_equals_a_full_scan(
            texts in proptest::collection::vec("[abkKsS\u{212A}\u{17F}é É\n]{0,40}", 1..8),
            needle in "[abkKsS\u{212A}\u{17F}éÉ]{1,5}",
            ci in any::<bool>(),
        ) {
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let (c, f) = corpus(&refs);
            let idx = TextIndexBuilder::new().build(&c, &c.fragment_documents(&f), &paths(&c), &[]).unwrap();
            let hits = idx.literal(&c, &f, &needle, ci, usize::MAX).unwrap();
            prop_assert_eq!(files(&hits), naive(&texts, &needle, ci));
        }

        /// With a limit, a literal stops at its first files but never
        /// lies: every hit is a match, the hits reach `limit` files when
        /// that many hold the literal, and with no more files than that the
        /// answer is the full one's first `limit` hits. Words that the
        /// keyword ranking orders (`ab`, `ba`) make its order count.
        #[test]
        fn a_literal_with_a_limit_stops_at_that_many_files(
            texts in proptest::collection::vec("(ab|ba|aab|b|a| |\n){0,12}", 1..12),
            needle in "[ab]{1,4}",
            limit in 1usize..6,
        ) {
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let (c, f) = corpus(&refs);
            let idx = TextIndexBuilder::new().build(&c, &c.fragment_documents(&f), &paths(&c), &[]).unwrap();
            let full = idx.literal(&c, &f, &needle, false, usize::MAX).unwrap();
            let hits = idx.literal(&c, &f, &needle, false, limit).unwrap();
            let holding = naive(&texts, &needle, false);
            prop_assert!(hits.len() <= limit);
            prop_assert!(hits.iter().all(|h| full.contains(h)), "every hit is a verified match");
            let mut distinct = files(&hits);
            distinct.dedup();
            prop_assert_eq!(distinct.len(), limit.min(holding.len()));
            if holding.len() <= limit {
                prop_assert_eq!(&hits[..], &full[..hits.len()]);
            }
        }

        /// Each hit spans exactly the lines of its fragment's matches,
        /// counted from the start of the file.
        #[test]
        fn literal_hit_lines_are_the_matching_lines(
            text in "[ab\n]{0,120}",
            needle in "[ab]{1,2}",
        ) {
            let (c, f) = corpus(&[text.as_str()]);
            let idx = TextIndexBuilder::new().build(&c, &c.fragment_documents(&f), &paths(&c), &[]).unwrap();
            let hits = idx.literal(&c, &f, &needle, false, usize::MAX).unwrap();
            let line_at = |at: usize| 1 + text[..at].matches('\n').count() as u32;
            let mut expect: Vec<(u32, u32, u32)> = Vec::new();
            let mut from = 0;
            while let Some(i) = text[from..].find(&needle) {
                let start = from + i;
                let end = start + needle.len();
                let chunk = f.of_file(FileId(0)).find(|&ch| f.get(ch).end_byte as usize > start).unwrap();
                let (first, last) = (line_at(start), line_at(end - 1));
                match expect.last_mut() {
                    Some(e) if e.0 == chunk.0 => e.2 = e.2.max(last),
                    _ => expect.push((chunk.0, first, last)),
                }
                from = end;
            }
            let mut got: Vec<(u32, u32, u32)> =
                hits.iter().map(|h| (h.chunk.0, h.lines.start(), h.lines.end())).collect();
            got.sort();
            prop_assert_eq!(got, expect);
        }

        #[test]
        fn regex_search_equals_a_full_scan(
            texts in proptest::collection::vec("[abcxyzK\u{212A}\n]{0,40}", 1..8),
            pattern in prop_oneof![
                Just("abc".to_string()), Just("a[bc]x".to_string()), Just("(ab|xy)z+".to_string()),
                Just("k.c".to_string()), Just("abc|zz".to_string()), Just("x{2,}".to_string()),
            ],
            ci in any::<bool>(),
        ) {
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let (c, f) = corpus(&refs);
            let idx = TextIndexBuilder::new().build(&c, &c.fragment_documents(&f), &paths(&c), &[]).unwrap();
            let hits = idx.regex(&c, &f, &pattern, ci, usize::MAX).unwrap();
            let re = regex::RegexBuilder::new(&pattern).case_insensitive(ci).build().unwrap();
            let expect: Vec<u32> = texts.iter().enumerate().filter(|(_, t)| re.is_match(t)).map(|(i, _)| i as u32).collect();
            prop_assert_eq!(files(&hits), expect);
        }
    }
}
