//! BM25 over code-aware tokens. Documents are fragments; the term dictionary
//! is an fst map from token to its number in term order, and an array of
//! where each term's posting list starts; a list is its document frequency,
//! then per document its delta shifted left with the low bit set when the
//! term occurs once (most postings), else followed by the term frequency.
//! Format: `doc/format/text.md`.

use crate::error::{Error, Result};
use maguyva_core::varint;
use maguyva_core::{Analyzer, Array, Bytes, ChunkId, SectionFile, SectionWriter, TermMatrix};
use serde::{Deserialize, Serialize};

/// BM25's term-frequency saturation, the customary value.
pub const DEFAULT_K1: f32 = 1.2;
/// BM25's length normalisation, the customary value.
pub const DEFAULT_B: f32 = 0.75;

/// Parameters of the BM25 scorer.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Bm25Params {
    /// Term-frequency saturation.
    pub k1: f32,
    /// Length normalisation, 0 (none) to 1 (full).
    pub b: f32,
}

impl Default for Bm25Params {
    fn default() -> Self {
        Bm25Params { k1: DEFAULT_K1, b: DEFAULT_B }
    }
}

/// The stored form of a [`Bm25Index`], read in place from the index file.
#[derive(Debug, Clone)]
pub(crate) struct Bm25Parts {
    analyzer: Analyzer,
    terms: Bytes,
    /// `offs[t]..offs[t + 1]` is term `t`'s posting list in `blob`.
    offs: Offsets,
    blob: Bytes,
    doc_len: Array<u32>,
}

impl Bm25Parts {
    /// Adds the parts to a file being written, as sections named
    /// `{prefix}.meta`, `.terms`, `.offs`, `.blob` and `.dlen`.
    pub(crate) fn write(&self, w: &mut SectionWriter, prefix: &str) -> maguyva_core::Result<()> {
        w.encoded(&format!("{prefix}.meta"), "analyzer", &self.analyzer)?
            .bytes(&format!("{prefix}.terms"), &self.terms)?;
        match &self.offs {
            Offsets::Narrow(offs) => w.array(&format!("{prefix}.offs"), offs)?,
            Offsets::Wide(offs) => w.array(&format!("{prefix}.offs"), offs)?,
        };
        w.bytes(&format!("{prefix}.blob"), &self.blob)?
            .array(&format!("{prefix}.dlen"), &self.doc_len)?;
        Ok(())
    }

    /// The parts written by [`Bm25Parts::write`] with `prefix`.
    pub(crate) fn open(file: &SectionFile, prefix: &str) -> maguyva_core::Result<Bm25Parts> {
        let blob = file.bytes(&format!("{prefix}.blob"))?;
        let offs = format!("{prefix}.offs");
        let offs = match Offsets::narrow(blob.len()) {
            true => Offsets::Narrow(file.array(&offs)?),
            false => Offsets::Wide(file.array(&offs)?),
        };
        Ok(Bm25Parts {
            analyzer: file.decode(&format!("{prefix}.meta"))?,
            terms: file.bytes(&format!("{prefix}.terms"))?,
            offs,
            blob,
            doc_len: file.array(&format!("{prefix}.dlen"))?,
        })
    }
}

/// Where each term's posting list starts, and where the last ends: two
/// bytes an entry when the blob is under 64 KiB (a small repository's,
/// whose index has the least room to spare for them), else four.
#[derive(Debug, Clone)]
enum Offsets {
    Narrow(Array<u16>),
    Wide(Array<u32>),
}

impl Offsets {
    /// Whether the offsets into a blob of `len` bytes take two bytes.
    fn narrow(len: usize) -> bool {
        len <= usize::from(u16::MAX)
    }

    /// The offsets `offs` into a blob of `len` bytes, none past it.
    fn new(offs: Vec<u32>, len: usize) -> Offsets {
        match Offsets::narrow(len) {
            true => Offsets::Narrow(offs.iter().map(|&o| o as u16).collect::<Vec<u16>>().into()),
            false => Offsets::Wide(offs.into()),
        }
    }

    fn len(&self) -> usize {
        match self {
            Offsets::Narrow(a) => a.len(),
            Offsets::Wide(a) => a.len(),
        }
    }

    fn get(&self, i: usize) -> Option<u32> {
        match self {
            Offsets::Narrow(a) => a.get(i).map(|&o| u32::from(o)),
            Offsets::Wide(a) => a.get(i).copied(),
        }
    }

    /// Whether there is one offset per list and one more, starting at 0,
    /// never decreasing and ending at `end`.
    fn fit(&self, lists: usize, end: usize) -> bool {
        let all = (0..self.len()).filter_map(|i| self.get(i));
        let rising = all.clone().zip(all.skip(1)).all(|(a, b)| a <= b);
        self.len() == lists + 1
            && self.get(0) == Some(0)
            && rising
            && self.get(lists).is_some_and(|last| last as usize == end)
    }
}

/// An inverted index of fragments for BM25 ranking.
#[derive(Clone)]
pub struct Bm25Index {
    terms: fst::Map<Bytes>,
    parts: Bm25Parts,
    avg_len: f32,
}

impl std::fmt::Debug for Bm25Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bm25Index")
            .field("terms", &self.terms.len())
            .field("documents", &self.parts.doc_len.len())
            .finish()
    }
}

/// One scored document.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scored {
    /// The fragment.
    pub chunk: ChunkId,
    /// Its BM25 score.
    pub score: f32,
}

impl Bm25Index {
    /// Indexes documents; document `i` becomes chunk `i`.
    pub fn build<S: AsRef<str> + Sync>(docs: &[S], analyzer: Analyzer) -> Result<Bm25Index> {
        Bm25Index::from_terms(&TermMatrix::build(docs, analyzer))
    }

    /// An index of documents already analyzed, with the analyzer they were
    /// analyzed with.
    pub fn from_terms(matrix: &TermMatrix) -> Result<Bm25Index> {
        let mut builder = fst::MapBuilder::memory();
        let mut blob = Vec::new();
        let mut offs = vec![0u32];
        for (t, (term, list)) in matrix.terms().iter().zip(matrix.postings()).enumerate() {
            builder.insert(term.as_bytes(), t as u64)?;
            push_list(&mut blob, list.len(), list)?;
            offs.push(blob_end(&blob)?);
        }
        let analyzer = matrix.analyzer();
        let doc_len = matrix.lengths().to_vec();
        let parts = Bm25Parts {
            analyzer,
            terms: Bytes::from_vec(builder.into_inner()?),
            offs: Offsets::new(offs, blob.len()),
            blob: Bytes::from_vec(blob),
            doc_len: doc_len.into(),
        };
        Bm25Index::from_parts(parts)
    }

    pub(crate) fn from_parts(parts: Bm25Parts) -> Result<Bm25Index> {
        let terms = fst::Map::new(parts.terms.clone())?;
        if !parts.offs.fit(terms.len(), parts.blob.len()) {
            return Err(Error::DamagedPostings(0));
        }
        let total: u64 = parts.doc_len.iter().map(|&l| u64::from(l)).sum();
        let avg_len =
            if parts.doc_len.is_empty() { 1.0 } else { total as f32 / parts.doc_len.len() as f32 };
        Ok(Bm25Index { terms, parts, avg_len: avg_len.max(1.0) })
    }

    pub(crate) fn parts(&self) -> &Bm25Parts {
        &self.parts
    }

    /// Number of documents.
    pub fn document_count(&self) -> usize {
        self.parts.doc_len.len()
    }

    /// Number of distinct terms.
    pub fn term_count(&self) -> usize {
        self.terms.len()
    }

    /// Token length of a document.
    pub fn document_len(&self, chunk: ChunkId) -> u32 {
        self.parts.doc_len.get(chunk.index()).copied().unwrap_or(0)
    }

    /// Number of documents containing `term` (already a token).
    pub fn document_frequency(&self, term: &str) -> u32 {
        let Some(list) = self.terms.get(term).and_then(|t| self.list(t)) else { return 0 };
        let mut pos = 0;
        varint::read(list, &mut pos).map_or(0, |df| df.min(u64::from(u32::MAX)) as u32)
    }

    /// The stored posting list of term number `t`.
    fn list(&self, t: u64) -> Option<&[u8]> {
        let t = usize::try_from(t).ok()?;
        let (a, b) = (self.parts.offs.get(t)?, self.parts.offs.get(t + 1)?);
        self.parts.blob.get(a as usize..b as usize)
    }

    /// Inverse document frequency of a term (the BM25 form, never negative).
    pub fn idf(&self, term: &str) -> f32 {
        let n = self.document_count() as f32;
        let df = self.document_frequency(term) as f32;
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }

    /// Calls `f(chunk, tf)` for every document containing `term`.
    pub fn for_each_posting(&self, term: &str, f: impl FnMut(ChunkId, u32)) -> Result<()> {
        match self.terms.get(term) {
            Some(t) => self.postings_at(t, f),
            None => Ok(()),
        }
    }

    /// Calls `f(chunk, tf)` for every posting of term number `t`.
    fn postings_at(&self, t: u64, mut f: impl FnMut(ChunkId, u32)) -> Result<()> {
        let damaged = || Error::DamagedPostings(t);
        let bytes = self.list(t).ok_or_else(damaged)?;
        let mut pos = 0;
        let df = varint::read(bytes, &mut pos).ok_or_else(damaged)?;
        let mut doc = 0u64;
        for _ in 0..df {
            let head = varint::read(bytes, &mut pos).ok_or_else(damaged)?;
            let tf = match head & 1 {
                1 => 1,
                _ => varint::read(bytes, &mut pos).ok_or_else(damaged)?,
            };
            doc += head >> 1;
            if doc as usize >= self.parts.doc_len.len() {
                return Err(damaged());
            }
            f(ChunkId(doc as u32), tf.min(u64::from(u32::MAX)) as u32);
        }
        match pos == bytes.len() {
            true => Ok(()),
            false => Err(damaged()),
        }
    }

    /// The index of a corpus that differs from this one's in some
    /// documents: `kept[d]` is the new id of old document `d` when it is
    /// unchanged (ids of kept documents must rise with their old ids), and
    /// `fresh` indexes the other documents, whose `fresh_ids[i]` is the new
    /// id of its document `i`; `documents` in all. Equal to indexing the new
    /// documents from scratch, at the cost of reading the old lists instead
    /// of analyzing every text.
    pub fn merged(
        &self,
        kept: &[Option<u32>],
        fresh: &Bm25Index,
        fresh_ids: &[u32],
        documents: usize,
    ) -> Result<Bm25Index> {
        use fst::Streamer;
        let mut doc_len = vec![0u32; documents];
        for (d, &n) in kept.iter().enumerate() {
            if let (Some(n), Some(&len)) = (n, self.parts.doc_len.get(d)) {
                doc_len[n as usize] = len;
            }
        }
        for (i, &n) in fresh_ids.iter().enumerate() {
            doc_len[n as usize] = fresh.parts.doc_len.get(i).copied().unwrap_or(0);
        }
        // Most lists of a small change name no changed document: when
        // every old document of a list keeps its id, its bytes are copied.
        let unmoved = |d: usize| kept.get(d).copied().flatten() == Some(d as u32);
        let moved = crate::postings::moved_ids(kept, self.parts.doc_len.len() as u32);
        let mut blob = Vec::with_capacity(self.parts.blob.len());
        let mut offs = Vec::with_capacity(self.parts.offs.len());
        offs.push(0u32);
        let mut olds: Vec<(u32, u32)> = Vec::new();
        let mut news: Vec<(u32, u32)> = Vec::new();
        // The list of a term that has old list `a` and fresh list `b`;
        // `false` when it has no document left.
        let mut merge = |blob: &mut Vec<u8>, a: Option<u64>, b: Option<u64>| -> Result<bool> {
            if let (Some(t), None, Some(moved)) = (a, b, moved.as_deref()) {
                let list = self.list(t).ok_or(Error::DamagedPostings(t))?;
                if !names_any(list, moved).ok_or(Error::DamagedPostings(t))? {
                    blob.extend_from_slice(list);
                    return Ok(!list.is_empty());
                }
            }
            let (mut raw, mut moved) = (None, false);
            olds.clear();
            news.clear();
            if let Some(t) = a {
                self.postings_at(t, |d, tf| {
                    moved |= !unmoved(d.index());
                    if let Some(Some(n)) = kept.get(d.index()) {
                        olds.push((*n, tf));
                    }
                })?;
                raw = self.list(t);
            }
            if let Some(t) = b {
                fresh.postings_at(t, |d, tf| {
                    if let Some(&n) = fresh_ids.get(d.index()) {
                        news.push((n, tf));
                    }
                })?;
                raw = None;
            }
            let before = blob.len();
            match raw.filter(|_| !moved) {
                Some(list) => blob.extend_from_slice(list),
                None if olds.is_empty() && news.is_empty() => {
                    // Every document that had the term changed or went.
                }
                None => {
                    // Both lists rise (kept ids keep their order), so they
                    // are merged, not sorted.
                    let merged = crate::postings::merge_rising(&olds, &news, |p| p.0);
                    push_list(blob, olds.len() + news.len(), merged)?;
                }
            }
            Ok(blob.len() > before)
        };
        // The dictionary maps each term to its number: while the changed
        // documents brought no new term (most small changes), the old one
        // serves, and the terms are walked by number, not streamed from it.
        if let Some(pairs) = self.numbers_of(fresh) {
            let mut pairs = pairs.into_iter().peekable();
            let mut same_terms = true;
            for t in 0..self.terms.len() as u64 {
                let b = pairs.next_if(|&(old, _)| old == t).map(|(_, b)| b);
                same_terms &= merge(&mut blob, Some(t), b)?;
                offs.push(blob_end(&blob)?);
                if !same_terms {
                    break;
                }
            }
            if same_terms {
                return Bm25Index::from_parts(Bm25Parts {
                    analyzer: self.parts.analyzer,
                    terms: self.parts.terms.clone(),
                    offs: Offsets::new(offs, blob.len()),
                    blob: Bytes::from_vec(blob),
                    doc_len: doc_len.into(),
                });
            }
            // A term went: its number goes with it.
            blob.clear();
            offs.truncate(1);
        }
        // The terms in order, to make the dictionary of.
        let (mut keys, mut key_ends): (Vec<u8>, Vec<usize>) = (Vec::new(), Vec::new());
        let (mut old, mut new) = (self.terms.stream(), fresh.terms.stream());
        let (mut key_a, mut key_b) = (Vec::new(), Vec::new());
        let next = |stream: &mut fst::map::Stream<'_>, key: &mut Vec<u8>| {
            let (k, t) = stream.next()?;
            key.clear();
            key.extend_from_slice(k);
            Some(t)
        };
        let (mut a, mut b) = (next(&mut old, &mut key_a), next(&mut new, &mut key_b));
        loop {
            let (take_a, take_b) = match (a, b) {
                (None, None) => break,
                (Some(_), Some(_)) => (key_a <= key_b, key_b <= key_a),
                (a, b) => (a.is_some(), b.is_some()),
            };
            if merge(&mut blob, a.filter(|_| take_a), b.filter(|_| take_b))? {
                offs.push(blob_end(&blob)?);
                keys.extend_from_slice(if take_a { &key_a } else { &key_b });
                key_ends.push(keys.len());
            }
            if take_a {
                a = next(&mut old, &mut key_a);
            }
            if take_b {
                b = next(&mut new, &mut key_b);
            }
        }
        let mut builder = fst::MapBuilder::memory();
        let mut start = 0;
        for (t, &end) in key_ends.iter().enumerate() {
            builder.insert(&keys[start..end], t as u64)?;
            start = end;
        }
        Bm25Index::from_parts(Bm25Parts {
            analyzer: self.parts.analyzer,
            terms: Bytes::from_vec(builder.into_inner()?),
            offs: Offsets::new(offs, blob.len()),
            blob: Bytes::from_vec(blob),
            doc_len: doc_len.into(),
        })
    }

    /// For each term of `fresh`, in order, its number here and there;
    /// `None` when one of them is not a term here.
    fn numbers_of(&self, fresh: &Bm25Index) -> Option<Vec<(u64, u64)>> {
        use fst::Streamer;
        let mut terms = fresh.terms.stream();
        let mut pairs = Vec::with_capacity(fresh.terms.len());
        while let Some((key, b)) = terms.next() {
            pairs.push((self.terms.get(key)?, b));
        }
        Some(pairs)
    }

    /// The analyzer documents were indexed with (queries must use it too).
    pub fn analyzer(&self) -> Analyzer {
        self.parts.analyzer
    }

    /// The distinct terms of a query text with their counts.
    pub fn query_terms(&self, text: &str) -> Vec<(String, u32)> {
        self.parts.analyzer.query_terms(text)
    }

    /// BM25 scores of every document for weighted query terms, as a dense
    /// array indexed by chunk (0 where no term matched).
    pub fn score_all(&self, terms: &[(String, f32)], params: Bm25Params) -> Result<Vec<f32>> {
        let mut scores = vec![0f32; self.document_count()];
        for (term, weight) in terms {
            let idf = self.idf(term) * weight;
            if idf <= 0.0 {
                continue;
            }
            self.for_each_posting(term, |chunk, tf| {
                let tf = tf as f32;
                let len = self.parts.doc_len[chunk.index()] as f32;
                let norm = params.k1 * (1.0 - params.b + params.b * len / self.avg_len);
                scores[chunk.index()] += idf * tf * (params.k1 + 1.0) / (tf + norm);
            })?;
        }
        Ok(scores)
    }

    /// The best `limit` documents for a query text.
    pub fn search(&self, text: &str, params: Bm25Params, limit: usize) -> Result<Vec<Scored>> {
        let terms: Vec<(String, f32)> =
            self.query_terms(text).into_iter().map(|(t, c)| (t, c as f32)).collect();
        let scores = self.score_all(&terms, params)?;
        Ok(top_k(&scores, limit))
    }
}

/// The `limit` highest positive entries of a dense score array, best first;
/// ties keep chunk order.
pub fn top_k(scores: &[f32], limit: usize) -> Vec<Scored> {
    let mut hits: Vec<Scored> = scores
        .iter()
        .enumerate()
        .filter(|(_, s)| **s > 0.0)
        .map(|(i, &score)| Scored { chunk: ChunkId(i as u32), score })
        .collect();
    keep_best(&mut hits, limit, |a, b| b.score.total_cmp(&a.score).then(a.chunk.cmp(&b.chunk)));
    hits
}

/// Keeps the `limit` first items of `items` in `cmp`'s order, sorted,
/// without sorting the rest.
pub(crate) fn keep_best<T>(
    items: &mut Vec<T>,
    limit: usize,
    cmp: impl Fn(&T, &T) -> std::cmp::Ordering,
) {
    if items.len() > limit && limit > 0 {
        items.select_nth_unstable_by(limit - 1, &cmp);
    }
    items.truncate(limit);
    items.sort_by(cmp);
}

/// Appends a posting list of `count` (document, term frequency) pairs in
/// rising document order.
fn push_list(
    blob: &mut Vec<u8>,
    count: usize,
    postings: impl IntoIterator<Item = (u32, u32)>,
) -> Result<()> {
    varint::push(blob, count as u64);
    let mut prev = 0u32;
    for (d, tf) in postings {
        let delta = u64::from(d.checked_sub(prev).ok_or(Error::DamagedPostings(0))?);
        match tf {
            1 => varint::push(blob, delta << 1 | 1),
            _ => {
                varint::push(blob, delta << 1);
                varint::push(blob, u64::from(tf));
            }
        }
        prev = d;
    }
    Ok(())
}

/// Whether a stored list names any of `documents` (sorted); `None` if it
/// is damaged.
fn names_any(bytes: &[u8], documents: &[u32]) -> Option<bool> {
    let mut pos = 0;
    let df = varint::read(bytes, &mut pos)?;
    let mut doc = 0u64;
    let ids = (0..df).map(|_| {
        let head = varint::read(bytes, &mut pos)?;
        if head & 1 == 0 {
            varint::read(bytes, &mut pos)?;
        }
        doc = doc.checked_add(head >> 1)?;
        u32::try_from(doc).ok()
    });
    crate::postings::names_any_of(ids, documents)
}

/// The length of a blob as a list offset.
fn blob_end(blob: &[u8]) -> Result<u32> {
    u32::try_from(blob.len()).map_err(|_| Error::DamagedPostings(blob.len() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Merging the old lists with the changed documents' equals
        /// indexing the new documents from scratch.
        #[test]
        fn merged_index_equals_a_rebuild(
            old in proptest::collection::vec("(alpha|beta|gamma|delta_x|EpsilonZeta| |\\.){0,12}", 0..16),
            fates in proptest::collection::vec(0u8..3, 0..16),
            added in proptest::collection::vec("(beta|omega|gamma_ray| ){0,8}", 0..4),
        ) {
            let (new, kept, fresh) = crate::postings::tests::edit(&old, &fates, &added);
            let analyzer = Analyzer::default();
            let before = Bm25Index::build(&old, analyzer).unwrap();
            let fresh_docs: Vec<&str> = fresh.iter().map(|&i| new[i].as_str()).collect();
            let fresh_ids: Vec<u32> = fresh.iter().map(|&i| i as u32).collect();
            let merged = before
                .merged(&kept, &Bm25Index::build(&fresh_docs, analyzer).unwrap(), &fresh_ids, new.len())
                .unwrap();
            let rebuilt = Bm25Index::build(&new, analyzer).unwrap();
            prop_assert_eq!(&*merged.parts.terms, &*rebuilt.parts.terms);
            let offs = |p: &Bm25Parts| (0..p.offs.len()).filter_map(|i| p.offs.get(i)).collect::<Vec<u32>>();
            prop_assert_eq!(offs(&merged.parts), offs(&rebuilt.parts));
            prop_assert_eq!(&*merged.parts.blob, &*rebuilt.parts.blob);
            prop_assert_eq!(&*merged.parts.doc_len, &*rebuilt.parts.doc_len);
        }
    }

    proptest! {
        /// A list names some of a set of documents exactly when its
        /// postings do.
        #[test]
        fn a_scan_for_documents_agrees_with_the_postings(
            docs in proptest::collection::vec("(alpha|beta|gamma| ){0,12}", 1..40),
            mut wanted in proptest::collection::vec(0u32..40, 0..5),
        ) {
            wanted.sort_unstable();
            wanted.dedup();
            let idx = Bm25Index::build(&docs, Analyzer::default()).unwrap();
            for t in 0..idx.terms.len() as u64 {
                let mut named = false;
                idx.postings_at(t, |d, _| named |= wanted.binary_search(&d.0).is_ok()).unwrap();
                prop_assert_eq!(names_any(idx.list(t).unwrap(), &wanted), Some(named));
            }
        }
    }

    /// A change that brings no new term keeps the dictionary as it is; one
    /// whose term goes with it makes a new one (both equal a rebuild).
    #[test]
    fn the_dictionary_is_kept_while_no_term_comes_or_goes() {
        let analyzer = Analyzer { stem: false };
        let old = ["alpha beta", "gamma beta", "delta"];
        let before = Bm25Index::build(&old, analyzer).unwrap();
        let kept = [Some(0), None, Some(2)];
        for (edit, keeps) in [("beta gamma gamma", true), ("beta", false), ("beta omega", false)] {
            let fresh = Bm25Index::build(&[edit], analyzer).unwrap();
            let merged = before.merged(&kept, &fresh, &[1], 3).unwrap();
            let rebuilt = Bm25Index::build(&[old[0], edit, old[2]], analyzer).unwrap();
            assert_eq!(&*merged.parts.terms, &*rebuilt.parts.terms, "{edit}");
            assert_eq!(&*merged.parts.blob, &*rebuilt.parts.blob, "{edit}");
            let same = merged.parts.terms.as_ptr() == before.parts.terms.as_ptr();
            assert_eq!(same, keeps, "{edit}");
        }
    }

    #[test]
    fn postings_of_a_single_occurrence_take_a_byte() {
        let idx =
            Bm25Index::build(&["zeta", "zeta zeta", "zeta"], Analyzer { stem: false }).unwrap();
        let t = idx.terms.get("zeta").unwrap();
        // Three documents; deltas 0, 1, 1; the second holds it twice.
        assert_eq!(idx.list(t).unwrap(), &[3, 0b1, 0b10, 2, 0b11]);
        let mut seen = Vec::new();
        idx.for_each_posting("zeta", |c, tf| seen.push((c.0, tf))).unwrap();
        assert_eq!(seen, vec![(0, 1), (1, 2), (2, 1)]);
    }

    #[test]
    fn a_damaged_list_is_reported() {
        let idx = index();
        let mut parts = idx.parts.clone();
        // A list that claims more postings than it holds.
        let mut blob = parts.blob.to_vec();
        blob[0] = 0x7f;
        parts.blob = Bytes::from_vec(blob);
        let damaged = Bm25Index::from_parts(parts).unwrap();
        let mut terms = damaged.terms.stream();
        let first = fst::Streamer::next(&mut terms).map(|(k, _)| k.to_vec()).unwrap();
        let term = String::from_utf8(first).unwrap();
        assert!(damaged.for_each_posting(&term, |_, _| {}).is_err());
        // Offsets that do not end at the blob's end.
        let mut parts = idx.parts.clone();
        parts.blob = Bytes::from_vec(parts.blob[1..].to_vec());
        assert!(Bm25Index::from_parts(parts).is_err());
    }

    fn index() -> Bm25Index {
        Bm25Index::build(
            &[
                "fn parse_config(path: &Path) -> Config { read(path) }",
                "fn main() { let cfg = parseConfig(); run(cfg) }",
                "struct Server { port: u16 } impl Server { fn start() {} }",
                "// unrelated words about cooking recipes",
            ],
            Analyzer { stem: false },
        )
        .unwrap()
    }

    #[test]
    fn ranks_matching_documents_first() {
        let idx = index();
        let hits = idx.search("parse config", Bm25Params::default(), 10).unwrap();
        let ids: Vec<u32> = hits.iter().map(|h| h.chunk.0).collect();
        assert_eq!(ids.len(), 2);
        assert!(ids.contains(&0) && ids.contains(&1));
        let hits = idx.search("server start", Bm25Params::default(), 10).unwrap();
        assert_eq!(hits[0].chunk, ChunkId(2));
        assert!(idx.search("zebra", Bm25Params::default(), 10).unwrap().is_empty());
    }

    #[test]
    fn whole_identifier_unifies_naming_conventions() {
        let idx = index();
        assert_eq!(idx.document_frequency("parseconfig"), 2);
        assert_eq!(idx.document_frequency("config"), 2);
        let hits = idx.search("ParseConfig", Bm25Params::default(), 10).unwrap();
        let mut ids: Vec<u32> = hits.iter().map(|h| h.chunk.0).collect();
        ids.sort();
        assert_eq!(ids, vec![0, 1]);
    }

    #[test]
    fn round_trips_through_parts() {
        let idx = index();
        let again = Bm25Index::from_parts(idx.parts().clone()).unwrap();
        let a = idx.search("server", Bm25Params::default(), 5).unwrap();
        let b = again.search("server", Bm25Params::default(), 5).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn offsets_are_narrow_for_a_small_blob_and_wide_past_64_kib() {
        for (docs, narrow) in [(100, true), (20_000, false)] {
            let texts: Vec<String> = (0..docs).map(|i| format!("word{i} shared")).collect();
            let idx = Bm25Index::build(&texts, Analyzer { stem: false }).unwrap();
            assert_eq!(matches!(idx.parts.offs, Offsets::Narrow(_)), narrow, "{docs}");
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("bm25.mgv");
            let mut w = SectionWriter::new(crate::TEXT_FORMAT);
            idx.parts.write(&mut w, "b").unwrap();
            w.write(&path).unwrap();
            let file = SectionFile::open(&path, crate::TEXT_FORMAT).unwrap();
            let again = Bm25Index::from_parts(Bm25Parts::open(&file, "b").unwrap()).unwrap();
            let last = format!("word{}", docs - 1);
            let hits = again.search(&last, Bm25Params::default(), 3).unwrap();
            assert_eq!(hits[0].chunk.0, docs - 1);
            assert_eq!(again.document_frequency("shared"), docs);
        }
    }

    #[test]
    fn top_k_orders_and_truncates() {
        let s = [0.0, 3.0, 1.0, 3.0, 2.0];
        let ids: Vec<u32> = top_k(&s, 3).iter().map(|h| h.chunk.0).collect();
        assert_eq!(ids, vec![1, 3, 4]);
        assert!(top_k(&s, 0).is_empty());
    }
}
