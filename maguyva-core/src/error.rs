//! The error type of maguyva-core, which modality crates also wrap theirs in.

use crate::modality::Modality;
use std::path::PathBuf;

/// A `Result` whose error is [`enum@Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in the shared layer: reading the corpus,
/// reading or writing the index, and the errors of the modalities.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An I/O operation on a path failed.
    #[error("{action} {path}")]
    Io {
        /// What was being done ("reading", "writing", "renaming" ...).
        action: &'static str,
        /// The path it was done to.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The folder to index does not exist or is not a folder.
    #[error("{path} is not a folder that can be indexed: {reason}")]
    BadRoot {
        /// The path given.
        path: PathBuf,
        /// Why it cannot be indexed.
        reason: String,
    },
    /// There is no index at the path.
    #[error("no index at {path}; run `maguyva index`")]
    NoIndex {
        /// The index folder looked at.
        path: PathBuf,
    },
    /// An index file failed its checks (magic, length, checksum, decoding).
    #[error("index file {path} is corrupt: {reason}; run `maguyva index` to rebuild it")]
    Corrupt {
        /// The damaged file.
        path: PathBuf,
        /// What was wrong with it.
        reason: String,
    },
    /// An indexed file changed, or was removed, since the index was built:
    /// its text is no longer the text that was indexed.
    #[error("{path} changed since it was indexed; run `maguyva index` to refresh the index")]
    Changed {
        /// The file, under the indexed root.
        path: PathBuf,
    },
    /// An index file was written by a format version this build cannot read.
    #[error(
        "{path} has format v{found}; this build reads v{oldest}..=v{current}; run `maguyva index`"
    )]
    IncompatibleFormat {
        /// The file.
        path: PathBuf,
        /// The version the file says it has.
        found: u32,
        /// The oldest version this build reads.
        oldest: u32,
        /// The version this build writes.
        current: u32,
    },
    /// Another process holds the index's write lock.
    #[error("another maguyva process is writing the index at {path}; wait for it to finish")]
    Locked {
        /// The index folder.
        path: PathBuf,
    },
    /// The query cannot be run as given.
    #[error("invalid query: {0}")]
    InvalidQuery(String),
    /// Serializing index data failed.
    #[error("encoding {what}: {reason}")]
    Encode {
        /// The structure being encoded.
        what: &'static str,
        /// The encoder's message.
        reason: String,
    },
    /// An error of one modality, kept with its cause chain.
    #[error("{modality} modality")]
    Modality {
        /// The modality that failed.
        modality: Modality,
        /// Its own error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// An error with every cause under it, `: `-separated, on one line: what a
/// log line or a note must say whole (a modality's error alone names only
/// the modality).
pub fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        // Wrappers that show their cause as their own text add nothing.
        if !out.ends_with(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = cause.source();
    }
    out.replace('\n', " ")
}

impl Error {
    /// An [`Error::Io`] for `path`.
    pub fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io { action, path: path.into(), source }
    }

    /// An [`Error::Corrupt`] for `path`.
    pub fn corrupt(path: impl Into<PathBuf>, reason: impl Into<String>) -> Error {
        Error::Corrupt { path: path.into(), reason: reason.into() }
    }

    /// Wraps a modality's own error.
    pub fn modality(
        modality: Modality,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Error {
        Error::Modality { modality, source: Box::new(source) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_names_every_cause_once() {
        let io = Error::io("reading", "/r/a.rs", std::io::Error::other("disk on fire"));
        assert_eq!(error_chain(&io), "reading /r/a.rs: disk on fire");
        let wrapped = Error::modality(Modality::STRUCTURAL, io);
        assert_eq!(error_chain(&wrapped), "structural modality: reading /r/a.rs: disk on fire");
    }
}
