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

/// The outline file's name inside a generation folder.
pub const OUTLINES_FILE: &str = "outlines.mgv";

/// Outline file format. Changelog: v1 initial; v2 each outline compressed.
pub const OUTLINES_FORMAT: FormatVersion = FormatVersion { kind: *b"OUTL", current: 2, oldest: 2 };

/// The key of a file's outline: its content and its language.
pub(crate) fn outline_key(file: &SourceFile) -> u64 {
    let language = file.language.map_or("", Language::name);
    xxhash_rust::xxh3::xxh3_64_with_seed(language.as_bytes(), file.hash)
}

/// The outline file of `files` (in file order), ready to write; the
/// `identity` of the extraction (queries and grammars) is kept with them.
/// `stored[i]`, when given, is file `i`'s outline as a previous outline file
/// stored it, written again as it is.
pub(crate) fn writer(
    identity: &str,
    files: &[SourceFile],
    outlines: &[FileOutline],
    stored: &[Option<Bytes>],
) -> Result<SectionWriter> {
    use rayon::prelude::*;
    let packed: Vec<Option<(u64, Vec<u8>)>> = files
        .par_iter()
        .zip(outlines)
        .enumerate()
        .map(|(i, (f, o))| {
            if o.failure.is_some() {
                return Ok(None);
            }
            let bytes = match stored.get(i).and_then(Option::as_ref) {
                Some(kept) => kept.to_vec(),
                None => store::compress(&store::encode("outline", o)?),
            };
            Ok(Some((outline_key(f), bytes)))
        })
        .collect::<Result<_>>()?;
    let mut keys = Vec::with_capacity(files.len());
    let mut offsets = vec![0u64];
    let mut blob = Vec::new();
    for (key, bytes) in packed.into_iter().flatten() {
        keys.push(key);
        blob.extend_from_slice(&bytes);
        offsets.push(blob.len() as u64);
    }
    let mut w = SectionWriter::new(OUTLINES_FORMAT);
    w.encoded("identity", "outlines", &identity)?
        .array("keys", &keys)?
        .array("offsets", &offsets)?
        .bytes("blob", &blob)?;
    Ok(w)
}

/// The outlines of a generation, to take unchanged files' from.
pub(crate) struct OutlineCache {
    file: SectionFile,
    by_key: HashMap<u64, usize>,
    offsets: Array<u64>,
    blob: Bytes,
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
        let blob = file.bytes("blob").ok()?;
        if offsets.len() != keys.len() + 1 {
            return None;
        }
        let by_key = keys.iter().enumerate().map(|(i, &k)| (k, i)).collect();
        Some(OutlineCache { file, by_key, offsets, blob })
    }

    /// Whether an outline is kept for `file`'s text and language.
    pub(crate) fn has(&self, file: &SourceFile) -> bool {
        self.by_key.contains_key(&outline_key(file))
    }

    /// The kept outline of `file`, as file `id`, if its text and language
    /// are the ones it was made from, with the bytes that store it.
    pub(crate) fn get(&self, file: &SourceFile, id: FileId) -> Option<(FileOutline, Bytes)> {
        let &i = self.by_key.get(&outline_key(file))?;
        let (a, b) = (*self.offsets.get(i)? as usize, *self.offsets.get(i + 1)? as usize);
        let path = self.file.path();
        let stored = self.blob.slice(a..b)?;
        let bytes = store::decompress(path, &stored).ok()?;
        let mut outline: FileOutline = store::decode(path, &bytes).ok()?;
        for s in &mut outline.symbols {
            s.file = id;
        }
        Some((outline, stored))
    }
}
