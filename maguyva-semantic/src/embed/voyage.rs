//! Voyage AI (`voyage-code-3`) embeddings, as packed binary vectors
//! (`output_dtype: "ubinary"`, 256, 512, 1024 or 2048 bits; 1024 by
//! default). The `maguyva` binary chooses it when `VOYAGE_API_KEY` is set
//! and no other embedder is asked for. Requests are batched within the
//! API's limits (1,000 inputs and an estimated 120,000 tokens per request),
//! retried on 429, 5xx and dropped connections (six attempts, the wait
//! doubling from 500 ms), and a 401 or a malformed answer is a clear error.

use super::{Embedder, Role, VOYAGE_DIMENSIONS, Vectors};
use crate::error::{Error, Result};
use serde_json::{Value, json};
use std::time::Duration;

/// The API takes at most this many inputs per request.
const MAX_BATCH_INPUTS: usize = 1_000;
/// And at most this many tokens per request.
const MAX_BATCH_TOKENS: usize = 120_000;
/// Attempts per request on 429 and 5xx.
const MAX_ATTEMPTS: u32 = 6;

/// Settings of the Voyage client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VoyageConfig {
    /// The API key.
    pub api_key: String,
    /// The model.
    pub model: String,
    /// Bits per vector: 256, 512, 1024 or 2048.
    pub dimension: usize,
    /// The API's base address (tests point it at a local server).
    pub base_url: String,
    /// The first retry's wait; each retry doubles it.
    pub backoff: Duration,
}

impl VoyageConfig {
    /// The default settings for a key.
    pub fn new(api_key: impl Into<String>) -> VoyageConfig {
        VoyageConfig {
            api_key: api_key.into(),
            model: "voyage-code-3".into(),
            dimension: 1024,
            base_url: "https://api.voyageai.com".into(),
            backoff: Duration::from_millis(500),
        }
    }
}

/// The Voyage AI embedder.
#[derive(Debug)]
pub struct VoyageClient {
    config: VoyageConfig,
    agent: ureq::Agent,
}

/// Tokens of a text, over-estimated (a token is rarely under three bytes of
/// code), so that a batch never exceeds the API's limit.
fn estimated_tokens(text: &str) -> usize {
    text.len() / 3 + 1
}

/// Splits texts into batches within the API's limits, by index ranges.
pub fn batches(texts: &[&str]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut tokens = 0;
    for (i, t) in texts.iter().enumerate() {
        let n = estimated_tokens(t).min(MAX_BATCH_TOKENS);
        if i > start && (i - start >= MAX_BATCH_INPUTS || tokens + n > MAX_BATCH_TOKENS) {
            out.push(start..i);
            start = i;
            tokens = 0;
        }
        tokens += n;
    }
    if start < texts.len() {
        out.push(start..texts.len());
    }
    out
}

impl VoyageClient {
    /// A client; fails on a dimension the API does not offer.
    pub fn new(config: VoyageConfig) -> Result<VoyageClient> {
        if !VOYAGE_DIMENSIONS.contains(&config.dimension) {
            return Err(Error::Remote(format!(
                "output dimension {} is not one of 256, 512, 1024, 2048",
                config.dimension
            )));
        }
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(120)))
            .build()
            .into();
        Ok(VoyageClient { config, agent })
    }

    fn request(&self, texts: &[&str], role: Role) -> Result<Vec<Vec<u8>>> {
        let body = json!({
            "input": texts,
            "model": self.config.model,
            "input_type": match role { Role::Query => "query", Role::Document => "document" },
            "output_dtype": "ubinary",
            "output_dimension": self.config.dimension,
        });
        let url = format!("{}/v1/embeddings", self.config.base_url.trim_end_matches('/'));
        let body = body.to_string();
        let mut wait = self.config.backoff;
        for attempt in 1..=MAX_ATTEMPTS {
            let sent = self
                .agent
                .post(&url)
                .header("Authorization", &format!("Bearer {}", self.config.api_key))
                .header("Content-Type", "application/json")
                .send(body.as_str());
            let mut response = match sent {
                Ok(r) => r,
                Err(e) if attempt < MAX_ATTEMPTS => {
                    // A dropped connection is worth another try.
                    let _ = e;
                    std::thread::sleep(wait);
                    wait *= 2;
                    continue;
                }
                Err(e) => return Err(Error::Remote(format!("request failed: {e}"))),
            };
            let status = response.status().as_u16();
            match status {
                200 => {
                    let text = response
                        .body_mut()
                        .read_to_string()
                        .map_err(|e| Error::Remote(format!("reading the response: {e}")))?;
                    return parse_response(&text, texts.len(), self.config.dimension / 8);
                }
                401 => return Err(Error::Unauthorized),
                429 | 500..=599 if attempt < MAX_ATTEMPTS => {
                    std::thread::sleep(wait);
                    wait *= 2;
                }
                _ => {
                    let text = response.body_mut().read_to_string().unwrap_or_default();
                    return Err(Error::Remote(format!(
                        "HTTP {status}: {}",
                        text.chars().take(200).collect::<String>()
                    )));
                }
            }
        }
        Err(Error::Remote(format!("gave up after {MAX_ATTEMPTS} attempts")))
    }
}

/// The packed vectors of a response, in input order.
fn parse_response(text: &str, expected: usize, bytes: usize) -> Result<Vec<Vec<u8>>> {
    let malformed = |why: &str| Error::Remote(format!("malformed response: {why}"));
    let v: Value = serde_json::from_str(text).map_err(|e| malformed(&e.to_string()))?;
    let data = v["data"].as_array().ok_or_else(|| malformed("no data array"))?;
    if data.len() != expected {
        return Err(malformed(&format!("{} embeddings for {expected} inputs", data.len())));
    }
    let mut out = vec![Vec::new(); expected];
    for item in data {
        let i =
            item["index"].as_u64().ok_or_else(|| malformed("an embedding without index"))? as usize;
        let emb = item["embedding"]
            .as_array()
            .ok_or_else(|| malformed("an embedding that is not an array"))?;
        let packed: Option<Vec<u8>> =
            emb.iter().map(|x| x.as_u64().filter(|&b| b <= 255).map(|b| b as u8)).collect();
        let packed = packed.ok_or_else(|| malformed("an embedding value outside 0..=255"))?;
        if packed.len() != bytes {
            return Err(malformed(&format!("{} bytes where {bytes} were expected", packed.len())));
        }
        let slot = out.get_mut(i).ok_or_else(|| malformed("an index out of range"))?;
        *slot = packed;
    }
    if out.iter().any(Vec::is_empty) {
        return Err(malformed("an input without embedding"));
    }
    Ok(out)
}

impl Embedder for VoyageClient {
    fn identity(&self) -> String {
        format!("voyage:{}:ubinary:{}", self.config.model, self.config.dimension)
    }

    fn dimension(&self) -> usize {
        self.config.dimension
    }

    fn embed(&self, texts: &[&str], role: Role) -> Result<Vectors> {
        let words_per = crate::pack::words_for(self.config.dimension);
        let mut words = Vec::with_capacity(texts.len() * words_per);
        for range in batches(texts) {
            for packed in self.request(&texts[range], role)? {
                for chunk in packed.chunks(8) {
                    let mut b = [0u8; 8];
                    b[..chunk.len()].copy_from_slice(chunk);
                    words.push(u64::from_le_bytes(b));
                }
            }
        }
        Ok(Vectors::Binary { bits: self.config.dimension, words })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_respect_count_and_token_limits() {
        let small = vec!["x"; 2_500];
        let b = batches(&small);
        assert_eq!(b, vec![0..1000, 1000..2000, 2000..2500]);
        let big = "y".repeat(400_000);
        let texts = vec![big.as_str(), "a", big.as_str()];
        let b = batches(&texts);
        assert_eq!(b, vec![0..1, 1..2, 2..3], "an oversized text goes alone");
        assert!(batches(&[]).is_empty());
    }

    #[test]
    fn responses_are_checked() {
        let ok = r#"{"data":[{"embedding":[1,2],"index":1},{"embedding":[3,4],"index":0}]}"#;
        assert_eq!(parse_response(ok, 2, 2).unwrap(), vec![vec![3, 4], vec![1, 2]]);
        assert!(parse_response(ok, 3, 2).is_err());
        assert!(parse_response(ok, 2, 3).is_err());
        assert!(parse_response("not json", 2, 2).is_err());
        assert!(parse_response(r#"{"data":[{"embedding":[300],"index":0}]}"#, 1, 1).is_err());
    }
}
