//! Errors of the graph modality.

/// A `Result` whose error is [`enum@Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong in the graph modality.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An edge or definition names a node that does not exist.
    #[error("the graph refers to node {0}, which does not exist")]
    MissingNode(u32),
    /// Shared-layer error (I/O, framing, decoding).
    #[error(transparent)]
    Core(#[from] maguyva_core::Error),
}

impl From<Error> for maguyva_core::Error {
    fn from(e: Error) -> maguyva_core::Error {
        match e {
            Error::Core(inner) => inner,
            other => maguyva_core::Error::modality(maguyva_core::Modality::GRAPH, other),
        }
    }
}
