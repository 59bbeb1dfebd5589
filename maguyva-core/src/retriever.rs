//! The trait every modality implements.

use crate::error::Result;
use crate::hit::Hit;
use crate::modality::Modality;
use crate::query::Query;

/// An independent retriever: a query in, its own ranked list of hits out,
/// best first. Object-safe, so a caller can hold `Vec<Box<dyn Retriever>>`
/// and run them side by side.
pub trait Retriever: Send + Sync {
    /// Which modality this is.
    fn modality(&self) -> Modality;

    /// At most `limit` hits for `query`, best first.
    fn search(&self, query: &Query, limit: usize) -> Result<Vec<Hit>>;
}
