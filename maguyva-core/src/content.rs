//! The content store: the decoded text of every indexed file, kept in the
//! index so that literal matches are verified, and snippets cut, against
//! exactly the bytes that were indexed.

use crate::error::Result;
use crate::fragment::{Fragment, FragmentTable, line_starts};
use crate::ids::FileId;
use crate::store::{self, FormatVersion};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The content file's name inside a generation folder.
pub const CONTENT_FILE: &str = "content.mgv";

/// Content store format. Changelog: v1 initial.
pub const CONTENT_FORMAT: FormatVersion = FormatVersion { kind: *b"CONT", current: 1, oldest: 1 };

/// The text of every file, by [`FileId`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContentStore {
    texts: Vec<String>,
}

impl ContentStore {
    /// A store holding `texts`, indexed by file id.
    pub fn new(texts: Vec<String>) -> ContentStore {
        ContentStore { texts }
    }

    /// The text of a file; empty for an unknown id.
    pub fn text(&self, file: FileId) -> &str {
        self.texts.get(file.index()).map_or("", String::as_str)
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
        self.texts.len()
    }

    /// Whether the store is empty.
    pub fn is_empty(&self) -> bool {
        self.texts.is_empty()
    }

    /// Writes the store into a generation folder.
    pub fn save(&self, gen_dir: &Path) -> Result<()> {
        store::save(&gen_dir.join(CONTENT_FILE), CONTENT_FORMAT, "content", self)
    }

    /// Reads the store of a generation folder.
    pub fn load(gen_dir: &Path) -> Result<ContentStore> {
        store::load(&gen_dir.join(CONTENT_FILE), CONTENT_FORMAT)
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
}
