//! Strings kept compressed: cut into blocks of [`STRINGS_PER_BLOCK`]
//! strings, each block one zstd frame, decompressed the first time one of
//! its strings is read and kept for later reads. For text read a few
//! strings at a time (signatures and doc summaries), where room matters
//! more than the microseconds a block takes to open.
//! Format: `doc/format/sections.md` ("Packed strings").

use crate::error::{Error, Result};
use crate::sections::{Array, Bytes, SectionFile, SectionWriter};
use crate::varint;
use rayon::prelude::*;
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// How many strings a block holds (the last may hold fewer): about 40 KiB
/// of signatures, where zstd finds most of what repeats.
pub const STRINGS_PER_BLOCK: usize = 1024;

/// The zstd level of the blocks: a few milliseconds per megabyte to write,
/// the same speed to read as any other level.
const LEVEL: i32 = 3;

/// A list of strings, compressed in blocks and read lazily; clones share
/// the blocks already opened.
#[derive(Clone)]
pub struct PackedStrings {
    count: usize,
    /// `frames[j]..frames[j + 1]` is block `j`'s frame in `blob`.
    frames: Array<u32>,
    /// Block `j`'s length uncompressed.
    raw: Array<u32>,
    blob: Bytes,
    /// Each block once opened; `None` when it would not open.
    opened: Arc<[OnceLock<Option<Block>>]>,
}

/// An opened block: its strings back to back, and where each ends.
#[derive(Debug)]
struct Block {
    text: Box<str>,
    ends: Box<[u32]>,
}

impl std::fmt::Debug for PackedStrings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PackedStrings({} strings, {} bytes)", self.count, self.blob.len())
    }
}

fn blocks_for(strings: usize) -> usize {
    strings.div_ceil(STRINGS_PER_BLOCK)
}

fn encode_error(reason: impl Into<String>) -> Error {
    Error::Encode { what: "packed strings", reason: reason.into() }
}

impl PackedStrings {
    /// Packs `strings`, compressing the blocks in parallel.
    pub fn build<S: AsRef<str> + Sync>(strings: &[S]) -> Result<PackedStrings> {
        PackedStrings::build_reusing(strings, None)
    }

    /// [`PackedStrings::build`], taking the frame of every block whose
    /// strings are those of the same block of `previous` as it is, instead
    /// of compressing them again: a list patched in place keeps most of its
    /// blocks. The result is the same.
    pub fn build_reusing<S: AsRef<str> + Sync>(
        strings: &[S],
        previous: Option<&PackedStrings>,
    ) -> Result<PackedStrings> {
        let frames: Vec<(Vec<u8>, usize)> = strings
            .par_chunks(STRINGS_PER_BLOCK)
            .enumerate()
            .map(|(j, block)| {
                let mut raw = Vec::new();
                for s in block {
                    varint::push(&mut raw, s.as_ref().len() as u64);
                }
                for s in block {
                    raw.extend_from_slice(s.as_ref().as_bytes());
                }
                if let Some(frame) = previous.and_then(|p| p.frame_holding(j, block)) {
                    return Ok((frame.to_vec(), raw.len()));
                }
                let frame =
                    zstd::bulk::compress(&raw, LEVEL).map_err(|e| encode_error(e.to_string()))?;
                Ok((frame, raw.len()))
            })
            .collect::<Result<_>>()?;
        let mut starts = Vec::with_capacity(frames.len() + 1);
        let mut raw = Vec::with_capacity(frames.len());
        let mut blob = Vec::with_capacity(frames.iter().map(|f| f.0.len()).sum());
        starts.push(0u32);
        for (frame, len) in &frames {
            blob.extend_from_slice(frame);
            let too_long = || encode_error("a block or the blob exceeds 4 GiB");
            starts.push(u32::try_from(blob.len()).map_err(|_| too_long())?);
            raw.push(u32::try_from(*len).map_err(|_| too_long())?);
        }
        Ok(PackedStrings {
            count: strings.len(),
            frames: starts.into(),
            raw: raw.into(),
            blob: Bytes::from_vec(blob),
            opened: new_cache(frames.len()),
        })
    }

    /// Adds the sections `X.frame`, `X.raw` and `X.blob` for prefix `X`.
    pub fn write(&self, w: &mut SectionWriter, prefix: &str) -> Result<()> {
        w.array(&format!("{prefix}.frame"), &self.frames)?
            .array(&format!("{prefix}.raw"), &self.raw)?
            .precompressed(&format!("{prefix}.blob"), &self.blob)?;
        Ok(())
    }

    /// Opens the `count` strings written with prefix `prefix`, checking
    /// that the tables agree; blocks are checked when first read.
    pub fn open(file: &SectionFile, prefix: &str, count: usize) -> Result<PackedStrings> {
        let frames: Array<u32> = file.array(&format!("{prefix}.frame"))?;
        let raw: Array<u32> = file.array(&format!("{prefix}.raw"))?;
        let blob = file.bytes(&format!("{prefix}.blob"))?;
        let blocks = blocks_for(count);
        let consistent = frames.len() == blocks + 1
            && raw.len() == blocks
            && frames.first() == Some(&0)
            && frames.windows(2).all(|w| w[0] <= w[1])
            && frames.last().is_some_and(|&l| l as usize == blob.len());
        if !consistent {
            return Err(Error::corrupt(file.path(), format!("damaged {prefix} string tables")));
        }
        Ok(PackedStrings { count, frames, raw, blob, opened: new_cache(blocks) })
    }

    /// Number of strings.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// String `i`; empty when `i` is out of range or its block is damaged.
    pub fn get(&self, i: usize) -> &str {
        let Some(block) = self.block(i / STRINGS_PER_BLOCK) else { return "" };
        let k = i % STRINGS_PER_BLOCK;
        let start = match k {
            0 => 0,
            _ => block.ends.get(k - 1).copied().unwrap_or(0),
        };
        match block.ends.get(k) {
            Some(&end) => block.text.get(start as usize..end as usize).unwrap_or(""),
            None => "",
        }
    }

    /// Opens the blocks holding strings `indices`, in parallel, so that
    /// reading them then waits for none.
    pub fn open_blocks(&self, indices: impl Iterator<Item = usize>) {
        let mut blocks: Vec<usize> = indices.map(|i| i / STRINGS_PER_BLOCK).collect();
        blocks.sort_unstable();
        blocks.dedup();
        blocks.retain(|&j| self.opened.get(j).is_some_and(|cell| cell.get().is_none()));
        blocks.par_iter().for_each(|&j| {
            self.block(j);
        });
    }

    /// Opens every block, reporting the first that does not open as
    /// damage in `path`.
    pub fn verify(&self, path: &Path) -> Result<()> {
        match (0..self.opened.len()).find(|&j| self.block(j).is_none()) {
            Some(j) => Err(Error::corrupt(path, format!("string block {j} does not decompress"))),
            None => Ok(()),
        }
    }

    /// The frame of block `j`, when it holds exactly `strings`.
    fn frame_holding<S: AsRef<str>>(&self, j: usize, strings: &[S]) -> Option<&[u8]> {
        let block = self.block(j)?;
        if block.ends.len() != strings.len() {
            return None;
        }
        let mut start = 0usize;
        for (s, &end) in strings.iter().zip(&block.ends) {
            let end = end as usize;
            if block.text.get(start..end)? != s.as_ref() {
                return None;
            }
            start = end;
        }
        self.frame(j)
    }

    /// Block `j`'s compressed frame.
    fn frame(&self, j: usize) -> Option<&[u8]> {
        self.blob.get(*self.frames.get(j)? as usize..*self.frames.get(j + 1)? as usize)
    }

    /// Block `j`, opened on first use.
    fn block(&self, j: usize) -> Option<&Block> {
        let cell = self.opened.get(j)?;
        cell.get_or_init(|| self.open_block(j)).as_ref()
    }

    fn open_block(&self, j: usize) -> Option<Block> {
        let len = *self.raw.get(j)? as usize;
        let raw = crate::store::decompress_frame(self.frame(j)?, len)?;
        let strings = self.count.saturating_sub(j * STRINGS_PER_BLOCK).min(STRINGS_PER_BLOCK);
        let mut at = 0;
        let mut ends = Vec::with_capacity(strings);
        let mut end = 0u64;
        for _ in 0..strings {
            end = end.checked_add(varint::read(&raw, &mut at)?)?;
            ends.push(u32::try_from(end).ok()?);
        }
        if at.checked_add(usize::try_from(end).ok()?)? != raw.len() {
            return None;
        }
        let mut raw = raw;
        raw.drain(..at);
        let text = String::from_utf8(raw).ok()?;
        Some(Block { text: text.into_boxed_str(), ends: ends.into_boxed_slice() })
    }
}

fn new_cache(blocks: usize) -> Arc<[OnceLock<Option<Block>>]> {
    (0..blocks).map(|_| OnceLock::new()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::FormatVersion;

    const F: FormatVersion = FormatVersion { kind: *b"TEST", current: 1, oldest: 1 };

    fn strings(n: usize) -> Vec<String> {
        (0..n)
            .map(|i| if i % 7 == 0 { String::new() } else { format!("fn item_{i}(x: ü{i})") })
            .collect()
    }

    fn round_trip(values: &[String]) -> (tempfile::TempDir, PackedStrings) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.mgv");
        let mut w = SectionWriter::new(F);
        PackedStrings::build(values).unwrap().write(&mut w, "s").unwrap();
        w.write(&path).unwrap();
        let file = SectionFile::open(&path, F).unwrap();
        let packed = PackedStrings::open(&file, "s", values.len()).unwrap();
        (dir, packed)
    }

    /// Blocks whose strings did not change keep their frames; the result
    /// is the list packed from scratch.
    #[test]
    fn unchanged_blocks_keep_their_frames() {
        let mut values = strings(3 * STRINGS_PER_BLOCK + 10);
        let old = PackedStrings::build(&values).unwrap();
        values[STRINGS_PER_BLOCK + 3] = "fn edited()".into();
        let patched = PackedStrings::build_reusing(&values, Some(&old)).unwrap();
        let scratch = PackedStrings::build(&values).unwrap();
        assert_eq!((&*patched.frames, &*patched.raw), (&*scratch.frames, &*scratch.raw));
        assert_eq!(&*patched.blob, &*scratch.blob);
        let frame = |p: &PackedStrings, j: usize| {
            p.blob[p.frames[j] as usize..p.frames[j + 1] as usize].to_vec()
        };
        for j in 0..4 {
            assert_eq!(frame(&patched, j) == frame(&old, j), j != 1, "block {j}");
        }
        // A string added at the end: only the last block changes.
        values.push("fn last()".into());
        let longer = PackedStrings::build_reusing(&values, Some(&patched)).unwrap();
        assert_eq!(frame(&longer, 2), frame(&patched, 2));
        assert_eq!(longer.get(values.len() - 1), "fn last()");
        assert_eq!(longer.get(STRINGS_PER_BLOCK + 3), "fn edited()");
    }

    #[test]
    fn every_string_comes_back_from_any_number_of_blocks() {
        for n in [0, 1, STRINGS_PER_BLOCK - 1, STRINGS_PER_BLOCK, 2 * STRINGS_PER_BLOCK + 5] {
            let values = strings(n);
            let (_dir, packed) = round_trip(&values);
            assert_eq!(packed.len(), n);
            // Opening some blocks ahead changes nothing that is read.
            packed.open_blocks((0..n).step_by(3).chain([n, usize::MAX]));
            // Read out of order, so blocks open in any order.
            for i in (0..n).rev() {
                assert_eq!(packed.get(i), values[i], "{n} {i}");
            }
            assert_eq!(packed.get(n), "");
            packed.verify(Path::new("x")).unwrap();
        }
    }

    #[test]
    fn repeated_text_shrinks() {
        let values = strings(4 * STRINGS_PER_BLOCK);
        let raw: usize = values.iter().map(String::len).sum();
        let packed = PackedStrings::build(&values).unwrap();
        assert!(packed.blob.len() * 3 < raw, "{} of {raw}", packed.blob.len());
    }

    #[test]
    fn a_wrong_count_or_a_damaged_block_is_reported() {
        let values = strings(STRINGS_PER_BLOCK + 3);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.mgv");
        let mut w = SectionWriter::new(F);
        let mut packed = PackedStrings::build(&values).unwrap();
        w.bytes("other", b"x").unwrap();
        packed.write(&mut w, "s").unwrap();
        w.write(&path).unwrap();
        let file = SectionFile::open(&path, F).unwrap();
        // A count that needs another block is refused on open; one that
        // only disagrees with the last block's, when that block is read.
        assert!(PackedStrings::open(&file, "s", values.len() + STRINGS_PER_BLOCK).is_err());
        let off_by_one = PackedStrings::open(&file, "s", values.len() + 1).unwrap();
        assert_eq!(off_by_one.get(STRINGS_PER_BLOCK), "");
        assert_eq!(off_by_one.get(1), values[1]);
        assert!(off_by_one.verify(Path::new("x")).is_err());
        assert!(PackedStrings::open(&file, "t", values.len()).is_err());
        // The first frame's magic number garbled: its strings read as
        // empty, the other block's still read, and verifying names the
        // damage.
        let mut blob = packed.blob.to_vec();
        blob[..4].fill(0);
        packed.blob = Bytes::from_vec(blob);
        packed.opened = new_cache(2);
        assert_eq!(packed.get(1), "");
        assert_eq!(packed.get(STRINGS_PER_BLOCK + 1), values[STRINGS_PER_BLOCK + 1]);
        assert!(matches!(packed.verify(Path::new("x")), Err(Error::Corrupt { .. })));
    }
}
