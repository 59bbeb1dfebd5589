//! Answering a query over an opened index.

use super::{Index, RankingConfig};
use maguyva_core::{Fragment, Hit, LineSpan, MatchMode, Modality, Query, Result, Retriever};
use maguyva_trigram::TextRetriever;
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

impl Index {
    /// Runs a query.
    pub fn search(&self, request: &SearchRequest) -> Result<SearchResponse> {
        let start = Instant::now();
        let query = request.query()?;
        let retriever =
            TextRetriever::new(self.text.clone(), self.content.clone(), self.fragments.clone())
                .with_params(request.ranking.keyword);
        let fetch = request.limit.saturating_mul(FRAGMENTS_PER_RESULT).max(50);
        let hits = retriever.search(&query, fetch)?;
        let text_ms = start.elapsed().as_secs_f64() * 1000.0;
        let results = self.one_per_file(&hits, Modality::Text, request.limit);
        let mut timings_ms = BTreeMap::new();
        timings_ms.insert("text".to_string(), text_ms);
        timings_ms.insert("total".to_string(), start.elapsed().as_secs_f64() * 1000.0);
        Ok(SearchResponse {
            query: request.text.clone(),
            intent: None,
            confidence: None,
            fusion_strategy: None,
            modalities: vec![Modality::Text],
            timings_ms,
            results,
        })
    }

    fn one_per_file(&self, hits: &[Hit], modality: Modality, limit: usize) -> Vec<SearchResult> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for (rank, hit) in hits.iter().enumerate() {
            if out.len() >= limit {
                break;
            }
            if !seen.insert(hit.file) {
                continue;
            }
            let Some(frag) = self.fragments.try_get(hit.chunk) else { continue };
            let Some(entry) = self.manifest.files.get(hit.file.index()) else { continue };
            out.push(SearchResult {
                path: entry.path.clone(),
                start_line: hit.lines.start(),
                end_line: hit.lines.end(),
                score: hit.score,
                snippet: lines_of(self.content.fragment_text(frag), frag, hit.lines).to_string(),
                ranks: BTreeMap::from([(modality, rank as u32)]),
            });
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
        let frag =
            Fragment { file: FileId(0), lines: LineSpan::new(10, 13), start_byte: 0, end_byte: 8 };
        let text = "a\nb\nc\nd\n";
        assert_eq!(lines_of(text, &frag, LineSpan::new(11, 12)), "b\nc");
        assert_eq!(lines_of(text, &frag, LineSpan::new(13, 13)), "d");
        assert_eq!(lines_of(text, &frag, LineSpan::new(10, 13)), "a\nb\nc\nd");
    }
}
