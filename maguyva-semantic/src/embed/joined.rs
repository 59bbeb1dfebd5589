//! The corpus model and the code model joined: a text's vector is its
//! corpus-model vector set end to end with its code-model vector in the
//! code model's leading dimensions (both of unit length, the second scaled
//! by [`CODE_MODEL_WEIGHT`]; a query's through the code model's query map,
//! [`CodeModel::embed_as`]), scaled to unit length again. The corpus model
//! knows the repository's own vocabulary and topics; the code model knows
//! what words mean in code at large. Their cosine is then a weighted sum of
//! the two models' cosines.

use super::{CodeModel, CorpusModel, Embedder, Role, Vectors, scale_to_unit};
use crate::error::{Error, Result};
use std::sync::Arc;

/// Weight of the code model's half of a joined vector. Fitted on the
/// training benchmark (semantic modality alone, NDCG@10; the corpus model
/// alone 0.802): 0.7 gave 0.824, 1.0 0.826, 1.4 0.818.
pub const CODE_MODEL_WEIGHT: f32 = 1.0;

/// A repository gets one dimension of the code model per this many
/// documents, from [`MIN_CODE_DIMENSIONS`] to the model's own (whose
/// dimensions come in the order of their weight, [`CodeModel::principal`]):
/// as with the corpus model, a small repository has fewer topics to tell
/// apart, and its vectors are a larger share of its index. Fitted on the
/// training benchmark (semantic modality alone / default preset, NDCG@10):
/// this rule 0.818 / 0.877; every repository at 256 dimensions 0.825 /
/// 0.877, at 128 0.820 / 0.876, at 64 0.817 / 0.877, at 48 0.815 / 0.876;
/// one dimension per 16 bytes of an average document 0.816 / 0.877. At 256
/// dimensions the smallest development repository's index was 1.76 times
/// its source; with this rule it is 1.49, within the 1.5 it is held to.
pub const DOCUMENTS_PER_CODE_DIMENSION: usize = 4;

/// The fewest code-model dimensions a repository gets.
pub const MIN_CODE_DIMENSIONS: usize = 32;

/// The code model's dimensions joined for a corpus of `documents`: one per
/// [`DOCUMENTS_PER_CODE_DIMENSION`] documents, from [`MIN_CODE_DIMENSIONS`]
/// to the model's own.
pub fn code_dimensions_for(documents: usize, model_dim: usize) -> usize {
    (documents / DOCUMENTS_PER_CODE_DIMENSION).max(MIN_CODE_DIMENSIONS).min(model_dim).max(1)
}

/// A corpus model joined with a code model (see the module documentation).
#[derive(Debug, Clone)]
pub struct JoinedModel {
    corpus: Arc<CorpusModel>,
    code: Arc<CodeModel>,
    code_dims: usize,
}

impl JoinedModel {
    /// The two models joined, the code model in its first `code_dims`
    /// dimensions (at most its own).
    pub fn new(corpus: Arc<CorpusModel>, code: Arc<CodeModel>, code_dims: usize) -> JoinedModel {
        let code_dims = code_dims.clamp(1, code.dimension());
        JoinedModel { corpus, code, code_dims }
    }

    /// The corpus model.
    pub fn corpus(&self) -> &Arc<CorpusModel> {
        &self.corpus
    }

    /// The code model.
    pub fn code(&self) -> &Arc<CodeModel> {
        &self.code
    }

    /// The code model's dimensions joined.
    pub fn code_dimensions(&self) -> usize {
        self.code_dims
    }

    /// Joined vectors, row after row, from the two models' vectors of the
    /// same texts (row after row, each of unit length or zero).
    pub fn join(&self, corpus: &[f32], code: &[f32]) -> Result<Vec<f32>> {
        let (da, db) = (self.corpus.dimension(), self.code_dims);
        let n = corpus.len() / da.max(1);
        if corpus.len() != n * da || code.len() != n * db {
            return Err(Error::Dimension { expected: n * db, found: code.len() });
        }
        let mut out = Vec::with_capacity(n * (da + db));
        for (a, b) in corpus.chunks_exact(da.max(1)).zip(code.chunks_exact(db.max(1))) {
            let start = out.len();
            out.extend_from_slice(a);
            out.extend(b.iter().map(|x| x * CODE_MODEL_WEIGHT));
            scale_to_unit(&mut out[start..]);
        }
        Ok(out)
    }
}

impl Embedder for JoinedModel {
    fn identity(&self) -> String {
        format!(
            "joined:v2:{}+{}[..{}]*{CODE_MODEL_WEIGHT}",
            self.corpus.identity(),
            self.code.identity(),
            self.code_dims
        )
    }

    fn dimension(&self) -> usize {
        self.corpus.dimension() + self.code_dims
    }

    fn embed(&self, texts: &[&str], role: Role) -> Result<Vectors> {
        let a = self.corpus.embed(texts, role)?.into_dense()?;
        let b = self.code.embed_as(texts, self.code_dims, role)?.into_dense()?;
        Ok(Vectors::Dense { dim: self.dimension(), data: self.join(&a, &b)? })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use maguyva_core::Analyzer;

    fn models() -> JoinedModel {
        let docs = [
            "connect the socket to the host and port",
            "parse the configuration file into settings",
            "open a tcp connection with a timeout",
            "read settings from a yaml config",
        ];
        let corpus = CorpusModel::train(&docs, 4, Analyzer::default()).expect("trains");
        let code = code_model();
        JoinedModel::new(Arc::new(corpus), Arc::new(code), 2)
    }

    /// Four terms in two dimensions: connect and socket near the first
    /// axis, config and set near the second.
    fn code_model() -> CodeModel {
        let terms: Vec<String> = ["connect", "socket", "config", "set"].map(String::from).to_vec();
        let vectors = vec![1.0, 0.1, 0.9, 0.0, 0.0, 1.0, 0.1, 0.9];
        CodeModel::from_vectors(&terms, &vectors, 2, Analyzer::default(), serde_json::Value::Null)
            .expect("a valid model")
    }

    #[test]
    fn joined_vectors_are_both_halves_weighted_and_unit() {
        let m = models();
        let texts = ["connect to the socket", "config settings", "zzz"];
        let a = m.corpus().embed(&texts, Role::Query).and_then(Vectors::into_dense).expect("dense");
        let b = m.code().embed(&texts, Role::Query).and_then(Vectors::into_dense).expect("dense");
        let j = m.embed(&texts, Role::Query).and_then(Vectors::into_dense).expect("dense");
        let (da, d) = (m.corpus().dimension(), m.dimension());
        assert_eq!(j.len(), 3 * d);
        for i in 0..2 {
            let row = &j[i * d..(i + 1) * d];
            let norm = row.iter().map(|x| x * x).sum::<f32>().sqrt();
            assert!((norm - 1.0).abs() < 1e-4, "row {i} has norm {norm}");
            // The halves keep their directions: the ratio of any two
            // coordinates is the source's.
            let raw: Vec<f32> = a[i * da..(i + 1) * da]
                .iter()
                .copied()
                .chain(b[i * 2..(i + 1) * 2].iter().map(|x| x * CODE_MODEL_WEIGHT))
                .collect();
            let rn = raw.iter().map(|x| x * x).sum::<f32>().sqrt();
            for (x, y) in row.iter().zip(&raw) {
                assert!((x - y / rn).abs() < 1e-5);
            }
        }
        assert!(j[2 * d..].iter().all(|&x| x == 0.0), "a text of unknown terms stays zero");
        assert!(m.identity().contains(&m.corpus().identity()));
        assert!(m.identity().contains(&m.code().identity()));
    }

    #[test]
    fn code_dimensions_grow_with_the_corpus_up_to_the_models() {
        assert_eq!(code_dimensions_for(0, 256), MIN_CODE_DIMENSIONS);
        assert_eq!(code_dimensions_for(100, 256), MIN_CODE_DIMENSIONS);
        assert_eq!(code_dimensions_for(400, 256), 100);
        assert_eq!(code_dimensions_for(100_000, 256), 256);
        assert_eq!(code_dimensions_for(100, 8), 8);
        // Joined with fewer dimensions, the code half is its leading ones.
        let m = models();
        let one = JoinedModel::new(m.corpus().clone(), m.code().clone(), 1);
        assert_eq!(one.dimension(), m.corpus().dimension() + 1);
        assert_ne!(one.identity(), m.identity());
        let v = one.embed(&["socket socket"], Role::Query).and_then(Vectors::into_dense);
        let v = v.expect("dense");
        let code_half = v[m.corpus().dimension()];
        assert!(code_half > 0.0, "the first code dimension of socket is positive: {v:?}");
    }

    #[test]
    fn queries_take_the_code_models_query_map_and_documents_do_not() {
        let m = models();
        // A map that sends every query to the code model's second axis.
        let mapped = code_model().with_query_map(vec![0.0, 1.0, 0.0, 1.0]).expect("2 x 2");
        let mapped = JoinedModel::new(m.corpus().clone(), Arc::new(mapped), 2);
        let texts = ["connect to the socket"];
        let dense = |model: &JoinedModel, role| {
            model.embed(&texts, role).and_then(Vectors::into_dense).expect("dense")
        };
        assert_eq!(dense(&mapped, Role::Document), dense(&m, Role::Document));
        let (q, da) = (dense(&mapped, Role::Query), m.corpus().dimension());
        assert_eq!(q[da], 0.0, "{q:?}");
        assert!(q[da + 1] > 0.0, "{q:?}");
        assert_ne!(mapped.identity(), m.identity());
    }

    #[test]
    fn rows_of_other_lengths_are_refused() {
        let m = models();
        let da = m.corpus().dimension();
        assert!(m.join(&vec![0.0; da * 2], &[0.0; 2]).is_err());
    }
}
