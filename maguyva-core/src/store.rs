//! Framed index files (the manifest and the fragment table; the large files
//! are sectioned, [`crate::sections`]): a file ends with a footer holding a
//! magic number, the kind of file, its format version, the payload length and
//! a CRC-32 of the payload. The footer is checked before any byte of the
//! payload is trusted, so a truncated or damaged file is reported as corrupt
//! and never decoded into wrong results. Format: `doc/format/framing.md`.

use crate::error::{Error, Result};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::cell::RefCell;
use std::io::Write;
use std::path::Path;

/// Magic number that ends every Maguyva index file.
pub const MAGIC: [u8; 4] = *b"MGYV";

/// Bytes in the footer: magic, kind, version, payload length, crc.
pub const FOOTER_LEN: usize = 4 + 4 + 4 + 8 + 4;

/// A four-byte tag naming what a file holds (`b"MANI"`, `b"TEXT"` ...).
pub type FileKind = [u8; 4];

/// The versions of one file kind this build handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FormatVersion {
    /// The kind tag.
    pub kind: FileKind,
    /// The version written.
    pub current: u32,
    /// The oldest version still read.
    pub oldest: u32,
}

impl FormatVersion {
    /// Checks the kind and version a file says it holds against this
    /// format: another kind is damage, a version outside the range is
    /// incompatible ("run `maguyva index`").
    pub fn check(&self, path: &Path, kind: &[u8], version: u32) -> Result<()> {
        if kind != self.kind {
            return Err(Error::corrupt(
                path,
                format!(
                    "holds {:?}, expected {:?}",
                    String::from_utf8_lossy(kind),
                    String::from_utf8_lossy(&self.kind)
                ),
            ));
        }
        if version < self.oldest || version > self.current {
            return Err(Error::IncompatibleFormat {
                path: path.to_path_buf(),
                found: version,
                oldest: self.oldest,
                current: self.current,
            });
        }
        Ok(())
    }
}

/// Writes `payload` and its footer to `path` and syncs it to disk.
pub fn write_framed(path: &Path, format: FormatVersion, payload: &[u8]) -> Result<()> {
    let mut footer = Vec::with_capacity(FOOTER_LEN);
    footer.extend_from_slice(&MAGIC);
    footer.extend_from_slice(&format.kind);
    footer.extend_from_slice(&format.current.to_le_bytes());
    footer.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    footer.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    let mut file = std::fs::File::create(path).map_err(|e| Error::io("creating", path, e))?;
    file.write_all(payload)
        .and_then(|()| file.write_all(&footer))
        .and_then(|()| file.sync_all())
        .map_err(|e| Error::io("writing", path, e))
}

/// Reads `path`, checks its footer against `format`, and returns the
/// version found and the payload.
pub fn read_framed(path: &Path, format: FormatVersion) -> Result<(u32, Vec<u8>)> {
    let mut bytes = std::fs::read(path).map_err(|e| Error::io("reading", path, e))?;
    let (version, len) = check_footer(path, &bytes, format)?;
    bytes.truncate(len);
    Ok((version, bytes))
}

fn check_footer(path: &Path, bytes: &[u8], format: FormatVersion) -> Result<(u32, usize)> {
    if bytes.len() < FOOTER_LEN {
        return Err(Error::corrupt(
            path,
            format!("{} bytes is shorter than the footer", bytes.len()),
        ));
    }
    let footer = &bytes[bytes.len() - FOOTER_LEN..];
    let field = |r: std::ops::Range<usize>| &footer[r];
    if field(0..4) != MAGIC {
        return Err(Error::corrupt(path, "no Maguyva footer (truncated or not an index file)"));
    }
    let version = u32::from_le_bytes(field(8..12).try_into().unwrap_or_default());
    format.check(path, field(4..8), version)?;
    let len = u64::from_le_bytes(field(12..20).try_into().unwrap_or_default());
    let payload_len = (bytes.len() - FOOTER_LEN) as u64;
    if len != payload_len {
        return Err(Error::corrupt(
            path,
            format!("footer says {len} bytes, file holds {payload_len}"),
        ));
    }
    let crc = u32::from_le_bytes(field(20..24).try_into().unwrap_or_default());
    if crc32fast::hash(&bytes[..payload_len as usize]) != crc {
        return Err(Error::corrupt(path, "checksum mismatch"));
    }
    Ok((version, payload_len as usize))
}

/// Encodes a value with bincode's standard configuration.
pub fn encode<T: Serialize>(what: &'static str, value: &T) -> Result<Vec<u8>> {
    bincode::serde::encode_to_vec(value, bincode::config::standard())
        .map_err(|e| Error::Encode { what, reason: e.to_string() })
}

/// Decodes a value encoded by [`encode`]; trailing bytes are an error.
pub fn decode<T: DeserializeOwned>(path: &Path, bytes: &[u8]) -> Result<T> {
    let (value, used) = bincode::serde::decode_from_slice(bytes, bincode::config::standard())
        .map_err(|e| Error::corrupt(path, format!("cannot decode: {e}")))?;
    if used != bytes.len() {
        return Err(Error::corrupt(path, format!("{} trailing bytes", bytes.len() - used)));
    }
    Ok(value)
}

/// How many times its compressed size a compressed section may claim to
/// be (beyond one MiB).
const MAX_EXPANSION: usize = 1000;

/// Whether `stored` bytes of zstd may decompress to `len` bytes: at most
/// [`MAX_EXPANSION`] times them, plus 1 MiB.
pub(crate) fn plausible_expansion(stored: usize, len: u64) -> bool {
    len <= stored.saturating_mul(MAX_EXPANSION).saturating_add(1 << 20) as u64
}

/// The zstd level of [`compress`]: the graph is written on every build
/// and refresh; on it, level 1 was both faster than level 3 (164 against
/// 142 MB/s) and no larger.
const COMPRESSION_LEVEL: i32 = 1;

/// Compresses `bytes` with zstd (one frame), its length first as a
/// little-endian `u32`: for data read rarely and whole.
pub fn compress(bytes: &[u8]) -> Result<Vec<u8>> {
    let len = u32::try_from(bytes.len())
        .map_err(|_| Error::Encode { what: "compressed section", reason: "over 4 GiB".into() })?;
    let frame = zstd::bulk::compress(bytes, COMPRESSION_LEVEL)
        .map_err(|e| Error::Encode { what: "compressed section", reason: e.to_string() })?;
    let mut out = Vec::with_capacity(4 + frame.len());
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&frame);
    Ok(out)
}

/// Undoes [`compress`]; `path` names the file the bytes came from, for the
/// error when they do not decompress.
pub fn decompress(path: &Path, bytes: &[u8]) -> Result<Vec<u8>> {
    let corrupt = |why: String| Error::corrupt(path, format!("cannot decompress: {why}"));
    let (head, body) = bytes.split_first_chunk::<4>().ok_or_else(|| corrupt("too short".into()))?;
    let len = u32::from_le_bytes(*head) as usize;
    decompress_frame(body, len)
        .ok_or_else(|| corrupt(format!("{} bytes do not give the {len} claimed", body.len())))
}

/// One zstd frame decompressed, when it holds exactly `len` bytes; `None`
/// otherwise. Records of numbers and names do not shrink a thousandfold
/// (`MAX_EXPANSION`): a larger claim is damage, refused before anything
/// that large is allocated. One context per thread, reused: with a new
/// context for each, the 34 blocks of a large repository's signatures took
/// 1.9 ms to open instead of 1.2.
pub fn decompress_frame(frame: &[u8], len: usize) -> Option<Vec<u8>> {
    if !plausible_expansion(frame.len(), len as u64) {
        return None;
    }
    with_decompressor(|context| context.decompress(frame, len).ok().filter(|raw| raw.len() == len))
}

/// Decompresses one zstd frame into `out`, when it holds exactly
/// `out.len()` bytes (the caller checks the claim first).
pub(crate) fn decompress_frame_into(frame: &[u8], out: &mut [u8]) -> Option<()> {
    with_decompressor(|context| {
        let len = context.decompress_to_buffer(frame, out).ok()?;
        (len == out.len()).then_some(())
    })
}

fn with_decompressor<R>(
    f: impl FnOnce(&mut zstd::bulk::Decompressor<'static>) -> Option<R>,
) -> Option<R> {
    thread_local! {
        static CONTEXT: RefCell<Option<zstd::bulk::Decompressor<'static>>> =
            RefCell::new(zstd::bulk::Decompressor::new().ok());
    }
    CONTEXT.with(|cell| f(cell.try_borrow_mut().ok()?.as_mut()?))
}

/// Encodes `value` and writes it framed.
pub fn save<T: Serialize>(
    path: &Path,
    format: FormatVersion,
    what: &'static str,
    value: &T,
) -> Result<()> {
    write_framed(path, format, &encode(what, value)?)
}

/// Reads a framed file written by [`save`] and decodes it.
pub fn load<T: DeserializeOwned>(path: &Path, format: FormatVersion) -> Result<T> {
    let (_, payload) = read_framed(path, format)?;
    decode(path, &payload)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compressed_bytes_round_trip_and_damage_is_refused() {
        let p = Path::new("x.mgv");
        let data: Vec<u8> = (0..10_000u32).flat_map(|i| (i % 97).to_le_bytes()).collect();
        let packed = compress(&data).unwrap();
        assert!(packed.len() < data.len() / 4);
        assert_eq!(decompress(p, &packed).unwrap(), data);
        assert_eq!(decompress(p, &compress(b"").unwrap()).unwrap(), b"");
        assert!(decompress(p, &packed[..3]).is_err());
        assert!(decompress(p, &packed[..packed.len() / 2]).is_err());
        let mut huge = packed.clone();
        huge[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(decompress(p, &huge), Err(Error::Corrupt { .. })));
        // A length that is not the frame's, either way, is damage too.
        for claim in [data.len() - 1, data.len() + 1] {
            let mut wrong = packed.clone();
            wrong[..4].copy_from_slice(&(claim as u32).to_le_bytes());
            assert!(matches!(decompress(p, &wrong), Err(Error::Corrupt { .. })), "{claim}");
        }
    }

    const F: FormatVersion = FormatVersion { kind: *b"TEST", current: 3, oldest: 2 };

    #[test]
    fn round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x");
        save(&p, F, "test", &vec![1u32, 2, 3]).unwrap();
        assert_eq!(load::<Vec<u32>>(&p, F).unwrap(), vec![1, 2, 3]);
    }

    #[test]
    fn every_truncation_and_bit_flip_is_caught() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x");
        write_framed(&p, F, b"hello world").unwrap();
        let good = std::fs::read(&p).unwrap();
        for cut in 0..good.len() {
            std::fs::write(&p, &good[..cut]).unwrap();
            assert!(matches!(read_framed(&p, F), Err(Error::Corrupt { .. })), "cut {cut}");
        }
        for i in 0..good.len() {
            let mut bad = good.clone();
            bad[i] ^= 0x10;
            std::fs::write(&p, &bad).unwrap();
            assert!(read_framed(&p, F).is_err(), "flip {i}");
        }
    }

    #[test]
    fn versions_outside_the_range_are_incompatible() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x");
        write_framed(&p, FormatVersion { current: 1, ..F }, b"x").unwrap();
        assert!(matches!(read_framed(&p, F), Err(Error::IncompatibleFormat { found: 1, .. })));
        write_framed(&p, FormatVersion { current: 2, ..F }, b"x").unwrap();
        assert_eq!(read_framed(&p, F).unwrap().0, 2);
    }

    #[test]
    fn wrong_kind_and_trailing_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x");
        save(&p, F, "t", &7u8).unwrap();
        assert!(matches!(
            read_framed(&p, FormatVersion { kind: *b"OTHR", ..F }),
            Err(Error::Corrupt { .. })
        ));
        write_framed(&p, F, &[7, 0]).unwrap();
        assert!(matches!(load::<u8>(&p, F), Err(Error::Corrupt { .. })));
    }
}
