//! Embedders: text in, vectors out. Three providers: [`CorpusModel`]
//! (latent semantic analysis learned from the indexed corpus; dense
//! vectors), [`StaticModel`] (a model2vec-format folder; dense vectors) and
//! [`VoyageClient`] (Voyage AI; packed binary vectors). Queries and
//! documents are embedded by the same embedder but told apart, since some
//! models (Voyage) encode them differently. An embedder's identity is
//! recorded in the index, so that a different embedder re-embeds.

mod code_model;
mod corpus;
mod joined;
pub(crate) mod linalg;
#[cfg(feature = "model2vec")]
mod static_model;
#[cfg(feature = "voyage")]
mod voyage;

pub use code_model::{CODE_MODEL_FORMAT, CodeModel, CodeModelMeta};
pub use corpus::{CorpusModel, DEFAULT_CORPUS_DIMENSIONS};
pub use joined::{
    CODE_MODEL_WEIGHT, DOCUMENTS_PER_CODE_DIMENSION, JoinedModel, MIN_CODE_DIMENSIONS,
    code_dimensions_for,
};
#[cfg(feature = "model2vec")]
pub use static_model::StaticModel;
#[cfg(feature = "voyage")]
pub use voyage::{VoyageClient, VoyageConfig};

/// The output dimensions `voyage-code-3` offers (bits per packed vector).
pub const VOYAGE_DIMENSIONS: [usize; 4] = [256, 512, 1024, 2048];

use crate::error::Result;

/// Scales `v` to unit length (a zero vector stays zero).
pub(crate) fn scale_to_unit(v: &mut [f32]) {
    let norm = crate::pack::norm(v);
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

/// Sets `out` to `v` times `map` (`v.len()` rows of `map.len() / v.len()`
/// values), in the map's first `out.len()` columns: a query map's product,
/// row by row so that it runs over contiguous values.
pub(crate) fn times_map(v: &[f32], map: &[f32], out: &mut [f32]) {
    out.fill(0.0);
    for (&x, row) in v.iter().zip(map.chunks_exact(map.len() / v.len().max(1))) {
        if x != 0.0 {
            out.iter_mut().zip(row).for_each(|(o, &m)| *o += x * m);
        }
    }
}

/// Whether a text is a query or a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A search query.
    Query,
    /// A fragment of code.
    Document,
}

/// Embeddings of several texts.
#[derive(Debug, Clone, PartialEq)]
pub enum Vectors {
    /// Full-precision vectors, row after row.
    Dense {
        /// Dimensions per vector.
        dim: usize,
        /// `n * dim` values.
        data: Vec<f32>,
    },
    /// Binary vectors already packed by the provider.
    Binary {
        /// Bits per vector.
        bits: usize,
        /// `n * words(bits)` words.
        words: Vec<u64>,
    },
}

impl Vectors {
    /// Number of vectors.
    pub fn len(&self) -> usize {
        match self {
            Vectors::Dense { dim, data } => data.len() / (*dim).max(1),
            Vectors::Binary { bits, words } => words.len() / crate::pack::words_for(*bits).max(1),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The full-precision values, row after row; an error for binary
    /// vectors.
    pub fn into_dense(self) -> Result<Vec<f32>> {
        match self {
            Vectors::Dense { data, .. } => Ok(data),
            Vectors::Binary { bits, .. } => {
                Err(crate::error::Error::Dimension { expected: 0, found: bits })
            }
        }
    }

    /// Dense vectors of `dim` dimensions, one per text, each written in
    /// parallel by `embed_one` into its zeroed row.
    pub(crate) fn dense_rows<F>(dim: usize, texts: &[&str], embed_one: F) -> Result<Vectors>
    where
        F: Fn(&str, &mut [f32]) -> Result<()> + Sync,
    {
        use rayon::prelude::*;
        let mut data = vec![0f32; texts.len() * dim];
        data.par_chunks_mut(dim.max(1))
            .zip(texts.par_iter())
            .try_for_each(|(out, t)| embed_one(t, out))?;
        Ok(Vectors::Dense { dim, data })
    }
}

/// Turns text into vectors.
pub trait Embedder: Send + Sync + std::fmt::Debug {
    /// A name and version, recorded in the index manifest: an index built by
    /// another embedder is rebuilt.
    fn identity(&self) -> String;

    /// Dimensions (dense) or bits (binary) of a vector.
    fn dimension(&self) -> usize;

    /// Embeds texts, in order.
    fn embed(&self, texts: &[&str], role: Role) -> Result<Vectors>;
}
