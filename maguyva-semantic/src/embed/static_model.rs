//! Static embedding models in the model2vec format, from a local folder:
//! `model.safetensors` (a tensor `embeddings` of one row per token, f32, f16,
//! bf16 or int8; optional `weights` per token and `mapping` from token to
//! row), `tokenizer.json` and `config.json` (`normalize`). A text's vector is
//! the mean of the rows of its first 512 tokens, each row scaled by its
//! token's weight when the model has weights, then scaled to unit length
//! unless `normalize` is false. The safetensors file is read directly, with
//! no hub client. Nothing is ever downloaded.

use super::{Embedder, Role, Vectors};
use crate::error::{Error, Result};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Tokens embedded per text; longer texts are cut (as model2vec does).
const MAX_TOKENS: usize = 512;

/// A model2vec-format static model.
pub struct StaticModel {
    tokenizer: tokenizers::Tokenizer,
    rows: usize,
    dim: usize,
    embeddings: Vec<f32>,
    weights: Option<Vec<f32>>,
    mapping: Option<Vec<u32>>,
    normalize: bool,
    identity: String,
    max_chars: usize,
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

fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exp = (h >> 10) & 0x1f;
    let frac = u32::from(h & 0x3ff);
    let bits = match exp {
        0 if frac == 0 => sign,
        0 => {
            // Subnormal: normalize.
            let mut e = -1i32;
            let mut f = frac;
            while f & 0x400 == 0 {
                f <<= 1;
                e -= 1;
            }
            sign | (((127 - 15 + 1 + e) as u32) << 23) | ((f & 0x3ff) << 13)
        }
        0x1f => sign | 0x7f80_0000 | (frac << 13),
        _ => sign | ((u32::from(exp) + 127 - 15) << 23) | (frac << 13),
    };
    f32::from_bits(bits)
}

/// Reads every tensor of a safetensors file's bytes (an 8-byte header
/// length, a JSON header, then the raw little-endian data); `path` names
/// the file in errors.
fn read_safetensors(bytes: &[u8], path: &Path) -> Result<HashMap<String, Tensor>> {
    let len = bytes
        .get(..8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
        .ok_or_else(|| model_err(path, "too short"))? as usize;
    let header = bytes
        .get(8..8usize.saturating_add(len))
        .ok_or_else(|| model_err(path, "header runs past the end"))?;
    let data = &bytes[8 + len..];
    let header: HashMap<String, Value> =
        serde_json::from_slice(header).map_err(|e| model_err(path, format!("header: {e}")))?;
    let mut out = HashMap::new();
    for (name, info) in header {
        if name == "__metadata__" {
            continue;
        }
        let dtype = info["dtype"].as_str().unwrap_or("");
        let shape: Vec<usize> = info["shape"]
            .as_array()
            .map(|a| a.iter().filter_map(|x| x.as_u64()).map(|x| x as usize).collect())
            .unwrap_or_default();
        let offsets: Vec<usize> = info["data_offsets"]
            .as_array()
            .map(|a| a.iter().filter_map(|x| x.as_u64()).map(|x| x as usize).collect())
            .unwrap_or_default();
        let [start, end] = offsets[..] else {
            return Err(model_err(path, format!("tensor {name}: bad offsets")));
        };
        let raw = data
            .get(start..end)
            .ok_or_else(|| model_err(path, format!("tensor {name} runs past the end")))?;
        let values: Vec<f32> = match dtype {
            "F32" => {
                raw.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()
            }
            "F16" => {
                raw.chunks_exact(2).map(|b| f16_to_f32(u16::from_le_bytes([b[0], b[1]]))).collect()
            }
            "BF16" => raw
                .chunks_exact(2)
                .map(|b| f32::from_bits(u32::from(u16::from_le_bytes([b[0], b[1]])) << 16))
                .collect(),
            "I8" => raw.iter().map(|&b| f32::from(b as i8)).collect(),
            "I32" => raw
                .chunks_exact(4)
                .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f32)
                .collect(),
            "I64" => raw
                .chunks_exact(8)
                .map(|b| i64::from_le_bytes(b.try_into().unwrap_or([0; 8])) as f32)
                .collect(),
            other => {
                return Err(model_err(path, format!("tensor {name} has unsupported type {other}")));
            }
        };
        // A shape whose size overflows describes no tensor in the file.
        let size = shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
        if size != Some(values.len()) {
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
        let tokenizer = tokenizers::Tokenizer::from_file(&tok_path)
            .map_err(|e| model_err(&tok_path, e.to_string()))?;
        let cfg: Value = serde_json::from_slice(
            &std::fs::read(&cfg_path).map_err(|e| model_err(&cfg_path, e.to_string()))?,
        )
        .map_err(|e| model_err(&cfg_path, e.to_string()))?;
        let normalize = cfg.get("normalize").and_then(Value::as_bool).unwrap_or(true);
        let name = dir
            .file_name()
            .map_or_else(|| "model".to_string(), |n| n.to_string_lossy().into_owned());
        let identity = format!("model2vec:{name}:{:08x}", crc32fast::hash(&bytes));
        // Cut long texts before tokenizing, as model2vec does: a text of
        // `MAX_TOKENS` tokens is rarely longer than this many characters.
        let mut lens: Vec<usize> =
            tokenizer.get_vocab(false).keys().map(|t| t.chars().count()).collect();
        lens.sort_unstable();
        let median = lens.get(lens.len() / 2).copied().unwrap_or(4).max(1);
        Ok(StaticModel {
            tokenizer,
            rows,
            dim,
            embeddings: emb.values,
            weights,
            mapping,
            normalize,
            identity,
            max_chars: MAX_TOKENS * median,
        })
    }

    fn embed_one(&self, text: &str, out: &mut [f32]) -> Result<()> {
        let cut = match text.char_indices().nth(self.max_chars) {
            Some((i, _)) => &text[..i],
            None => text,
        };
        let enc = self
            .tokenizer
            .encode(cut, false)
            .map_err(|e| Error::Model { path: "tokenizer".into(), reason: e.to_string() })?;
        let mut count = 0usize;
        for &id in enc.get_ids().iter().take(MAX_TOKENS) {
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
        if self.normalize {
            let norm = out.iter().map(|x| x * x).sum::<f32>().sqrt();
            if norm > 1e-12 {
                out.iter_mut().for_each(|x| *x /= norm);
            }
        }
        Ok(())
    }
}

impl Embedder for StaticModel {
    fn identity(&self) -> String {
        self.identity.clone()
    }

    fn dimension(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str], _role: Role) -> Result<Vectors> {
        Vectors::dense_rows(self.dim, texts, |t, out| self.embed_one(t, out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_precision_conversion() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x0000), 0.0);
        assert!((f16_to_f32(0x3555) - 0.33325).abs() < 1e-4);
        assert!(f16_to_f32(0x0001) > 0.0 && f16_to_f32(0x0001) < 1e-7);
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
        let err = read_safetensors(&safetensors(huge, &[0; 4]), path).unwrap_err();
        assert!(err.to_string().contains("values for shape"), "{err}");
        let fits = r#"{"embeddings":{"dtype":"F32","shape":[1,1],"data_offsets":[0,4]}}"#;
        let tensors = read_safetensors(&safetensors(fits, &1f32.to_le_bytes()), path).unwrap();
        assert_eq!(tensors["embeddings"].values, [1.0]);
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
