//! The code model: one vector per analyzer term, learned beforehand from a
//! large corpus of public code (not from the indexed repository), so that
//! a query meets code about the same thing in words the repository never
//! pairs with it. A text's vector is the sum of its terms' vectors, each
//! counted as often as the term occurs, scaled to unit length; a query's
//! sum first goes through the model's query map, if it has one (a linear
//! map learned with the rows: questions are worded otherwise than code).
//! The built-in copy is part of the binary and read in place: a query touches
//! only the rows of its own terms. Format and provenance: `model/README.md`
//! of this crate.

use super::{Embedder, Role, Vectors, scale_to_unit, times_map};
use crate::error::{Error, Result};
use crate::pack::to_int8;
use maguyva_core::{Analyzer, TermMatrix};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::path::Path;

/// Version of the model folder's layout (`meta.json`'s `format`): 2 may
/// hold a query map; 1, which has none, is read too.
pub const CODE_MODEL_FORMAT: u32 = 2;

/// The folder's files: a description, the term map, the rows, their scales.
const META_FILE: &str = "meta.json";
const VOCAB_FILE: &str = "vocab.fst";
const ROWS_FILE: &str = "rows.i8";
const SCALES_FILE: &str = "scales.f32";
const QUERY_MAP_FILE: &str = "query_map.f32";

/// What `meta.json` says of a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CodeModelMeta {
    /// [`CODE_MODEL_FORMAT`].
    pub format: u32,
    /// Dimensions of a vector.
    pub dim: usize,
    /// Number of terms (rows).
    pub terms: usize,
    /// The identity of the [`Analyzer`] whose terms the vocabulary holds.
    pub analyzer: String,
    /// CRC-32 of the rows, scales and query map, which names the model in
    /// an index.
    pub crc: u32,
    /// Whether the model has a query map (`query_map.f32`).
    #[serde(default)]
    pub query_map: bool,
    /// How the model was trained (free-form, from the trainer).
    #[serde(default)]
    pub training: serde_json::Value,
}

/// A static model of code terms (see the module documentation).
pub struct CodeModel {
    meta: CodeModelMeta,
    analyzer: Analyzer,
    /// fst map from term to row.
    map: fst::Map<Cow<'static, [u8]>>,
    /// `terms * dim` values, signed bytes, one row per term.
    rows: Cow<'static, [u8]>,
    /// One little-endian `f32` per term: its vector is its row times it.
    scales: Cow<'static, [u8]>,
    /// `dim * dim` values, row after row: a query's sum of rows `q`
    /// becomes `q M` ([`CodeModel::with_query_map`]).
    query_map: Option<Vec<f32>>,
}

impl std::fmt::Debug for CodeModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CodeModel")
            .field("dim", &self.meta.dim)
            .field("terms", &self.meta.terms)
            .field("crc", &self.meta.crc)
            .finish()
    }
}

fn model_err(path: &Path, reason: impl Into<String>) -> Error {
    Error::Model { path: path.to_path_buf(), reason: reason.into() }
}

#[cfg(feature = "builtin-model")]
mod builtin {
    pub const META: &[u8] = include_bytes!("../../model/meta.json");
    pub const VOCAB: &[u8] = include_bytes!("../../model/vocab.fst");
    pub const ROWS: &[u8] = include_bytes!("../../model/rows.i8");
    pub const SCALES: &[u8] = include_bytes!("../../model/scales.f32");
    pub const QUERY_MAP: &[u8] = include_bytes!("../../model/query_map.f32");
}

impl CodeModel {
    /// The model built into this binary, read in place (made once per
    /// process).
    #[cfg(feature = "builtin-model")]
    pub fn builtin() -> Result<std::sync::Arc<CodeModel>> {
        use std::sync::{Arc, OnceLock};
        static MODEL: OnceLock<std::result::Result<Arc<CodeModel>, String>> = OnceLock::new();
        MODEL
            .get_or_init(|| {
                CodeModel::from_parts(
                    Path::new("(built-in code model)"),
                    builtin::META,
                    Cow::Borrowed(builtin::VOCAB),
                    Cow::Borrowed(builtin::ROWS),
                    Cow::Borrowed(builtin::SCALES),
                    Some(builtin::QUERY_MAP),
                )
                .map(Arc::new)
                .map_err(|e| e.to_string())
            })
            .clone()
            .map_err(|reason| Error::Model { path: "(built-in code model)".into(), reason })
    }

    /// A model from its parts; `path` names it in errors. The sizes are
    /// checked against the description; the checksum is not (it is checked
    /// when a folder is loaded, and the built-in copy is the binary's own).
    fn from_parts(
        path: &Path,
        meta: &[u8],
        vocab: Cow<'static, [u8]>,
        rows: Cow<'static, [u8]>,
        scales: Cow<'static, [u8]>,
        query_map: Option<&[u8]>,
    ) -> Result<CodeModel> {
        let meta: CodeModelMeta = serde_json::from_slice(meta)
            .map_err(|e| model_err(path, format!("{META_FILE}: {e}")))?;
        if !(1..=CODE_MODEL_FORMAT).contains(&meta.format) {
            return Err(model_err(
                path,
                format!("layout {} (this build reads 1 and {CODE_MODEL_FORMAT})", meta.format),
            ));
        }
        let analyzer = [Analyzer { stem: true }, Analyzer { stem: false }]
            .into_iter()
            .find(|a| a.identity() == meta.analyzer)
            .ok_or_else(|| model_err(path, format!("unknown analyzer {:?}", meta.analyzer)))?;
        let map =
            fst::Map::new(vocab).map_err(|e| model_err(path, format!("{VOCAB_FILE}: {e}")))?;
        let sizes_agree = meta.dim > 0
            && map.len() == meta.terms
            && meta.terms.checked_mul(meta.dim) == Some(rows.len())
            && meta.terms.checked_mul(4) == Some(scales.len());
        if !sizes_agree {
            return Err(model_err(path, "vocabulary, rows and scales disagree in size"));
        }
        let query_map = match (meta.query_map, query_map) {
            (false, None) => None,
            (true, Some(bytes)) => Some(read_query_map(path, bytes, meta.dim)?),
            (true, None) => return Err(model_err(path, format!("{QUERY_MAP_FILE} is missing"))),
            (false, Some(_)) => {
                return Err(model_err(
                    path,
                    format!("{QUERY_MAP_FILE} is there but {META_FILE} does not announce it"),
                ));
            }
        };
        Ok(CodeModel { meta, analyzer, map, rows, scales, query_map })
    }

    /// This model with `map` (`dim * dim` values, row after row) as its
    /// query map: a query's sum of rows `q` becomes `q M` before it is
    /// scaled to unit length, while documents are embedded as before. The
    /// checksum, and so the model's identity, takes it in.
    pub fn with_query_map(mut self, map: Vec<f32>) -> Result<CodeModel> {
        check_map(&map, self.meta.dim, "query map")?;
        self.meta.query_map = true;
        self.meta.format = CODE_MODEL_FORMAT;
        self.meta.crc = parts_crc(&self.rows, &self.scales, Some(&map));
        self.query_map = Some(map);
        Ok(self)
    }

    /// This model with `training` as its description of how it was made
    /// (`meta.json`'s `training`); the vectors, and so the checksum, are
    /// unchanged.
    pub fn with_training(mut self, training: serde_json::Value) -> CodeModel {
        self.meta.training = training;
        self
    }

    /// The query map, if the model has one (`dim * dim` values).
    pub fn query_map(&self) -> Option<&[f32]> {
        self.query_map.as_deref()
    }

    /// A model from `terms` (any order, each once) and their vectors
    /// (`terms.len() * dim` values, row after row), stored in 8 bits per
    /// value with one scale per row. `training` describes how the vectors
    /// were made.
    pub fn from_vectors(
        terms: &[String],
        vectors: &[f32],
        dim: usize,
        analyzer: Analyzer,
        training: serde_json::Value,
    ) -> Result<CodeModel> {
        let path = Path::new("(new code model)");
        if dim == 0 || terms.len().checked_mul(dim) != Some(vectors.len()) {
            return Err(model_err(path, "terms and vectors disagree in size"));
        }
        let mut order: Vec<usize> = (0..terms.len()).collect();
        order.sort_by(|&a, &b| terms[a].cmp(&terms[b]));
        let mut builder = fst::MapBuilder::memory();
        let (mut rows, mut scales) = (Vec::with_capacity(vectors.len()), Vec::new());
        for (row, &i) in order.iter().enumerate() {
            builder
                .insert(terms[i].as_bytes(), row as u64)
                .map_err(|e| model_err(path, format!("term {:?}: {e}", terms[i])))?;
            let (scale, q) = to_int8(&vectors[i * dim..(i + 1) * dim]);
            // A row with an infinite value has no scale: it is stored as zero.
            let (scale, q) = if scale.is_finite() { (scale, q) } else { (0.0, vec![0; dim]) };
            rows.extend(q.iter().map(|&x| x as u8));
            scales.extend_from_slice(&scale.to_le_bytes());
        }
        let vocab = builder.into_inner().map_err(|e| model_err(path, e.to_string()))?;
        let meta = CodeModelMeta {
            format: CODE_MODEL_FORMAT,
            dim,
            terms: terms.len(),
            analyzer: analyzer.identity().to_string(),
            crc: parts_crc(&rows, &scales, None),
            query_map: false,
            training,
        };
        let meta = serde_json::to_vec(&meta).map_err(|e| model_err(path, e.to_string()))?;
        CodeModel::from_parts(path, &meta, vocab.into(), rows.into(), scales.into(), None)
    }

    /// Writes the model's folder: `meta.json`, `vocab.fst`, `rows.i8`,
    /// `scales.f32` and, if it has one, `query_map.f32`.
    pub fn write(&self, dir: &Path) -> Result<()> {
        std::fs::create_dir_all(dir).map_err(|e| model_err(dir, e.to_string()))?;
        let mut meta =
            serde_json::to_vec_pretty(&self.meta).map_err(|e| model_err(dir, e.to_string()))?;
        meta.push(b'\n');
        for (name, bytes) in [
            (META_FILE, &meta[..]),
            (VOCAB_FILE, self.map.as_fst().as_bytes()),
            (ROWS_FILE, &self.rows[..]),
            (SCALES_FILE, &self.scales[..]),
        ] {
            let path = dir.join(name);
            std::fs::write(&path, bytes).map_err(|e| model_err(&path, e.to_string()))?;
        }
        let map_path = dir.join(QUERY_MAP_FILE);
        match &self.query_map {
            Some(map) => {
                let bytes: Vec<u8> = map.iter().flat_map(|x| x.to_le_bytes()).collect();
                std::fs::write(&map_path, bytes)
            }
            None if map_path.exists() => std::fs::remove_file(&map_path),
            None => Ok(()),
        }
        .map_err(|e| model_err(&map_path, e.to_string()))?;
        Ok(())
    }

    /// Reads a folder written by [`CodeModel::write`], checking its
    /// checksum.
    pub fn load(dir: &Path) -> Result<CodeModel> {
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read(&path).map_err(|e| model_err(&path, e.to_string()))
        };
        let map_bytes = match dir.join(QUERY_MAP_FILE).exists() {
            true => Some(read(QUERY_MAP_FILE)?),
            false => None,
        };
        let model = CodeModel::from_parts(
            dir,
            &read(META_FILE)?,
            read(VOCAB_FILE)?.into(),
            read(ROWS_FILE)?.into(),
            read(SCALES_FILE)?.into(),
            map_bytes.as_deref(),
        )?;
        if parts_crc(&model.rows, &model.scales, model.query_map()) != model.meta.crc {
            return Err(model_err(dir, "rows, scales or query map do not match their checksum"));
        }
        Ok(model)
    }

    /// The terms, in row order, and their vectors (each row's bytes times
    /// its scale), row after row.
    pub fn vectors(&self) -> (Vec<String>, Vec<f32>) {
        let dim = self.meta.dim;
        let mut terms = Vec::with_capacity(self.meta.terms);
        let mut vectors = vec![0f32; self.meta.terms * dim];
        let mut stream = self.map.stream();
        while let Some((term, row)) = fst::Streamer::next(&mut stream) {
            let Some(out) = vectors.get_mut(row as usize * dim..(row as usize + 1) * dim) else {
                continue;
            };
            self.add_row(row as u32, 1, out);
            terms.push(String::from_utf8_lossy(term).into_owned());
        }
        (terms, vectors)
    }

    /// This model in `dims` dimensions: its vectors rotated onto the
    /// directions of their largest second moment (uncentred: a text's
    /// vector is a sum of rows, and cosines are what is kept), the first
    /// `dims` kept. The rows are stored in 8 bits again; `meta.json`'s
    /// `training` records the model it came from. A joined index keeps the
    /// leading dimensions of such a model, as many as its size warrants
    /// (`code_dimensions_for`).
    pub fn principal(&self, dims: usize) -> Result<CodeModel> {
        let dim = self.meta.dim;
        if dims == 0 || dims > dim {
            return Err(model_err(
                Path::new("(code model)"),
                format!("{dims} dimensions asked of a model of {dim}"),
            ));
        }
        let (terms, vectors) = self.vectors();
        let second_moment = super::linalg::gram(&vectors, dim);
        let (_, basis) = super::linalg::symmetric_eigen(&second_moment, dim);
        // Column j of `basis` is the j-th direction; keep the first `dims`.
        let rotate = |rows: &[f32]| -> Vec<f32> {
            rows.par_chunks_exact(dim)
                .flat_map_iter(|row| {
                    (0..dims).map(|j| {
                        row.iter()
                            .enumerate()
                            .map(|(i, &x)| f64::from(x) * basis[i * dim + j])
                            .sum::<f64>() as f32
                    })
                })
                .collect()
        };
        let rotated = rotate(&vectors);
        let training = serde_json::json!({
            "principal": { "from": self.identity(), "dims": dims },
            "trainer": self.meta.training,
        });
        let model = CodeModel::from_vectors(&terms, &rotated, dims, self.analyzer, training)?;
        match &self.query_map {
            None => Ok(model),
            // In the new directions the map is B' M B, B the kept columns
            // of `basis` (a query's rotated sum q B, mapped, is (q M) B):
            // the rows of M rotated, then those of its transpose, (M B)' B.
            Some(map) => {
                let transpose = |m: &[f32], rows: usize, cols: usize| -> Vec<f32> {
                    (0..cols).flat_map(|c| (0..rows).map(move |r| m[r * cols + c])).collect()
                };
                let mb_t = transpose(&rotate(map), dim, dims);
                model.with_query_map(transpose(&rotate(&mb_t), dims, dims))
            }
        }
    }

    /// This model with every row multiplied by `map` (`dim * dim` values,
    /// row after row: a row `r` becomes `r M`), stored in 8 bits again, so
    /// a document's sum `s` becomes `s M`. The query map is dropped: a
    /// query's sum changes with the rows, so the map that goes with the new
    /// rows is given after, with [`CodeModel::with_query_map`] (to embed
    /// queries as before, `M⁻¹` times the old map). `meta.json`'s
    /// `training` records the model it came from.
    pub fn with_row_map(&self, map: &[f32]) -> Result<CodeModel> {
        let dim = self.meta.dim;
        check_map(map, dim, "row map")?;
        let (terms, vectors) = self.vectors();
        let mut mapped = vec![0f32; vectors.len()];
        mapped
            .par_chunks_exact_mut(dim)
            .zip(vectors.par_chunks_exact(dim))
            .for_each(|(out, row)| super::times_map(row, map, out));
        let training = serde_json::json!({
            "row_map": { "from": self.identity() },
            "before": self.meta.training,
        });
        CodeModel::from_vectors(&terms, &mapped, dim, self.analyzer, training)
    }

    /// What `meta.json` says.
    pub fn meta(&self) -> &CodeModelMeta {
        &self.meta
    }

    /// The analyzer whose terms the model holds.
    pub fn analyzer(&self) -> Analyzer {
        self.analyzer
    }

    /// The row of `term`, if the model has one.
    fn row_of(&self, term: &str) -> Option<u32> {
        self.map.get(term).filter(|&r| (r as usize) < self.meta.terms).map(|r| r as u32)
    }

    /// Vectors of `texts` in the model's first `dims` dimensions (at most
    /// its own), each scaled to unit length. The rows of a model made by
    /// [`CodeModel::principal`] are in the order of their directions'
    /// weight, so the first dimensions keep most of what the rest say.
    pub fn embed_leading(&self, texts: &[&str], dims: usize) -> Result<Vectors> {
        Vectors::dense_rows(dims.clamp(1, self.meta.dim), texts, |t, out| {
            self.embed_one(t, out);
            Ok(())
        })
    }

    /// Vectors of `texts` as `role` asks, in the model's first `dims`
    /// dimensions: documents as [`CodeModel::embed_leading`] embeds them;
    /// queries summed in all the model's dimensions, put through its query
    /// map (if it has one), then cut to `dims` and scaled to unit length.
    pub fn embed_as(&self, texts: &[&str], dims: usize, role: Role) -> Result<Vectors> {
        let (Role::Query, Some(map)) = (role, &self.query_map) else {
            return self.embed_leading(texts, dims);
        };
        let dim = self.meta.dim;
        Vectors::dense_rows(dims.clamp(1, dim), texts, |t, out| {
            let mut sum = vec![0f32; dim];
            self.embed_one(t, &mut sum);
            times_map(&sum, map, out);
            scale_to_unit(out);
            Ok(())
        })
    }

    /// Adds `count` times row `row`'s vector (its first `out.len()` values)
    /// to `out`: the pooling the model was trained with. Measured against
    /// it (semantic modality alone, joined with the corpus model, NDCG@10,
    /// with the first model of this recipe): weighing a term `1 + ln count`
    /// gave 0.829 against 0.825 on the training benchmark but 0.794 against
    /// 0.809 on the development split (the code model alone: 0.712 against
    /// 0.755), and either times the term's inverse document frequency in
    /// the repository 0.821 to 0.823 on the training benchmark.
    fn add_row(&self, row: u32, count: u32, out: &mut [f32]) {
        let (r, dim) = (row as usize, self.meta.dim);
        let b = &self.scales[r * 4..r * 4 + 4];
        let scale = f32::from_le_bytes([b[0], b[1], b[2], b[3]]) * count as f32;
        for (o, &q) in out.iter_mut().zip(&self.rows[r * dim..(r + 1) * dim]) {
            *o += scale * f32::from(q as i8);
        }
    }

    /// The unit vector of terms given as `(row, count)`, sorted by row: the
    /// sum is taken in one order every time, so a text always gets the
    /// same vector to the last bit, whether from its text or from a term
    /// matrix.
    fn pool(&self, counted: &[(u32, u32)], out: &mut [f32]) {
        for &(row, count) in counted {
            self.add_row(row, count, out);
        }
        scale_to_unit(out);
    }

    fn embed_one(&self, text: &str, out: &mut [f32]) {
        let mut rows: Vec<u32> = Vec::new();
        self.analyzer.for_each_term(text, |t| rows.extend(self.row_of(t)));
        rows.sort_unstable();
        let counted: Vec<(u32, u32)> =
            rows.chunk_by(|a, b| a == b).map(|run| (run[0], run.len() as u32)).collect();
        self.pool(&counted, out);
    }

    /// The vectors of a term matrix's documents, row after row, in the
    /// model's first `dims` dimensions (at most its own): the same as
    /// [`CodeModel::embed_leading`] of their texts, without analyzing them
    /// again. `None` when the matrix was made by another analyzer.
    pub fn embed_matrix(&self, matrix: &TermMatrix, dims: usize) -> Option<Vec<f32>> {
        if matrix.analyzer() != self.analyzer {
            return None;
        }
        let rows: Vec<Option<u32>> = matrix.terms().iter().map(|t| self.row_of(t)).collect();
        let dim = dims.clamp(1, self.meta.dim);
        let mut data = vec![0f32; matrix.documents() * dim];
        data.par_chunks_mut(dim).enumerate().for_each(|(doc, out)| {
            let mut counted: Vec<(u32, u32)> = matrix
                .document(doc)
                .iter()
                .filter_map(|&(t, c)| rows.get(t as usize).copied().flatten().map(|r| (r, c)))
                .collect();
            counted.sort_unstable();
            self.pool(&counted, out);
        });
        Some(data)
    }
}

/// Checks that `map`, a `what` given to a model of `dim` dimensions, holds
/// `dim * dim` finite values.
fn check_map(map: &[f32], dim: usize, what: &str) -> Result<()> {
    let err = |reason: String| Err(model_err(Path::new("(code model)"), reason));
    if map.len() != dim * dim {
        return err(format!("a {what} needs {} values, not {}", dim * dim, map.len()));
    }
    if !map.iter().all(|x| x.is_finite()) {
        return err(format!("a {what} holds a value that is not finite"));
    }
    Ok(())
}

/// CRC-32 of a model's rows, then its scales, then its query map's bytes.
fn parts_crc(rows: &[u8], scales: &[u8], query_map: Option<&[f32]>) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(rows);
    h.update(scales);
    for x in query_map.unwrap_or_default() {
        h.update(&x.to_le_bytes());
    }
    h.finalize()
}

/// A query map's values from its file's bytes: `dim * dim` little-endian
/// `f32`, all finite.
fn read_query_map(path: &Path, bytes: &[u8], dim: usize) -> Result<Vec<f32>> {
    if Some(bytes.len()) != dim.checked_mul(dim).and_then(|n| n.checked_mul(4)) {
        return Err(model_err(path, format!("{QUERY_MAP_FILE} is not {dim} x {dim} values")));
    }
    let map: Vec<f32> =
        bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
    if !map.iter().all(|x| x.is_finite()) {
        return Err(model_err(path, format!("{QUERY_MAP_FILE} holds a value that is not finite")));
    }
    Ok(map)
}

impl Embedder for CodeModel {
    fn identity(&self) -> String {
        format!("code-terms:v1:{}:{:08x}", self.meta.dim, self.meta.crc)
    }

    fn dimension(&self) -> usize {
        self.meta.dim
    }

    fn embed(&self, texts: &[&str], role: Role) -> Result<Vectors> {
        self.embed_as(texts, self.meta.dim, role)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn tiny() -> CodeModel {
        let terms: Vec<String> = ["pars", "config", "file", "socket"].map(String::from).to_vec();
        let vectors = vec![
            1.0, 0.0, 0.0, //
            0.9, 0.1, 0.0, //
            0.0, 1.0, 0.0, //
            0.0, 0.0, 1.0,
        ];
        CodeModel::from_vectors(&terms, &vectors, 3, Analyzer::default(), serde_json::json!({}))
            .expect("a valid model")
    }

    fn dense(v: Result<Vectors>) -> Vec<f32> {
        v.and_then(Vectors::into_dense).expect("dense vectors")
    }

    #[test]
    fn sums_counted_terms_to_a_unit_vector() {
        let m = tiny();
        let v = dense(m.embed(&["parse the config file; parsing"], Role::Query));
        // pars twice (1,0,0), config (0.9,0.1,0), file (0,1,0); the
        // unknown "the" skipped.
        let raw = [2.9f32, 1.1, 0.0];
        let norm = raw.iter().map(|x| x * x).sum::<f32>().sqrt();
        for (got, want) in v.iter().zip(raw.iter().map(|x| x / norm)) {
            assert!((got - want).abs() < 0.01, "{v:?}");
        }
        let none = dense(m.embed(&["nothing known here"], Role::Query));
        assert!(none.iter().all(|&x| x == 0.0));
    }

    #[test]
    fn a_term_matrix_gives_the_texts_own_vectors() {
        let m = tiny();
        let texts = ["parse config file", "socket socket file", "", "ParseConfig(file)"];
        let matrix = TermMatrix::build(&texts, Analyzer::default());
        let from_matrix = m.embed_matrix(&matrix, 3).expect("same analyzer");
        let from_text = dense(m.embed(&texts, Role::Document));
        assert_eq!(from_matrix, from_text);
        let leading = m.embed_matrix(&matrix, 2).expect("same analyzer");
        assert_eq!(leading, dense(m.embed_leading(&texts, 2)));
        let other = TermMatrix::build(&texts, Analyzer { stem: false });
        assert!(m.embed_matrix(&other, 3).is_none());
    }

    #[test]
    fn a_written_folder_loads_the_same_and_damage_is_refused() {
        let m = tiny();
        let dir = tempfile::tempdir().expect("temp dir");
        m.write(dir.path()).expect("writes");
        let back = CodeModel::load(dir.path()).expect("loads");
        assert_eq!(back.identity(), m.identity());
        assert_eq!(back.meta(), m.meta());
        let texts = ["config socket"];
        assert_eq!(back.embed(&texts, Role::Query).ok(), m.embed(&texts, Role::Query).ok());

        let rows = dir.path().join(ROWS_FILE);
        let mut bytes = std::fs::read(&rows).expect("rows");
        bytes[0] ^= 1;
        std::fs::write(&rows, &bytes).expect("write");
        assert!(CodeModel::load(dir.path()).is_err(), "a flipped bit is caught");
        bytes.pop();
        std::fs::write(&rows, &bytes).expect("write");
        let err = CodeModel::load(dir.path()).expect_err("a short file is refused");
        assert!(err.to_string().contains("disagree"), "{err}");
        std::fs::write(dir.path().join(META_FILE), b"{").expect("write");
        assert!(CodeModel::load(dir.path()).is_err());
    }

    #[test]
    fn quantized_rows_keep_directions() {
        let terms: Vec<String> = (0..50).map(|i| format!("term{i:02}")).collect();
        let vectors: Vec<f32> =
            (0..50 * 16).map(|i| ((i * 37 % 101) as f32 - 50.0) / 17.0).collect();
        let m = CodeModel::from_vectors(
            &terms,
            &vectors,
            16,
            Analyzer { stem: false },
            serde_json::Value::Null,
        )
        .expect("a valid model");
        for (i, t) in terms.iter().enumerate() {
            let got = dense(m.embed(&[t.as_str()], Role::Document));
            let want = &vectors[i * 16..(i + 1) * 16];
            let norm = want.iter().map(|x| x * x).sum::<f32>().sqrt();
            let cos: f32 = got.iter().zip(want).map(|(a, b)| a * b / norm).sum();
            assert!(cos > 0.999, "{t}: cosine {cos}");
        }
    }

    #[test]
    fn principal_directions_keep_cosines_and_lead_with_the_largest() {
        // Rows spread widely along (1, 1, 0, 0) and narrowly along the rest.
        let terms: Vec<String> = (0..40).map(|i| format!("t{i:02}")).collect();
        let vectors: Vec<f32> = (0..40)
            .flat_map(|i| {
                let (big, small) = ((i % 7) as f32 - 3.0, ((i * 5) % 3) as f32 * 0.1);
                [big + small, big - small, small, -small]
            })
            .collect();
        let m = CodeModel::from_vectors(&terms, &vectors, 4, Analyzer::default(), Value::Null)
            .expect("a valid model");
        let rotated = m.principal(4).expect("rotates");
        let texts = ["t01 t02 t05", "t03 t03 t30", "t10 t11", "t39"];
        let cosines = |model: &CodeModel| {
            let v = dense(model.embed(&texts, Role::Document));
            let dim = model.dimension();
            let mut out = Vec::new();
            for a in 0..texts.len() {
                for b in 0..texts.len() {
                    let dot: f32 = (0..dim).map(|k| v[a * dim + k] * v[b * dim + k]).sum();
                    out.push(dot);
                }
            }
            out
        };
        for (a, b) in cosines(&m).iter().zip(cosines(&rotated)) {
            assert!((a - b).abs() < 0.02, "a rotation keeps cosines: {a} {b}");
        }
        // Cut to one dimension, what is left is the wide direction.
        let one = m.principal(1).expect("cuts");
        assert_eq!(one.dimension(), 1);
        let (_, kept) = one.vectors();
        let (_, all) = m.vectors();
        let along: f32 = (0..40).map(|i| (all[i * 4] + all[i * 4 + 1]).powi(2) / 2.0).sum();
        let got: f32 = kept.iter().map(|x| x * x).sum();
        assert!((got / along - 1.0).abs() < 0.05, "{got} against {along}");
        assert!(m.principal(0).is_err() && m.principal(5).is_err());
        assert!(one.meta().training["principal"]["from"].as_str() == Some(&m.identity()[..]));
    }

    /// `tiny()` with a query map that sends `file`'s direction to
    /// `socket`'s and keeps the rest.
    fn mapped() -> CodeModel {
        let map = vec![
            1.0, 0.0, 0.0, //
            0.0, 0.0, 1.0, //
            0.0, 0.0, 1.0,
        ];
        tiny().with_query_map(map).expect("a 3 x 3 map")
    }

    #[test]
    fn a_query_map_moves_queries_and_leaves_documents() {
        let (plain, m) = (tiny(), mapped());
        assert_ne!(plain.identity(), m.identity(), "the map is part of the model");
        let texts = ["file", "parse config"];
        assert_eq!(
            dense(m.embed(&texts, Role::Document)),
            dense(plain.embed(&texts, Role::Document))
        );
        let close = |got: &[f32], want: [f32; 3]| {
            let norm = want.iter().map(|x| x * x).sum::<f32>().sqrt();
            got.iter().zip(want).all(|(a, b)| (a - b / norm).abs() < 0.01)
        };
        let q = dense(m.embed(&texts, Role::Query));
        assert!(close(&q[..3], [0.0, 0.0, 1.0]), "file asks for socket: {q:?}");
        // pars + config = (1.9, 0.1, 0), mapped to (1.9, 0, 0.1).
        assert!(close(&q[3..], [1.9, 0.0, 0.1]), "{q:?}");
        // In leading dimensions, a query is mapped whole, then cut:
        // (1, 1, 0) to (1, 0, 1), then (1, 0).
        let cut = dense(m.embed_as(&["file parse"], 2, Role::Query));
        assert!((cut[0] - 1.0).abs() < 1e-4 && cut[1].abs() < 1e-4, "{cut:?}");
        assert!(tiny().with_query_map(vec![1.0; 4]).is_err());
        assert!(tiny().with_query_map(vec![f32::NAN; 9]).is_err());
    }

    #[test]
    fn a_query_map_is_written_checked_and_rotated() {
        let m = mapped();
        let dir = tempfile::tempdir().expect("temp dir");
        m.write(dir.path()).expect("writes");
        let back = CodeModel::load(dir.path()).expect("loads");
        assert_eq!(back.meta(), m.meta());
        assert_eq!(back.query_map(), m.query_map());
        let texts = ["file config", "socket"];
        assert_eq!(dense(back.embed(&texts, Role::Query)), dense(m.embed(&texts, Role::Query)));

        // Rotated onto its principal directions, queries and documents meet
        // as before.
        let rotated = m.principal(3).expect("rotates");
        let scores = |model: &CodeModel| {
            let q = dense(model.embed(&["file", "config parse"], Role::Query));
            let d = dense(model.embed(&["socket", "parse", "file file"], Role::Document));
            let dim = model.dimension();
            let mut out: Vec<f32> = Vec::new();
            for a in q.chunks_exact(dim) {
                out.extend(
                    d.chunks_exact(dim).map(|b| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>()),
                );
            }
            out
        };
        for (a, b) in scores(&m).iter().zip(scores(&rotated)) {
            assert!((a - b).abs() < 0.02, "{a} {b}");
        }

        // A damaged, missing or unannounced map is refused.
        let path = dir.path().join(QUERY_MAP_FILE);
        let mut bytes = std::fs::read(&path).expect("map");
        bytes[0] ^= 1;
        std::fs::write(&path, &bytes).expect("write");
        assert!(CodeModel::load(dir.path()).is_err(), "a flipped bit is caught");
        std::fs::write(&path, &bytes[..8]).expect("write");
        let err = CodeModel::load(dir.path()).expect_err("a short map is refused");
        assert!(err.to_string().contains("3 x 3"), "{err}");
        std::fs::remove_file(&path).expect("remove");
        let err = CodeModel::load(dir.path()).expect_err("a missing map is refused");
        assert!(err.to_string().contains("missing"), "{err}");
        tiny().write(dir.path()).expect("writes a model without a map");
        assert!(!path.exists(), "an old map is not left beside it");
        std::fs::write(&path, &bytes).expect("write");
        let err = CodeModel::load(dir.path()).expect_err("a map meta.json does not announce");
        assert!(err.to_string().contains("does not announce"), "{err}");
    }

    #[test]
    fn a_replaced_map_and_training_notes_survive_a_write() {
        // As pack_code_model --query-map does: a packed model, its map
        // replaced and the fit noted; rows and documents stay as they were.
        let m = mapped();
        let identity = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
        let note = serde_json::json!({"query_map_fit": {"questions": 3}});
        let refit =
            m.with_query_map(identity.to_vec()).expect("a 3 x 3 map").with_training(note.clone());
        assert_eq!(refit.meta().training, note);
        assert_ne!(refit.identity(), mapped().identity(), "a new map is a new model");
        let texts = ["file", "socket parse"];
        assert_eq!(
            dense(refit.embed(&texts, Role::Document)),
            dense(mapped().embed(&texts, Role::Document))
        );
        let (q, d) =
            (dense(refit.embed(&texts, Role::Query)), dense(tiny().embed(&texts, Role::Document)));
        assert!(
            q.iter().zip(&d).all(|(a, b)| (a - b).abs() < 1e-6),
            "the identity map asks as documents are embedded: {q:?} {d:?}"
        );
        let dir = tempfile::tempdir().expect("temp dir");
        refit.write(dir.path()).expect("writes");
        let back = CodeModel::load(dir.path()).expect("loads");
        assert_eq!(back.meta(), refit.meta());
        assert_eq!(back.query_map(), Some(&identity[..]));
    }

    #[test]
    fn a_row_map_moves_documents_and_the_map_given_with_it_keeps_queries() {
        let m = mapped();
        // Swaps the first two dimensions and doubles the third.
        let swap = [0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 2.0];
        let moved = m.with_row_map(&swap).expect("a 3 x 3 map");
        assert!(moved.query_map().is_none(), "the old map no longer fits the rows");
        assert!(m.with_row_map(&[1.0; 4]).is_err());
        assert!(m.with_row_map(&[f32::INFINITY; 9]).is_err());
        let texts = ["file", "parse config", "socket"];
        let swapped = |v: &[f32]| -> Vec<f32> {
            v.chunks_exact(3)
                .flat_map(|r| {
                    let n = (r[1] * r[1] + r[0] * r[0] + 4.0 * r[2] * r[2]).sqrt();
                    [r[1] / n, r[0] / n, 2.0 * r[2] / n]
                })
                .collect()
        };
        let want = swapped(&dense(m.embed(&texts, Role::Document)));
        let got = dense(moved.embed(&texts, Role::Document));
        assert!(got.iter().zip(&want).all(|(a, b)| (a - b).abs() < 0.02), "{got:?} {want:?}");
        // The inverse of the row map times the old map asks as before.
        let inverse = [0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.5];
        let old = m.query_map().expect("a map");
        let mut kept = vec![0f32; 9];
        for (row, out) in inverse.chunks_exact(3).zip(kept.chunks_exact_mut(3)) {
            crate::embed::times_map(row, old, out);
        }
        let moved = moved.with_query_map(kept).expect("a 3 x 3 map");
        let (q, want) =
            (dense(moved.embed(&texts, Role::Query)), dense(m.embed(&texts, Role::Query)));
        assert!(q.iter().zip(&want).all(|(a, b)| (a - b).abs() < 0.02), "{q:?} {want:?}");
        assert_eq!(moved.meta().training["row_map"]["from"], m.identity());
    }

    #[cfg(feature = "builtin-model")]
    #[test]
    fn the_builtin_model_reads_and_embeds() {
        let m = CodeModel::builtin().expect("the built-in model reads");
        assert!(m.meta().terms > 10_000, "{:?}", m.meta());
        let v = dense(m.embed(&["open a tcp connection", "xqzzv"], Role::Query));
        let dim = m.dimension();
        let norm: f32 = v[..dim].iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-3, "{norm}");
        assert!(v[dim..].iter().all(|&x| x == 0.0), "no known term, no vector");
    }
}
