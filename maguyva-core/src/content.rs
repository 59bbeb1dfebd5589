//! The content store: the decoded text of every indexed file, kept in the
//! index so that literal matches are verified, and snippets cut, against
//! exactly the bytes that were indexed.

use crate::error::{Error, Result};
use crate::fragment::{Fragment, FragmentTable, line_starts};
use crate::ids::FileId;
use crate::sections::{Array, BlockedBytes, SectionFile, SectionWriter};
use crate::store::FormatVersion;
use std::path::Path;

/// The content file's name inside a generation folder.
pub const CONTENT_FILE: &str = "content.mgv";

/// Content store format. Changelog: v1 initial; v2 sections read in place
/// (`offsets`, `texts`); v3 `texts` checked block by block (`texts~`).
pub const CONTENT_FORMAT: FormatVersion = FormatVersion { kind: *b"CONT", current: 3, oldest: 3 };

/// The text of every file, by [`FileId`]: one string of all texts back to
/// back and where each starts, read in place from the index file. Only the
/// blocks of the files read are checked against their checksums; a damaged
/// one reads as no text, and [`ContentStore::damage`] reports it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContentStore {
    /// `offsets[i]..offsets[i + 1]` is file `i`'s text in `texts`.
    offsets: Array<u64>,
    texts: BlockedBytes,
}

impl ContentStore {
    /// A store holding `texts`, indexed by file id.
    pub fn new(texts: Vec<String>) -> ContentStore {
        let mut offsets = Vec::with_capacity(texts.len() + 1);
        let mut all = Vec::with_capacity(texts.iter().map(String::len).sum());
        offsets.push(0u64);
        for t in texts {
            all.extend_from_slice(t.as_bytes());
            offsets.push(all.len() as u64);
        }
        ContentStore { offsets: Array::from(offsets), texts: BlockedBytes::from_vec(all) }
    }

    /// The text of a file; empty for an unknown id.
    pub fn text(&self, file: FileId) -> &str {
        let i = file.index();
        let bytes = match (self.offsets.get(i), self.offsets.get(i + 1)) {
            (Some(&a), Some(&b)) => self.texts.get(a as usize..b as usize).unwrap_or_default(),
            _ => &[],
        };
        // Written from strings and checked by its checksums; anything else is
        // damage, shown as no text rather than trusted.
        std::str::from_utf8(bytes).unwrap_or("")
    }

    /// Damage met by a read so far (a block that failed its checksum), to
    /// report once an answer is complete.
    pub fn damage(&self) -> Option<crate::Error> {
        self.texts.damage()
    }

    /// The text of a fragment; empty if the fragment does not fit its file.
    pub fn fragment_text(&self, fragment: &Fragment) -> &str {
        self.text(fragment.file).get(fragment.bytes()).unwrap_or("")
    }

    /// The text every modality indexes for each fragment, in chunk order:
    /// the fragment's context line (its container's signature), if any,
    /// followed by the fragment's own text.
    pub fn fragment_documents(&self, fragments: &FragmentTable) -> Vec<String> {
        use rayon::prelude::*;
        let per_file: Vec<Vec<String>> = (0..fragments.file_count())
            .into_par_iter()
            .map(|f| {
                let file = FileId(f as u32);
                let text = self.text(file);
                let mut starts: Option<Vec<usize>> = None;
                fragments
                    .of_file(file)
                    .map(|c| {
                        let frag = fragments.get(c);
                        let body = self.fragment_text(frag);
                        let Some(line) = frag.context_line else { return body.to_string() };
                        let starts = starts.get_or_insert_with(|| line_starts(text));
                        let i = line as usize - 1;
                        let context = match (starts.get(i), starts.get(i + 1)) {
                            (Some(&a), Some(&b)) => &text[a..b],
                            (Some(&a), None) => &text[a..],
                            _ => "",
                        };
                        format!("{}\n{body}", context.trim_end())
                    })
                    .collect()
            })
            .collect();
        per_file.into_iter().flatten().collect()
    }

    /// Number of files.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Whether the store is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Total bytes of text.
    pub fn total_bytes(&self) -> usize {
        self.texts.len()
    }

    /// Writes the store into a generation folder.
    pub fn save(&self, gen_dir: &Path) -> Result<()> {
        let mut w = SectionWriter::new(CONTENT_FORMAT);
        w.array("offsets", &self.offsets)?.blocks("texts", self.texts.unchecked())?;
        w.write(&gen_dir.join(CONTENT_FILE))
    }

    /// Opens the store of a generation folder, in place.
    pub fn load(gen_dir: &Path) -> Result<ContentStore> {
        ContentStore::open(&SectionFile::open(&gen_dir.join(CONTENT_FILE), CONTENT_FORMAT)?)
    }

    /// The store in an opened content file.
    pub fn open(file: &SectionFile) -> Result<ContentStore> {
        let offsets: Array<u64> = file.array("offsets")?;
        let texts = file.blocks("texts")?;
        let in_order = offsets.first() == Some(&0)
            && offsets.windows(2).all(|w| w[0] <= w[1])
            && offsets.last().is_some_and(|&end| end == texts.len() as u64);
        if !in_order {
            return Err(Error::corrupt(file.path(), "text offsets out of order"));
        }
        Ok(ContentStore { offsets, texts })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FragmentSpan, LineSpan};

    #[test]
    fn documents_carry_their_context_line() {
        let text = "class Big:\n    a = 1\n    def m(self):\n        pass\n";
        let content = ContentStore::new(vec![text.to_string()]);
        let fragments = FragmentTable::from_spans(vec![vec![
            FragmentSpan { lines: LineSpan::new(1, 2), bytes: 0..21, context_line: None },
            FragmentSpan {
                lines: LineSpan::new(3, 4),
                bytes: 21..text.len(),
                context_line: Some(1),
            },
        ]]);
        let docs = content.fragment_documents(&fragments);
        assert_eq!(docs[0], "class Big:\n    a = 1\n");
        assert_eq!(docs[1], "class Big:\n    def m(self):\n        pass\n");
    }

    #[test]
    fn saved_and_opened_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let store = ContentStore::new(vec!["fn a() {}\n".into(), String::new(), "é\n".into()]);
        store.save(dir.path()).unwrap();
        let back = ContentStore::load(dir.path()).unwrap();
        assert_eq!(back, store);
        assert_eq!(back.len(), 3);
        assert_eq!(back.text(FileId(2)), "é\n");
        assert_eq!(back.text(FileId(9)), "");
    }
}
