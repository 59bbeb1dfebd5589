//! Errors of the semantic modality.

use std::path::PathBuf;

/// A `Result` whose error is [`enum@Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong in the semantic modality.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A model folder or file is missing or malformed.
    #[error("model at {path}: {reason}")]
    Model {
        /// The file or folder.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The Voyage AI API refused the key.
    #[error("Voyage AI rejected the API key (HTTP 401); check VOYAGE_API_KEY")]
    Unauthorized,
    /// The Voyage AI API failed after retries, or answered something else.
    #[error("Voyage AI: {0}")]
    Remote(String),
    /// Vectors of one index disagree in size.
    #[error("vector of {found} dimensions where {expected} were expected")]
    Dimension {
        /// What the index holds.
        expected: usize,
        /// What was given.
        found: usize,
    },
    /// The approximate-nearest-neighbour graph failed.
    #[error("HNSW: {0}")]
    Hnsw(String),
    /// Shared-layer error (I/O, framing, decoding).
    #[error(transparent)]
    Core(#[from] maguyva_core::Error),
}

impl From<Error> for maguyva_core::Error {
    fn from(e: Error) -> maguyva_core::Error {
        match e {
            Error::Core(inner) => inner,
            other => maguyva_core::Error::modality(maguyva_core::Modality::SEMANTIC, other),
        }
    }
}
