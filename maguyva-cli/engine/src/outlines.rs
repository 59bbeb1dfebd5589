//! The parse of every file, kept with the index (`outlines.mgv`) so that a
//! refresh parses only the files whose text changed: each outline is keyed
//! by the file's content hash and language, and reused when both match.
//! Parses that failed are never kept (a parse can run out of time).

use maguyva_ast::FileOutline;
use maguyva_core::store::{self, FormatVersion};
use maguyva_core::{
    Array, Bytes, FileId, Language, Result, SectionFile, SectionWriter, SourceFile,
};
use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;
use std::sync::OnceLock;

/// The outline file's name inside a generation folder.
pub const OUTLINES_FILE: &str = "outlines.mgv";

/// Outline file format. Changelog: v1 initial; v2 each outline compressed;
/// v3 outlines compressed together, in blocks.
pub const OUTLINES_FORMAT: FormatVersion = FormatVersion { kind: *b"OUTL", current: 3, oldest: 3 };

/// Encoded outlines are compressed together in blocks: outlines of one
/// language repeat each other's names and shapes, which compressing each
/// alone cannot use, and blocks compress in parallel. A block closes after
/// an outline whose key is a multiple of 16, once it holds 32 KiB, or at `MAX_BLOCK_BYTES`: cut by content, not by
/// position, an edit changes the blocks around its file only, and a refresh
/// copies every other block's frame as it was.
const BLOCKS: BlockCut = BlockCut { key_modulus: 16, min_bytes: 32 << 10, level: ZSTD_LEVEL };
const MAX_BLOCK_BYTES: usize = 1 << 20;

/// Where blocks close: see [`BLOCKS`].
#[derive(Debug, Clone, Copy)]
struct BlockCut {
    key_modulus: u64,
    min_bytes: usize,
    /// The zstd level of new frames.
    level: i32,
}

/// The zstd level of the blocks: about 10 ms per megabyte to write (a
/// refresh writes only the blocks that changed), 7% smaller than level 3
/// on code's outlines and as fast to read.
const ZSTD_LEVEL: i32 = 6;

/// A block that claims to expand past this is damage: its outlines are
/// parsed again instead of allocating that much.
const MAX_CLAIMED_BYTES: u64 = 256 << 20;

/// The key of a file's outline: its content and its language.
pub(crate) fn outline_key(file: &SourceFile) -> u64 {
    let language = file.language.map_or("", Language::name);
    xxhash_rust::xxh3::xxh3_64_with_seed(language.as_bytes(), file.hash)
}

/// The outline file of the files whose [`outline_key`]s are `keys` (in file
/// order), ready to write; the `identity` of the extraction (queries and
/// grammars) is kept with them.
/// `stored[i]`, when given, is file `i`'s outline as a previous outline file
/// held it, encoded, written again as it is; a block whose bytes `previous`
/// (that file) held as one block keeps the frame it had there.
pub(crate) fn writer(
    identity: &str,
    keys: &[u64],
    outlines: &[Option<FileOutline>],
    stored: &[Option<Vec<u8>>],
    previous: Option<&OutlineCache>,
) -> Result<SectionWriter> {
    writer_in_blocks(identity, keys, outlines, stored, previous, BLOCKS)
}

fn writer_in_blocks(
    identity: &str,
    file_keys: &[u64],
    outlines: &[Option<FileOutline>],
    stored: &[Option<Vec<u8>>],
    previous: Option<&OutlineCache>,
    cut: BlockCut,
) -> Result<SectionWriter> {
    use rayon::prelude::*;
    let packed: Vec<Option<(u64, Cow<[u8]>)>> = file_keys
        .par_iter()
        .zip(outlines)
        .enumerate()
        .map(|(i, (&key, o))| {
            // A file in no language has an empty outline.
            let o = o.as_ref();
            if o.is_some_and(|o| o.failure.is_some()) {
                return Ok(None);
            }
            let bytes = match (stored.get(i).and_then(Option::as_ref), o) {
                (Some(kept), _) => Cow::Borrowed(kept.as_slice()),
                (None, Some(o)) => Cow::Owned(store::encode("outline", o)?),
                (None, None) => Cow::Owned(store::encode("outline", &FileOutline::default())?),
            };
            Ok(Some((key, bytes)))
        })
        .collect::<Result<_>>()?;
    // Outlines back to back, cut into blocks at outline boundaries.
    let mut keys = Vec::with_capacity(file_keys.len());
    let mut offsets = vec![0u64];
    let mut raw_starts = vec![0u64];
    let mut raw = Vec::new();
    for (key, bytes) in packed.into_iter().flatten() {
        keys.push(key);
        raw.extend_from_slice(&bytes);
        offsets.push(raw.len() as u64);
        let size = raw.len() - raw_starts.last().copied().unwrap_or(0) as usize;
        if (key % cut.key_modulus == 0 && size >= cut.min_bytes) || size >= MAX_BLOCK_BYTES {
            raw_starts.push(raw.len() as u64);
        }
    }
    if raw_starts.last() != Some(&(raw.len() as u64)) || raw_starts.len() == 1 {
        raw_starts.push(raw.len() as u64);
    }
    let (hashes, frames): (Vec<u64>, Vec<Vec<u8>>) = raw_starts
        .par_windows(2)
        .map(|w| {
            let block = &raw[w[0] as usize..w[1] as usize];
            let hash = xxhash_rust::xxh3::xxh3_64(block);
            if let Some(frame) = previous.and_then(|p| p.frame_of(hash)) {
                return Ok((hash, frame.to_vec()));
            }
            let frame = zstd::bulk::compress(block, cut.level).map_err(|e| {
                maguyva_core::Error::Encode { what: "outlines", reason: e.to_string() }
            })?;
            Ok((hash, frame))
        })
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .unzip();
    let mut blocks = vec![0u64];
    let mut blob = Vec::with_capacity(frames.iter().map(Vec::len).sum());
    for frame in frames {
        blob.extend_from_slice(&frame);
        blocks.push(blob.len() as u64);
    }
    let mut w = SectionWriter::new(OUTLINES_FORMAT);
    w.encoded("identity", "outlines", &identity)?
        .array("keys", &keys)?
        .array("offsets", &offsets)?
        .array("raw", &raw_starts)?
        .array("blocks", &blocks)?
        .array("hashes", &hashes)?
        .bytes("blob", &blob)?;
    Ok(w)
}

/// The outlines of a generation, to take unchanged files' from.
pub(crate) struct OutlineCache {
    file: SectionFile,
    by_key: HashMap<u64, usize>,
    offsets: Array<u64>,
    raw_starts: Array<u64>,
    blocks: Array<u64>,
    blob: Bytes,
    /// Each block once decompressed (`None`: damaged), shared by the
    /// outlines it holds.
    decompressed: Vec<OnceLock<Option<Vec<u8>>>>,
    /// Blocks by the xxh3-64 of their uncompressed bytes.
    by_block: HashMap<u64, usize>,
}

impl OutlineCache {
    /// The outlines kept in `gen_dir`, when they were made by the same
    /// extraction (`identity`); `None` when there are none to use.
    pub(crate) fn open(gen_dir: &Path, identity: &str) -> Option<OutlineCache> {
        let file = SectionFile::open(&gen_dir.join(OUTLINES_FILE), OUTLINES_FORMAT).ok()?;
        let kept: String = file.decode("identity").ok()?;
        if kept != identity {
            return None;
        }
        let keys: Array<u64> = file.array("keys").ok()?;
        let offsets: Array<u64> = file.array("offsets").ok()?;
        let raw_starts: Array<u64> = file.array("raw").ok()?;
        let blocks: Array<u64> = file.array("blocks").ok()?;
        let blob = file.bytes("blob").ok()?;
        let ascending = |a: &Array<u64>| a.windows(2).all(|w| w[0] <= w[1]);
        let well_formed = offsets.len() == keys.len() + 1
            && !raw_starts.is_empty()
            && blocks.len() == raw_starts.len()
            && ascending(&offsets)
            && ascending(&raw_starts)
            && ascending(&blocks)
            && offsets.last() == raw_starts.last()
            && blocks.last().is_some_and(|&end| end as usize == blob.len());
        if !well_formed {
            return None;
        }
        let by_key = keys.iter().enumerate().map(|(i, &k)| (k, i)).collect();
        let decompressed = (1..blocks.len()).map(|_| OnceLock::new()).collect();
        let hashes: Array<u64> = file.array("hashes").ok()?;
        if hashes.len() + 1 != blocks.len() {
            return None;
        }
        let by_block = hashes.iter().enumerate().map(|(j, &h)| (h, j)).collect();
        Some(OutlineCache {
            file,
            by_key,
            offsets,
            raw_starts,
            blocks,
            blob,
            decompressed,
            by_block,
        })
    }

    /// Whether an outline is kept for `file`'s text and language.
    pub(crate) fn has(&self, file: &SourceFile) -> bool {
        self.by_key.contains_key(&outline_key(file))
    }

    /// The kept outline of `file`, as file `id`, if its text and language
    /// are the ones it was made from, with its encoded bytes.
    pub(crate) fn get(&self, file: &SourceFile, id: FileId) -> Option<(FileOutline, Vec<u8>)> {
        self.get_by_key(outline_key(file), id)
    }

    /// [`OutlineCache::get`] by the file's [`outline_key`].
    pub(crate) fn get_by_key(&self, key: u64, id: FileId) -> Option<(FileOutline, Vec<u8>)> {
        let bytes = self.raw_by_key(key)?;
        let mut outline: FileOutline = store::decode(self.file.path(), &bytes).ok()?;
        for s in &mut outline.symbols {
            s.file = id;
        }
        Some((outline, bytes))
    }

    /// The kept outline of `file`, encoded, not decoded: to be written again
    /// by a refresh that takes the file's symbols and links from elsewhere.
    pub(crate) fn raw(&self, file: &SourceFile) -> Option<Vec<u8>> {
        self.raw_by_key(outline_key(file))
    }

    fn raw_by_key(&self, key: u64) -> Option<Vec<u8>> {
        let &i = self.by_key.get(&key)?;
        let (a, b) = (*self.offsets.get(i)?, *self.offsets.get(i + 1)?);
        // The block holding the outline's start must hold its end too.
        let j = self.raw_starts.partition_point(|&s| s <= a).checked_sub(1)?;
        let (start, end) = (*self.raw_starts.get(j)?, *self.raw_starts.get(j + 1)?);
        if b > end {
            return None;
        }
        let block = self.decompressed.get(j)?.get_or_init(|| self.block(j, end - start));
        block.as_ref()?.get((a - start) as usize..(b - start) as usize).map(<[u8]>::to_vec)
    }

    /// The compressed frame of the block whose uncompressed bytes hash to
    /// `hash`, to be written again as it is.
    fn frame_of(&self, hash: u64) -> Option<&[u8]> {
        let &j = self.by_block.get(&hash)?;
        let (a, b) = (*self.blocks.get(j)? as usize, *self.blocks.get(j + 1)? as usize);
        self.blob.get(a..b)
    }

    /// Block `j`, decompressed, when it is `len` bytes as it should be.
    fn block(&self, j: usize, len: u64) -> Option<Vec<u8>> {
        let (a, b) = (*self.blocks.get(j)? as usize, *self.blocks.get(j + 1)? as usize);
        if len > MAX_CLAIMED_BYTES {
            return None;
        }
        let frame = self.blob.get(a..b)?;
        store::decompress_frame(frame, len as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(path: &str, language: Language, text: &str) -> SourceFile {
        SourceFile {
            path: path.into(),
            language: Some(language),
            text: text.into(),
            size: text.len() as u64,
            mtime_ns: 0,
            hash: xxhash_rust::xxh3::xxh3_64(text.as_bytes()),
            lossy: false,
        }
    }

    fn some(outlines: &[FileOutline]) -> Vec<Option<FileOutline>> {
        outlines.iter().cloned().map(Some).collect()
    }

    fn keys(files: &[SourceFile]) -> Vec<u64> {
        files.iter().map(outline_key).collect()
    }

    fn corpus() -> (Vec<SourceFile>, Vec<FileOutline>) {
        let files: Vec<SourceFile> = (0..12)
            .map(|i| match i % 3 {
                0 => source(&format!("m{i}.py"), Language::Python, &format!("import os\n\ndef f{i}(x):\n    \"\"\"Doc {i}.\"\"\"\n    return os.path.join(x, g{i}())\n")),
                1 => source(&format!("m{i}.rs"), Language::Rust, &format!("use crate::m;\n/// Item {i}.\npub struct S{i} {{ a: u32 }}\nimpl S{i} {{ pub fn run(&self) -> u32 {{ m::go(self.a) }} }}\n")),
                _ => source(&format!("m{i}.go"), Language::Go, &format!("package m\n\nimport \"fmt\"\n\n// F{i} prints.\nfunc F{i}() {{ fmt.Println({i}) }}\n")),
            })
            .collect();
        let outlines = files
            .iter()
            .enumerate()
            .map(|(i, f)| maguyva_ast::outline(f.language.unwrap(), &f.text, FileId(i as u32)))
            .collect();
        (files, outlines)
    }

    /// Every kept outline comes back as it was written, under the id the
    /// file has now, whether blocks hold one outline or many, and whether
    /// it was encoded anew or carried over from an earlier file.
    #[test]
    fn outlines_come_back_from_any_block() {
        let (files, outlines) = corpus();
        let cuts = [(1, 0), (1, 300), (16, 0), (1, 1 << 20)];
        for (key_modulus, min_bytes) in cuts {
            let cut = BlockCut { key_modulus, min_bytes, level: ZSTD_LEVEL };
            let tmp = tempfile::tempdir().unwrap();
            let none = vec![None; files.len()];
            writer_in_blocks("x", &keys(&files), &some(&outlines), &none, None, cut)
                .unwrap()
                .write(&tmp.path().join(OUTLINES_FILE))
                .unwrap();
            let cache = OutlineCache::open(tmp.path(), "x").unwrap();
            assert!(OutlineCache::open(tmp.path(), "another extraction").is_none());
            let mut stored = Vec::new();
            for (i, (f, o)) in files.iter().zip(&outlines).enumerate().rev() {
                let (got, bytes) = cache.get(f, FileId(i as u32 + 100)).unwrap();
                let mut want = o.clone();
                want.symbols.iter_mut().for_each(|s| s.file = FileId(i as u32 + 100));
                assert_eq!(got, want, "{} with blocks cut at {cut:?}", f.path);
                stored.push(Some(bytes));
            }
            stored.reverse();
            // Carried over as stored, the file is the same again.
            let again = tempfile::tempdir().unwrap();
            writer_in_blocks("x", &keys(&files), &some(&outlines), &stored, Some(&cache), cut)
                .unwrap()
                .write(&again.path().join(OUTLINES_FILE))
                .unwrap();
            assert_eq!(
                std::fs::read(tmp.path().join(OUTLINES_FILE)).unwrap(),
                std::fs::read(again.path().join(OUTLINES_FILE)).unwrap()
            );
            let changed = source("m0.py", Language::Python, "def other():\n    pass\n");
            assert!(!cache.has(&changed) && cache.get(&changed, FileId(0)).is_none());
        }
    }

    const ONE_PER_BLOCK: BlockCut = BlockCut { key_modulus: 1, min_bytes: 0, level: ZSTD_LEVEL };

    /// A refresh copies the frame of every block whose bytes the previous
    /// file held, and compresses only the blocks that changed: written at
    /// another level, the kept frames are the previous file's own bytes.
    #[test]
    fn unchanged_blocks_keep_their_frames() {
        let (mut files, mut outlines) = corpus();
        let tmp = tempfile::tempdir().unwrap();
        let none = vec![None; files.len()];
        let strong = BlockCut { level: 19, ..ONE_PER_BLOCK };
        writer_in_blocks("x", &keys(&files), &some(&outlines), &none, None, strong)
            .unwrap()
            .write(&tmp.path().join(OUTLINES_FILE))
            .unwrap();
        let old = OutlineCache::open(tmp.path(), "x").unwrap();
        // File 5 is edited; the others are taken from the old file.
        files[5] = source("m5.go", Language::Go, "package m\n\nfunc Edited() {}\n");
        outlines[5] = maguyva_ast::outline(Language::Go, &files[5].text, FileId(5));
        let stored: Vec<Option<Vec<u8>>> = files
            .iter()
            .enumerate()
            .map(|(i, f)| old.get(f, FileId(i as u32)).map(|(_, bytes)| bytes))
            .collect();
        assert!(stored[5].is_none());
        let weak = BlockCut { level: 1, ..ONE_PER_BLOCK };
        let new = tempfile::tempdir().unwrap();
        writer_in_blocks("x", &keys(&files), &some(&outlines), &stored, Some(&old), weak)
            .unwrap()
            .write(&new.path().join(OUTLINES_FILE))
            .unwrap();
        let new = OutlineCache::open(new.path(), "x").unwrap();
        let frame = |c: &OutlineCache, j: usize| {
            c.blob[c.blocks[j] as usize..c.blocks[j + 1] as usize].to_vec()
        };
        for j in 0..files.len() {
            let kept = frame(&new, j) == frame(&old, j);
            assert_eq!(kept, j != 5, "block {j}");
        }
        let fresh =
            zstd::bulk::compress(&store::encode("outline", &outlines[5]).unwrap(), 1).unwrap();
        assert_eq!(frame(&new, 5), fresh);
        for (i, f) in files.iter().enumerate() {
            assert_eq!(new.get(f, FileId(i as u32)).unwrap().0, outlines[i]);
        }
    }

    /// A block whose frame does not expand to the length its table claims
    /// gives no outline (the file is parsed again), and tables out of order
    /// are refused when the file is opened.
    #[test]
    fn damaged_blocks_and_tables_give_nothing() {
        let (files, outlines) = corpus();
        let (files, outlines) = (&files[..2], &outlines[..2]);
        let none = vec![None; 2];
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(OUTLINES_FILE);
        let good = writer_in_blocks("x", &keys(files), &some(outlines), &none, None, ONE_PER_BLOCK)
            .unwrap();
        good.write(&path).unwrap();
        let cache = OutlineCache::open(tmp.path(), "x").unwrap();
        let hashes = cache.file.array::<u64>("hashes").unwrap().to_vec();
        let (keys, offsets, raw, blocks, blob) = (
            cache.file.array::<u64>("keys").unwrap().to_vec(),
            cache.offsets.to_vec(),
            cache.raw_starts.to_vec(),
            cache.blocks.to_vec(),
            cache.blob.to_vec(),
        );
        drop(cache);
        let write = |raw: &[u64], blocks: &[u64], blob: &[u8]| {
            let mut w = SectionWriter::new(OUTLINES_FORMAT);
            w.encoded("identity", "outlines", &"x").unwrap();
            w.array("keys", &keys).unwrap().array("offsets", &offsets).unwrap();
            w.array("raw", raw)
                .unwrap()
                .array("blocks", blocks)
                .unwrap()
                .array("hashes", &hashes)
                .unwrap()
                .bytes("blob", blob)
                .unwrap();
            w.write(&path).unwrap();
        };
        // The first block claims one byte more than it holds.
        let mut longer = raw.clone();
        longer[1] += 1;
        longer[2] += 1;
        let mut offsets_shifted = offsets.clone();
        offsets_shifted[1] += 1;
        offsets_shifted[2] += 1;
        let mut w = SectionWriter::new(OUTLINES_FORMAT);
        w.encoded("identity", "outlines", &"x").unwrap();
        w.array("keys", &keys).unwrap().array("offsets", &offsets_shifted).unwrap();
        w.array("raw", &longer)
            .unwrap()
            .array("blocks", &blocks)
            .unwrap()
            .array("hashes", &hashes)
            .unwrap()
            .bytes("blob", &blob)
            .unwrap();
        w.write(&path).unwrap();
        let cache = OutlineCache::open(tmp.path(), "x").unwrap();
        assert!(cache.get(&files[0], FileId(0)).is_none());
        drop(cache);
        // Frames out of order.
        let mut swapped = blocks.clone();
        swapped.swap(1, 2);
        write(&raw, &swapped, &blob);
        assert!(OutlineCache::open(tmp.path(), "x").is_none());
        // The frames' end is not the blob's.
        write(&raw, &blocks, &blob[..blob.len() - 1]);
        assert!(OutlineCache::open(tmp.path(), "x").is_none());
    }
}
