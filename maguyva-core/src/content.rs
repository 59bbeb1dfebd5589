//! The content store: the decoded text of every indexed file, kept in the
//! index so that literal matches are verified, and snippets cut, against
//! exactly the bytes that were indexed.

use crate::error::Result;
use crate::fragment::Fragment;
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
