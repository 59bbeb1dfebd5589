//! Errors of the structural modality.

use maguyva_core::Language;

/// A `Result` whose error is [`enum@Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong in the structural modality.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A language's extraction query does not compile against its grammar.
    #[error("the {language} symbol query does not compile: {message}")]
    Query {
        /// The language.
        language: Language,
        /// tree-sitter's message.
        message: String,
    },
    /// A file could not be parsed.
    #[error("parse failed: {0}")]
    Parse(String),
    /// Building the name dictionary failed.
    #[error("building the symbol dictionary: {0}")]
    NameDict(#[from] fst::Error),
    /// Shared-layer error (I/O, framing, decoding).
    #[error(transparent)]
    Core(#[from] maguyva_core::Error),
}

impl From<Error> for maguyva_core::Error {
    fn from(e: Error) -> maguyva_core::Error {
        match e {
            Error::Core(inner) => inner,
            other => maguyva_core::Error::modality(maguyva_core::Modality::STRUCTURAL, other),
        }
    }
}
