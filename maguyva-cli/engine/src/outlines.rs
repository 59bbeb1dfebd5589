//! The parse of every file, kept with the index (`outlines.mgv`) so that a
//! refresh parses only the files whose text changed: each outline is keyed
//! by the file's content hash and language, and reused when both match.
//! Parses that failed are never kept (a parse can run out of time).

use maguyva_ast::FileOutline;
use maguyva_core::store::{self, FormatVersion};
use maguyva_core::{
    Array, Bytes, FileId, Language, Result, SectionFile, SectionWriter, SourceFile,
};
use std::collections::HashMap;
use std::path::Path;
use std::sync::OnceLock;

/// The outline file's name inside a generation folder.
pub const OUTLINES_FILE: &str = "outlines.mgv";

/// Outline file format. Changelog: v1 initial; v2 each outline compressed;
/// v3 outlines compressed together, in blocks; v4 sectioned-file entries of
/// 40 bytes (small files compressed); v5 symbols' file numbers written as
/// 0, so that an outline's bytes depend on its file's text alone.
pub const OUTLINES_FORMAT: FormatVersion = FormatVersion { kind: *b"OUTL", current: 5, oldest: 5 };

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
/// `kept[i]`, when given, is the number of file `i`'s outline in `previous`
/// (see [`OutlineCache::position`]), written again as it is there; a block
/// that holds the same outlines as a block of `previous` keeps the frame
/// it had there, undecompressed.
pub(crate) fn writer(
    identity: &str,
    keys: &[u64],
    outlines: &[Option<FileOutline>],
    kept: &[Option<usize>],
    previous: Option<&OutlineCache>,
) -> Result<SectionWriter> {
    writer_in_blocks(identity, keys, outlines, kept, previous, BLOCKS)
}

/// An outline to write: one of the previous file's, by number, or encoded.
enum Piece {
    Kept(usize),
    Encoded(Vec<u8>),
}

fn writer_in_blocks(
    identity: &str,
    file_keys: &[u64],
    outlines: &[Option<FileOutline>],
    kept: &[Option<usize>],
    previous: Option<&OutlineCache>,
    cut: BlockCut,
) -> Result<SectionWriter> {
    use rayon::prelude::*;
    let damaged = || {
        let path = previous.map_or_else(Default::default, |p| p.file.path().to_path_buf());
        maguyva_core::Error::corrupt(
            path,
            "an outline kept from it is damaged; run `maguyva index`",
        )
    };
    let pieces: Vec<Option<(u64, Piece)>> = file_keys
        .par_iter()
        .zip(outlines)
        .enumerate()
        .map(|(i, (&key, o))| {
            // A file in no language has an empty outline.
            let o = o.as_ref();
            if o.is_some_and(|o| o.failure.is_some()) {
                return Ok(None);
            }
            let piece = match (kept.get(i).copied().flatten(), o) {
                (Some(p), _) => Piece::Kept(p),
                (None, Some(o)) => Piece::Encoded(encode(o)?),
                (None, None) => Piece::Encoded(store::encode("outline", &FileOutline::default())?),
            };
            Ok(Some((key, piece)))
        })
        .collect::<Result<_>>()?;
    let pieces: Vec<(u64, Piece)> = pieces.into_iter().flatten().collect();
    // Outlines back to back, cut into blocks at outline boundaries: where,
    // is known from their lengths alone.
    let mut keys = Vec::with_capacity(pieces.len());
    let mut offsets = vec![0u64];
    let (mut raw_starts, mut cuts) = (vec![0u64], vec![0usize]);
    for (n, (key, piece)) in pieces.iter().enumerate() {
        let len = match piece {
            Piece::Kept(p) => previous.and_then(|c| c.len_at(*p)).ok_or_else(damaged)?,
            Piece::Encoded(bytes) => bytes.len() as u64,
        };
        keys.push(*key);
        let end = offsets.last().copied().unwrap_or(0) + len;
        offsets.push(end);
        let size = end - raw_starts.last().copied().unwrap_or(0);
        if (key % cut.key_modulus == 0 && size >= cut.min_bytes as u64)
            || size >= MAX_BLOCK_BYTES as u64
        {
            raw_starts.push(end);
            cuts.push(n + 1);
        }
    }
    let total = offsets.last().copied().unwrap_or(0);
    if raw_starts.last() != Some(&total) || raw_starts.len() == 1 {
        raw_starts.push(total);
        cuts.push(pieces.len());
    }
    let (hashes, frames): (Vec<u64>, Vec<Vec<u8>>) = cuts
        .par_windows(2)
        .map(|w| {
            let block = &pieces[w[0]..w[1]];
            // The same outlines, in order, as one of the previous blocks:
            // its frame.
            let in_order = |first: usize| {
                (block.iter().enumerate())
                    .all(|(k, (_, piece))| matches!(piece, Piece::Kept(p) if *p == first + k))
            };
            let whole = match block.first() {
                Some((_, Piece::Kept(first))) if in_order(*first) => {
                    previous.and_then(|c| c.whole_block(*first, first + block.len()))
                }
                _ => None,
            };
            if let Some((hash, frame)) = whole {
                return Ok((hash, frame.to_vec()));
            }
            let mut raw = Vec::new();
            for (_, piece) in block {
                match piece {
                    Piece::Kept(p) => raw.extend_from_slice(
                        previous.and_then(|c| c.bytes_at(*p)).ok_or_else(damaged)?,
                    ),
                    Piece::Encoded(bytes) => raw.extend_from_slice(bytes),
                }
            }
            let hash = xxhash_rust::xxh3::xxh3_64(&raw);
            if let Some(frame) = previous.and_then(|p| p.frame_of(hash)) {
                return Ok((hash, frame.to_vec()));
            }
            let frame = zstd::bulk::compress(&raw, cut.level).map_err(|e| {
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
        .precompressed("blob", &blob)?;
    Ok(w)
}

/// An outline's bytes, with its symbols in file 0: the same text gives the
/// same bytes whatever the file's number (a refresh keeps an unchanged
/// file's bytes as they are while its number moves), and a reader sets
/// the number.
fn encode(outline: &FileOutline) -> Result<Vec<u8>> {
    if outline.symbols.iter().all(|s| s.file == FileId(0)) {
        return store::encode("outline", outline);
    }
    let mut numbered = outline.clone();
    for s in &mut numbered.symbols {
        s.file = FileId(0);
    }
    store::encode("outline", &numbered)
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
    /// The xxh3-64 of each block's uncompressed bytes.
    hashes: Array<u64>,
    /// Blocks by that hash.
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
            hashes,
            by_block,
        })
    }

    /// Whether an outline is kept for `file`'s text and language.
    pub(crate) fn has(&self, file: &SourceFile) -> bool {
        self.by_key.contains_key(&outline_key(file))
    }

    /// The kept outline of `file`, as file `id`, if its text and language
    /// are the ones it was made from.
    pub(crate) fn get(&self, file: &SourceFile, id: FileId) -> Option<FileOutline> {
        self.get_by_key(outline_key(file), id)
    }

    /// [`OutlineCache::get`] by the file's [`outline_key`].
    pub(crate) fn get_by_key(&self, key: u64, id: FileId) -> Option<FileOutline> {
        let bytes = self.bytes_at(*self.by_key.get(&key)?)?;
        let mut outline: FileOutline = store::decode(self.file.path(), bytes).ok()?;
        for s in &mut outline.symbols {
            s.file = id;
        }
        Some(outline)
    }

    /// The number of `file`'s kept outline here, if its text and language
    /// are the ones it was made from and its block holds it whole: to be
    /// written again as it is ([`writer`]) by a refresh that takes the
    /// file's symbols and links from elsewhere, without decoding it.
    pub(crate) fn position(&self, file: &SourceFile) -> Option<usize> {
        let &i = self.by_key.get(&outline_key(file))?;
        self.span(i).map(|_| i)
    }

    /// Outline `i`'s bytes, `a..b` of all outlines back to back, and the
    /// block that holds them whole, its number and where it starts.
    fn span(&self, i: usize) -> Option<(u64, u64, usize, u64)> {
        let (a, b) = (*self.offsets.get(i)?, *self.offsets.get(i + 1)?);
        let (j, start, end) = self.block_at(a)?;
        (b <= end).then_some((a, b, j, start))
    }

    /// The block holding byte `a` of all outlines back to back: its number
    /// and its bytes, `start..end`.
    fn block_at(&self, a: u64) -> Option<(usize, u64, u64)> {
        let j = self.raw_starts.partition_point(|&s| s <= a).checked_sub(1)?;
        Some((j, *self.raw_starts.get(j)?, *self.raw_starts.get(j + 1)?))
    }

    /// The length of outline `i`, encoded.
    fn len_at(&self, i: usize) -> Option<u64> {
        self.span(i).map(|(a, b, ..)| b - a)
    }

    /// Outline `i`, encoded; its block is decompressed the first time.
    fn bytes_at(&self, i: usize) -> Option<&[u8]> {
        let (a, b, j, start) = self.span(i)?;
        let block = self.decompressed.get(j)?.get_or_init(|| self.block(j));
        block.as_ref()?.get((a - start) as usize..(b - start) as usize)
    }

    /// The hash and frame of the block that holds outlines `first..end`
    /// and nothing else, when its frame says it expands to their length.
    fn whole_block(&self, first: usize, end: usize) -> Option<(u64, &[u8])> {
        let (a, b) = (*self.offsets.get(first)?, *self.offsets.get(end)?);
        let (j, start, stop) = self.block_at(a)?;
        let frame = self.frame(j).filter(|_| (start, stop) == (a, b))?;
        let claims = zstd::zstd_safe::get_frame_content_size(frame).ok().flatten();
        (claims == Some(b - a)).then_some((*self.hashes.get(j)?, frame))
    }

    /// The compressed frame of the block whose uncompressed bytes hash to
    /// `hash`, to be written again as it is.
    fn frame_of(&self, hash: u64) -> Option<&[u8]> {
        self.frame(*self.by_block.get(&hash)?)
    }

    /// Block `j`'s compressed frame.
    fn frame(&self, j: usize) -> Option<&[u8]> {
        self.blob.get(*self.blocks.get(j)? as usize..*self.blocks.get(j + 1)? as usize)
    }

    /// Block `j`, decompressed, when it is as long as the table says.
    fn block(&self, j: usize) -> Option<Vec<u8>> {
        let len = self.raw_starts.get(j + 1)?.checked_sub(*self.raw_starts.get(j)?)?;
        if len > MAX_CLAIMED_BYTES {
            return None;
        }
        store::decompress_frame(self.frame(j)?, len as usize)
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
                let got = cache.get(f, FileId(i as u32 + 100)).unwrap();
                let mut want = o.clone();
                want.symbols.iter_mut().for_each(|s| s.file = FileId(i as u32 + 100));
                assert_eq!(got, want, "{} with blocks cut at {cut:?}", f.path);
                stored.push(cache.position(f));
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
        let stored: Vec<Option<usize>> = files.iter().map(|f| old.position(f)).collect();
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
        let fresh = zstd::bulk::compress(&encode(&outlines[5]).unwrap(), 1).unwrap();
        assert_eq!(frame(&new, 5), fresh);
        for (i, f) in files.iter().enumerate() {
            assert_eq!(new.get(f, FileId(i as u32)).unwrap(), outlines[i]);
        }
    }

    /// An outline's bytes are its text's alone: the same file under another
    /// number encodes the same, and reads back under the number asked.
    #[test]
    fn an_outline_is_encoded_without_its_file_number() {
        let text = "package m\n\nfunc Take() {}\n";
        let at = |i: u32| maguyva_ast::outline(Language::Go, text, FileId(i));
        assert!(at(7).symbols.iter().all(|s| s.file == FileId(7)));
        assert_eq!(encode(&at(7)).unwrap(), encode(&at(0)).unwrap());
        let files = vec![source("m.go", Language::Go, text)];
        let tmp = tempfile::tempdir().unwrap();
        writer_in_blocks("x", &keys(&files), &[Some(at(7))], &[None], None, ONE_PER_BLOCK)
            .unwrap()
            .write(&tmp.path().join(OUTLINES_FILE))
            .unwrap();
        let cache = OutlineCache::open(tmp.path(), "x").unwrap();
        assert_eq!(cache.get(&files[0], FileId(3)).unwrap(), at(3));
    }

    /// A refresh writes the file a build from scratch writes, and opens
    /// only the blocks from the change to where the cuts agree again: the
    /// others' frames are copied without being decompressed.
    #[test]
    fn a_refresh_decompresses_only_the_blocks_it_changes() {
        let several = BlockCut { key_modulus: 1, min_bytes: 300, level: ZSTD_LEVEL };
        for cut in [ONE_PER_BLOCK, several] {
            let (mut files, mut outlines) = corpus();
            let write = |files: &[SourceFile], outlines: &[FileOutline], stored, previous| {
                let tmp = tempfile::tempdir().unwrap();
                writer_in_blocks("x", &keys(files), &some(outlines), stored, previous, cut)
                    .unwrap()
                    .write(&tmp.path().join(OUTLINES_FILE))
                    .unwrap();
                tmp
            };
            let none = vec![None; files.len()];
            let first = write(&files, &outlines, &none, None);
            let old = OutlineCache::open(first.path(), "x").unwrap();
            assert!(old.decompressed.len() > 3, "{cut:?}");
            files[7] = source("m7.rs", Language::Rust, "pub fn edited() {}\n");
            outlines[7] = maguyva_ast::outline(Language::Rust, &files[7].text, FileId(7));
            let stored: Vec<Option<usize>> = files.iter().map(|f| old.position(f)).collect();
            assert_eq!(stored.iter().filter(|s| s.is_none()).count(), 1);
            let refreshed = write(&files, &outlines, &stored, Some(&old));
            let scratch = write(&files, &outlines, &none, None);
            let read = |t: &tempfile::TempDir| std::fs::read(t.path().join(OUTLINES_FILE)).unwrap();
            assert_eq!(read(&refreshed), read(&scratch), "{cut:?}");
            let (_, _, j, _) = old.span(7).unwrap();
            for (b, opened) in old.decompressed.iter().enumerate() {
                let opened = opened.get().is_some();
                // A block of the changed outline alone needs none of the old.
                match (b < j, b == j, cut.min_bytes) {
                    (true, ..) | (_, _, 0) => assert!(!opened, "block {b}, {cut:?}"),
                    (_, true, _) => assert!(opened, "the block of the change, {cut:?}"),
                    _ => {}
                }
            }
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
