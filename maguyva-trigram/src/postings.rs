//! Trigram postings: for every trigram, the roaring bitmap of the files
//! holding it. Lists are stored back to back, each in the smaller of two
//! encodings (the roaring format, or file-id gaps as LEB128 varints, which
//! most short lists fit in a byte a file), and decoded into bitmaps only
//! when a query needs them. Format: `doc/format/text.md`.

use crate::plan::TrigramQuery;
use crate::{trigram, varint};
use maguyva_core::{Array, Bytes, SectionFile, SectionWriter};
use rayon::prelude::*;
use roaring::RoaringBitmap;

/// Trigram → files postings, read in place from the index file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrigramPostings {
    /// Sorted distinct trigrams.
    keys: Array<u32>,
    /// `offsets[i]..offsets[i + 1]` is the bitmap of `keys[i]` in `blob`.
    offsets: Array<u32>,
    blob: Bytes,
    files: u32,
}

impl TrigramPostings {
    /// Indexes the trigrams of every text; text `i` is file `i`.
    pub fn build<S: AsRef<str> + Sync>(texts: &[S]) -> TrigramPostings {
        // (trigram, file) pairs sorted by trigram then file: each trigram's
        // files form one sorted run, which builds its bitmap directly.
        let mut pairs: Vec<u64> = texts
            .par_iter()
            .enumerate()
            .flat_map_iter(|(file, t)| {
                trigram::distinct(t.as_ref().as_bytes())
                    .into_iter()
                    .map(move |g| (u64::from(g) << 32) | file as u64)
            })
            .collect();
        pairs.par_sort_unstable();
        let mut keys = Vec::new();
        let mut offsets = Vec::new();
        let mut blob = Vec::new();
        for run in pairs.chunk_by(|a, b| a >> 32 == b >> 32) {
            keys.push((run[0] >> 32) as u32);
            offsets.push(blob.len() as u32);
            encode(run.iter().map(|p| *p as u32), &mut blob);
        }
        offsets.push(blob.len() as u32);
        TrigramPostings {
            keys: keys.into(),
            offsets: offsets.into(),
            blob: Bytes::from_vec(blob),
            files: texts.len() as u32,
        }
    }

    /// Adds the postings to a file being written, as sections `t.keys`,
    /// `t.offs` and `t.blob`.
    pub fn write(&self, w: &mut SectionWriter) -> maguyva_core::Result<()> {
        w.array("t.keys", &self.keys)?
            .array("t.offs", &self.offsets)?
            .bytes("t.blob", &self.blob)?;
        Ok(())
    }

    /// The postings of `files` files in an opened file, in place.
    pub fn open(file: &SectionFile, files: u32) -> maguyva_core::Result<TrigramPostings> {
        Ok(TrigramPostings {
            keys: file.array("t.keys")?,
            offsets: file.array("t.offs")?,
            blob: file.bytes("t.blob")?,
            files,
        })
    }

    /// Number of files indexed.
    pub fn file_count(&self) -> u32 {
        self.files
    }

    /// Number of distinct trigrams.
    pub fn trigram_count(&self) -> usize {
        self.keys.len()
    }

    /// Whether the stored arrays agree with each other.
    pub fn is_consistent(&self) -> bool {
        self.offsets.len() == self.keys.len() + 1
            && self.keys.windows(2).all(|w| w[0] < w[1])
            && self.offsets.windows(2).all(|w| w[0] <= w[1])
            && self.offsets.last().is_some_and(|&o| o as usize == self.blob.len())
    }

    /// The files holding trigram `gram`; `None` if its bitmap is damaged.
    pub fn files_with(&self, gram: u32) -> Option<RoaringBitmap> {
        let Ok(i) = self.keys.binary_search(&gram) else {
            return Some(RoaringBitmap::new());
        };
        let (a, b) = (*self.offsets.get(i)? as usize, *self.offsets.get(i + 1)? as usize);
        decode(self.blob.get(a..b)?, self.files)
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

/// Appends one posting list of sorted distinct `files`: a zero byte and
/// the roaring bitmap, or, when shorter, the first file plus one and then
/// the gaps between files as varints (never starting with a zero byte).
fn encode(files: impl Iterator<Item = u32> + Clone, out: &mut Vec<u8>) {
    let mut gaps = Vec::new();
    let mut prev = None;
    for f in files.clone() {
        varint::push(&mut gaps, u64::from(f - prev.unwrap_or(0)) + u64::from(prev.is_none()));
        prev = Some(f);
    }
    let bitmap = RoaringBitmap::from_sorted_iter(files).unwrap_or_default();
    if gaps.len() <= bitmap.serialized_size() {
        out.extend_from_slice(&gaps);
    } else {
        out.push(0);
        // Writing into a Vec cannot fail.
        let _ = bitmap.serialize_into(out);
    }
}

/// The files of one posting list written by [`encode`]; `None` if it is
/// damaged (does not decode, or names a file out of range or out of order).
fn decode(bytes: &[u8], files: u32) -> Option<RoaringBitmap> {
    let bitmap = match bytes.split_first() {
        None => RoaringBitmap::new(),
        Some((0, roaring)) => RoaringBitmap::deserialize_from(roaring).ok()?,
        Some(_) => {
            let mut ids = Vec::new();
            let (mut pos, mut next) = (0, 0u64);
            while pos < bytes.len() {
                let gap = varint::read(bytes, &mut pos)?;
                if gap == 0 {
                    return None;
                }
                next = next.checked_add(gap)?;
                ids.push(u32::try_from(next - 1).ok()?);
            }
            RoaringBitmap::from_sorted_iter(ids).ok()?
        }
    };
    (bitmap.max().is_none_or(|m| m < files)).then_some(bitmap)
}

#[cfg(test)]
mod tests {
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
            prop_assert_eq!(back.iter().collect::<Vec<_>>(), files);
            // A file out of range is damage.
            prop_assert!(decode(&blob, back.max().unwrap()).is_none());
        }
    }

    #[test]
    fn short_lists_take_a_byte_a_file_and_dense_ones_stay_bitmaps() {
        let mut blob = Vec::new();
        encode([3u32, 5, 9].into_iter(), &mut blob);
        assert_eq!(blob, vec![4, 2, 4]);
        let mut dense = Vec::new();
        encode(0u32..10_000, &mut dense);
        assert_eq!(dense[0], 0);
        assert!(dense.len() < 10_000, "a bitmap, not a byte a file");
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
