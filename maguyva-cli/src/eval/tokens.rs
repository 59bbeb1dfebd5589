//! What an answer costs the agent that reads it (`maguyva eval --tokens`).
//!
//! Each query is asked for [`TOKEN_K`] results, which are read in rank
//! order as an agent receives them: for each, `PATH:START-END`, a line
//! break, its snippet and a line break, counted exactly in cl100k_base
//! tokens. A label (relevant or secondary) is covered by the first result
//! naming its file, and, for a label naming lines, only by a result whose
//! lines overlap them. Per query:
//! - recall at B tokens: the share of labels covered by results read
//!   within the first B tokens, for each B of [`BUDGETS`];
//! - tokens to the first covered label: what was read up to and including
//!   the first result that covers any label ([`MISS_TOKENS`] when none
//!   does);
//! - under a budget (`--max-tokens B`): whether the packed answer covers a
//!   label.
//!
//! Figures are means over queries (medians where said), overall, per
//! category and per language. A peer's answers (`--peer-answers`) are
//! scored the same way from their locations, with the snippet read from
//! the checkout.

use super::path_matches;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use tiktoken_rs::CoreBPE;

/// Results asked for per query.
pub const TOKEN_K: usize = 50;

/// The budgets recall is measured at.
pub const BUDGETS: [usize; 5] = [500, 1_000, 2_000, 4_000, 8_000];

/// What a query whose answer covers no label is charged: about what an
/// agent spends reading files on its own.
pub const MISS_TOKENS: usize = 32_000;

/// Counts tokens exactly as cl100k_base does (the table is built into the
/// binary: nothing is downloaded).
pub struct TokenCounter(CoreBPE);

impl TokenCounter {
    /// The cl100k_base counter.
    pub fn cl100k() -> Result<TokenCounter> {
        Ok(TokenCounter(tiktoken_rs::cl100k_base().context("loading the cl100k_base table")?))
    }

    /// The tokens of `text`, special-token markers counted as plain text.
    pub fn count(&self, text: &str) -> usize {
        self.0.encode_ordinary(text).len()
    }
}

/// One result as an agent receives it.
#[derive(Debug, Clone, PartialEq)]
pub struct Unit {
    /// Path relative to the repository root.
    pub path: String,
    /// First line, 1-based.
    pub start_line: u32,
    /// Last line, inclusive.
    pub end_line: u32,
    /// The lines shown.
    pub snippet: String,
}

impl Unit {
    /// What a reader is given of it.
    fn text(&self) -> String {
        format!("{}:{}-{}\n{}\n", self.path, self.start_line, self.end_line, self.snippet)
    }

    fn covers(&self, label: &str, span: Option<(u32, u32)>) -> bool {
        path_matches(&self.path, label)
            && span.is_none_or(|(a, b)| self.start_line <= b && self.end_line >= a)
    }
}

/// One query's costs.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct TokenScore {
    /// Recall at each of [`BUDGETS`].
    pub recall: [f64; BUDGETS.len()],
    /// Tokens read up to and including the first result covering a label.
    pub first: usize,
    /// Tokens of the whole answer.
    pub total: usize,
    /// Under a budget: whether the packed answer covers a label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packed: Option<bool>,
}

/// Scores `units` read in order against the labels (`spans` in the order
/// of `labels`; `None` where a label names a whole file).
pub fn score_units(
    units: &[Unit],
    labels: &[String],
    spans: &[Option<(u32, u32)>],
    counter: &TokenCounter,
) -> TokenScore {
    let mut covered_at: Vec<Option<usize>> = vec![None; labels.len()];
    let mut read = 0;
    let mut first = None;
    for u in units {
        read += counter.count(&u.text());
        for (i, label) in labels.iter().enumerate() {
            let span = spans.get(i).copied().flatten();
            if covered_at[i].is_none() && u.covers(label, span) {
                covered_at[i] = Some(read);
                first.get_or_insert(read);
            }
        }
    }
    let mut recall = [0.0; BUDGETS.len()];
    if !labels.is_empty() {
        for (r, &b) in recall.iter_mut().zip(&BUDGETS) {
            let n = covered_at.iter().filter(|c| c.is_some_and(|t| t <= b)).count();
            *r = n as f64 / labels.len() as f64;
        }
    }
    TokenScore { recall, first: first.unwrap_or(MISS_TOKENS), total: read, packed: None }
}

/// Whether any of `units` covers a label.
pub fn covers_any(units: &[Unit], labels: &[String], spans: &[Option<(u32, u32)>]) -> bool {
    units.iter().any(|u| {
        labels.iter().enumerate().any(|(i, l)| u.covers(l, spans.get(i).copied().flatten()))
    })
}

/// Costs averaged over queries.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct TokenMetrics {
    /// Mean recall at each of [`BUDGETS`].
    pub recall: [f64; BUDGETS.len()],
    /// Mean tokens to the first covered label.
    pub first_mean: f64,
    /// Median tokens to the first covered label.
    pub first_median: f64,
    /// Median tokens of a whole answer.
    pub total_median: f64,
    /// The share of queries whose packed answer covers a label (under a
    /// budget).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packed: Option<f64>,
    /// Queries behind the figures.
    pub queries: usize,
}

impl TokenMetrics {
    /// The figures of `scores`.
    pub fn of(scores: &[TokenScore]) -> TokenMetrics {
        let n = scores.len().max(1) as f64;
        let mut recall = [0.0; BUDGETS.len()];
        for (i, r) in recall.iter_mut().enumerate() {
            *r = scores.iter().map(|s| s.recall[i]).sum::<f64>() / n;
        }
        let firsts: Vec<f64> = scores.iter().map(|s| s.first as f64).collect();
        let totals: Vec<f64> = scores.iter().map(|s| s.total as f64).collect();
        let packed: Vec<bool> = scores.iter().filter_map(|s| s.packed).collect();
        TokenMetrics {
            recall,
            first_mean: firsts.iter().sum::<f64>() / n,
            first_median: super::quantile(&firsts, 0.5),
            total_median: super::quantile(&totals, 0.5),
            packed: (!packed.is_empty())
                .then(|| packed.iter().filter(|&&p| p).count() as f64 / packed.len() as f64),
            queries: scores.len(),
        }
    }
}

/// The token figures of one system over a benchmark.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TokenReport {
    /// Who answered: `maguyva` or the peer's name.
    pub system: String,
    /// Over all queries.
    pub overall: TokenMetrics,
    /// Per category.
    pub by_category: BTreeMap<String, TokenMetrics>,
    /// Per language.
    pub by_language: BTreeMap<String, TokenMetrics>,
}

impl TokenReport {
    /// The report of `scores`, each with its category and language.
    pub fn of<'a>(
        system: &str,
        scores: impl IntoIterator<Item = (&'a str, &'a str, TokenScore)>,
    ) -> TokenReport {
        let mut all = Vec::new();
        let mut cats: BTreeMap<String, Vec<TokenScore>> = BTreeMap::new();
        let mut langs: BTreeMap<String, Vec<TokenScore>> = BTreeMap::new();
        for (cat, lang, s) in scores {
            all.push(s);
            cats.entry(cat.to_string()).or_default().push(s);
            langs.entry(lang.to_string()).or_default().push(s);
        }
        let of = |m: BTreeMap<String, Vec<TokenScore>>| {
            m.into_iter().map(|(k, v)| (k, TokenMetrics::of(&v))).collect()
        };
        TokenReport {
            system: system.to_string(),
            overall: TokenMetrics::of(&all),
            by_category: of(cats),
            by_language: of(langs),
        }
    }
}

/// One line of a peer's answer file.
#[derive(Debug, Deserialize)]
struct PeerLine {
    repo: String,
    query: String,
    results: Vec<PeerResult>,
}

/// A peer's result: a location relative to the searched folder.
#[derive(Debug, Deserialize)]
struct PeerResult {
    path: String,
    start_line: u32,
    end_line: u32,
}

/// A peer's answers: its name and, per (repository, query), its results.
pub struct PeerAnswers {
    /// The peer's name, for tables.
    pub name: String,
    answers: HashMap<(String, String), Vec<PeerResult>>,
}

impl PeerAnswers {
    /// Reads a JSON-lines file of `{repo, query, results: [{path,
    /// start_line, end_line}]}`; the peer is named after the file.
    pub fn read(path: &Path) -> Result<PeerAnswers> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let mut answers = HashMap::new();
        for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let p: PeerLine = serde_json::from_str(line)
                .with_context(|| format!("{}:{}: not a peer answer", path.display(), i + 1))?;
            answers.insert((p.repo, p.query), p.results);
        }
        let name = path.file_stem().map_or("peer".into(), |s| s.to_string_lossy().into_owned());
        Ok(PeerAnswers { name, answers })
    }

    /// The peer's answer to `query` on `repo` as units, snippets read from
    /// `root` (the searched folder), paths prefixed with `prefix` (the
    /// folder relative to the repository root); `None` when the file has no
    /// answer for it.
    pub fn units(&self, repo: &str, query: &str, root: &Path, prefix: &str) -> Option<Vec<Unit>> {
        let results = self.answers.get(&(repo.to_string(), query.to_string()))?;
        let mut files: HashMap<&str, Vec<String>> = HashMap::new();
        let units = results
            .iter()
            .take(TOKEN_K)
            .map(|r| {
                let lines = files.entry(&r.path).or_insert_with(|| {
                    std::fs::read(root.join(&r.path))
                        .map(|b| String::from_utf8_lossy(&b).lines().map(String::from).collect())
                        .unwrap_or_default()
                });
                let a = r.start_line.max(1) as usize - 1;
                let b = (r.end_line as usize).min(lines.len());
                let snippet = lines.get(a..b).map_or(String::new(), |ls| ls.join("\n"));
                Unit {
                    path: super::repo_path(prefix, &r.path),
                    start_line: r.start_line,
                    end_line: r.end_line,
                    snippet,
                }
            })
            .collect();
        Some(units)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(path: &str, lines: (u32, u32), snippet: &str) -> Unit {
        Unit { path: path.into(), start_line: lines.0, end_line: lines.1, snippet: snippet.into() }
    }

    #[test]
    fn counts_cl100k_tokens() {
        let c = TokenCounter::cl100k().unwrap();
        assert_eq!(c.count("hello world"), 2);
        assert_eq!(c.count(""), 0);
        // A special token's text is only text.
        assert!(c.count("<|endoftext|>") > 1);
    }

    #[test]
    fn recall_and_first_follow_the_reading_order() {
        let c = TokenCounter::cl100k().unwrap();
        let long = "let x = 1;\n".repeat(200);
        let units = vec![
            unit("src/noise.rs", (1, 200), &long),
            unit("src/lib.rs", (10, 12), "pub fn parse() {}"),
            unit("src/other.rs", (1, 1), "x"),
        ];
        let labels = vec!["lib.rs".to_string(), "src/missing.rs".to_string()];
        let s = score_units(&units, &labels, &[None, None], &c);
        let first_cost = c.count(&units[0].text());
        assert!(first_cost > 500);
        assert_eq!(s.first, first_cost + c.count(&units[1].text()));
        assert_eq!(s.recall[0], 0.0, "the label is read only after 500 tokens");
        assert_eq!(s.recall[BUDGETS.len() - 1], 0.5);
        assert_eq!(s.total, units.iter().map(|u| c.count(&u.text())).sum::<usize>());
    }

    #[test]
    fn a_label_with_lines_needs_an_overlapping_result() {
        let c = TokenCounter::cl100k().unwrap();
        let labels = vec!["a.py".to_string()];
        let spans = vec![Some((100, 120))];
        let miss = score_units(&[unit("a.py", (1, 20), "import os")], &labels, &spans, &c);
        assert_eq!(miss.first, MISS_TOKENS);
        assert_eq!(miss.recall, [0.0; BUDGETS.len()]);
        let hit = [unit("a.py", (115, 130), "def f():")];
        assert!(score_units(&hit, &labels, &spans, &c).recall[0] == 1.0);
        assert!(covers_any(&hit, &labels, &spans));
        assert!(!covers_any(&hit, &["b.py".to_string()], &[None]));
    }

    #[test]
    fn metrics_average_over_queries() {
        let a = TokenScore { recall: [1.0; 5], first: 100, total: 300, packed: Some(true) };
        let b =
            TokenScore { recall: [0.0; 5], first: MISS_TOKENS, total: 500, packed: Some(false) };
        let m = TokenMetrics::of(&[a, b]);
        assert_eq!(m.recall, [0.5; 5]);
        assert_eq!(m.first_mean, (100 + MISS_TOKENS) as f64 / 2.0);
        assert_eq!(m.packed, Some(0.5));
        assert_eq!(m.queries, 2);
        let r = TokenReport::of("maguyva", [("symbol", "rust", a), ("semantic", "rust", b)]);
        assert_eq!(r.by_category["symbol"].recall, [1.0; 5]);
        assert_eq!(r.by_language["rust"].queries, 2);
    }

    #[test]
    fn peer_answers_are_read_with_their_snippets() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/a.rs"), "one\ntwo\nthree\nfour\n").unwrap();
        let file = dir.path().join("semble.jsonl");
        std::fs::write(
            &file,
            r#"{"repo": "r", "query": "q", "results": [{"path": "src/a.rs", "start_line": 2, "end_line": 3}, {"path": "gone.rs", "start_line": 1, "end_line": 9}]}"#,
        )
        .unwrap();
        let peer = PeerAnswers::read(&file).unwrap();
        assert_eq!(peer.name, "semble");
        let units = peer.units("r", "q", dir.path(), "pkg").unwrap();
        assert_eq!(units[0], unit("pkg/src/a.rs", (2, 3), "two\nthree"));
        assert_eq!(units[1].snippet, "");
        assert!(peer.units("r", "other", dir.path(), "").is_none());
        std::fs::write(&file, "not json\n").unwrap();
        let err = PeerAnswers::read(&file).err().unwrap();
        assert!(format!("{err:#}").contains("semble.jsonl:1"), "{err:#}");
    }
}
