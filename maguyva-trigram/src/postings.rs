//! Trigram postings: for every trigram, the roaring bitmap of the files
//! holding it. Lists are stored back to back, each in the smaller of two
//! encodings (file-id gaps as LEB128 varints, which most short lists fit in
//! a byte a file, or a plain bitmap of a bit a file), and decoded into
//! roaring bitmaps only when a query needs them. Format:
//! `doc/format/text.md`.

use crate::plan::TrigramQuery;
use crate::trigram;
use maguyva_core::varint;
use maguyva_core::{Array, Bytes, SectionFile, SectionWriter};
use rayon::prelude::*;
use roaring::RoaringBitmap;

/// Trigrams per block of the trigram table: a lookup scans at most this
/// many entries after a binary search over the blocks' first trigrams.
const BLOCK: usize = 64;

/// Trigram → files postings, read in place from the index file.
///
/// Trigrams are kept sorted, in blocks of [`BLOCK`]. Each entry of a block
/// is written in `blob` as the gap from the previous trigram (varint; 0 for
/// a block's first), the length of its list (varint) and the list, so that
/// a trigram costs about three bytes besides its list, not a key and an
/// offset of four bytes each.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrigramPostings {
    /// The first trigram of every block.
    firsts: Array<u32>,
    /// `starts[b]..starts[b + 1]` is block `b` in `blob`.
    starts: Array<u32>,
    blob: Bytes,
    files: u32,
}

impl TrigramPostings {
    /// Indexes the trigrams of every text; text `i` is file `i`.
    pub fn build<S: AsRef<str> + Sync>(texts: &[S]) -> TrigramPostings {
        // (trigram, file) pairs sorted by trigram then file: each trigram's
        // files form one sorted run, which builds its list directly.
        let mut pairs: Vec<u64> = texts
            .par_iter()
            .enumerate()
            .flat_map_iter(|(file, t)| {
                trigram::distinct(t.as_ref().as_bytes())
                    .into_iter()
                    .map(move |g| (u64::from(g) << 32) | file as u64)
            })
            .collect();
        sort_by_trigram(&mut pairs);
        let mut table = TableWriter::default();
        for run in pairs.chunk_by(|a, b| a >> 32 == b >> 32) {
            table.push((run[0] >> 32) as u32, run.iter().map(|p| *p as u32));
        }
        table.finish(texts.len() as u32)
    }

    /// The postings of a corpus that differs from this one's in some files:
    /// `kept[f]` is the new id of old file `f` when its text is unchanged
    /// (ids of kept files must rise with their old ids), and `fresh` are the
    /// postings of the other files, whose `fresh_ids[i]` is the new id of
    /// their file `i`. Equal to building the new corpus from scratch, at the
    /// cost of reading the old lists instead of every text. `None` if an old
    /// list is damaged.
    pub fn merged(
        &self,
        kept: &[Option<u32>],
        fresh: &TrigramPostings,
        fresh_ids: &[u32],
        files: u32,
    ) -> Option<TrigramPostings> {
        // Most lists of a small change name no changed file: when every
        // old file of a list keeps its id, its bytes are copied.
        let unmoved = |f: u32| kept.get(f as usize).copied().flatten() == Some(f);
        let moved = moved_ids(kept, self.files);
        let mut table = TableWriter::default();
        let (mut old, mut new) = (self.entries().peekable(), fresh.entries().peekable());
        let (mut olds, mut news, mut ids) = (Vec::new(), Vec::new(), Vec::new());
        loop {
            let key = match (old.peek(), new.peek()) {
                (None, None) => break,
                (Some(a), Some(b)) => {
                    a.as_ref().map_or(0, |a| a.0).min(b.as_ref().map_or(0, |b| b.0))
                }
                (Some(a), None) => a.as_ref().map_or(0, |a| a.0),
                (None, Some(b)) => b.as_ref().map_or(0, |b| b.0),
            };
            let mut raw = None;
            olds.clear();
            news.clear();
            let in_new = new.peek().is_some_and(|e| e.as_ref().is_none_or(|e| e.0 == key));
            if old.peek().is_some_and(|e| e.as_ref().is_none_or(|e| e.0 == key)) {
                let (_, stored) = old.next()??;
                let as_stored = match moved.as_deref().filter(|_| !in_new) {
                    Some(moved) => !names_any(stored, moved)?,
                    None => false,
                };
                if as_stored {
                    if !stored.is_empty() {
                        table.push_encoded(key, stored);
                    }
                    continue;
                }
                decode_into(stored, self.files, &mut olds)?;
                raw = olds.iter().all(|&f| unmoved(f)).then_some(stored);
                olds.retain_mut(|f| match kept.get(*f as usize).copied().flatten() {
                    Some(n) => {
                        *f = n;
                        true
                    }
                    None => false,
                });
            }
            if in_new {
                let (_, stored) = new.next()??;
                decode_into(stored, fresh.files, &mut news)?;
                news.retain_mut(|f| match fresh_ids.get(*f as usize) {
                    Some(&n) => {
                        *f = n;
                        true
                    }
                    None => false,
                });
                raw = raw.filter(|_| news.is_empty());
            }
            match raw {
                Some(stored) if !stored.is_empty() => table.push_encoded(key, stored),
                _ => {
                    // Both lists rise (kept ids keep their order): merged,
                    // not sorted.
                    ids.clear();
                    ids.extend(merge_rising(&olds, &news, |&f| f));
                    if !ids.is_empty() {
                        table.push(key, ids.iter().copied());
                    }
                }
            }
        }
        Some(table.finish(files))
    }

    /// Every trigram with its stored list, in trigram order; an item of
    /// `None` where a block is damaged.
    fn entries(&self) -> impl Iterator<Item = Option<(u32, &[u8])>> + '_ {
        (0..self.firsts.len()).flat_map(|b| self.block(b))
    }

    /// The entries of block `b`: each trigram with its stored list; an item
    /// of `None` where the block is damaged, and nothing after it.
    fn block(&self, b: usize) -> impl Iterator<Item = Option<(u32, &[u8])>> + '_ {
        let bytes = match (self.starts.get(b), self.starts.get(b + 1)) {
            (Some(&a), Some(&z)) => self.blob.get(a as usize..z as usize),
            _ => None,
        };
        let (mut pos, mut key) = (0usize, self.firsts.get(b).copied().unwrap_or(0));
        let mut done = false;
        std::iter::from_fn(move || {
            if done || bytes.is_some_and(|bytes| pos >= bytes.len()) {
                return None;
            }
            let entry = bytes.and_then(|bytes| {
                // A block's first entry is its first trigram, a gap of 0;
                // later entries climb.
                let at_start = pos == 0;
                let gap = u32::try_from(varint::read(bytes, &mut pos)?).ok()?;
                if (gap == 0) != at_start {
                    return None;
                }
                key = key.checked_add(gap)?;
                let len = usize::try_from(varint::read(bytes, &mut pos)?).ok()?;
                let list = bytes.get(pos..pos.checked_add(len)?)?;
                pos += len;
                Some((key, list))
            });
            done = entry.is_none();
            Some(entry)
        })
    }

    /// Adds the postings to a file being written, as sections `t.first`,
    /// `t.start` and `t.blob`.
    pub fn write(&self, w: &mut SectionWriter) -> maguyva_core::Result<()> {
        w.array("t.first", &self.firsts)?
            .array("t.start", &self.starts)?
            .bytes("t.blob", &self.blob)?;
        Ok(())
    }

    /// The postings of `files` files in an opened file, in place.
    pub fn open(file: &SectionFile, files: u32) -> maguyva_core::Result<TrigramPostings> {
        Ok(TrigramPostings {
            firsts: file.array("t.first")?,
            starts: file.array("t.start")?,
            blob: file.bytes("t.blob")?,
            files,
        })
    }

    /// Number of files indexed.
    pub fn file_count(&self) -> u32 {
        self.files
    }

    /// Whether the stored arrays agree with each other.
    pub fn is_consistent(&self) -> bool {
        self.starts.len() == self.firsts.len() + 1
            && self.firsts.windows(2).all(|w| w[0] < w[1])
            && self.starts.windows(2).all(|w| w[0] <= w[1])
            && self.starts.last().is_some_and(|&o| o as usize == self.blob.len())
    }

    /// The files holding trigram `gram`; `None` if its entry is damaged.
    pub fn files_with(&self, gram: u32) -> Option<RoaringBitmap> {
        match self.list_of(gram)? {
            Some(list) => decode(list, self.files),
            None => Some(RoaringBitmap::new()),
        }
    }

    /// The stored list of `gram`: `Some(None)` when no file holds it,
    /// `None` when its block is damaged.
    fn list_of(&self, gram: u32) -> Option<Option<&[u8]>> {
        let b = self.firsts.partition_point(|&f| f <= gram);
        if b == 0 {
            return Some(None);
        }
        for entry in self.block(b - 1) {
            let (key, list) = entry?;
            match key.cmp(&gram) {
                std::cmp::Ordering::Equal => return Some(Some(list)),
                std::cmp::Ordering::Greater => return Some(None),
                std::cmp::Ordering::Less => {}
            }
        }
        Some(None)
    }

    /// Every file.
    pub fn all_files(&self) -> RoaringBitmap {
        (0..self.files).collect()
    }

    /// The candidate files of a trigram query; `None` if a bitmap is damaged.
    pub fn candidates(&self, query: &TrigramQuery) -> Option<RoaringBitmap> {
        match query {
            TrigramQuery::All => Some(self.all_files()),
            TrigramQuery::Trigram(g) => self.files_with(*g),
            TrigramQuery::And(parts) => {
                // Rarest trigrams first would be ideal; intersecting stops
                // early once the set is empty.
                let mut acc: Option<RoaringBitmap> = None;
                for p in parts {
                    let next = self.candidates(p)?;
                    acc = Some(match acc {
                        None => next,
                        Some(a) => a & next,
                    });
                    if acc.as_ref().is_some_and(RoaringBitmap::is_empty) {
                        break;
                    }
                }
                Some(acc.unwrap_or_else(|| self.all_files()))
            }
            TrigramQuery::Or(parts) => {
                let mut acc = RoaringBitmap::new();
                for p in parts {
                    acc |= self.candidates(p)?;
                }
                Some(acc)
            }
        }
    }
}

/// Writes the trigram table, trigram after trigram in rising order.
#[derive(Default)]
struct TableWriter {
    firsts: Vec<u32>,
    starts: Vec<u32>,
    blob: Vec<u8>,
    list: Vec<u8>,
    count: usize,
    prev: u32,
}

impl TableWriter {
    /// Adds trigram `key` (above every key before it) held by `files`,
    /// sorted and distinct.
    fn push(&mut self, key: u32, files: impl Iterator<Item = u32> + Clone) {
        let mut list = std::mem::take(&mut self.list);
        list.clear();
        encode(files, &mut list);
        self.push_encoded(key, &list);
        self.list = list;
    }

    /// Adds trigram `key` (above every key before it) with a list as
    /// [`encode`] writes it.
    fn push_encoded(&mut self, key: u32, list: &[u8]) {
        if self.count.is_multiple_of(BLOCK) {
            self.firsts.push(key);
            self.starts.push(self.blob.len() as u32);
            self.prev = key;
        }
        varint::push(&mut self.blob, u64::from(key - self.prev));
        varint::push(&mut self.blob, list.len() as u64);
        self.blob.extend_from_slice(list);
        self.prev = key;
        self.count += 1;
    }

    fn finish(mut self, files: u32) -> TrigramPostings {
        self.starts.push(self.blob.len() as u32);
        TrigramPostings {
            firsts: self.firsts.into(),
            starts: self.starts.into(),
            blob: Bytes::from_vec(self.blob),
            files,
        }
    }
}

/// The items of two lists that rise by `key` and share no key, as one
/// rising list (a patch's kept and fresh postings: no sort needed).
pub(crate) fn merge_rising<'a, T: Copy, K: Ord>(
    a: &'a [T],
    b: &'a [T],
    key: impl Fn(&T) -> K + 'a,
) -> impl Iterator<Item = T> + 'a {
    let (mut i, mut j) = (0, 0);
    std::iter::from_fn(move || {
        let from_a = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) => key(x) < key(y),
            (x, _) => x.is_some(),
        };
        let next = match from_a {
            true => a.get(i).inspect(|_| i += 1),
            false => b.get(j).inspect(|_| j += 1),
        };
        next.copied()
    })
}

/// Sorts `(trigram << 32) | file` pairs that come in file order by trigram,
/// keeping file order within a trigram: a stable radix sort on the 24 bits
/// of the trigram, three passes of a byte, several times faster than a
/// comparison sort of millions of pairs.
fn sort_by_trigram(pairs: &mut Vec<u64>) {
    let mut scratch = vec![0u64; pairs.len()];
    for shift in [32, 40, 48] {
        let mut counts = [0usize; 257];
        for &p in pairs.iter() {
            counts[((p >> shift) & 0xff) as usize + 1] += 1;
        }
        for i in 1..257 {
            counts[i] += counts[i - 1];
        }
        for &p in pairs.iter() {
            let b = ((p >> shift) & 0xff) as usize;
            scratch[counts[b]] = p;
            counts[b] += 1;
        }
        std::mem::swap(pairs, &mut scratch);
    }
}

/// The first byte of a list kept as a plain bitmap; a varint list never
/// starts with it.
const BITMAP: u8 = 0;

/// Appends one posting list of sorted distinct `files` in the shorter of
/// two encodings: the first file plus one and then the gaps between files
/// as varints (never starting with a zero byte), or a zero byte and a plain
/// bitmap, where a file costs a bit instead of a byte (the dense lists of
/// small repositories). Roaring's own format, written without run
/// containers, is never shorter than both: its arrays take two bytes a file
/// (gaps up to 16 Ki take at most two), and its bitmaps 8 KiB per 64 Ki
/// files, like the plain one.
fn encode(files: impl Iterator<Item = u32> + Clone, out: &mut Vec<u8>) {
    let mut gaps = Vec::new();
    let mut prev = None;
    for f in files.clone() {
        varint::push(&mut gaps, u64::from(f - prev.unwrap_or(0)) + u64::from(prev.is_none()));
        prev = Some(f);
    }
    let Some(last) = prev else { return };
    let bits = last as usize / 8 + 1;
    if gaps.len() <= 1 + bits {
        out.extend_from_slice(&gaps);
        return;
    }
    let start = out.len() + 1;
    out.push(BITMAP);
    out.resize(start + bits, 0);
    for f in files {
        out[start + f as usize / 8] |= 1 << (f % 8);
    }
}

/// At most this many old files (or documents) that change, go or move,
/// for a patch to scan each old list for them instead of decoding it.
const MOVED_SCANNED: usize = 64;

/// The old ids, of `count`, that do not keep their id in `kept`, when they
/// are few enough ([`MOVED_SCANNED`]) for a patch to scan each old list for
/// them, not decode it, to tell whether it can be copied as stored.
pub(crate) fn moved_ids(kept: &[Option<u32>], count: u32) -> Option<Vec<u32>> {
    let unmoved = |id: u32| kept.get(id as usize).copied().flatten() == Some(id);
    let moved: Vec<u32> = (0..count).filter(|&id| !unmoved(id)).collect();
    (moved.len() <= MOVED_SCANNED).then_some(moved)
}

/// Whether rising `ids` (an item of `None`: damage) hold any of `wanted`
/// (sorted), read only up to the last of them; `None` if damaged.
pub(crate) fn names_any_of(ids: impl Iterator<Item = Option<u32>>, wanted: &[u32]) -> Option<bool> {
    let Some(&last) = wanted.last() else { return Some(false) };
    let mut at = 0;
    for id in ids {
        let id = id?;
        if id > last {
            return Some(false);
        }
        while wanted.get(at).is_some_and(|&w| w < id) {
            at += 1;
        }
        if wanted.get(at) == Some(&id) {
            return Some(true);
        }
    }
    Some(false)
}

/// Whether a posting list written by [`encode`] names any of `files`
/// (sorted); `None` if it is damaged.
fn names_any(bytes: &[u8], files: &[u32]) -> Option<bool> {
    match bytes.split_first() {
        None => Some(false),
        Some((&BITMAP, bits)) => Some(
            files
                .iter()
                .any(|&f| bits.get(f as usize / 8).is_some_and(|b| b & (1 << (f % 8)) != 0)),
        ),
        Some(_) => {
            let (mut pos, mut next) = (0, 0u64);
            let ids = std::iter::from_fn(|| {
                (pos < bytes.len()).then(|| {
                    next = next.checked_add(varint::read(bytes, &mut pos)?)?;
                    u32::try_from(next.checked_sub(1)?).ok()
                })
            });
            names_any_of(ids, files)
        }
    }
}

/// Appends the files of one posting list written by [`encode`] to `out`,
/// in order; `None` if it is damaged.
fn decode_into(bytes: &[u8], files: u32, out: &mut Vec<u32>) -> Option<()> {
    match bytes.split_first() {
        None => Some(()),
        Some((&BITMAP, bits)) => decode_bits(bits, files, out),
        Some(_) => decode_gaps(bytes, files, out),
    }
}

/// Appends the files of a plain bitmap (bit `i` of byte `k` is file
/// `8k + i`); `None` when it names a file out of range.
fn decode_bits(bits: &[u8], files: u32, out: &mut Vec<u32>) -> Option<()> {
    for (k, &byte) in bits.iter().enumerate() {
        let mut rest = byte;
        while rest != 0 {
            let id = u32::try_from(k * 8).ok()?.checked_add(rest.trailing_zeros())?;
            if id >= files {
                return None;
            }
            out.push(id);
            rest &= rest - 1;
        }
    }
    Some(())
}

/// Appends the files of a varint list (first file plus one, then gaps);
/// `None` on a truncated varint, a zero gap or a file out of range.
fn decode_gaps(bytes: &[u8], files: u32, out: &mut Vec<u32>) -> Option<()> {
    let (mut pos, mut next) = (0, 0u64);
    while pos < bytes.len() {
        let gap = varint::read(bytes, &mut pos)?;
        if gap == 0 {
            return None;
        }
        next = next.checked_add(gap)?;
        let id = u32::try_from(next - 1).ok()?;
        if id >= files {
            return None;
        }
        out.push(id);
    }
    Some(())
}

/// The files of one posting list written by [`encode`], as a roaring
/// bitmap for the set operations of a query; `None` if it is damaged
/// (does not decode, or names a file out of range).
fn decode(bytes: &[u8], files: u32) -> Option<RoaringBitmap> {
    let mut ids = Vec::new();
    decode_into(bytes, files, &mut ids)?;
    RoaringBitmap::from_sorted_iter(ids).ok()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Every list comes back as it went in, whichever encoding it took.
        #[test]
        fn lists_round_trip(mut files in proptest::collection::vec(0u32..70_000, 1..300)) {
            files.sort_unstable();
            files.dedup();
            let mut blob = Vec::new();
            encode(files.iter().copied(), &mut blob);
            let back = decode(&blob, 70_000).unwrap();
            prop_assert_eq!(back.iter().collect::<Vec<_>>(), files.clone());
            let mut direct = Vec::new();
            decode_into(&blob, 70_000, &mut direct).unwrap();
            prop_assert_eq!(direct, files);
            // A file out of range is damage.
            prop_assert!(decode(&blob, back.max().unwrap()).is_none());
        }
    }

    proptest! {
        /// A list names some of a set of files exactly when its decoded
        /// files do, whichever encoding it took.
        #[test]
        fn a_scan_for_files_agrees_with_the_decoded_list(
            mut files in proptest::collection::vec(0u32..2_000, 0..300),
            mut wanted in proptest::collection::vec(0u32..2_000, 0..6),
        ) {
            files.sort_unstable();
            files.dedup();
            wanted.sort_unstable();
            wanted.dedup();
            let mut blob = Vec::new();
            encode(files.iter().copied(), &mut blob);
            let named = files.iter().any(|f| wanted.binary_search(f).is_ok());
            prop_assert_eq!(names_any(&blob, &wanted), Some(named));
        }
    }

    proptest! {
        /// Every trigram of every text finds exactly the texts holding it,
        /// across block boundaries; absent trigrams find none.
        #[test]
        fn lookups_equal_a_scan(texts in proptest::collection::vec("[a-f]{0,60}", 1..12)) {
            let p = TrigramPostings::build(&texts);
            prop_assert!(p.is_consistent());
            for a in b'a'..=b'g' {
                for b in b'a'..=b'g' {
                    for c in [b'a', b'c', b'f', b'g'] {
                        let gram = [a, b, c];
                        let expect: Vec<u32> = texts
                            .iter()
                            .enumerate()
                            .filter(|(_, t)| t.as_bytes().windows(3).any(|w| w == gram))
                            .map(|(i, _)| i as u32)
                            .collect();
                        let code = trigram::distinct(&gram)[0];
                        let got: Vec<u32> = p.files_with(code).unwrap().iter().collect();
                        prop_assert_eq!(got, expect);
                    }
                }
            }
        }
    }

    /// A corpus edited at random: which old files stay, the new corpus, and
    /// the new ids of the kept and of the other files.
    pub(crate) fn edit(
        old: &[String],
        fates: &[u8],
        added: &[String],
    ) -> (Vec<String>, Vec<Option<u32>>, Vec<usize>) {
        // fate 0 keeps a file, 1 changes it, 2 removes it; added files go
        // after the old ones, so every id keeps its order.
        let mut new = Vec::new();
        let mut kept = Vec::new();
        let mut fresh = Vec::new();
        for (t, &fate) in old.iter().zip(fates.iter().chain(std::iter::repeat(&0))) {
            match fate % 3 {
                0 => {
                    kept.push(Some(new.len() as u32));
                    new.push(t.clone());
                }
                1 => {
                    kept.push(None);
                    fresh.push(new.len());
                    new.push(format!("{t}zq"));
                }
                _ => kept.push(None),
            }
        }
        for t in added {
            fresh.push(new.len());
            new.push(t.clone());
        }
        (new, kept, fresh)
    }

    proptest! {
        /// Merging the old lists with the changed files' equals building the
        /// new corpus from scratch.
        #[test]
        fn merged_postings_equal_a_rebuild(
            old in proptest::collection::vec("[a-e ]{0,40}", 0..20),
            fates in proptest::collection::vec(0u8..3, 0..20),
            added in proptest::collection::vec("[a-ez]{0,30}", 0..4),
        ) {
            let (new, kept, fresh) = edit(&old, &fates, &added);
            let before = TrigramPostings::build(&old);
            let fresh_texts: Vec<&str> = fresh.iter().map(|&i| new[i].as_str()).collect();
            let fresh_ids: Vec<u32> = fresh.iter().map(|&i| i as u32).collect();
            let merged = before
                .merged(&kept, &TrigramPostings::build(&fresh_texts), &fresh_ids, new.len() as u32)
                .unwrap();
            prop_assert_eq!(merged, TrigramPostings::build(&new));
        }
    }

    #[test]
    fn a_damaged_block_is_reported_not_misread() {
        let texts: Vec<String> = (0..200).map(|i| format!("w{i:03}x")).collect();
        let p = TrigramPostings::build(&texts);
        let gram = trigram::distinct(b"w19")[0];
        assert_eq!(p.files_with(gram).unwrap().len(), 10);
        let mut blob = p.blob.to_vec();
        // A list length that runs past its block.
        blob.iter_mut().take(2).for_each(|b| *b = 0xff);
        let damaged = TrigramPostings { blob: Bytes::from_vec(blob), ..p.clone() };
        assert!(damaged.files_with(trigram::distinct(b"000")[0]).is_none());
        let kept: Vec<Option<u32>> = (0..200).map(Some).collect();
        assert!(damaged.merged(&kept, &TrigramPostings::default(), &[], 200).is_none());
        assert_eq!(p.merged(&kept, &TrigramPostings::default(), &[], 200).unwrap(), p);
    }

    proptest! {
        #[test]
        fn the_radix_sort_orders_by_trigram_then_file(
            grams in proptest::collection::vec(proptest::collection::vec(0u32..(1 << 24), 0..40), 0..30),
        ) {
            // Pairs in file order, each file's trigrams sorted, as built.
            let mut pairs: Vec<u64> = grams
                .iter()
                .enumerate()
                .flat_map(|(f, g)| {
                    let mut g = g.clone();
                    g.sort_unstable();
                    g.dedup();
                    g.into_iter().map(move |g| (u64::from(g) << 32) | f as u64)
                })
                .collect();
            let mut expect = pairs.clone();
            expect.sort_unstable();
            sort_by_trigram(&mut pairs);
            prop_assert_eq!(pairs, expect);
        }
    }

    #[test]
    fn short_lists_take_a_byte_a_file_and_dense_ones_stay_bitmaps() {
        let mut blob = Vec::new();
        encode([3u32, 5, 9].into_iter(), &mut blob);
        assert_eq!(blob, vec![4, 2, 4]);
        let mut dense = Vec::new();
        encode(0u32..10_000, &mut dense);
        assert_eq!(dense[0], BITMAP);
        assert_eq!(dense.len(), 1 + 1250, "a bit a file");
        // Every other file of 64: a bitmap is shorter than a byte a file.
        let mut half = Vec::new();
        encode((0u32..64).step_by(2), &mut half);
        assert_eq!(half, [vec![BITMAP], vec![0x55; 8]].concat());
        assert_eq!(decode(&half, 64).unwrap().len(), 32);
        assert!(decode(&half, 62).is_none(), "a file out of range");
        assert!(decode(&[4, 0], 10).is_none(), "a zero gap");
        assert!(decode(&[0x80], 10).is_none(), "a truncated varint");
    }

    #[test]
    fn candidates_follow_the_query() {
        let p = TrigramPostings::build(&["hello world", "Help me", "nothing"]);
        assert!(p.is_consistent());
        let q = TrigramQuery::of_string(b"hel");
        assert_eq!(p.candidates(&q).unwrap().iter().collect::<Vec<_>>(), vec![0, 1]);
        let q = TrigramQuery::of_string(b"hello");
        assert_eq!(p.candidates(&q).unwrap().iter().collect::<Vec<_>>(), vec![0]);
        let q = TrigramQuery::Or(vec![
            TrigramQuery::of_string(b"wor"),
            TrigramQuery::of_string(b"thi"),
        ]);
        assert_eq!(p.candidates(&q).unwrap().iter().collect::<Vec<_>>(), vec![0, 2]);
        assert_eq!(p.candidates(&TrigramQuery::All).unwrap().len(), 3);
        assert!(p.candidates(&TrigramQuery::of_string(b"zzz")).unwrap().is_empty());
    }
}
