//! The vector index: one packed binary code per fragment, searched by exact
//! Hamming scan or, from a size threshold up, by HNSW. Full-precision
//! vectors are centred on the corpus mean and packed as a random projection
//! (four sign bits per dimension), and int8 copies of them rescore the best
//! candidates; codes a provider returns already packed (Voyage) are stored
//! as given and ranked by Hamming distance alone. Vectors of fragments whose
//! text is unchanged are reused from the previous index. Format:
//! `doc/format/semantic.md`.

use crate::context::{FILE_CONTEXT_WEIGHT, add_file_context, context_hashes};
use crate::embed::{
    CodeModel, CorpusModel, Embedder, JoinedModel, Role, Vectors, code_dimensions_for,
};
use crate::error::{Error, Result};
#[cfg(feature = "hnsw")]
use crate::hnsw::{EF_SEARCH, HnswIndex};
use crate::pack::{Projection, cosine_int8_normed, mean, norm, pack, to_int8, words_for};
use crate::scan;
use maguyva_core::store::FormatVersion;
use maguyva_core::{Array, SectionFile, SectionWriter, TermMatrix};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// The semantic index's file inside a generation folder.
pub const SEMANTIC_FILE: &str = "semantic.mgv";
/// Base name of the HNSW files beside it.
#[cfg(feature = "hnsw")]
const HNSW_BASENAME: &str = "semantic";

/// Semantic index format. Changelog: v1 initial; v2 codes of full-precision
/// vectors are a random projection (`projected_bits`); v3 sections read in
/// place; v4 the corpus model's term vectors in 8 bits (`c.q8`, `c.scale`);
/// v5 in 6 bits (`c.q6`); v6 sectioned-file entries of 40 bytes (small files
/// compressed); v7 codes projected by random rotations (Walsh-Hadamard), not
/// a dense random matrix; v8 `meta` names the code model joined with the
/// corpus model; v9 an index of fewer than [`DEFAULT_DENSE_SCAN_LIMIT`]
/// full-precision vectors has no binary codes (`bits` 0), and `meta` says
/// how many of the code model's dimensions are joined; v10 vectors take in
/// their file's ([`crate::FILE_CONTEXT_WEIGHT`], `meta.file_context`) and
/// `hashes` are [`crate::context_hashes`].
pub const SEMANTIC_FORMAT: FormatVersion =
    FormatVersion { kind: *b"SEMA", current: 10, oldest: 10 };

/// Below this many vectors the exact scan is used; at and above it, HNSW.
/// Set from the criterion benchmark `benches/benches/semantic.rs`: the scan
/// was as fast as HNSW at recall 0.95 up to the largest size measured.
pub const DEFAULT_HNSW_THRESHOLD: usize = 500_000;

/// Below this many full-precision vectors (and unless an HNSW graph is
/// built) no binary codes are made: a search scans the int8 vectors, which
/// ranks exactly as their cosines do, and a small repository's index does
/// without the codes' bytes (a third of its vectors' size). The largest
/// development repository that needs it to stay within 1.5 times its
/// source has 1,100 vectors (bash-it). `benches/benches/semantic_scan.rs`
/// times it (joined vectors of 384 dimensions, a query): 0.40 ms against
/// 0.11 ms for codes and rescoring at 2,047 vectors, 0.83 ms against 0.14
/// ms at 4,095.
pub const DEFAULT_DENSE_SCAN_LIMIT: usize = 2048;

/// Sign bits per dimension of a full-precision vector: codes are a random
/// projection (SimHash) to this many times more bits than dimensions, since
/// one sign per dimension tracks the angle coarsely. Measured on the
/// development benchmark, the semantic modality alone ranking by Hamming
/// distance only (NDCG@10; full precision 0.783): one sign per dimension
/// (128 bits) 0.689, 2 per dimension 0.746, 4 per dimension 0.760, 8 per
/// dimension 0.769.
pub const PROJECTED_BITS_PER_DIMENSION: usize = 4;

/// Candidates fetched per result before rescoring with full precision.
pub const RESCORE_OVERSAMPLING: usize = 4;

/// Nearest codes as `(index, Hamming distance)`.
#[cfg(feature = "hnsw")]
pub type Neighbours = Vec<(u32, u32)>;

/// How a search runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchOptions {
    /// Rescore binary candidates with the int8 vectors when there are any.
    pub rescore: bool,
    /// Scan every code even when an HNSW graph exists.
    pub exact: bool,
    /// Rank every vector by full-precision cosine (no binary step); for
    /// measuring what binary codes lose.
    pub full_precision: bool,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions { rescore: true, exact: false, full_precision: false }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct HnswFiles {
    graph_crc: u32,
    data_crc: u32,
}

/// What the index holds; the arrays are read in place from the index file.
#[derive(Debug, Clone, Default)]
struct Stored {
    identity: String,
    bits: usize,
    words: usize,
    center: Array<f32>,
    codes: Array<u64>,
    /// Dimensions of the int8 vectors (0 when the provider gives only bits).
    dense_dim: usize,
    scales: Array<f32>,
    int8: Array<i8>,
    /// xxh3 of each document's text (mixed with its file's, with file
    /// context), to reuse vectors of unchanged fragments.
    hashes: Array<u64>,
    corpus: Option<Arc<CorpusModel>>,
    /// The code model joined with the corpus model, if any.
    code: Option<Arc<CodeModel>>,
    /// How many of the code model's leading dimensions are joined.
    code_dims: usize,
    hnsw: Option<HnswFiles>,
    /// Bits of the random projection that made the codes (0: one sign bit
    /// per dimension).
    projected_bits: usize,
    /// How much of its file's direction each vector took (0: none).
    file_context: f32,
}

/// The fixed-size part of [`Stored`], kept as the `meta` section.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Meta {
    identity: String,
    bits: u64,
    words: u64,
    dense_dim: u64,
    projected_bits: u64,
    corpus: bool,
    /// The identity of the code model joined with the corpus model.
    code: Option<String>,
    /// How many of the code model's leading dimensions are joined.
    code_dims: u64,
    hnsw: Option<HnswFiles>,
    /// How much of its file's direction each vector took (0: none).
    file_context: f32,
}

/// Builds a [`VectorIndex`].
#[derive(Debug, Clone)]
pub struct VectorIndexBuilder {
    hnsw_threshold: usize,
    dense_scan_limit: usize,
    code: Option<Arc<CodeModel>>,
    /// Each document's file, when vectors take in their file's.
    files: Option<Arc<[u32]>>,
    file_context: f32,
}

impl Default for VectorIndexBuilder {
    fn default() -> Self {
        VectorIndexBuilder {
            hnsw_threshold: DEFAULT_HNSW_THRESHOLD,
            dense_scan_limit: DEFAULT_DENSE_SCAN_LIMIT,
            code: None,
            files: None,
            file_context: FILE_CONTEXT_WEIGHT,
        }
    }
}

/// Packed codes of fragments, and what is needed to search them.
#[derive(Debug)]
pub struct VectorIndex {
    s: Stored,
    #[cfg(feature = "hnsw")]
    hnsw: Option<HnswIndex>,
    projection: Option<Projection>,
}

/// What a build reused and computed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct EmbedStats {
    /// Fragments embedded now.
    pub embedded: usize,
    /// Fragments whose vectors were reused from the previous index.
    pub reused: usize,
}

impl VectorIndexBuilder {
    /// A builder with the default HNSW threshold.
    pub fn new() -> VectorIndexBuilder {
        VectorIndexBuilder::default()
    }

    /// Builds an HNSW graph when there are at least `n` vectors.
    pub fn hnsw_threshold(&mut self, n: usize) -> &mut VectorIndexBuilder {
        self.hnsw_threshold = n;
        self
    }

    /// Makes no binary codes of fewer than `n` full-precision vectors
    /// (unless an HNSW graph is built): searches scan their int8 copies.
    pub fn dense_scan_limit(&mut self, n: usize) -> &mut VectorIndexBuilder {
        self.dense_scan_limit = n;
        self
    }

    /// Bits of the binary code of each of `n` full-precision vectors of
    /// `dim` dimensions: 0 (no codes) below the dense-scan limit, unless an
    /// HNSW graph is built.
    fn code_bits_for(&self, n: usize, dim: usize) -> usize {
        match n >= self.dense_scan_limit.min(self.hnsw_threshold.max(1)) {
            true => PROJECTED_BITS_PER_DIMENSION * dim,
            false => 0,
        }
    }

    /// Says which file each document (in build order) is a fragment of, so
    /// that its vector takes in its file's ([`crate::FILE_CONTEXT_WEIGHT`]);
    /// `None` (the default) leaves each document on its own.
    pub fn files(&mut self, files: Option<Arc<[u32]>>) -> &mut VectorIndexBuilder {
        self.files = files;
        self
    }

    /// How much of its file's direction a vector takes when
    /// [`VectorIndexBuilder::files`] are given (default
    /// [`crate::FILE_CONTEXT_WEIGHT`]; 0 for none).
    pub fn file_context(&mut self, weight: f32) -> &mut VectorIndexBuilder {
        self.file_context = weight;
        self
    }

    /// The files of `n` documents and the weight of their context, when
    /// vectors take it in; an error when the files given are not `n`.
    fn context(&self, n: usize) -> Result<Option<(&[u32], f32)>> {
        match &self.files {
            Some(files) if files.len() != n => {
                Err(Error::Dimension { expected: n, found: files.len() })
            }
            Some(files) if self.file_context != 0.0 => Ok(Some((files, self.file_context))),
            _ => Ok(None),
        }
    }

    /// The hash the index keeps of each document, by which a later build
    /// finds the vectors it can copy: [`document_hash`] of its text, mixed
    /// with those of its file's other documents when vectors take in their
    /// file's ([`crate::context_hashes`]).
    pub fn document_hashes<S: AsRef<str>>(&self, documents: &[S]) -> Result<Vec<u64>> {
        let own: Vec<u64> = documents.iter().map(|d| document_hash(d.as_ref())).collect();
        Ok(match self.context(documents.len())? {
            Some((files, weight)) => context_hashes(&own, files, weight),
            None => own,
        })
    }

    /// Adds file context to the rows of `dense`, made of the documents
    /// `which` (indexes into the build's `n` documents, in that order) or of
    /// all of them.
    fn add_context(
        &self,
        dense: &mut [f32],
        dim: usize,
        n: usize,
        which: Option<&[usize]>,
    ) -> Result<()> {
        if let Some((files, weight)) = self.context(n)? {
            match which {
                Some(which) => {
                    let groups: Vec<u32> = which.iter().map(|&i| files[i]).collect();
                    add_file_context(dense, dim, &groups, weight);
                }
                None => add_file_context(dense, dim, files, weight),
            }
        }
        Ok(())
    }

    /// The weight of file context an index built of `n` documents records.
    fn context_weight(&self, n: usize) -> Result<f32> {
        Ok(self.context(n)?.map_or(0.0, |(_, w)| w))
    }

    /// Joins `code` with the corpus model of a corpus build
    /// ([`JoinedModel`]); `None` (the default) builds with the corpus model
    /// alone.
    pub fn code_model(&mut self, code: Option<Arc<CodeModel>>) -> &mut VectorIndexBuilder {
        self.code = code;
        self
    }

    /// Learns a corpus model from `documents` and indexes them with it
    /// (joined with the code model, if one is set).
    pub fn build_corpus<S: AsRef<str> + Sync>(
        &self,
        documents: &[S],
        dim: usize,
    ) -> Result<(VectorIndex, EmbedStats)> {
        let terms = TermMatrix::build(documents, maguyva_core::Analyzer::default());
        self.build_corpus_from_terms(documents, &terms, dim)
    }

    /// [`VectorIndexBuilder::build_corpus`] with `documents` already
    /// analyzed into `terms` (one row each, in order).
    pub fn build_corpus_from_terms<S: AsRef<str> + Sync>(
        &self,
        documents: &[S],
        terms: &TermMatrix,
        dim: usize,
    ) -> Result<(VectorIndex, EmbedStats)> {
        if terms.documents() != documents.len() {
            return Err(Error::Model {
                path: "corpus".into(),
                reason: "the term matrix does not describe the documents".into(),
            });
        }
        let (model, dense) = CorpusModel::train_from_terms(terms, dim)?;
        let model = Arc::new(model);
        let n = documents.len();
        let hashes: Array<u64> = self.document_hashes(documents)?.into();
        let code_dims = match &self.code {
            Some(code) => code_dimensions_for(documents.len(), code.dimension()),
            None => 0,
        };
        let (identity, dim, mut dense) = match &self.code {
            None => (model.identity(), model.dimension(), dense),
            Some(code) => {
                let joined = JoinedModel::new(model.clone(), code.clone(), code_dims);
                let code_dense = match code.embed_matrix(terms, code_dims) {
                    Some(v) => v,
                    None => {
                        let texts: Vec<&str> = documents.iter().map(|d| d.as_ref()).collect();
                        code.embed_leading(&texts, code_dims)?.into_dense()?
                    }
                };
                (joined.identity(), joined.dimension(), joined.join(&dense, &code_dense)?)
            }
        };
        self.add_context(&mut dense, dim, n, None)?;
        let file_context = self.context_weight(n)?;
        let mut s = Stored { identity, hashes, code_dims, file_context, ..Stored::default() };
        fill_dense(&mut s, dim, &dense, self.code_bits_for(n, dim));
        s.corpus = Some(model);
        s.code = self.code.clone();
        let stats = EmbedStats { embedded: documents.len(), reused: 0 };
        Ok((self.finish(s), stats))
    }

    fn finish(&self, s: Stored) -> VectorIndex {
        #[cfg(feature = "hnsw")]
        let hnsw = {
            let n = s.hashes.len();
            (n >= self.hnsw_threshold && n > 0 && s.words > 0)
                .then(|| HnswIndex::build(&s.codes, s.words))
        };
        let projection = projection_of(&s);
        VectorIndex {
            s,
            #[cfg(feature = "hnsw")]
            hnsw,
            projection,
        }
    }

    /// Indexes `documents` with the corpus model of `previous` (kept so that
    /// a refresh does not move every vector; joined with its code model if
    /// it was), which serves queries too. The
    /// vectors are centred on the centre `previous` was, so a document whose
    /// text is unchanged keeps its code and int8 vector exactly, copied
    /// instead of embedded again; `None` when `previous` has no corpus model
    /// or another code model than this builder's.
    pub fn build_with_kept_model<S: AsRef<str> + Sync>(
        &self,
        previous: &VectorIndex,
        documents: &[S],
    ) -> Result<Option<(VectorIndex, EmbedStats)>> {
        let hashes = self.document_hashes(documents)?;
        self.build_with_kept_model_hashed(previous, documents, &hashes)
    }

    /// [`VectorIndexBuilder::build_with_kept_model`] given each document's
    /// hash ([`VectorIndexBuilder::document_hashes`]): a document whose hash
    /// `previous` has is not read, so the caller may leave its text empty.
    pub fn build_with_kept_model_hashed<S: AsRef<str> + Sync>(
        &self,
        previous: &VectorIndex,
        documents: &[S],
        hashes: &[u64],
    ) -> Result<Option<(VectorIndex, EmbedStats)>> {
        let Some(model) = previous.model_embedder() else { return Ok(None) };
        let p = &previous.s;
        let dim = model.dimension();
        let same_code = match (&p.code, &self.code) {
            (None, None) => true,
            (Some(a), Some(b)) => a.identity() == b.identity(),
            _ => false,
        };
        if !same_code
            || p.dense_dim != dim
            || p.center.len() != dim
            || p.identity != model.identity()
            || p.file_context != self.context_weight(documents.len())?
        {
            return Ok(None);
        }
        if hashes.len() != documents.len() {
            return Err(Error::Dimension { expected: documents.len(), found: hashes.len() });
        }
        let known: HashMap<u64, usize> =
            p.hashes.iter().enumerate().map(|(i, &h)| (h, i)).collect();
        let missing: Vec<usize> =
            (0..documents.len()).filter(|i| !known.contains_key(&hashes[*i])).collect();
        let texts: Vec<&str> = missing.iter().map(|&i| documents[i].as_ref()).collect();
        let mut fresh = match texts.is_empty() {
            true => Vec::new(),
            false => match model.embed(&texts, Role::Document)? {
                Vectors::Dense { data, .. } => data,
                Vectors::Binary { .. } => return Ok(None),
            },
        };
        // The hashes make a file's documents fresh together.
        self.add_context(&mut fresh, dim, documents.len(), Some(&missing))?;
        // Codes are made or not as a build of these documents would; when
        // that differs from `previous`, its codes cannot be reused.
        let bits = self.code_bits_for(documents.len(), dim);
        let projection = (bits > 0).then(|| Projection::new(dim, bits));
        let words = words_for(bits);
        if words != p.words {
            return Ok(None);
        }
        let made: Vec<(Vec<u64>, f32, Vec<i8>)> = fresh
            .par_chunks_exact(dim.max(1))
            .map(|row| {
                let (scale, q) = to_int8(row);
                let code = projection.as_ref().map(|p| p.pack(row, &previous.s.center));
                (code.unwrap_or_default(), scale, q)
            })
            .collect();
        let (mut codes, mut scales, mut int8) = (Vec::new(), Vec::new(), Vec::new());
        let mut next_fresh = made.iter();
        for h in hashes {
            match known.get(h) {
                Some(&j) => {
                    codes.extend_from_slice(&p.codes[j * words..(j + 1) * words]);
                    scales.push(p.scales[j]);
                    int8.extend_from_slice(&p.int8[j * dim..(j + 1) * dim]);
                }
                None => {
                    let Some((code, scale, q)) = next_fresh.next() else {
                        return Err(Error::Dimension {
                            expected: missing.len(),
                            found: made.len(),
                        });
                    };
                    codes.extend_from_slice(code);
                    scales.push(*scale);
                    int8.extend_from_slice(q);
                }
            }
        }
        let s = Stored {
            identity: p.identity.clone(),
            bits,
            words,
            center: p.center.clone(),
            codes: codes.into(),
            dense_dim: dim,
            scales: scales.into(),
            int8: int8.into(),
            hashes: hashes.to_vec().into(),
            corpus: p.corpus.clone(),
            code: p.code.clone(),
            code_dims: p.code_dims,
            hnsw: None,
            projected_bits: bits,
            file_context: p.file_context,
        };
        let stats = EmbedStats { embedded: missing.len(), reused: documents.len() - missing.len() };
        Ok(Some((self.finish(s), stats)))
    }

    /// Embeds `documents` (one per fragment) and indexes them. Vectors of
    /// documents unchanged since `previous` (same text, same embedder) are
    /// reused, not embedded again.
    pub fn build<S: AsRef<str> + Sync>(
        &self,
        embedder: &dyn Embedder,
        documents: &[S],
        previous: Option<&VectorIndex>,
    ) -> Result<(VectorIndex, EmbedStats)> {
        let identity = embedder.identity();
        let hashes = self.document_hashes(documents)?;
        let file_context = self.context_weight(documents.len())?;
        let reusable: HashMap<u64, usize> = match previous {
            Some(p) if p.s.identity == identity && p.s.file_context == file_context => {
                p.s.hashes.iter().enumerate().map(|(i, &h)| (h, i)).collect()
            }
            _ => HashMap::new(),
        };
        let missing: Vec<usize> =
            (0..documents.len()).filter(|i| !reusable.contains_key(&hashes[*i])).collect();
        let texts: Vec<&str> = missing.iter().map(|&i| documents[i].as_ref()).collect();
        let mut fresh =
            if texts.is_empty() { None } else { Some(embedder.embed(&texts, Role::Document)?) };
        if let Some(v) = &fresh
            && v.len() != texts.len()
        {
            return Err(Error::Dimension { expected: texts.len(), found: v.len() });
        }
        // The hashes make a file's documents fresh together.
        if let Some(Vectors::Dense { dim, data }) = &mut fresh {
            self.add_context(data, *dim, documents.len(), Some(&missing))?;
        }
        let stats = EmbedStats { embedded: missing.len(), reused: documents.len() - missing.len() };
        let mut from_fresh: HashMap<usize, usize> = HashMap::new();
        for (j, &i) in missing.iter().enumerate() {
            from_fresh.insert(i, j);
        }
        let n = documents.len();
        let binary = matches!(fresh, Some(Vectors::Binary { .. }))
            || (fresh.is_none() && previous.is_some_and(|p| p.s.dense_dim == 0));
        let mut s = Stored { identity, hashes: hashes.into(), file_context, ..Stored::default() };
        if binary {
            let bits = embedder.dimension();
            let w = words_for(bits);
            s.bits = bits;
            s.words = w;
            let mut codes = vec![0; n * w];
            for i in 0..n {
                let code: &[u64] = match (from_fresh.get(&i), &fresh) {
                    (Some(&j), Some(Vectors::Binary { words, .. })) => &words[j * w..(j + 1) * w],
                    _ => match (reusable.get(&s.hashes[i]), previous) {
                        (Some(&p), Some(prev)) => &prev.s.codes[p * w..(p + 1) * w],
                        _ => return Err(Error::Dimension { expected: w, found: 0 }),
                    },
                };
                if code.len() != w {
                    return Err(Error::Dimension { expected: w, found: code.len() });
                }
                codes[i * w..(i + 1) * w].copy_from_slice(code);
            }
            s.codes = codes.into();
        } else {
            let dim = embedder.dimension();
            let mut dense = vec![0f32; n * dim];
            for i in 0..n {
                let row = &mut dense[i * dim..(i + 1) * dim];
                match (from_fresh.get(&i), &fresh) {
                    (Some(&j), Some(Vectors::Dense { dim: d, data })) if *d == dim => {
                        row.copy_from_slice(&data[j * dim..(j + 1) * dim])
                    }
                    (Some(_), Some(Vectors::Dense { dim: d, .. })) => {
                        return Err(Error::Dimension { expected: dim, found: *d });
                    }
                    _ => {
                        let (Some(&p), Some(prev)) = (reusable.get(&s.hashes[i]), previous) else {
                            return Err(Error::Dimension { expected: dim, found: 0 });
                        };
                        let scale = prev.s.scales[p];
                        for (o, &x) in row.iter_mut().zip(&prev.s.int8[p * dim..(p + 1) * dim]) {
                            *o = f32::from(x) * scale;
                        }
                    }
                }
            }
            fill_dense(&mut s, dim, &dense, self.code_bits_for(n, dim));
        }
        Ok((self.finish(s), stats))
    }
}

fn projection_of(s: &Stored) -> Option<Projection> {
    (s.projected_bits > 0 && s.dense_dim > 0)
        .then(|| Projection::new(s.dense_dim, s.projected_bits))
}

/// Keeps int8 copies of full-precision vectors and, if `bits` is not 0,
/// packs them centred into binary codes of that many bits.
fn fill_dense(s: &mut Stored, dim: usize, dense: &[f32], bits: usize) {
    s.projected_bits = bits;
    s.bits = bits;
    s.words = words_for(bits);
    s.dense_dim = dim;
    let center = mean(dense, dim);
    let codes: Vec<u64> = match bits {
        0 => Vec::new(),
        _ => {
            let projection = Projection::new(dim, bits);
            dense
                .par_chunks(dim.max(1) * 64)
                .flat_map_iter(|rows| projection.pack_rows(rows, &center))
                .collect()
        }
    };
    let (scales, int8): (Vec<f32>, Vec<Vec<i8>>) =
        dense.par_chunks_exact(dim.max(1)).map(to_int8).unzip();
    let int8: Vec<i8> = int8.concat();
    s.center = center.into();
    s.codes = codes.into();
    s.scales = scales.into();
    s.int8 = int8.into();
}

impl VectorIndex {
    /// Number of vectors.
    pub fn len(&self) -> usize {
        self.s.hashes.len()
    }

    /// Whether the index is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The hashes of the documents the vectors were made from, in order.
    pub fn document_hashes(&self) -> &[u64] {
        &self.s.hashes
    }

    /// The embedder identity the index was built with.
    pub fn identity(&self) -> &str {
        &self.s.identity
    }

    /// Bits per binary code; 0 when there are no codes and a search scans
    /// the int8 vectors ([`DEFAULT_DENSE_SCAN_LIMIT`]).
    pub fn code_bits(&self) -> usize {
        self.s.bits
    }

    /// Whether an HNSW graph was built.
    pub fn has_hnsw(&self) -> bool {
        #[cfg(feature = "hnsw")]
        return self.hnsw.is_some();
        #[cfg(not(feature = "hnsw"))]
        false
    }

    /// The corpus-learned model, when the index was built with one; shared,
    /// so that it can serve queries without a copy.
    pub fn corpus_model(&self) -> Option<&Arc<CorpusModel>> {
        self.s.corpus.as_ref()
    }

    /// The code model joined with the corpus model, when there is one.
    pub fn code_model(&self) -> Option<&Arc<CodeModel>> {
        self.s.code.as_ref()
    }

    /// The embedder made of the models the index holds: its corpus model,
    /// joined with its code model if it was built with one; `None` when it
    /// was built by another embedder.
    pub fn model_embedder(&self) -> Option<Arc<dyn Embedder>> {
        let corpus = self.s.corpus.clone()?;
        Some(match &self.s.code {
            Some(code) => Arc::new(JoinedModel::new(corpus, code.clone(), self.s.code_dims)),
            None => corpus,
        })
    }

    /// The best `k` vectors for a query vector, as `(index, score)`, best
    /// first; scores are cosines when rescored or at full precision, else
    /// `1 - hamming / bits`.
    pub fn search(
        &self,
        query: &Vectors,
        k: usize,
        options: SearchOptions,
    ) -> Result<Vec<(u32, f32)>> {
        if self.is_empty() || k == 0 {
            return Ok(Vec::new());
        }
        let dense_query: Option<&[f32]> = match query {
            Vectors::Dense { dim, data } if *dim == self.s.dense_dim && self.s.dense_dim > 0 => {
                Some(&data[..*dim])
            }
            Vectors::Dense { dim, .. } if self.s.dense_dim == 0 => {
                return Err(Error::Dimension { expected: self.s.bits, found: *dim });
            }
            Vectors::Dense { dim, .. } => {
                return Err(Error::Dimension { expected: self.s.dense_dim, found: *dim });
            }
            Vectors::Binary { .. } => None,
        };
        let dim = self.s.dense_dim;
        // The query's norm, taken once for every cosine below.
        let qn = dense_query.map_or(0.0, norm);
        let scan_int8 = options.full_precision || self.s.words == 0;
        if scan_int8 && let Some(q) = dense_query {
            let rows = self.s.int8.chunks_exact(dim.max(1));
            let mut all: Vec<(u32, f32)> = (rows.zip(self.s.scales.iter()))
                .enumerate()
                .map(|(i, (v, &scale))| (i as u32, cosine_int8_normed(q, qn, scale, v)))
                .collect();
            all.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            all.truncate(k);
            return Ok(all);
        }
        let code: Vec<u64> = match (query, dense_query) {
            (_, Some(q)) => self.pack_query(q),
            (Vectors::Binary { bits, words }, None) if *bits == self.s.bits => {
                words[..self.s.words].to_vec()
            }
            (Vectors::Binary { bits, .. }, None) => {
                return Err(Error::Dimension { expected: self.s.bits, found: *bits });
            }
            (Vectors::Dense { .. }, None) => return Ok(Vec::new()),
        };
        let rescore = options.rescore && dense_query.is_some();
        let fetch = if rescore { k.saturating_mul(RESCORE_OVERSAMPLING) } else { k };
        #[cfg(feature = "hnsw")]
        let candidates = match &self.hnsw {
            Some(h) if !options.exact => h.nearest(&code, fetch, EF_SEARCH.max(fetch)),
            _ => scan::nearest(&code, &self.s.codes, fetch),
        };
        #[cfg(not(feature = "hnsw"))]
        let candidates = scan::nearest(&code, &self.s.codes, fetch);
        let mut scored: Vec<(u32, f32)> = match dense_query {
            Some(q) if rescore => candidates
                .into_iter()
                .map(|(i, _)| {
                    let (i_us, scales) = (i as usize, &self.s.scales);
                    let v = &self.s.int8[i_us * dim..(i_us + 1) * dim];
                    (i, cosine_int8_normed(q, qn, scales[i_us], v))
                })
                .collect(),
            _ => candidates
                .into_iter()
                .map(|(i, d)| (i, 1.0 - d as f32 / self.s.bits.max(1) as f32))
                .collect(),
        };
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored.truncate(k);
        Ok(scored)
    }

    fn pack_query(&self, q: &[f32]) -> Vec<u64> {
        match &self.projection {
            Some(p) => p.pack(q, &self.s.center),
            None => pack(q, &self.s.center),
        }
    }

    /// The exact Hamming neighbours and the HNSW ones, for measuring recall.
    #[cfg(feature = "hnsw")]
    pub fn compare_hnsw(&self, query: &Vectors, k: usize) -> Option<(Neighbours, Neighbours)> {
        let h = self.hnsw.as_ref()?;
        let code = match query {
            Vectors::Dense { dim, data } if *dim == self.s.dense_dim => {
                self.pack_query(&data[..*dim])
            }
            Vectors::Binary { words, .. } => words[..self.s.words].to_vec(),
            Vectors::Dense { .. } => return None,
        };
        Some((scan::nearest(&code, &self.s.codes, k), h.nearest(&code, k, EF_SEARCH)))
    }

    /// Writes the index (and its HNSW graph) into a generation folder.
    pub fn save(&self, gen_dir: &Path) -> Result<()> {
        let s = &self.s;
        #[cfg_attr(not(feature = "hnsw"), allow(unused_mut))]
        let mut hnsw = None;
        #[cfg(feature = "hnsw")]
        if let Some(h) = &self.hnsw {
            h.dump(gen_dir, HNSW_BASENAME)?;
            let crc = |ext: &str| -> Result<u32> {
                let p = gen_dir.join(format!("{HNSW_BASENAME}.hnsw.{ext}"));
                Ok(crc32fast::hash(
                    &std::fs::read(&p).map_err(|e| maguyva_core::Error::io("reading", &p, e))?,
                ))
            };
            hnsw = Some(HnswFiles { graph_crc: crc("graph")?, data_crc: crc("data")? });
        }
        let meta = Meta {
            identity: s.identity.clone(),
            bits: s.bits as u64,
            words: s.words as u64,
            dense_dim: s.dense_dim as u64,
            projected_bits: s.projected_bits as u64,
            corpus: s.corpus.is_some(),
            code: s.code.as_ref().map(|c| c.identity()),
            code_dims: s.code_dims as u64,
            hnsw,
            file_context: s.file_context,
        };
        let mut w = SectionWriter::new(SEMANTIC_FORMAT);
        w.encoded("meta", "semantic index", &meta)?
            .array("center", &s.center)?
            .array("codes", &s.codes)?
            .array("scales", &s.scales)?
            .array("int8", &s.int8)?
            .array("hashes", &s.hashes)?;
        if let Some(model) = &s.corpus {
            model.write(&mut w)?;
        }
        Ok(w.write(&gen_dir.join(SEMANTIC_FILE))?)
    }

    /// Opens the index of a generation folder, in place, and checks it
    /// against the number of fragments it must describe.
    pub fn load(gen_dir: &Path, fragments: usize) -> Result<VectorIndex> {
        VectorIndex::read(&VectorIndex::open_file(gen_dir)?, gen_dir, fragments)
    }

    /// Maps the semantic file of a generation folder, checking its header.
    pub fn open_file(gen_dir: &Path) -> Result<SectionFile> {
        Ok(SectionFile::open(&gen_dir.join(SEMANTIC_FILE), SEMANTIC_FORMAT)?)
    }

    /// The index in an opened semantic file of the generation folder
    /// `gen_dir` (which holds its HNSW files, if any), checked against the
    /// number of fragments it must describe.
    #[cfg_attr(not(feature = "hnsw"), allow(unused_variables))]
    pub fn read(file: &SectionFile, gen_dir: &Path, fragments: usize) -> Result<VectorIndex> {
        let path = file.path();
        let corrupt = |why: &str| Error::Core(maguyva_core::Error::corrupt(path, why));
        let meta: Meta = file.decode("meta")?;
        let corpus = match meta.corpus {
            true => Some(Arc::new(
                CorpusModel::open(file).map_err(|_| corrupt("damaged corpus model"))?,
            )),
            false => None,
        };
        let code = match &meta.code {
            None => None,
            Some(id) => Some(builtin_code_model(id).ok_or_else(|| {
                corrupt("built with a code model that is not the one built into this program")
            })?),
        };
        let s = Stored {
            identity: meta.identity,
            bits: meta.bits as usize,
            words: meta.words as usize,
            center: file.array("center")?,
            codes: file.array("codes")?,
            dense_dim: meta.dense_dim as usize,
            scales: file.array("scales")?,
            int8: file.array("int8")?,
            hashes: file.array("hashes")?,
            corpus,
            code,
            code_dims: meta.code_dims as usize,
            hnsw: meta.hnsw,
            projected_bits: meta.projected_bits as usize,
            file_context: meta.file_context,
        };
        let n = s.hashes.len();
        let consistent = n == fragments
            && meta.file_context.is_finite()
            && match (&s.code, &s.corpus) {
                (None, _) => s.code_dims == 0,
                (Some(code), Some(corpus)) => {
                    (1..=code.dimension()).contains(&s.code_dims)
                        && s.dense_dim == corpus.dimension() + s.code_dims
                }
                (Some(_), None) => false,
            }
            && s.words == words_for(s.bits)
            && (s.projected_bits == 0 || (s.projected_bits == s.bits && s.dense_dim > 0))
            && s.codes.len() == n * s.words
            && (s.words > 0 || s.dense_dim > 0)
            && (s.dense_dim == 0
                || (s.scales.len() == n
                    && s.int8.len() == n * s.dense_dim
                    && s.center.len() == s.dense_dim));
        if !consistent {
            return Err(corrupt("vectors do not match the fragments"));
        }
        #[cfg(not(feature = "hnsw"))]
        if s.hnsw.is_some() {
            return Err(corrupt(
                "has an HNSW graph, which this build cannot read (no hnsw feature)",
            ));
        }
        #[cfg(feature = "hnsw")]
        let hnsw = match &s.hnsw {
            None => None,
            Some(files) => {
                for (ext, crc) in [("graph", files.graph_crc), ("data", files.data_crc)] {
                    let p = gen_dir.join(format!("{HNSW_BASENAME}.hnsw.{ext}"));
                    let bytes =
                        std::fs::read(&p).map_err(|e| maguyva_core::Error::io("reading", &p, e))?;
                    if crc32fast::hash(&bytes) != crc {
                        return Err(Error::Core(maguyva_core::Error::corrupt(
                            &p,
                            "checksum mismatch",
                        )));
                    }
                }
                Some(HnswIndex::load(gen_dir, HNSW_BASENAME)?)
            }
        };
        let projection = projection_of(&s);
        Ok(VectorIndex {
            s,
            #[cfg(feature = "hnsw")]
            hnsw,
            projection,
        })
    }
}

/// The built-in code model, if it has identity `id`.
fn builtin_code_model(id: &str) -> Option<Arc<CodeModel>> {
    #[cfg(feature = "builtin-model")]
    return CodeModel::builtin().ok().filter(|m| m.identity() == id);
    #[cfg(not(feature = "builtin-model"))]
    {
        let _ = id;
        None
    }
}

/// The hash an index keeps of each document, by which a later build finds
/// the documents whose vectors it can copy.
pub fn document_hash(text: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(text.as_bytes())
}
