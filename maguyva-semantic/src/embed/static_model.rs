//! Static embedding models in the model2vec format, from a local folder:
//! `model.safetensors` (a tensor `embeddings` of one row per token, f32, f16,
//! bf16 or int8; optional `weights` per token, `mapping` from token to
//! row and `query_map`, a square matrix), `tokenizer.json` and
//! `config.json` (`normalize`). A text's vector is the mean of the rows of
//! its first 512 tokens, each row scaled by its token's weight when the
//! model has weights, times the query map if the text is a query and the
//! model has one, then scaled to unit length unless `normalize` is false.
//! The safetensors file is read directly, with no hub client. Nothing is
//! ever downloaded.
//!
//! A model whose `config.json` names an analyzer in `terms` (the identity
//! of [`Analyzer`], `tokens+porter2` for the index's) holds that analyzer's
//! terms: its `tokenizer.json` is only read for its vocabulary, and a text's
//! tokens are its first 512 terms, as the index analyzes it, so code-aware
//! splitting and stemming match the model's training.

use super::{Embedder, Role, Vectors};
use crate::error::{Error, Result};
use maguyva_core::Analyzer;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Tokens embedded per text; longer texts are cut (as model2vec does).
const MAX_TOKENS: usize = 512;

/// How a model turns a text into tokens.
enum Tokens {
    /// The model's own tokenizer, and the characters a text is cut to
    /// before it is tokenized.
    Tokenizer { tokenizer: Box<tokenizers::Tokenizer>, max_chars: usize },
    /// An analyzer's terms, looked up in the model's vocabulary.
    Terms { vocabulary: HashMap<String, u32>, analyzer: Analyzer },
}

/// A model2vec-format static model.
pub struct StaticModel {
    tokens: Tokens,
    rows: usize,
    dim: usize,
    embeddings: Vec<f32>,
    weights: Option<Vec<f32>>,
    mapping: Option<Vec<u32>>,
    /// `dim * dim` values, row after row, that a query's mean multiplies.
    query_map: Option<Vec<f32>>,
    normalize: bool,
    identity: String,
}

impl std::fmt::Debug for StaticModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaticModel")
            .field("identity", &self.identity)
            .field("dim", &self.dim)
            .finish()
    }
}

fn model_err(path: &Path, reason: impl Into<String>) -> Error {
    Error::Model { path: path.to_path_buf(), reason: reason.into() }
}

/// A tensor of a safetensors file, decoded to f32.
#[derive(Debug)]
struct Tensor {
    shape: Vec<usize>,
    values: Vec<f32>,
}

/// Reads every tensor of a safetensors file's bytes (the `safetensors`
/// crate checks the header, the offsets and each tensor's size), decoded to
/// f32 (`half` for the half-precision types); `path` names the file in
/// errors.
fn read_safetensors(bytes: &[u8], path: &Path) -> Result<HashMap<String, Tensor>> {
    use safetensors::Dtype;
    let file =
        safetensors::SafeTensors::deserialize(bytes).map_err(|e| model_err(path, e.to_string()))?;
    let mut out = HashMap::new();
    for (name, view) in file.tensors() {
        let raw = view.data();
        let pairs = || raw.chunks_exact(2).map(|b| [b[0], b[1]]);
        let values: Vec<f32> = match view.dtype() {
            Dtype::F32 => {
                raw.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()
            }
            Dtype::F16 => pairs().map(|b| half::f16::from_le_bytes(b).to_f32()).collect(),
            Dtype::BF16 => pairs().map(|b| half::bf16::from_le_bytes(b).to_f32()).collect(),
            Dtype::I8 => raw.iter().map(|&b| f32::from(b as i8)).collect(),
            Dtype::I32 => raw
                .chunks_exact(4)
                .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f32)
                .collect(),
            Dtype::I64 => raw
                .chunks_exact(8)
                .map(|b| i64::from_le_bytes(b.try_into().unwrap_or([0; 8])) as f32)
                .collect(),
            other => {
                return Err(model_err(
                    path,
                    format!("tensor {name} has unsupported type {other:?}"),
                ));
            }
        };
        let shape = view.shape().to_vec();
        if shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d)) != Some(values.len()) {
            return Err(model_err(
                path,
                format!("tensor {name}: {} values for shape {shape:?}", values.len()),
            ));
        }
        out.insert(name, Tensor { shape, values });
    }
    Ok(out)
}

impl StaticModel {
    /// Loads a model folder.
    pub fn load(dir: &Path) -> Result<StaticModel> {
        let file = |name: &str| -> Result<PathBuf> {
            let p = dir.join(name);
            if p.is_file() { Ok(p) } else { Err(model_err(dir, format!("{name} is missing"))) }
        };
        let (model_path, tok_path, cfg_path) =
            (file("model.safetensors")?, file("tokenizer.json")?, file("config.json")?);
        // The weights are checked before the tokenizer, the slowest part
        // to load, is parsed.
        let bytes =
            std::fs::read(&model_path).map_err(|e| model_err(&model_path, e.to_string()))?;
        let mut tensors = read_safetensors(&bytes, &model_path)?;
        let emb = tensors
            .remove("embeddings")
            .or_else(|| tensors.remove("0"))
            .ok_or_else(|| model_err(&model_path, "no embeddings tensor"))?;
        let [rows, dim] = emb.shape[..] else {
            return Err(model_err(&model_path, "embeddings must be a matrix"));
        };
        let weights = tensors.remove("weights").map(|t| t.values);
        let mapping = tensors
            .remove("mapping")
            .map(|t| t.values.into_iter().map(|x| x as u32).collect::<Vec<u32>>());
        if weights.as_ref().is_some_and(|w| w.is_empty())
            || mapping.as_ref().is_some_and(|m| m.iter().any(|&r| r as usize >= rows))
        {
            return Err(model_err(&model_path, "weights or mapping do not fit the embeddings"));
        }
        let query_map = match tensors.remove("query_map") {
            Some(t) if t.shape[..] == [dim, dim] && t.values.iter().all(|x| x.is_finite()) => {
                Some(t.values)
            }
            Some(_) => return Err(model_err(&model_path, "query_map must be dim x dim, finite")),
            None => None,
        };
        let cfg: Value = serde_json::from_slice(
            &std::fs::read(&cfg_path).map_err(|e| model_err(&cfg_path, e.to_string()))?,
        )
        .map_err(|e| model_err(&cfg_path, e.to_string()))?;
        let normalize = cfg.get("normalize").and_then(Value::as_bool).unwrap_or(true);
        let tokens = match cfg.get("terms") {
            Some(terms) => term_vocabulary(terms, &tok_path, &cfg_path)?,
            None => {
                let tokenizer = tokenizers::Tokenizer::from_file(&tok_path)
                    .map_err(|e| model_err(&tok_path, e.to_string()))?;
                // Cut long texts before tokenizing, as model2vec does: a
                // text of `MAX_TOKENS` tokens is rarely longer than this
                // many characters.
                let mut lens: Vec<usize> =
                    tokenizer.get_vocab(false).keys().map(|t| t.chars().count()).collect();
                lens.sort_unstable();
                let median = lens.get(lens.len() / 2).copied().unwrap_or(4).max(1);
                Tokens::Tokenizer { tokenizer: Box::new(tokenizer), max_chars: MAX_TOKENS * median }
            }
        };
        let name = dir
            .file_name()
            .map_or_else(|| "model".to_string(), |n| n.to_string_lossy().into_owned());
        let identity = format!("model2vec:{name}:{:08x}", crc32fast::hash(&bytes));
        Ok(StaticModel {
            tokens,
            rows,
            dim,
            embeddings: emb.values,
            weights,
            mapping,
            query_map,
            normalize,
            identity,
        })
    }

    fn embed_one(&self, text: &str, role: Role, out: &mut [f32]) -> Result<()> {
        let ids: Vec<u32> = match &self.tokens {
            Tokens::Tokenizer { tokenizer, max_chars } => tokenizer
                .encode(
                    match text.char_indices().nth(*max_chars) {
                        Some((i, _)) => &text[..i],
                        None => text,
                    },
                    false,
                )
                .map_err(|e| Error::Model { path: "tokenizer".into(), reason: e.to_string() })?
                .get_ids()
                .iter()
                .take(MAX_TOKENS)
                .copied()
                .collect(),
            Tokens::Terms { vocabulary, analyzer } => {
                let mut ids = Vec::new();
                let mut seen = 0;
                // Terms are counted on the whole text, as in training; an
                // index's fragments are short.
                analyzer.for_each_term(text, |t| {
                    seen += 1;
                    if seen <= MAX_TOKENS {
                        ids.extend(vocabulary.get(t).copied());
                    }
                });
                ids
            }
        };
        let mut count = 0usize;
        for &id in &ids {
            let row = match &self.mapping {
                Some(m) => m.get(id as usize).copied().unwrap_or(u32::MAX) as usize,
                None => id as usize,
            };
            if row >= self.rows {
                continue;
            }
            let w = self.weights.as_ref().and_then(|w| w.get(id as usize)).copied().unwrap_or(1.0);
            for (o, x) in out.iter_mut().zip(&self.embeddings[row * self.dim..(row + 1) * self.dim])
            {
                *o += w * x;
            }
            count += 1;
        }
        if count > 0 {
            out.iter_mut().for_each(|x| *x /= count as f32);
        }
        if let (Role::Query, Some(map)) = (role, &self.query_map) {
            let mean = out.to_vec();
            super::times_map(&mean, map, out);
        }
        if self.normalize {
            let norm = out.iter().map(|x| x * x).sum::<f32>().sqrt();
            if norm > 1e-12 {
                out.iter_mut().for_each(|x| *x /= norm);
            }
        }
        Ok(())
    }
}

/// The vocabulary of a model of analyzer terms: the analyzer `terms` names
/// (the index's, stemmed or not) and the `model.vocab` map of its
/// `tokenizer.json` (a WordLevel model's).
fn term_vocabulary(terms: &Value, tok_path: &Path, cfg_path: &Path) -> Result<Tokens> {
    let analyzer = [Analyzer { stem: true }, Analyzer { stem: false }]
        .into_iter()
        .find(|a| terms.as_str() == Some(a.identity()))
        .ok_or_else(|| model_err(cfg_path, format!("terms of an unknown analyzer: {terms}")))?;
    let json: Value = serde_json::from_slice(
        &std::fs::read(tok_path).map_err(|e| model_err(tok_path, e.to_string()))?,
    )
    .map_err(|e| model_err(tok_path, e.to_string()))?;
    let vocabulary: HashMap<String, u32> = json["model"]["vocab"]
        .as_object()
        .ok_or_else(|| model_err(tok_path, "no model.vocab map of terms"))?
        .iter()
        .filter_map(|(t, id)| Some((t.clone(), u32::try_from(id.as_u64()?).ok()?)))
        .collect();
    Ok(Tokens::Terms { vocabulary, analyzer })
}

impl StaticModel {
    /// This model as a [`CodeModel`](crate::CodeModel) (its rows in 8 bits, each scaled by
    /// its token's weight; its query map kept), when it is a model of
    /// analyzer terms;
    /// `training` says how it was made.
    pub fn to_code_model(&self, training: Value) -> Result<super::CodeModel> {
        let Tokens::Terms { vocabulary, analyzer } = &self.tokens else {
            return Err(model_err(Path::new(&self.identity), "not a model of analyzer terms"));
        };
        let mut terms = Vec::with_capacity(vocabulary.len());
        let mut vectors = Vec::with_capacity(vocabulary.len() * self.dim);
        let mut entries: Vec<(&String, u32)> = vocabulary.iter().map(|(t, &i)| (t, i)).collect();
        entries.sort_unstable();
        for (term, id) in entries {
            let row = match &self.mapping {
                Some(m) => m.get(id as usize).copied().unwrap_or(u32::MAX) as usize,
                None => id as usize,
            };
            let Some(values) = self.embeddings.get(row * self.dim..(row + 1) * self.dim) else {
                continue;
            };
            let w = self.weights.as_ref().and_then(|w| w.get(id as usize)).copied().unwrap_or(1.0);
            terms.push(term.clone());
            vectors.extend(values.iter().map(|x| w * x));
        }
        let model =
            super::CodeModel::from_vectors(&terms, &vectors, self.dim, *analyzer, training)?;
        match &self.query_map {
            Some(map) => model.with_query_map(map.clone()),
            None => Ok(model),
        }
    }
}

impl Embedder for StaticModel {
    fn identity(&self) -> String {
        self.identity.clone()
    }

    fn dimension(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str], role: Role) -> Result<Vectors> {
        Vectors::dense_rows(self.dim, texts, |t, out| self.embed_one(t, role, out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_precision_tensors_are_read() {
        let path = Path::new("model.safetensors");
        let halves: Vec<u8> = [0x3c00u16, 0xc000, 0x0000, 0x3555, 0x0001]
            .iter()
            .flat_map(|h| h.to_le_bytes())
            .collect();
        let header = r#"{"embeddings":{"dtype":"F16","shape":[5],"data_offsets":[0,10]}}"#;
        let tensors = read_safetensors(&safetensors(header, &halves), path).unwrap();
        let v = &tensors["embeddings"].values;
        assert_eq!(v[..3], [1.0, -2.0, 0.0]);
        assert!((v[3] - 0.33325).abs() < 1e-4);
        assert!(v[4] > 0.0 && v[4] < 1e-7, "a subnormal half: {}", v[4]);
    }

    fn safetensors(header: &str, data: &[u8]) -> Vec<u8> {
        let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
        bytes.extend_from_slice(header.as_bytes());
        bytes.extend_from_slice(data);
        bytes
    }

    #[test]
    fn a_shape_whose_size_overflows_is_an_error() {
        let path = Path::new("model.safetensors");
        let huge = r#"{"embeddings":{"dtype":"F32","shape":[4294967296,4294967297],"data_offsets":[0,4]}}"#;
        assert!(read_safetensors(&safetensors(huge, &[0; 4]), path).is_err());
        let fits = r#"{"embeddings":{"dtype":"F32","shape":[1,1],"data_offsets":[0,4]}}"#;
        let tensors = read_safetensors(&safetensors(fits, &1f32.to_le_bytes()), path).unwrap();
        assert_eq!(tensors["embeddings"].values, [1.0]);
    }

    /// A model folder of `rows` (two dimensions each) for the terms
    /// `vocab`, whose config names `terms`.
    fn term_model(vocab: &[&str], rows: &[[f32; 2]], terms: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let data: Vec<u8> = rows.iter().flatten().flat_map(|x| x.to_le_bytes()).collect();
        let header = format!(
            r#"{{"embeddings":{{"dtype":"F32","shape":[{},2],"data_offsets":[0,{}]}}}}"#,
            rows.len(),
            data.len()
        );
        std::fs::write(dir.path().join("model.safetensors"), safetensors(&header, &data)).unwrap();
        let vocab: serde_json::Map<String, Value> =
            vocab.iter().enumerate().map(|(i, t)| (t.to_string(), Value::from(i))).collect();
        let tokenizer = serde_json::json!({"model": {"type": "WordLevel", "vocab": vocab}});
        std::fs::write(dir.path().join("tokenizer.json"), tokenizer.to_string()).unwrap();
        let config = serde_json::json!({"normalize": true, "terms": terms});
        std::fs::write(dir.path().join("config.json"), config.to_string()).unwrap();
        dir
    }

    #[test]
    fn a_query_map_tensor_maps_queries_and_goes_into_the_code_model() {
        let dir = tempfile::tempdir().unwrap();
        // Two terms, (1, 0) and (0, 1); the map swaps the two axes.
        let values = [1.0f32, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0];
        let data: Vec<u8> = values.iter().flat_map(|x| x.to_le_bytes()).collect();
        let header = r#"{"embeddings":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},"query_map":{"dtype":"F32","shape":[2,2],"data_offsets":[16,32]}}"#;
        std::fs::write(dir.path().join("model.safetensors"), safetensors(header, &data)).unwrap();
        let tokenizer =
            serde_json::json!({"model": {"type": "WordLevel", "vocab": {"socket": 0, "host": 1}}});
        std::fs::write(dir.path().join("tokenizer.json"), tokenizer.to_string()).unwrap();
        let config =
            serde_json::json!({"normalize": true, "terms": Analyzer::default().identity()});
        std::fs::write(dir.path().join("config.json"), config.to_string()).unwrap();
        let model = StaticModel::load(dir.path()).unwrap();
        let embed = |role| model.embed(&["socket"], role).and_then(Vectors::into_dense).unwrap();
        assert_eq!(embed(Role::Document), [1.0, 0.0]);
        assert_eq!(embed(Role::Query), [0.0, 1.0]);
        let code = model.to_code_model(Value::Null).unwrap();
        assert_eq!(code.query_map(), Some(&values[4..]));
        let q = code.embed(&["socket"], Role::Query).and_then(Vectors::into_dense).unwrap();
        assert!(q[0].abs() < 1e-6 && (q[1] - 1.0).abs() < 1e-6, "{q:?}");

        // A map of the wrong shape is refused.
        let header = r#"{"embeddings":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},"query_map":{"dtype":"F32","shape":[1,4],"data_offsets":[16,32]}}"#;
        std::fs::write(dir.path().join("model.safetensors"), safetensors(header, &data)).unwrap();
        let err = StaticModel::load(dir.path()).unwrap_err();
        assert!(err.to_string().contains("query_map"), "{err}");
    }

    #[test]
    fn a_model_of_analyzer_terms_embeds_the_terms_an_index_makes() {
        // "retrying" and "retries" are one stemmed term; "parseConfig" is
        // split into its words (and also kept whole, a term not in the
        // vocabulary here).
        let mut terms = Vec::new();
        Analyzer::default().for_each_term("retrying parseConfig", |t| terms.push(t.to_string()));
        assert!(terms.len() >= 3, "{terms:?}");
        let (retry, parse, config) = (&terms[0], &terms[1], &terms[2]);
        let dir = term_model(
            &[parse, config, retry],
            &[[1.0, 0.0], [0.0, 1.0], [3.0, 4.0]],
            Analyzer::default().identity(),
        );
        let model = StaticModel::load(dir.path()).unwrap();
        let Vectors::Dense { dim: 2, data } = model.embed(&["retries"], Role::Query).unwrap()
        else {
            panic!("dense vectors of two dimensions")
        };
        assert_eq!(data, [0.6, 0.8]);
        let Vectors::Dense { data, .. } = model.embed(&["parse_config"], Role::Document).unwrap()
        else {
            panic!()
        };
        let h = std::f32::consts::FRAC_1_SQRT_2;
        assert!((data[0] - h).abs() < 1e-6 && (data[1] - h).abs() < 1e-6, "{data:?}");

        let other = term_model(&["a"], &[[1.0, 0.0]], "some-other-analyzer");
        let err = StaticModel::load(other.path()).unwrap_err();
        assert!(err.to_string().contains("unknown analyzer"), "{err}");
    }

    #[test]
    fn truncated_or_inverted_offsets_are_errors() {
        let path = Path::new("model.safetensors");
        let inverted = r#"{"embeddings":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}}"#;
        assert!(read_safetensors(&safetensors(inverted, &[0; 4]), path).is_err());
        assert!(read_safetensors(&[1, 0, 0], path).is_err());
        let long_header = u64::MAX.to_le_bytes();
        assert!(read_safetensors(&long_header, path).is_err());
    }
}
