//! Index files read in place: a file is a header, named sections aligned to
//! 64 bytes, and a table of contents with a checksum per section. Readers
//! map the file into memory and view each section where it lies: byte
//! strings for fst maps and postings, little-endian arrays of fixed-width
//! numbers cast without decoding, and small bincode records decoded when
//! asked for. A section's checksum is checked the first time it is used,
//! so a search pays only for the sections it reads; `verify` checks them
//! all. In a small file (at most [`SMALL_FILE_BYTES`]) the sections that
//! shrink are stored compressed and decompressed on first use: a small
//! repository's index is mostly the fixed cost of its models and
//! dictionaries, and a search there decompresses what it reads in a
//! millisecond or two. Format:
//! `doc/format/sections.md`.

use crate::error::{Error, Result};
use crate::store::{FormatVersion, decode, encode};
use bytemuck::Pod;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fmt;
use std::io::Write;
use std::marker::PhantomData;
use std::ops::{Deref, Range};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// Magic number that starts every sectioned index file.
pub const SECTIONS_MAGIC: [u8; 4] = *b"MGYS";

/// Bytes in the header.
pub const HEADER_LEN: usize = 64;

/// Sections start at multiples of this many bytes, so that arrays of any
/// fixed-width number can be viewed in place.
pub const ALIGN: usize = 64;

/// Bytes per table-of-contents entry: name, offset, stored length,
/// checksum, length once decompressed.
pub const ENTRY_LEN: usize = 40;

/// A file whose sections hold at most this many bytes in all is small: its
/// sections are stored compressed where that saves a quarter or more.
/// Measured on the development repositories (index folder against indexed
/// source): the five that were 1.49-1.94 times their source became
/// 1.17-1.44; a search there decompresses what it reads, 0.3 to 2 ms more
/// for the whole process. Files above it (nearly every file of the larger
/// repositories) stay read in place.
pub const SMALL_FILE_BYTES: usize = 1 << 20;

/// Sections shorter than this are never compressed: a frame's header would
/// eat what it saves.
const MIN_COMPRESSED_SECTION: usize = 256;

/// zstd level of compressed sections: level 3 saved 1-3% more than level 1
/// on the small indexes, level 19 another 2-5% at many times the time.
const SECTION_LEVEL: i32 = 3;

/// Longest section name, in bytes.
pub const MAX_NAME_LEN: usize = 8;

/// Bytes shared cheaply: a range of a memory-mapped index file, or bytes
/// built in memory.
#[derive(Clone)]
pub struct Bytes {
    backing: Backing,
    range: Range<usize>,
}

#[derive(Clone)]
enum Backing {
    Mapped(Arc<memmap2::Mmap>),
    // `u64` words keep owned bytes 8-aligned, like mapped sections, so that
    // the same casts work on both.
    Owned(Arc<[u64]>),
}

impl Bytes {
    /// Bytes held in memory.
    pub fn from_vec(bytes: Vec<u8>) -> Bytes {
        let len = bytes.len();
        let mut words = vec![0u64; len.div_ceil(8)];
        bytemuck::cast_slice_mut::<u64, u8>(&mut words)[..len].copy_from_slice(&bytes);
        Bytes { backing: Backing::Owned(words.into()), range: 0..len }
    }

    /// One zstd frame decompressed into bytes held in memory, when it holds
    /// exactly `len` bytes (written straight into the aligned words).
    fn decompressed(frame: &[u8], len: usize) -> Option<Bytes> {
        let mut words = vec![0u64; len.div_ceil(8)];
        crate::store::decompress_frame_into(
            frame,
            &mut bytemuck::cast_slice_mut::<u64, u8>(&mut words)[..len],
        )?;
        Some(Bytes { backing: Backing::Owned(words.into()), range: 0..len })
    }

    fn all(&self) -> &[u8] {
        match &self.backing {
            Backing::Mapped(m) => m,
            Backing::Owned(w) => bytemuck::cast_slice(w),
        }
    }

    /// A sub-range of these bytes; `None` when it does not fit.
    pub fn slice(&self, range: Range<usize>) -> Option<Bytes> {
        if range.start > range.end || range.end > self.range.len() {
            return None;
        }
        let start = self.range.start + range.start;
        Some(Bytes { backing: self.backing.clone(), range: start..start + range.len() })
    }
}

impl Default for Bytes {
    fn default() -> Bytes {
        Bytes::from_vec(Vec::new())
    }
}

impl Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.all().get(self.range.clone()).unwrap_or_default()
    }
}

impl AsRef<[u8]> for Bytes {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl fmt::Debug for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Bytes({} bytes)", self.range.len())
    }
}

impl PartialEq for Bytes {
    fn eq(&self, other: &Bytes) -> bool {
        **self == **other
    }
}

impl Eq for Bytes {}

/// UTF-8 text shared cheaply: [`Bytes`] checked once to be UTF-8, so that
/// reading strings out of it costs no further validation (validating each
/// symbol's strings on every lookup was about 5% of a warm search).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Text(Bytes);

impl Text {
    /// The bytes as text; `None` when they are not UTF-8.
    pub fn from_bytes(bytes: Bytes) -> Option<Text> {
        std::str::from_utf8(&bytes).ok()?;
        Some(Text(bytes))
    }

    /// Text held in memory.
    pub fn from_string(text: String) -> Text {
        Text(Bytes::from_vec(text.into_bytes()))
    }

    /// The whole text.
    pub fn as_str(&self) -> &str {
        // SAFETY: `from_bytes` checked these bytes, and `from_string` took
        // them from a `String`; `Bytes` never change once made (owned bytes
        // are immutable, and mapped generation files are never modified:
        // see `SectionFile::open`).
        unsafe { std::str::from_utf8_unchecked(&self.0) }
    }

    /// The text of a byte range; `None` when the range does not fit or does
    /// not fall on character boundaries.
    pub fn get(&self, range: Range<usize>) -> Option<&str> {
        self.as_str().get(range)
    }

    /// The bytes the text is stored as.
    pub fn as_bytes(&self) -> &Bytes {
        &self.0
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Text({} bytes)", self.0.len())
    }
}

/// An array of fixed-width little-endian numbers, viewed in place.
#[derive(Clone, PartialEq, Eq)]
pub struct Array<T> {
    bytes: Bytes,
    _t: PhantomData<T>,
}

impl<T: Pod> Array<T> {
    /// Views `bytes` as an array; `None` when the length or alignment does
    /// not fit `T`.
    pub fn from_bytes(bytes: Bytes) -> Option<Array<T>> {
        bytemuck::try_cast_slice::<u8, T>(&bytes).ok()?;
        Some(Array { bytes, _t: PhantomData })
    }

    /// The bytes the array is stored as.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }
}

impl<T: Pod> From<Vec<T>> for Array<T> {
    fn from(values: Vec<T>) -> Array<T> {
        Array { bytes: Bytes::from_vec(bytemuck::cast_slice(&values).to_vec()), _t: PhantomData }
    }
}

impl<T: Pod> FromIterator<T> for Array<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Array<T> {
        Array::from(iter.into_iter().collect::<Vec<T>>())
    }
}

impl<T: Pod> Default for Array<T> {
    fn default() -> Array<T> {
        Array::from(Vec::new())
    }
}

impl<T: Pod> Deref for Array<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // Length and alignment were checked when the array was made.
        bytemuck::try_cast_slice(&self.bytes).unwrap_or_default()
    }
}

impl<T: Pod + fmt::Debug> fmt::Debug for Array<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Array({} items)", self.len())
    }
}

/// Collects named sections and writes them as one file.
#[derive(Debug)]
pub struct SectionWriter {
    format: FormatVersion,
    sections: Vec<PendingSection>,
    small_file: usize,
}

#[derive(Debug)]
struct PendingSection {
    tag: [u8; MAX_NAME_LEN],
    bytes: Vec<u8>,
    /// Whether compressing it may pay: false for bytes that are zstd
    /// frames already.
    compressible: bool,
}

impl SectionWriter {
    /// A file of kind and version `format`.
    pub fn new(format: FormatVersion) -> SectionWriter {
        SectionWriter { format, sections: Vec::new(), small_file: SMALL_FILE_BYTES }
    }

    /// Sets the size up to which a file counts as small and its sections
    /// are compressed ([`SMALL_FILE_BYTES`] by default; 0 never compresses).
    pub fn small_file_limit(&mut self, bytes: usize) -> &mut SectionWriter {
        self.small_file = bytes;
        self
    }

    /// Adds a section of raw bytes. Names are at most eight ASCII bytes and
    /// unique within a file.
    pub fn bytes(&mut self, name: &str, bytes: &[u8]) -> Result<&mut SectionWriter> {
        self.push(name, bytes.to_vec(), true)
    }

    /// Adds a section of bytes that are compressed already (zstd frames),
    /// which the writer never tries to compress again.
    pub fn precompressed(&mut self, name: &str, bytes: &[u8]) -> Result<&mut SectionWriter> {
        self.push(name, bytes.to_vec(), false)
    }

    fn push(
        &mut self,
        name: &str,
        bytes: Vec<u8>,
        compressible: bool,
    ) -> Result<&mut SectionWriter> {
        let tag = name_tag(name).ok_or_else(|| Error::Encode {
            what: "section",
            reason: format!("{name:?} is not a name of 1 to 8 printable ASCII bytes"),
        })?;
        if self.sections.iter().any(|s| s.tag == tag) {
            return Err(Error::Encode { what: "section", reason: format!("{name:?} twice") });
        }
        self.sections.push(PendingSection { tag, bytes, compressible });
        Ok(self)
    }

    /// Adds a section holding an array of fixed-width numbers.
    pub fn array<T: Pod>(&mut self, name: &str, values: &[T]) -> Result<&mut SectionWriter> {
        self.bytes(name, bytemuck::cast_slice(values))
    }

    /// Adds a section holding `value` encoded with bincode.
    pub fn encoded<T: Serialize>(
        &mut self,
        name: &str,
        what: &'static str,
        value: &T,
    ) -> Result<&mut SectionWriter> {
        let bytes = encode(what, value)?;
        self.bytes(name, &bytes)
    }

    /// Adds a section holding `value` encoded with bincode, then
    /// compressed ([`crate::store::compress`]): for records decoded whole
    /// and rarely, where room matters more than a copy.
    pub fn compressed<T: Serialize>(
        &mut self,
        name: &str,
        what: &'static str,
        value: &T,
    ) -> Result<&mut SectionWriter> {
        let bytes = crate::store::compress(&encode(what, value)?)?;
        self.push(name, bytes, false)
    }

    /// Writes the file and syncs it to disk.
    pub fn write(&self, path: &Path) -> Result<()> {
        if cfg!(target_endian = "big") {
            return Err(Error::Encode {
                what: "index file",
                reason: "index files are little-endian; this machine is not".into(),
            });
        }
        let small = self.sections.iter().map(|s| s.bytes.len()).sum::<usize>() <= self.small_file;
        let mut out = vec![0u8; HEADER_LEN];
        let mut table = Vec::with_capacity(self.sections.len() * ENTRY_LEN);
        for section in &self.sections {
            let raw = &section.bytes;
            let frame = (small && section.compressible && raw.len() >= MIN_COMPRESSED_SECTION)
                .then(|| zstd::bulk::compress(raw, SECTION_LEVEL).ok())
                .flatten()
                .filter(|frame| frame.len() * 4 <= raw.len() * 3);
            let stored = frame.as_deref().unwrap_or(raw);
            out.resize(out.len().next_multiple_of(ALIGN), 0);
            table.extend_from_slice(&section.tag);
            table.extend_from_slice(&(out.len() as u64).to_le_bytes());
            table.extend_from_slice(&(stored.len() as u64).to_le_bytes());
            table.extend_from_slice(&checksum(stored).to_le_bytes());
            table.extend_from_slice(&(raw.len() as u64).to_le_bytes());
            out.extend_from_slice(stored);
        }
        out.resize(out.len().next_multiple_of(ALIGN), 0);
        let table_offset = out.len() as u64;
        out.extend_from_slice(&table);
        let header = &mut out[..HEADER_LEN];
        header[0..4].copy_from_slice(&SECTIONS_MAGIC);
        header[4..8].copy_from_slice(&self.format.kind);
        header[8..12].copy_from_slice(&self.format.current.to_le_bytes());
        header[12..16].copy_from_slice(&(self.sections.len() as u32).to_le_bytes());
        header[16..24].copy_from_slice(&table_offset.to_le_bytes());
        header[24..32].copy_from_slice(&checksum(&table).to_le_bytes());
        let mut file = std::fs::File::create(path).map_err(|e| Error::io("creating", path, e))?;
        file.write_all(&out)
            .and_then(|()| file.sync_all())
            .map_err(|e| Error::io("writing", path, e))
    }
}

fn name_tag(name: &str) -> Option<[u8; MAX_NAME_LEN]> {
    let printable = name.bytes().all(|b| b.is_ascii_graphic());
    if name.is_empty() || name.len() > MAX_NAME_LEN || !printable {
        return None;
    }
    let mut tag = [0u8; MAX_NAME_LEN];
    tag[..name.len()].copy_from_slice(name.as_bytes());
    Some(tag)
}

/// The checksum of a section or of the table: xxh3-64.
fn checksum(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}

struct Entry {
    tag: [u8; MAX_NAME_LEN],
    /// Where the stored bytes lie in the file.
    range: Range<usize>,
    checksum: u64,
    /// The section's length once decompressed; the range's length when it
    /// is stored as is.
    len: usize,
    /// The section's bytes once checked (and decompressed), `None` when
    /// they fail the checksum or do not decompress.
    contents: OnceLock<Option<Bytes>>,
}

/// A sectioned index file, mapped into memory.
pub struct SectionFile {
    path: PathBuf,
    data: Bytes,
    version: u32,
    entries: Vec<Entry>,
}

impl fmt::Debug for SectionFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SectionFile")
            .field("path", &self.path)
            .field("sections", &self.entries.len())
            .finish()
    }
}

impl SectionFile {
    /// Maps `path` and checks its header and table of contents against
    /// `format`; section contents are checked when first used.
    pub fn open(path: &Path, format: FormatVersion) -> Result<SectionFile> {
        if cfg!(target_endian = "big") {
            return Err(Error::corrupt(path, "index files are little-endian; this machine is not"));
        }
        let file = std::fs::File::open(path).map_err(|e| Error::io("opening", path, e))?;
        let len = file.metadata().map_err(|e| Error::io("reading", path, e))?.len();
        if len < HEADER_LEN as u64 {
            return Err(Error::corrupt(path, format!("{len} bytes is shorter than the header")));
        }
        // SAFETY: generation files are written once into a temporary folder
        // and never modified after it is renamed into place; readers hold a
        // shared lock that keeps writers from removing the generation, and an
        // unlinked file stays mapped. Only an outside process truncating the
        // file could fault the mapping. Mapping instead of reading cut the
        // opening of a large index from tens of milliseconds to well under
        // one (benches/benches/open.rs).
        let map =
            unsafe { memmap2::Mmap::map(&file) }.map_err(|e| Error::io("mapping", path, e))?;
        let data = Bytes { range: 0..map.len(), backing: Backing::Mapped(Arc::new(map)) };
        SectionFile::parse(path, data, format)
    }

    /// Reads a file from bytes already in memory (tests, and damaged-file checks).
    pub fn from_bytes(path: &Path, bytes: Vec<u8>, format: FormatVersion) -> Result<SectionFile> {
        SectionFile::parse(path, Bytes::from_vec(bytes), format)
    }

    fn parse(path: &Path, data: Bytes, format: FormatVersion) -> Result<SectionFile> {
        let corrupt = |why: String| Error::corrupt(path, why);
        let header = data.get(..HEADER_LEN).ok_or_else(|| corrupt("no header".into()))?;
        let u32_at = |b: &[u8], at: usize| {
            b.get(at..at + 4).and_then(|s| s.try_into().ok()).map_or(0, u32::from_le_bytes)
        };
        let u64_at = |b: &[u8], at: usize| {
            b.get(at..at + 8).and_then(|s| s.try_into().ok()).map_or(0, u64::from_le_bytes)
        };
        if header[0..4] != SECTIONS_MAGIC || header[32..].iter().any(|&b| b != 0) {
            return Err(corrupt("no Maguyva header (not an index file)".into()));
        }
        let version = u32_at(header, 8);
        format.check(path, &header[4..8], version)?;
        let count = u32_at(header, 12) as usize;
        let table_offset = u64_at(header, 16);
        let table_len = count as u64 * ENTRY_LEN as u64;
        if table_offset.checked_add(table_len) != Some(data.len() as u64)
            || !table_offset.is_multiple_of(ALIGN as u64)
        {
            return Err(corrupt(format!(
                "table of {count} sections at {table_offset} does not end the {}-byte file \
                 (truncated?)",
                data.len()
            )));
        }
        let table = &data[table_offset as usize..];
        if checksum(table) != u64_at(header, 24) {
            return Err(corrupt("table of contents checksum mismatch".into()));
        }
        let mut entries = Vec::with_capacity(count);
        for e in table.chunks_exact(ENTRY_LEN) {
            let (offset, len, raw_len) = (u64_at(e, 8), u64_at(e, 16), u64_at(e, 32));
            let end = offset.checked_add(len).filter(|&end| end <= table_offset);
            // Sections lie in file order, aligned, after the header and
            // each after the one before.
            let after = entries.last().map_or(HEADER_LEN, |p: &Entry| p.range.end);
            let in_place = (offset as usize).is_multiple_of(ALIGN) && offset as usize >= after;
            let Some(end) = end.filter(|_| in_place) else {
                return Err(corrupt(format!("section at {offset} of {len} bytes is out of place")));
            };
            let mut tag = [0u8; MAX_NAME_LEN];
            tag.copy_from_slice(&e[..MAX_NAME_LEN]);
            if entries.iter().any(|p| p.tag == tag) {
                return Err(corrupt(format!("section {:?} twice", tag_name(&tag))));
            }
            // A compressed section is shorter than its contents; a claim of
            // more than zstd could give is refused before any allocation.
            if raw_len < len || !crate::store::plausible_expansion(len as usize, raw_len) {
                return Err(corrupt(format!(
                    "section {:?} of {len} bytes claims {raw_len} bytes decompressed",
                    tag_name(&tag)
                )));
            }
            entries.push(Entry {
                tag,
                range: offset as usize..end as usize,
                checksum: u64_at(e, 24),
                len: raw_len as usize,
                contents: OnceLock::new(),
            });
        }
        Ok(SectionFile { path: path.to_path_buf(), data, version, entries })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The format version the file was written with.
    pub fn version(&self) -> u32 {
        self.version
    }

    /// The names of its sections, in file order.
    pub fn names(&self) -> impl Iterator<Item = String> + '_ {
        self.entries.iter().map(|e| tag_name(&e.tag))
    }

    /// A section's bytes, checked against its checksum (and decompressed)
    /// the first time.
    pub fn bytes(&self, name: &str) -> Result<Bytes> {
        let entry = name_tag(name)
            .and_then(|tag| self.entries.iter().find(|e| e.tag == tag))
            .ok_or_else(|| Error::corrupt(&self.path, format!("no section {name:?}")))?;
        let contents = entry.contents.get_or_init(|| {
            let stored = self.data.slice(entry.range.clone())?;
            if checksum(&stored) != entry.checksum {
                return None;
            }
            if entry.len == stored.len() {
                return Some(stored);
            }
            Bytes::decompressed(&stored, entry.len)
        });
        contents.clone().ok_or_else(|| {
            let why = if entry.len == entry.range.len() {
                "checksum mismatch"
            } else {
                "checksum mismatch or does not decompress"
            };
            Error::corrupt(&self.path, format!("section {name:?} {why}"))
        })
    }

    /// A section viewed as UTF-8 text, checked against its checksum and as
    /// UTF-8 the first time.
    pub fn text(&self, name: &str) -> Result<Text> {
        Text::from_bytes(self.bytes(name)?)
            .ok_or_else(|| Error::corrupt(&self.path, format!("section {name:?} is not UTF-8")))
    }

    /// A section viewed as an array of `T`.
    pub fn array<T: Pod>(&self, name: &str) -> Result<Array<T>> {
        Array::from_bytes(self.bytes(name)?).ok_or_else(|| {
            Error::corrupt(&self.path, format!("section {name:?} is not an array of its type"))
        })
    }

    /// A section decoded from bincode.
    pub fn decode<T: DeserializeOwned>(&self, name: &str) -> Result<T> {
        decode(&self.path, &self.bytes(name)?)
    }

    /// A section written by [`SectionWriter::compressed`], decompressed and
    /// decoded.
    pub fn decompress<T: DeserializeOwned>(&self, name: &str) -> Result<T> {
        decode(&self.path, &crate::store::decompress(&self.path, &self.bytes(name)?)?)
    }

    /// Checks every section against its checksum.
    pub fn verify(&self) -> Result<()> {
        for e in &self.entries {
            self.bytes(&tag_name(&e.tag))?;
        }
        Ok(())
    }
}

fn tag_name(tag: &[u8; MAX_NAME_LEN]) -> String {
    String::from_utf8_lossy(tag).trim_end_matches('\0').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const F: FormatVersion = FormatVersion { kind: *b"TEST", current: 2, oldest: 2 };

    /// Numbers that compress well: small values in wide words.
    fn counts() -> Vec<u32> {
        (0..4096u32).map(|i| i % 37).collect()
    }

    fn written() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.mgv");
        let mut w = SectionWriter::new(F);
        w.bytes("raw", b"hello").unwrap();
        w.array("nums", &[1u64, 2, 3]).unwrap();
        w.array::<f32>("empty", &[]).unwrap();
        w.encoded("meta", "test", &("name".to_string(), 7u32)).unwrap();
        w.array("counts", &counts()).unwrap();
        w.write(&p).unwrap();
        (dir, p)
    }

    /// The file at `p` with section `i`'s decompressed length set to `len`
    /// and the table checksum made right again, so only that claim is wrong.
    fn with_claimed_len(p: &Path, i: usize, len: u64) -> Vec<u8> {
        let mut bytes = std::fs::read(p).unwrap();
        let count = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
        let table = u64::from_le_bytes(bytes[16..24].try_into().unwrap()) as usize;
        assert_eq!(table + count * ENTRY_LEN, bytes.len());
        let at = table + i * ENTRY_LEN + 32;
        bytes[at..at + 8].copy_from_slice(&len.to_le_bytes());
        let sum = checksum(&bytes[table..]);
        bytes[24..32].copy_from_slice(&sum.to_le_bytes());
        bytes
    }

    #[test]
    fn sections_round_trip_in_place() {
        let (_dir, p) = written();
        let f = SectionFile::open(&p, F).unwrap();
        assert_eq!(f.version(), 2);
        assert_eq!(f.names().collect::<Vec<_>>(), ["raw", "nums", "empty", "meta", "counts"]);
        assert_eq!(&*f.array::<u32>("counts").unwrap(), counts());
        assert_eq!(&*f.bytes("raw").unwrap(), b"hello");
        assert_eq!(&*f.array::<u64>("nums").unwrap(), &[1, 2, 3]);
        assert!(f.array::<f32>("empty").unwrap().is_empty());
        assert_eq!(f.decode::<(String, u32)>("meta").unwrap(), ("name".to_string(), 7));
        assert!(matches!(f.bytes("absent"), Err(Error::Corrupt { .. })));
        assert!(matches!(f.array::<u64>("raw"), Err(Error::Corrupt { .. })));
        f.verify().unwrap();
    }

    #[test]
    fn every_truncation_and_bit_flip_is_caught() {
        let (_dir, p) = written();
        let good = std::fs::read(&p).unwrap();
        let read_all = |bytes: Vec<u8>| -> Result<()> {
            let f = SectionFile::from_bytes(&p, bytes, F)?;
            f.verify()?;
            f.decode::<(String, u32)>("meta").map(|_| ())
        };
        read_all(good.clone()).unwrap();
        for cut in 0..good.len() {
            assert!(read_all(good[..cut].to_vec()).is_err(), "cut {cut}");
        }
        // Every byte but the padding between sections is covered.
        let f = SectionFile::from_bytes(&p, good.clone(), F).unwrap();
        let table_start = good.len() - f.entries.len() * ENTRY_LEN;
        let covered = |i: usize| {
            i < HEADER_LEN || i >= table_start || f.entries.iter().any(|e| e.range.contains(&i))
        };
        for i in (0..good.len()).filter(|&i| covered(i)) {
            let mut bad = good.clone();
            bad[i] ^= 0x10;
            assert!(read_all(bad).is_err(), "flip {i}");
        }
    }

    #[test]
    fn small_files_store_what_shrinks_compressed() {
        let (_dir, p) = written();
        let f = SectionFile::open(&p, F).unwrap();
        let entry = |name: &str| f.entries.iter().find(|e| tag_name(&e.tag) == name).unwrap();
        // 16 KiB of counts stored in a fraction of that; five bytes as is.
        assert!(entry("counts").range.len() * 4 < entry("counts").len);
        assert_eq!(entry("raw").range.len(), entry("raw").len);
        assert_eq!(&*f.array::<u32>("counts").unwrap(), counts());

        // The same file above the small-file limit, or already compressed
        // bytes: stored as given.
        let big = p.with_file_name("big.mgv");
        let mut w = SectionWriter::new(F);
        w.small_file_limit(1000).array("counts", &counts()).unwrap();
        w.precompressed("frames", bytemuck::cast_slice(&counts())).unwrap();
        w.write(&big).unwrap();
        let f = SectionFile::open(&big, F).unwrap();
        assert!(f.entries.iter().all(|e| e.range.len() == e.len && e.len == 4 * 4096));
        assert_eq!(&*f.array::<u32>("counts").unwrap(), counts());
        let mut w = SectionWriter::new(F);
        w.precompressed("frames", bytemuck::cast_slice(&counts())).unwrap();
        w.write(&big).unwrap();
        let f = SectionFile::open(&big, F).unwrap();
        assert_eq!(f.entries[0].range.len(), f.entries[0].len);
    }

    #[test]
    fn a_wrong_decompressed_length_is_damage() {
        let (_dir, p) = written();
        let counts_at = 4;
        let stored = SectionFile::open(&p, F).unwrap().entries[counts_at].range.len() as u64;
        let len = 4 * 4096;
        let read = |bytes: Vec<u8>| {
            SectionFile::from_bytes(&p, bytes, F).and_then(|f| f.array::<u32>("counts").map(drop))
        };
        read(with_claimed_len(&p, counts_at, len)).unwrap();
        // One byte more or less than the frame holds, shorter than stored,
        // more than any frame of that size could give.
        for claim in [len - 1, len + 1, stored - 1, u64::MAX] {
            assert!(
                matches!(read(with_claimed_len(&p, counts_at, claim)), Err(Error::Corrupt { .. })),
                "claim {claim}"
            );
        }
    }

    #[test]
    fn versions_and_kinds_are_checked() {
        let (_dir, p) = written();
        let other = FormatVersion { kind: *b"OTHR", ..F };
        assert!(matches!(SectionFile::open(&p, other), Err(Error::Corrupt { .. })));
        let newer = FormatVersion { current: 4, oldest: 3, ..F };
        assert!(matches!(
            SectionFile::open(&p, newer),
            Err(Error::IncompatibleFormat { found: 2, .. })
        ));
    }

    #[test]
    fn bad_names_are_refused() {
        let mut w = SectionWriter::new(F);
        assert!(w.bytes("", b"").is_err());
        assert!(w.bytes("ninechars", b"").is_err());
        w.bytes("a", b"").unwrap();
        assert!(w.bytes("a", b"").is_err());
    }

    #[test]
    fn owned_arrays_and_slices() {
        let a = Array::from(vec![1.5f32, -2.0]);
        assert_eq!(&*a, &[1.5, -2.0]);
        let b = Bytes::from_vec(b"abcdef".to_vec());
        assert_eq!(&*b.slice(2..4).unwrap(), b"cd");
        assert!(b.slice(4..9).is_none());
        assert!(Array::<u32>::from_bytes(b.slice(0..3).unwrap()).is_none());
    }

    #[test]
    fn text_is_checked_once_and_cut_on_character_boundaries() {
        let t = Text::from_string("größe ok".to_string());
        assert_eq!(t.as_str(), "größe ok");
        assert_eq!(t.get(0..2), Some("gr"));
        // Inside the two bytes of 'ö', and past the end.
        assert_eq!(t.get(0..3), None);
        assert_eq!(t.get(4..40), None);
        assert!(Text::from_bytes(Bytes::from_vec(vec![b'a', 0xff])).is_none());

        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.mgv");
        let mut w = SectionWriter::new(F);
        w.bytes("good", "naïve".as_bytes()).unwrap().bytes("bad", &[0xc3, 0x28]).unwrap();
        w.write(&p).unwrap();
        let f = SectionFile::open(&p, F).unwrap();
        assert_eq!(f.text("good").unwrap().as_str(), "naïve");
        assert!(matches!(f.text("bad"), Err(Error::Corrupt { .. })));
    }
}
