//! Errors of the text modality.

/// A `Result` whose error is [`enum@Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong in the text modality.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The regular expression does not compile.
    #[error("invalid regex: {0}")]
    InvalidRegex(String),
    /// Building the term dictionary failed.
    #[error("building the term dictionary: {0}")]
    TermDict(#[from] fst::Error),
    /// A stored posting list does not decode (the number is where it starts).
    #[error("the posting list at byte {0} is damaged")]
    DamagedPostings(u64),
    /// Shared-layer error (I/O, framing, decoding).
    #[error(transparent)]
    Core(#[from] maguyva_core::Error),
}

impl From<Error> for maguyva_core::Error {
    fn from(e: Error) -> maguyva_core::Error {
        match e {
            Error::Core(inner) => inner,
            Error::InvalidRegex(msg) => {
                maguyva_core::Error::InvalidQuery(format!("invalid regex: {msg}"))
            }
            other => maguyva_core::Error::modality(maguyva_core::Modality::TEXT, other),
        }
    }
}
