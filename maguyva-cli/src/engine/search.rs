//! Answering a query over an opened index.

use super::{CentralityScale, Index, RankingConfig};
use maguyva_core::{
    ChunkId, FileId, Fragment, Hit, LineSpan, MatchMode, Modality, Query, Result, Retriever,
};
use maguyva_fusion::{
    FusedHit, FusionContext, FusionParams, Intent, IntentClassifier, ModalityWeights, fuse,
    is_vendor_path,
};
use maguyva_trigram::TextRetriever;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::{BTreeMap, HashSet};
use std::time::Instant;

/// Results asked for when the caller does not say.
pub const DEFAULT_LIMIT: usize = 10;

/// Retrievers return fragments; several may fall in one file, and results
/// are one per file, so this many fragments per wanted result are fetched.
const FRAGMENTS_PER_RESULT: usize = 8;

/// A query as the user gave it, with output options.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchRequest {
    /// The query text.
    pub text: String,
    /// How many results (one per file) to return.
    pub limit: usize,
    /// How the text is matched; keyword text wrapped in double quotes is
    /// searched as a literal.
    pub mode: MatchMode,
    /// Ignore letter case (literal and regex modes).
    pub case_insensitive: bool,
    /// Ranking parameters.
    pub ranking: RankingConfig,
    /// The modalities to run (the text modality when unset).
    pub modalities: Option<Vec<Modality>>,
    /// The intent whose weight profile fuses several modalities
    /// (find_definition when unset).
    pub intent: Option<Intent>,
}

impl SearchRequest {
    /// A plain query for the default number of results.
    pub fn new(text: impl Into<String>) -> SearchRequest {
        SearchRequest {
            text: text.into(),
            limit: DEFAULT_LIMIT,
            mode: MatchMode::Keyword,
            case_insensitive: false,
            ranking: RankingConfig::default(),
            modalities: None,
            intent: None,
        }
    }

    /// The validated query the retrievers run: a keyword query that is one
    /// double-quoted string becomes a literal search for its inside.
    pub fn query(&self) -> Result<Query> {
        if self.mode == MatchMode::Keyword
            && let Some(inner) = quoted(&self.text)
        {
            return Query::with_mode(inner, MatchMode::Literal, self.case_insensitive);
        }
        Query::with_mode(self.text.clone(), self.mode, self.case_insensitive)
    }
}

/// The inside of `"..."` when the whole (trimmed) text is one quoted string.
fn quoted(text: &str) -> Option<&str> {
    let t = text.trim();
    let inner = t.strip_prefix('"')?.strip_suffix('"')?;
    (!inner.is_empty() && !inner.contains('"')).then_some(inner)
}

/// One result: the best fragment of one file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchResult {
    /// Path relative to the searched root.
    pub path: String,
    /// First line, 1-based.
    pub start_line: u32,
    /// Last line, inclusive.
    pub end_line: u32,
    /// The ranking score (the retriever's own while one modality runs).
    pub score: f32,
    /// The text of lines `start_line..=end_line`.
    pub snippet: String,
    /// Zero-based rank of this hit in each modality's list.
    pub ranks: BTreeMap<Modality, u32>,
}

/// The answer to a query; this JSON shape is the contract that evaluation
/// tools read, so fields are only ever added.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchResponse {
    /// The query as given.
    pub query: String,
    /// The classified intent (null until the classifier runs).
    pub intent: Option<String>,
    /// The classifier's confidence.
    pub confidence: Option<f32>,
    /// `direct` or `rrf` (null while a single modality runs).
    pub fusion_strategy: Option<String>,
    /// The modalities that ran.
    pub modalities: Vec<Modality>,
    /// Time spent, by stage, in milliseconds.
    pub timings_ms: BTreeMap<String, f64>,
    /// The results, best first, one per file.
    pub results: Vec<SearchResult>,
}

/// What fusion knows of this index's files.
struct IndexContext<'a> {
    index: &'a Index,
    scale: CentralityScale,
    factor: f32,
    max: f32,
}

impl FusionContext for IndexContext<'_> {
    fn centrality(&self, file: FileId, _chunk: ChunkId) -> f32 {
        let c = self.index.file_centrality.get(file.index()).copied().unwrap_or(0.0);
        self.factor
            * match self.scale {
                CentralityScale::Off => 0.0,
                CentralityScale::Mean => c,
                CentralityScale::Max => c / self.max.max(f32::EPSILON),
            }
    }

    fn is_vendor(&self, file: FileId) -> bool {
        self.index.manifest.files.get(file.index()).is_some_and(|f| is_vendor_path(&f.path))
    }
}

impl Index {
    fn retriever(
        &self,
        modality: Modality,
        ranking: &RankingConfig,
    ) -> Result<Box<dyn Retriever + '_>> {
        Ok(match modality {
            Modality::Text => Box::new(
                TextRetriever::new(self.text.clone(), self.content.clone(), self.fragments.clone())
                    .with_params(ranking.keyword),
            ),
            Modality::Structural => {
                Box::new(self.structural.clone().with_params(ranking.structural))
            }
            Modality::Graph => Box::new(self.graph.clone().with_params(ranking.graph)),
            Modality::Semantic => {
                Box::new(self.semantic.clone().with_options(ranking.semantic.options()))
            }
        })
    }

    /// Runs a query.
    pub fn search(&self, request: &SearchRequest) -> Result<SearchResponse> {
        let start = Instant::now();
        let query = request.query()?;
        let mut modalities = request.modalities.clone().unwrap_or_else(|| vec![Modality::Text]);
        modalities.sort();
        modalities.dedup();
        if query.mode() != MatchMode::Keyword {
            // Only the text modality matches literals and regexes.
            modalities = vec![Modality::Text];
        }
        let fetch = request.limit.saturating_mul(FRAGMENTS_PER_RESULT).max(50);
        let runs: Vec<Result<(Modality, Vec<Hit>, f64)>> = modalities
            .par_iter()
            .map(|&m| {
                let t = Instant::now();
                let hits = self.retriever(m, &request.ranking)?.search(&query, fetch)?;
                Ok((m, hits, t.elapsed().as_secs_f64() * 1000.0))
            })
            .collect();
        let mut lists = Vec::new();
        let mut timings_ms = BTreeMap::new();
        for run in runs {
            let (m, hits, ms) = run?;
            timings_ms.insert(m.as_str().to_string(), ms);
            lists.push((m, hits));
        }
        let classification = IntentClassifier::new().classify(&request.text);
        let intent = request.intent.unwrap_or(classification.intent);
        let (results, strategy) = if let [(m, hits)] = lists.as_slice() {
            (self.one_per_file(hits, *m, request.limit), None)
        } else {
            let t = Instant::now();
            let mut weights = request.ranking.profiles.weights(intent).restricted_to(&modalities);
            if weights.active().is_empty() {
                // The intent gives none of the chosen modalities a weight:
                // weigh them equally rather than answer nothing.
                weights = ModalityWeights::default();
                for &m in &modalities {
                    weights.set(m, 1.0);
                }
            }
            let params = FusionParams { k: request.ranking.rrf_k, ..FusionParams::default() };
            let context = IndexContext {
                index: self,
                scale: request.ranking.centrality,
                factor: request.ranking.centrality_factor,
                max: self.file_centrality.iter().copied().fold(0.0, f32::max),
            };
            let params = FusionParams {
                boost: request.ranking.centrality != CentralityScale::Off,
                ..params
            };
            let fused = fuse(&lists, &weights, &params, &context);
            timings_ms.insert("fusion".to_string(), t.elapsed().as_secs_f64() * 1000.0);
            (self.fused_results(&fused, request.limit), Some("rrf".to_string()))
        };
        timings_ms.insert("total".to_string(), start.elapsed().as_secs_f64() * 1000.0);
        Ok(SearchResponse {
            query: request.text.clone(),
            intent: Some(intent.as_str().to_string()),
            confidence: Some(classification.confidence),
            fusion_strategy: strategy,
            modalities,
            timings_ms,
            results,
        })
    }

    fn result(
        &self,
        chunk: ChunkId,
        file: FileId,
        lines: LineSpan,
        score: f32,
        ranks: BTreeMap<Modality, u32>,
    ) -> Option<SearchResult> {
        let frag = self.fragments.try_get(chunk)?;
        let entry = self.manifest.files.get(file.index())?;
        Some(SearchResult {
            path: entry.path.clone(),
            start_line: lines.start(),
            end_line: lines.end(),
            score,
            snippet: lines_of(self.content.fragment_text(frag), frag, lines).to_string(),
            ranks,
        })
    }

    fn fused_results(&self, fused: &[FusedHit], limit: usize) -> Vec<SearchResult> {
        fused
            .iter()
            .filter_map(|h| {
                let ranks = h.contributions.iter().map(|c| (c.modality, c.rank.0)).collect();
                self.result(h.chunk, h.file, h.lines, h.score, ranks)
            })
            .take(limit)
            .collect()
    }

    fn one_per_file(&self, hits: &[Hit], modality: Modality, limit: usize) -> Vec<SearchResult> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for hit in hits {
            if out.len() >= limit {
                break;
            }
            if !seen.insert(hit.file) {
                continue;
            }
            let rank = seen.len() as u32 - 1;
            if let Some(r) = self.result(
                hit.chunk,
                hit.file,
                hit.lines,
                hit.score,
                BTreeMap::from([(modality, rank)]),
            ) {
                out.push(r);
            }
        }
        out
    }
}

/// The text of `span` inside a fragment's text, without the final newline.
fn lines_of<'a>(fragment_text: &'a str, fragment: &Fragment, span: LineSpan) -> &'a str {
    let skip = span.start().saturating_sub(fragment.lines.start()) as usize;
    let take = span.len() as usize;
    let mut start = 0;
    for _ in 0..skip {
        match fragment_text[start..].find('\n') {
            Some(i) => start += i + 1,
            None => return "",
        }
    }
    let mut end = start;
    for _ in 0..take {
        match fragment_text[end..].find('\n') {
            Some(i) => end += i + 1,
            None => {
                end = fragment_text.len();
                break;
            }
        }
    }
    fragment_text[start..end].trim_end_matches('\n')
}

#[cfg(test)]
mod tests {
    use super::*;
    use maguyva_core::FileId;

    #[test]
    fn quoted_text_becomes_a_literal() {
        let q = SearchRequest::new("\"ECONNREFUSED\"").query().unwrap();
        assert_eq!((q.text(), q.mode()), ("ECONNREFUSED", MatchMode::Literal));
        let q = SearchRequest::new("say \"hi\" there").query().unwrap();
        assert_eq!(q.mode(), MatchMode::Keyword);
        assert!(SearchRequest::new("\"\"").query().is_ok());
    }

    #[test]
    fn lines_of_cuts_the_span() {
        let frag = Fragment {
            file: FileId(0),
            lines: LineSpan::new(10, 13),
            start_byte: 0,
            end_byte: 8,
            context_line: None,
        };
        let text = "a\nb\nc\nd\n";
        assert_eq!(lines_of(text, &frag, LineSpan::new(11, 12)), "b\nc");
        assert_eq!(lines_of(text, &frag, LineSpan::new(13, 13)), "d");
        assert_eq!(lines_of(text, &frag, LineSpan::new(10, 13)), "a\nb\nc\nd");
    }
}
