//! Embeddings learned from the indexed corpus itself, at index time: latent
//! semantic analysis. The TF-IDF matrix of terms (code-aware, stemmed) by
//! fragments is reduced by a randomized truncated SVD; a text's vector is the
//! TF-IDF weighted sum of its terms' vectors. Terms that occur in the same
//! fragments (`auth`, `login`, `token`, `session`) land near each other, so a
//! query meets code that shares its topic, not just its words. Nothing is
//! downloaded: the model is part of the index.

use super::linalg::{gram, orthonormalize, random_signs, symmetric_eigen};
use super::{Embedder, Role, Vectors, scale_to_unit};
use crate::error::{Error, Result};
use maguyva_core::{Analyzer, Array, Bytes, SectionFile, SectionWriter, TermMatrix};
use rayon::prelude::*;

/// Latent dimensions (512 bits, 8 words, once projected and packed).
/// Measured on the development
/// benchmark, the semantic modality alone (NDCG@10): 64 dimensions 0.762,
/// 96 0.773, 128 0.772, 192 0.771, 256 0.764, 512 0.749; index time grows
/// with the square of it.
pub const DEFAULT_CORPUS_DIMENSIONS: usize = 128;
/// A term's vector is its left singular vector scaled by the singular value
/// to this power: the strong topics weigh more. Measured at 128 dimensions:
/// power 0 0.772, 0.5 0.780; at 256: -1 0.689, -0.5 0.724, 0 0.764.
const SINGULAR_POWER: f64 = 0.5;
/// At most this many terms (the most frequent) get a vector.
const MAX_VOCABULARY: usize = 30_000;
/// Extra random directions for the randomized SVD.
const OVERSAMPLING: usize = 10;
/// Power iterations of the randomized SVD.
const POWER_ITERATIONS: usize = 1;
/// A corpus of at most this many documents per dimension is small: its
/// terms seen once are kept (measured on the test fixtures: "add units of
/// a product to the warehouse stock" found the inventory first only then;
/// the development repositories are all larger).
const SMALL_CORPUS_FACTOR: usize = 2;
/// A corpus gets at most one dimension per this many fragments: a small
/// repository has few topics to tell apart, and its term vectors are most
/// of its index. Fitted on the training benchmark (default preset NDCG@10,
/// semantic alone): no limit 0.875, 0.803; 2 0.875, 0.804; 4 0.876, 0.802;
/// 6 0.875, 0.798; 8 0.875, 0.793.
const DOCUMENTS_PER_DIMENSION: usize = 4;
/// The fewest dimensions that limit leaves a corpus (its rank may leave
/// fewer).
const MIN_SMALL_DIMENSIONS: usize = 16;
/// Fixed seed, so that an index is rebuilt identically.
const SEED: u64 = 0x5EED_1A7E_0000_0001;

/// A corpus-learned embedding model, read in place from the index file.
#[derive(Clone)]
pub struct CorpusModel {
    dim: usize,
    /// fst map from term to row.
    map: fst::Map<Bytes>,
    idf: Array<f32>,
    /// One row of [`row_bytes`] per term: its vector's values in 6 bits.
    codes: Bytes,
    /// One factor per term: its vector is its row's values times it.
    scales: Array<f32>,
    analyzer: Analyzer,
}

impl std::fmt::Debug for CorpusModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CorpusModel")
            .field("dim", &self.dim)
            .field("terms", &self.idf.len())
            .finish()
    }
}

impl CorpusModel {
    /// Learns a model of at most `dim` dimensions from `documents`.
    pub fn train<S: AsRef<str> + Sync>(
        documents: &[S],
        dim: usize,
        analyzer: Analyzer,
    ) -> Result<CorpusModel> {
        Ok(CorpusModel::train_with_vectors(documents, dim, analyzer)?.0)
    }

    /// Learns a model and returns it with the vectors of the documents it
    /// learned from (computed from the same counts, not tokenized again).
    pub fn train_with_vectors<S: AsRef<str> + Sync>(
        documents: &[S],
        dim: usize,
        analyzer: Analyzer,
    ) -> Result<(CorpusModel, Vec<f32>)> {
        CorpusModel::train_from_terms(&TermMatrix::build(documents, analyzer), dim)
    }

    /// [`CorpusModel::train_with_vectors`] over documents already analyzed;
    /// the model analyzes queries with the matrix's analyzer.
    pub fn train_from_terms(matrix: &TermMatrix, dim: usize) -> Result<(CorpusModel, Vec<f32>)> {
        let analyzer = matrix.analyzer();
        let df = matrix.document_frequencies();
        let n_docs = matrix.documents().max(1) as f32;
        // Terms in two documents or more: a term seen once relates to
        // nothing. Except in a small corpus, where the decomposition keeps
        // nearly every direction, so a term seen once still finds its
        // document, and such terms are much of what tells documents apart.
        let min_df = if matrix.documents() <= SMALL_CORPUS_FACTOR * dim { 1 } else { 2 };
        let mut terms: Vec<(&str, u32, u32)> = matrix
            .terms()
            .iter()
            .zip(&df)
            .enumerate()
            .filter(|&(_, (_, &c))| c >= min_df)
            .map(|(i, (t, &c))| (t.as_str(), i as u32, c))
            .collect();
        if terms.len() > MAX_VOCABULARY {
            terms.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(b.0)));
            terms.truncate(MAX_VOCABULARY);
            terms.sort_by(|a, b| a.0.cmp(b.0));
        }
        let mut builder = fst::MapBuilder::memory();
        for (i, (t, _, _)) in terms.iter().enumerate() {
            builder
                .insert(t.as_bytes(), i as u64)
                .map_err(|e| Error::Model { path: "corpus".into(), reason: e.to_string() })?;
        }
        let vocabulary = builder
            .into_inner()
            .map_err(|e| Error::Model { path: "corpus".into(), reason: e.to_string() })?;
        let idf: Vec<f32> = terms.iter().map(|&(_, _, c)| (1.0 + n_docs / c as f32).ln()).collect();
        // Each matrix term's row in the model, if it has one.
        let mut index = vec![u32::MAX; matrix.terms().len()];
        for (row, &(_, t, _)) in terms.iter().enumerate() {
            index[t as usize] = row as u32;
        }
        let v = terms.len();
        // Columns of the TF-IDF matrix, unit length.
        let columns: Vec<Vec<(u32, f32)>> = (0..matrix.documents())
            .into_par_iter()
            .map(|doc| {
                let mut col: Vec<(u32, f32)> = matrix
                    .document(doc)
                    .iter()
                    .filter_map(|&(t, tf)| {
                        let i = *index.get(t as usize)?;
                        (i != u32::MAX).then(|| (i, (1.0 + (tf as f32).ln()) * idf[i as usize]))
                    })
                    .collect();
                let norm = col.iter().map(|(_, w)| w * w).sum::<f32>().sqrt().max(1e-12);
                col.iter_mut().for_each(|(_, w)| *w /= norm);
                col
            })
            .collect();
        let d = columns.len();
        let k = dim
            .min(v.saturating_sub(1))
            .min(d.saturating_sub(1))
            .min((d / DOCUMENTS_PER_DIMENSION).max(MIN_SMALL_DIMENSIONS))
            .max(1);
        let l = (k + OVERSAMPLING).min(v).min(d).max(k);
        let vectors = if v == 0 || d == 0 { Vec::new() } else { randomized_svd(&columns, v, k, l) };
        let vectors = if vectors.is_empty() { vec![0.0; v * k] } else { vectors };
        // Stored in 6 bits a value (under a fifth of the size); the
        // documents are embedded with the rounded vectors, as queries will
        // be.
        let (codes, scales) = quantize(&vectors, k);
        let vectors = dequantize(&codes, &scales, k);
        let codes = pack(&codes, k);
        // A document's vector is the weighted sum of its terms' vectors: the
        // same as embedding its text, since the weights are the column's.
        let mut doc_vectors = vec![0f32; d * k];
        doc_vectors.par_chunks_mut(k).zip(columns.par_iter()).for_each(|(out, col)| {
            for &(t, w) in col {
                for (o, x) in out.iter_mut().zip(&vectors[t as usize * k..(t as usize + 1) * k]) {
                    *o += w * x;
                }
            }
            scale_to_unit(out);
        });
        let model = CorpusModel::assemble(
            k,
            Bytes::from_vec(vocabulary),
            idf.into(),
            (Bytes::from_vec(codes), scales.into()),
            analyzer,
        )?;
        Ok((model, doc_vectors))
    }

    fn assemble(
        dim: usize,
        vocabulary: Bytes,
        idf: Array<f32>,
        (codes, scales): (Bytes, Array<f32>),
        analyzer: Analyzer,
    ) -> Result<CorpusModel> {
        let map = fst::Map::new(vocabulary)
            .map_err(|e| Error::Model { path: "corpus".into(), reason: e.to_string() })?;
        if map.len() != idf.len()
            || codes.len() != idf.len() * row_bytes(dim)
            || scales.len() != idf.len()
        {
            return Err(Error::Model {
                path: "corpus".into(),
                reason: "vocabulary and vectors disagree".into(),
            });
        }
        Ok(CorpusModel { dim, map, idf, codes, scales, analyzer })
    }

    /// Adds the model to a file being written, as sections `c.meta`
    /// (dimensions and analyzer), `c.vocab` (fst), `c.idf`, `c.q6` (term
    /// vectors in 6 bits) and `c.scale` (one factor per term).
    pub fn write(&self, w: &mut SectionWriter) -> maguyva_core::Result<()> {
        w.encoded("c.meta", "corpus model", &(self.dim as u64, self.analyzer))?
            .bytes("c.vocab", self.map.as_fst().as_bytes())?
            .array("c.idf", &self.idf)?
            .bytes("c.q6", &self.codes)?
            .array("c.scale", &self.scales)?;
        Ok(())
    }

    /// The model written by [`CorpusModel::write`] into `file`, in place.
    pub fn open(file: &SectionFile) -> Result<CorpusModel> {
        let (dim, analyzer): (u64, Analyzer) = file.decode("c.meta")?;
        CorpusModel::assemble(
            dim as usize,
            file.bytes("c.vocab")?,
            file.array("c.idf")?,
            (file.bytes("c.q6")?, file.array("c.scale")?),
            analyzer,
        )
    }

    /// Number of terms with a vector.
    pub fn vocabulary_len(&self) -> usize {
        self.idf.len()
    }

    fn embed_one(&self, text: &str, out: &mut [f32]) {
        let map = &self.map;
        // Terms in vocabulary order, counted by runs: the sum below is then
        // taken in one order every time, so a text always gets the same
        // vector to the last bit (a hash map's order changes from run to
        // run, and with it the rounding, and near-ties between results).
        let mut terms: Vec<u64> = Vec::new();
        self.analyzer.for_each_term(text, |t| {
            if let Some(i) = map.get(t) {
                terms.push(i);
            }
        });
        terms.sort_unstable();
        for run in terms.chunk_by(|a, b| a == b) {
            let (i, c) = (run[0] as usize, run.len());
            let w = (1.0 + (c as f32).ln()) * self.idf[i];
            let scale = w * self.scales[i];
            let row = &self.codes[i * row_bytes(self.dim)..(i + 1) * row_bytes(self.dim)];
            for_each_code(row, self.dim, |j, q| out[j] += scale * f32::from(q));
        }
        scale_to_unit(out);
    }
}

/// The largest code of a value: values are stored in 6 bits, -31 to 31.
const CODE_MAX: f32 = 31.0;

/// Bits per stored value.
const CODE_BITS: usize = 6;

/// Bytes of one term's row of `dim` values.
fn row_bytes(dim: usize) -> usize {
    (dim * CODE_BITS).div_ceil(8)
}

/// Rows of `dim` values as codes from -31 to 31: a row's largest magnitude
/// maps to 31, so a value's error is at most half its row's step.
fn quantize(vectors: &[f32], dim: usize) -> (Vec<i8>, Vec<f32>) {
    let mut codes = Vec::with_capacity(vectors.len());
    let mut scales = Vec::with_capacity(vectors.len() / dim.max(1));
    for row in vectors.chunks(dim.max(1)) {
        let max = row.iter().fold(0f32, |m, x| m.max(x.abs()));
        let scale = if max > 0.0 { max / CODE_MAX } else { 0.0 };
        scales.push(scale);
        codes.extend(row.iter().map(|&x| match scale > 0.0 {
            true => (x / scale).round().clamp(-CODE_MAX, CODE_MAX) as i8,
            false => 0,
        }));
    }
    (codes, scales)
}

/// Packs rows of `dim` codes into [`row_bytes`] each: code `j` of a row, plus
/// 32, in bits `6j..6j + 6` of the row read as one little-endian number.
fn pack(codes: &[i8], dim: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(codes.len().div_ceil(dim.max(1)) * row_bytes(dim));
    for row in codes.chunks(dim.max(1)) {
        let start = out.len();
        out.resize(start + row_bytes(dim), 0);
        for (j, &q) in row.iter().enumerate() {
            let v = u16::from((q as u8).wrapping_add(32) & 0x3f) << ((j * CODE_BITS) % 8);
            let at = start + j * CODE_BITS / 8;
            out[at] |= v as u8;
            if let Some(next) = out.get_mut(at + 1) {
                *next |= (v >> 8) as u8;
            }
        }
    }
    out
}

/// Calls `f(j, code)` for each of the `dim` codes of a packed row.
fn for_each_code(row: &[u8], dim: usize, mut f: impl FnMut(usize, i8)) {
    for j in 0..dim {
        let at = j * CODE_BITS / 8;
        let pair = u16::from(row.get(at).copied().unwrap_or(0))
            | u16::from(row.get(at + 1).copied().unwrap_or(0)) << 8;
        let v = (pair >> ((j * CODE_BITS) % 8)) & 0x3f;
        f(j, v as i8 - 32);
    }
}

/// The vectors that [`quantize`]'s codes and scales stand for.
fn dequantize(codes: &[i8], scales: &[f32], dim: usize) -> Vec<f32> {
    codes
        .chunks(dim.max(1))
        .zip(scales)
        .flat_map(|(row, &scale)| row.iter().map(move |&q| f32::from(q) * scale))
        .collect()
}

/// Term vectors `U_k Σ_k^p` of the TF-IDF matrix `A` whose columns are
/// `columns` (`v` rows), by a randomized SVD with `l` sampled directions.
///
/// The range is sampled on the fragment side (`Aᵀ`), which is usually the
/// smaller one, so that the orthonormalizations cost fragments, not terms:
/// with `Q` an orthonormal basis of the range of `Aᵀ`, `Z = A Q` has the
/// same singular values as `A` restricted to it, the eigenvectors `W` of
/// `Zᵀ Z` give them, and `U = Z W Σ⁻¹`.
fn randomized_svd(columns: &[Vec<(u32, f32)>], v: usize, k: usize, l: usize) -> Vec<f32> {
    let omega = random_signs(v * l, SEED);
    let mut y = transpose_times(columns, &omega, l);
    for _ in 0..POWER_ITERATIONS {
        orthonormalize(&mut y, l);
        let ay = times_dense(columns, v, &y, l);
        y = transpose_times(columns, &ay, l);
    }
    orthonormalize(&mut y, l);
    let z = times_dense(columns, v, &y, l);
    let c = gram(&z, l);
    let (values, w) = symmetric_eigen(&c, l);
    // Σ^(p - 1) per direction: one Σ⁻¹ to get U, then Σ^p.
    let scale: Vec<f64> = values
        .iter()
        .take(k)
        .map(|&lambda| {
            let sigma = lambda.max(0.0).sqrt();
            if sigma > 1e-12 { sigma.powf(SINGULAR_POWER - 1.0) } else { 0.0 }
        })
        .collect();
    // W's rows, cut to k columns and scaled, so that the product below
    // reads memory in order.
    let wk: Vec<f32> = (0..l)
        .flat_map(|i| (0..k).map(move |j| (i, j)))
        .map(|(i, j)| (w[i * l + j] * scale[j]) as f32)
        .collect();
    let mut u = vec![0f32; v * k];
    u.par_chunks_mut(k).zip(z.par_chunks(l)).for_each(|(out, row)| {
        for (i, &r) in row.iter().enumerate() {
            if r != 0.0 {
                for (o, &x) in out.iter_mut().zip(&wk[i * k..(i + 1) * k]) {
                    *o += r * x;
                }
            }
        }
    });
    u
}

/// `A X` for sparse `A` (by columns, `v` rows) and dense `X` (`d × l`).
fn times_dense(columns: &[Vec<(u32, f32)>], v: usize, x: &[f32], l: usize) -> Vec<f32> {
    let mut y = vec![0f32; v * l];
    // Each task owns a range of terms (rows of the result) and scans every
    // column for them: the scan is cheap next to the row updates, and no
    // two tasks write the same row.
    let terms_per_task = v.div_ceil(rayon::current_num_threads().max(1) * 4).max(1);
    y.par_chunks_mut(terms_per_task * l).enumerate().for_each(|(task, part)| {
        let first = (task * terms_per_task) as u32;
        let last = first + (part.len() / l.max(1)) as u32;
        for (doc, col) in columns.iter().enumerate() {
            let xr = &x[doc * l..(doc + 1) * l];
            let start = col.partition_point(|&(t, _)| t < first);
            for &(t, w) in col[start..].iter().take_while(|&&(t, _)| t < last) {
                let at = (t - first) as usize * l;
                for (a, b) in part[at..at + l].iter_mut().zip(xr) {
                    *a += w * b;
                }
            }
        }
    });
    y
}

/// `Aᵀ Y` for sparse `A` (by columns) and dense `Y` (`v × l`).
fn transpose_times(columns: &[Vec<(u32, f32)>], y: &[f32], l: usize) -> Vec<f32> {
    let mut z = vec![0f32; columns.len() * l];
    z.par_chunks_mut(l).zip(columns.par_iter()).for_each(|(out, col)| {
        for &(t, w) in col {
            for (a, b) in out.iter_mut().zip(&y[t as usize * l..(t as usize + 1) * l]) {
                *a += w * b;
            }
        }
    });
    z
}

impl Embedder for CorpusModel {
    fn identity(&self) -> String {
        format!("corpus-lsa:v3:{}:{}", self.dim, self.analyzer.identity())
    }

    fn dimension(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str], _role: Role) -> Result<Vectors> {
        Vectors::dense_rows(self.dim, texts, |t, out| {
            self.embed_one(t, out);
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn co_occurring_terms_meet() {
        // Two topics; "login" and "credentials" never share a document but
        // both live with "password". Two latent dimensions cannot keep the
        // three kinds of document apart, so the password ones merge.
        let mut docs = Vec::new();
        for i in 0..40 {
            docs.push(format!(
                "fn check_password_{i}(login: &str) -> bool {{ password.verify(login) }}"
            ));
            docs.push(format!(
                "fn hash_password_{i}(credentials: Credentials) {{ password.hash(credentials) }}"
            ));
            docs.push(format!("fn render_chart_{i}(pixels: Canvas) {{ draw.pixels(axis) }}"));
        }
        let model = CorpusModel::train(&docs, 2, Analyzer::default()).unwrap();
        let v = |t: &str| match model.embed(&[t], Role::Query).unwrap() {
            Vectors::Dense { data, .. } => data,
            Vectors::Binary { .. } => unreachable!("dense model"),
        };
        let login = v("login");
        assert!(cosine(&login, &v("credentials")) > cosine(&login, &v("pixels")) + 0.3);
        assert_eq!(v("unknownword").iter().filter(|x| **x != 0.0).count(), 0);
    }

    #[test]
    fn a_text_always_gets_the_same_vector() {
        let docs: Vec<String> = (0..60)
            .map(|i| format!("fn step_{i}(cart: Cart, price: u32) {{ discount(price, {i}) + tax(cart) }} // warehouse stock order {}", i % 7))
            .collect();
        let model = CorpusModel::train(&docs, 8, Analyzer::default()).unwrap();
        let text = "the cart price with discount and tax, stock in the warehouse, order step";
        let first = model.embed(&[text], Role::Query).unwrap();
        for _ in 0..50 {
            // Bit for bit: a different rounding reorders near-ties.
            assert_eq!(model.embed(&[text], Role::Query).unwrap(), first);
        }
    }

    #[test]
    fn quantized_rows_stay_within_half_a_step() {
        let rows = [0.5f32, -1.0, 0.25, 0.0, 0.0, 0.0, 1e-3, 3.0, -2.9];
        let (codes, scales) = quantize(&rows, 3);
        assert_eq!(codes[1], -31);
        assert_eq!(&codes[3..6], &[0, 0, 0]);
        let back = dequantize(&codes, &scales, 3);
        for ((x, y), s) in rows.iter().zip(&back).zip(scales.iter().flat_map(|&s| [s; 3])) {
            assert!((x - y).abs() <= s / 2.0 + 1e-7, "{x} {y}");
        }
    }

    proptest::proptest! {
        #[test]
        fn packed_rows_unpack_to_their_codes(
            rows in proptest::collection::vec(-31i8..=31, 0..200),
            dim in 1usize..20,
        ) {
            let n = rows.len() / dim * dim;
            let packed = pack(&rows[..n], dim);
            proptest::prop_assert_eq!(packed.len(), n / dim * row_bytes(dim));
            let mut back = Vec::new();
            for row in packed.chunks(row_bytes(dim)) {
                for_each_code(row, dim, |j, q| {
                    assert_eq!(j, back.len() % dim);
                    back.push(q);
                });
            }
            proptest::prop_assert_eq!(&back[..], &rows[..n]);
        }
    }

    #[test]
    fn tiny_and_empty_corpora() {
        assert!(CorpusModel::train::<&str>(&[], 64, Analyzer::default()).is_ok());
        let m =
            CorpusModel::train(&["alpha beta", "alpha gamma"], 64, Analyzer::default()).unwrap();
        assert!(m.dimension() >= 1);
        assert_eq!(m.embed(&["alpha"], Role::Document).unwrap().len(), 1);
    }
}
