//! `maguyva eval`: indexes every repository of a benchmark, runs every query
//! through the same engine the CLI uses, and reports NDCG@10, MRR@10 and
//! Recall@10 overall, per category and per language, with index time and
//! query latency.

pub mod tokens;
pub mod tune;

pub use crate::engine::benchmark::{
    BenchRepo, Benchmark, BenchmarkError, QueryScore, RepoSpec, Task, distinct_files, path_matches,
    quantile, repo_path, score,
};

use crate::engine::{
    CentralityScale, Index, IndexSettings, RankingConfig, SearchRequest, build_index, open_fresh,
};
use anyhow::{Context, Result, bail};
use maguyva_core::{IndexDir, Modality, NoProgress};
use maguyva_fusion::{Preset, WeightProfile};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::PathBuf;
use std::time::Instant;

/// The benchmark's cutoff.
pub const CUTOFF: usize = 10;

/// What to evaluate.
#[derive(Debug, Clone)]
pub struct EvalOptions {
    /// The benchmark folder (`repos.json`, `annotations/`).
    pub bench: PathBuf,
    /// The folder of checkouts, one sub-folder per repository name.
    pub checkouts: PathBuf,
    /// Where indexes are written, one sub-folder per repository.
    pub index_root: PathBuf,
    /// Only these repositories (all when empty).
    pub repos: Vec<String>,
    /// Reuse an up-to-date index instead of rebuilding (index time is then
    /// not measured).
    pub reuse: bool,
    /// Index settings.
    pub settings: IndexSettings,
    /// Query-time ranking parameters.
    pub ranking: RankingConfig,
    /// Measure the HNSW graph's recall@10 against the exact scan, for
    /// indexes that have one.
    pub hnsw_recall: bool,
    /// The configurations run over every index; the first is the one
    /// reported in full, the others make the ablation table.
    pub variants: Vec<Variant>,
    /// Queries no repository can answer, run on every repository with the
    /// first variant: the report gives how often they get nothing.
    pub nonsense: Vec<String>,
    /// Also measure what answers cost in tokens ([`tokens`]).
    pub tokens: Option<TokenOptions>,
}

/// What `--tokens` measures besides the ranked answers.
#[derive(Debug, Clone)]
pub struct TokenOptions {
    /// Also ask each query under this budget, and report how often the
    /// packed answer covers a label.
    pub max_tokens: Option<usize>,
    /// A peer's answers to score the same way ([`tokens::PeerAnswers`]).
    pub peer_answers: Option<PathBuf>,
    /// The snippet budget of each result (`None`: whole fragments).
    pub snippet_tokens: Option<usize>,
    /// Units shown per file.
    pub per_file: usize,
}

/// One way of answering the queries, for comparisons over the same indexes.
#[derive(Debug, Clone, PartialEq)]
pub struct Variant {
    /// A short label for tables.
    pub name: String,
    /// The preset.
    pub preset: Preset,
    /// Only these modalities (the preset's when unset).
    pub modalities: Option<Vec<Modality>>,
    /// Whether the graph's centrality boost applies.
    pub boost: bool,
}

impl Variant {
    /// The preset as it is.
    pub fn preset(preset: Preset, modalities: Option<Vec<Modality>>) -> Variant {
        let name = match &modalities {
            None => preset.as_str().to_string(),
            Some(ms) => ms.iter().map(|m| m.as_str()).collect::<Vec<_>>().join("+"),
        };
        Variant { name, preset, modalities, boost: true }
    }

    /// The ablation table: the default and thorough presets, the default
    /// preset with each modality it runs removed in turn (the graph's part
    /// in it is the centrality boost), each modality alone, and the quick preset.
    /// `first` is the preset reported in full; it heads the table and is
    /// not repeated.
    pub fn ablations(first: Preset, profiles: &WeightProfile) -> Vec<Variant> {
        let default_set = Preset::Default.modalities();
        let mut out = vec![Variant::preset(first, None)];
        out.extend(
            [Preset::Default, Preset::Thorough]
                .into_iter()
                .filter(|&p| p != first)
                .map(|p| Variant::preset(p, None)),
        );
        let registered = crate::engine::modalities();
        for &m in &registered {
            // A modality the default does not run for a question (the
            // history modality, which serves reports) has nothing to remove:
            // forcing the rest would only change the route.
            if m != Modality::GRAPH && (!default_set.contains(&m) || !profiles.weighs(m)) {
                continue;
            }
            let mut v = if m == Modality::GRAPH {
                Variant { boost: false, ..Variant::preset(Preset::Default, None) }
            } else {
                let rest = default_set.iter().copied().filter(|&x| x != m).collect();
                Variant::preset(Preset::Default, Some(rest))
            };
            v.name = format!("default - {}", m.as_str());
            out.push(v);
        }
        for &m in &registered {
            let mut v = Variant::preset(Preset::Default, Some(vec![m]));
            v.name = format!("{} alone", m.as_str());
            out.push(v);
        }
        if first != Preset::Quick {
            out.push(Variant::preset(Preset::Quick, None));
        }
        out
    }
}

/// One row of the ablation table.
#[derive(Debug, Clone, Serialize)]
pub struct AblationRow {
    /// The variant's label.
    pub name: String,
    /// Mean over repositories.
    pub overall: Metrics,
    /// Per category.
    pub by_category: BTreeMap<String, Metrics>,
    /// Median query latency.
    pub latency_p50_ms: f64,
    /// Fraction of queries with no result.
    pub zero_result_rate: f64,
}

/// Averaged metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Metrics {
    /// Mean NDCG@10.
    pub ndcg: f64,
    /// Mean MRR@10.
    pub mrr: f64,
    /// Mean Recall@10.
    pub recall: f64,
    /// Number of queries behind the means.
    pub queries: usize,
}

impl Metrics {
    fn of_queries(scores: &[QueryScore]) -> Metrics {
        let n = scores.len().max(1) as f64;
        Metrics {
            ndcg: scores.iter().map(|s| s.ndcg).sum::<f64>() / n,
            mrr: scores.iter().map(|s| s.mrr).sum::<f64>() / n,
            recall: scores.iter().map(|s| s.recall).sum::<f64>() / n,
            queries: scores.len(),
        }
    }

    /// The mean of per-repository means (the benchmark's macro average).
    fn of_repos(per_repo: &[Metrics]) -> Metrics {
        let n = per_repo.len().max(1) as f64;
        Metrics {
            ndcg: per_repo.iter().map(|m| m.ndcg).sum::<f64>() / n,
            mrr: per_repo.iter().map(|m| m.mrr).sum::<f64>() / n,
            recall: per_repo.iter().map(|m| m.recall).sum::<f64>() / n,
            queries: per_repo.iter().map(|m| m.queries).sum(),
        }
    }
}

/// One query's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct QueryRecord {
    /// Repository name.
    pub repo: String,
    /// Query category.
    pub category: String,
    /// The query.
    pub query: String,
    /// The intent it was classified as.
    pub intent: Option<String>,
    /// `direct` or `rrf`.
    pub fusion_strategy: Option<String>,
    /// Its scores.
    #[serde(flatten)]
    pub score: QueryScore,
    /// Time to answer, in milliseconds.
    pub latency_ms: f64,
    /// The ranked distinct files returned (repository-relative).
    pub results: Vec<String>,
    /// The labelled paths.
    pub labels: Vec<String>,
    /// What the answer of [`tokens::TOKEN_K`] results cost (with `--tokens`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<tokens::TokenScore>,
    /// The same of the peer's answer (with `--peer-answers`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peer_tokens: Option<tokens::TokenScore>,
}

/// One repository's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct RepoReport {
    /// Name.
    pub name: String,
    /// Language.
    pub language: String,
    /// Files indexed.
    pub files: usize,
    /// Fragments indexed.
    pub fragments: usize,
    /// Index build time in milliseconds (null when an index was reused).
    pub index_ms: Option<f64>,
    /// Time of each build stage in milliseconds (empty when reused).
    pub index_stages_ms: Vec<(String, f64)>,
    /// Metrics over its queries.
    pub metrics: Metrics,
    /// Metrics per category.
    pub by_category: BTreeMap<String, Metrics>,
    /// Median query latency in milliseconds.
    pub latency_p50_ms: f64,
    /// 95th-percentile query latency in milliseconds.
    pub latency_p95_ms: f64,
    /// Mean HNSW recall@10 against the exact scan over its queries (when
    /// measured and the index has a graph).
    pub hnsw_recall_at_10: Option<f64>,
    /// Of the nonsense queries, how many got no result (when given).
    pub nonsense_empty: Option<usize>,
}

/// One embedder's evaluation: the semantic modality alone and the preset,
/// over the same indexes.
#[derive(Debug, Clone, Serialize)]
pub struct EmbedderReport {
    /// The embedder, as `--embedder` takes it.
    pub embedder: String,
    /// The semantic modality alone.
    pub semantic: EvalReport,
    /// The preset.
    pub preset: EvalReport,
}

/// The whole evaluation.
#[derive(Debug, Clone, Serialize)]
pub struct EvalReport {
    /// Mean over repositories of the per-repository means.
    pub overall: Metrics,
    /// Per category, likewise averaged over repositories.
    pub by_category: BTreeMap<String, Metrics>,
    /// Per language, likewise.
    pub by_language: BTreeMap<String, Metrics>,
    /// Per repository.
    pub repos: Vec<RepoReport>,
    /// Median index time over repositories, in milliseconds.
    pub index_ms_median: Option<f64>,
    /// Median latency over all queries.
    pub latency_p50_ms: f64,
    /// 95th-percentile latency over all queries.
    pub latency_p95_ms: f64,
    /// Fraction of queries that returned no result.
    pub zero_result_rate: f64,
    /// Mean over repositories of the HNSW recall@10 (when measured).
    pub hnsw_recall_at_10: Option<f64>,
    /// Fraction of the nonsense queries, over all repositories, that got
    /// no result (when given).
    pub nonsense_empty_rate: Option<f64>,
    /// The nonsense queries that got a result, with the repository.
    pub nonsense_answered: Vec<(String, String)>,
    /// Repositories left out because their checkout is missing.
    pub missing_checkouts: Vec<String>,
    /// Every query.
    pub queries: Vec<QueryRecord>,
    /// One row per variant when several were run (the first is this
    /// report's own).
    pub ablation: Vec<AblationRow>,
    /// What answers cost in tokens (with `--tokens`): this system's, then
    /// the peer's when given.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tokens: Vec<tokens::TokenReport>,
}

/// Runs the evaluation; `status` receives one line per repository.
pub fn run(opts: &EvalOptions, status: &mut dyn FnMut(&str)) -> Result<EvalReport> {
    let bench = Benchmark::load(&opts.bench)?;
    if opts.variants.is_empty() {
        bail!("nothing to evaluate: no variant given");
    }
    let mut per_variant: Vec<(Vec<RepoReport>, Vec<QueryRecord>)> =
        opts.variants.iter().map(|_| (Vec::new(), Vec::new())).collect();
    let mut missing = Vec::new();
    let mut nonsense_answered = Vec::new();
    let counter = match opts.tokens {
        Some(_) => Some(tokens::TokenCounter::cl100k()?),
        None => None,
    };
    let peer = match opts.tokens.as_ref().and_then(|t| t.peer_answers.as_deref()) {
        Some(path) => Some(tokens::PeerAnswers::read(path)?),
        None => None,
    };
    for repo in &bench.repos {
        if !opts.repos.is_empty() && !opts.repos.contains(&repo.spec.name) {
            continue;
        }
        let prefix = repo.spec.root_prefix();
        let Some((index, index_ms, index_stages_ms)) =
            open_repo(repo, &opts.checkouts, &opts.index_root, &opts.settings, opts.reuse)?
        else {
            missing.push(repo.spec.name.clone());
            continue;
        };
        for (vi, variant) in opts.variants.iter().enumerate() {
            let mut ranking = opts.ranking.clone();
            if !variant.boost {
                ranking.centrality = CentralityScale::Off;
            }
            let (report, mut recs) = run_queries(&index, repo, prefix, variant, ranking.clone())?;
            if let (0, Some(counter), Some(t)) = (vi, &counter, &opts.tokens) {
                let root = opts.checkouts.join(&repo.spec.name).join(prefix);
                let costs =
                    TokenRun { index: &index, variant, ranking: &ranking, counter, opts: t };
                costs.score(repo, &root, prefix, peer.as_ref(), &mut recs)?;
            }
            let hnsw_recall_at_10 =
                if vi == 0 && opts.hnsw_recall { hnsw_recall(&index, repo)? } else { None };
            let nonsense_empty = if vi == 0 && !opts.nonsense.is_empty() {
                let answered = run_nonsense(&index, &opts.nonsense, variant, &opts.ranking)?;
                let empty = opts.nonsense.len() - answered.len();
                nonsense_answered.extend(answered.into_iter().map(|q| (repo.spec.name.clone(), q)));
                Some(empty)
            } else {
                None
            };
            let report = RepoReport {
                index_ms,
                index_stages_ms: index_stages_ms.clone(),
                hnsw_recall_at_10,
                nonsense_empty,
                ..report
            };
            if vi == 0 {
                status(&format!(
                    "{:<14} ndcg {:.3}  mrr {:.3}  recall {:.3}  {} files  index {}",
                    report.name,
                    report.metrics.ndcg,
                    report.metrics.mrr,
                    report.metrics.recall,
                    report.files,
                    report.index_ms.map_or("reused".to_string(), |ms| format!("{ms:.0} ms")),
                ));
            }
            per_variant[vi].0.push(report);
            per_variant[vi].1.append(&mut recs);
        }
    }
    if per_variant[0].0.is_empty() {
        bail!(
            "no repository of the benchmark was found under {} (missing: {})",
            opts.checkouts.display(),
            missing.join(", ")
        );
    }
    let mut reports: Vec<EvalReport> = per_variant
        .into_iter()
        .map(|(repos, records)| summarize(repos, records, missing.clone()))
        .collect();
    let ablation = if reports.len() > 1 {
        reports
            .iter()
            .zip(&opts.variants)
            .map(|(r, v)| AblationRow {
                name: v.name.clone(),
                overall: r.overall,
                by_category: r.by_category.clone(),
                latency_p50_ms: r.latency_p50_ms,
                zero_result_rate: r.zero_result_rate,
            })
            .collect()
    } else {
        Vec::new()
    };
    reports.truncate(1);
    let mut main = reports.remove(0);
    main.ablation = ablation;
    if opts.tokens.is_some() {
        main.tokens = token_reports(&main, peer.as_ref().map(|p| p.name.as_str()));
    }
    if !opts.nonsense.is_empty() {
        let empty: usize = main.repos.iter().filter_map(|r| r.nonsense_empty).sum();
        let asked = opts.nonsense.len() * main.repos.len();
        main.nonsense_empty_rate = Some(empty as f64 / asked.max(1) as f64);
        main.nonsense_answered = nonsense_answered;
    }
    Ok(main)
}

/// An index of a repository's benchmark root with its build time and stage
/// times (none when reused), or `None` when its checkout is missing.
type OpenedRepo = (Index, Option<f64>, Vec<(String, f64)>);

/// Builds (or, with `reuse`, opens when up to date) the index of a
/// benchmark repository; `None` when its checkout is missing.
fn open_repo(
    repo: &BenchRepo,
    checkouts: &std::path::Path,
    index_root: &std::path::Path,
    settings: &IndexSettings,
    reuse: bool,
) -> Result<Option<OpenedRepo>> {
    let prefix = repo.spec.root_prefix();
    let checkout = checkouts.join(&repo.spec.name);
    let root = if prefix.is_empty() { checkout } else { checkout.join(prefix) };
    if !root.is_dir() {
        return Ok(None);
    }
    let dir = IndexDir::new(index_root.join(&repo.spec.name));
    let started = Instant::now();
    Ok(Some(if reuse {
        let (index, _) = open_fresh(&root, &dir, settings, &NoProgress)
            .with_context(|| format!("indexing {}", root.display()))?;
        (index, None, Vec::new())
    } else {
        let (index, report) = build_index(&root, &dir, settings, &NoProgress)
            .with_context(|| format!("indexing {}", root.display()))?;
        (index, Some(crate::engine::millis(started.elapsed())), report.stages_ms)
    }))
}

/// The mean HNSW recall@10 over a repository's queries.
#[cfg(not(feature = "hnsw"))]
fn hnsw_recall(_index: &crate::engine::Index, _repo: &BenchRepo) -> Result<Option<f64>> {
    Ok(None)
}

#[cfg(feature = "hnsw")]
fn hnsw_recall(index: &crate::engine::Index, repo: &BenchRepo) -> Result<Option<f64>> {
    let mut recalls = Vec::new();
    for task in &repo.tasks {
        if let Some(r) = index.hnsw_recall(&task.query, CUTOFF)? {
            recalls.push(r);
        }
    }
    Ok((!recalls.is_empty()).then(|| recalls.iter().sum::<f64>() / recalls.len() as f64))
}

/// A query as a variant asks it, for the benchmark's cutoff.
fn variant_request(query: &str, variant: &Variant, ranking: &RankingConfig) -> SearchRequest {
    let mut request = SearchRequest::new(query);
    request.limit = CUTOFF;
    request.ranking = ranking.clone();
    request.preset = variant.preset;
    request.modalities = variant.modalities.clone();
    request
}

/// Runs the nonsense queries on one repository; returns those that got a
/// result.
fn run_nonsense(
    index: &crate::engine::Index,
    queries: &[String],
    variant: &Variant,
    ranking: &RankingConfig,
) -> Result<Vec<String>> {
    let mut answered = Vec::new();
    for q in queries {
        let request = variant_request(q, variant, ranking);
        let response = index.search(&request).with_context(|| format!("query {q:?}"))?;
        if !response.results.is_empty() {
            answered.push(q.clone());
        }
    }
    Ok(answered)
}

/// What `--tokens` needs to ask one repository's queries again.
struct TokenRun<'a> {
    index: &'a crate::engine::Index,
    variant: &'a Variant,
    ranking: &'a RankingConfig,
    counter: &'a tokens::TokenCounter,
    opts: &'a TokenOptions,
}

impl TokenRun<'_> {
    /// Asks each query of `repo` for [`tokens::TOKEN_K`] results (and
    /// under the budget, when given), and sets the costs on its record;
    /// the peer's answers, when given, are scored beside.
    fn score(
        &self,
        repo: &BenchRepo,
        root: &std::path::Path,
        prefix: &str,
        peer: Option<&tokens::PeerAnswers>,
        records: &mut [QueryRecord],
    ) -> Result<()> {
        for (task, record) in repo.tasks.iter().zip(records.iter_mut()) {
            let mut request = variant_request(&task.query, self.variant, self.ranking);
            request.limit = tokens::TOKEN_K;
            request.snippet_tokens = self.opts.snippet_tokens;
            request.per_file = self.opts.per_file;
            let units = self.units(&request, prefix)?;
            let mut score = tokens::score_units(&units, &task.labels, &task.spans, self.counter);
            if let Some(budget) = self.opts.max_tokens {
                request.max_tokens = Some(budget);
                let packed = self.units(&request, prefix)?;
                score.packed = Some(tokens::covers_any(&packed, &task.labels, &task.spans));
            }
            record.tokens = Some(score);
            record.peer_tokens = peer
                .and_then(|p| p.units(&repo.spec.name, &task.query, root, prefix))
                .map(|u| tokens::score_units(&u, &task.labels, &task.spans, self.counter));
        }
        Ok(())
    }

    /// The answer to `request` as an agent receives it, paths from the
    /// repository root.
    fn units(&self, request: &SearchRequest, prefix: &str) -> Result<Vec<tokens::Unit>> {
        let response =
            self.index.search(request).with_context(|| format!("query {:?}", request.text))?;
        Ok(response
            .results
            .into_iter()
            .map(|r| tokens::Unit {
                path: repo_path(prefix, &r.path),
                start_line: r.start_line,
                end_line: r.end_line,
                snippet: r.snippet,
            })
            .collect())
    }
}

/// The token reports of an evaluation: this system's, then the peer's.
fn token_reports(report: &EvalReport, peer: Option<&str>) -> Vec<tokens::TokenReport> {
    let language: BTreeMap<&str, &str> =
        report.repos.iter().map(|r| (r.name.as_str(), r.language.as_str())).collect();
    let of = |name: &str, get: fn(&QueryRecord) -> Option<tokens::TokenScore>| {
        tokens::TokenReport::of(
            name,
            report.queries.iter().filter_map(|q| {
                let lang = language.get(q.repo.as_str()).copied().unwrap_or("");
                get(q).map(|s| (q.category.as_str(), lang, s))
            }),
        )
    };
    let mut out = vec![of("maguyva", |q| q.tokens)];
    if let Some(name) = peer {
        out.push(of(name, |q| q.peer_tokens));
    }
    out
}

/// Runs one repository's queries with one variant.
fn run_queries(
    index: &crate::engine::Index,
    repo: &BenchRepo,
    prefix: &str,
    variant: &Variant,
    ranking: RankingConfig,
) -> Result<(RepoReport, Vec<QueryRecord>)> {
    let mut scores = Vec::new();
    let mut by_cat: BTreeMap<String, Vec<QueryScore>> = BTreeMap::new();
    let mut latencies = Vec::new();
    let mut records = Vec::new();
    for task in &repo.tasks {
        let request = variant_request(&task.query, variant, &ranking);
        let t = Instant::now();
        let response = index.search(&request).with_context(|| format!("query {:?}", task.query))?;
        let latency_ms = crate::engine::millis(t.elapsed());
        let files =
            distinct_files(response.results.into_iter().map(|r| repo_path(prefix, &r.path)));
        let s = score(&files, &task.labels, CUTOFF);
        scores.push(s);
        by_cat.entry(task.category.clone()).or_default().push(s);
        latencies.push(latency_ms);
        records.push(QueryRecord {
            repo: repo.spec.name.clone(),
            category: task.category.clone(),
            query: task.query.clone(),
            intent: response.intent.clone(),
            fusion_strategy: response.fusion_strategy.clone(),
            score: s,
            latency_ms,
            results: files.into_iter().take(CUTOFF).collect(),
            labels: task.labels.clone(),
            tokens: None,
            peer_tokens: None,
        });
    }
    let report = RepoReport {
        name: repo.spec.name.clone(),
        language: repo.spec.language.clone(),
        files: index.manifest.files.len(),
        fragments: index.fragments.len(),
        index_ms: None,
        index_stages_ms: Vec::new(),
        metrics: Metrics::of_queries(&scores),
        by_category: by_cat.iter().map(|(c, s)| (c.clone(), Metrics::of_queries(s))).collect(),
        latency_p50_ms: quantile(&latencies, 0.5),
        latency_p95_ms: quantile(&latencies, 0.95),
        hnsw_recall_at_10: None,
        nonsense_empty: None,
    };
    Ok((report, records))
}

fn summarize(
    repos: Vec<RepoReport>,
    queries: Vec<QueryRecord>,
    missing: Vec<String>,
) -> EvalReport {
    let overall = Metrics::of_repos(&repos.iter().map(|r| r.metrics).collect::<Vec<_>>());
    let mut cats: BTreeMap<String, Vec<Metrics>> = BTreeMap::new();
    let mut langs: BTreeMap<String, Vec<Metrics>> = BTreeMap::new();
    for r in &repos {
        for (c, m) in &r.by_category {
            cats.entry(c.clone()).or_default().push(*m);
        }
        langs.entry(r.language.clone()).or_default().push(r.metrics);
    }
    let index_times: Vec<f64> = repos.iter().filter_map(|r| r.index_ms).collect();
    let latencies: Vec<f64> = queries.iter().map(|q| q.latency_ms).collect();
    let zero = queries.iter().filter(|q| q.results.is_empty()).count();
    let recalls: Vec<f64> = repos.iter().filter_map(|r| r.hnsw_recall_at_10).collect();
    EvalReport {
        overall,
        by_category: cats.into_iter().map(|(c, v)| (c, Metrics::of_repos(&v))).collect(),
        by_language: langs.into_iter().map(|(l, v)| (l, Metrics::of_repos(&v))).collect(),
        index_ms_median: (!index_times.is_empty()).then(|| quantile(&index_times, 0.5)),
        latency_p50_ms: quantile(&latencies, 0.5),
        latency_p95_ms: quantile(&latencies, 0.95),
        zero_result_rate: zero as f64 / queries.len().max(1) as f64,
        hnsw_recall_at_10: (!recalls.is_empty())
            .then(|| recalls.iter().sum::<f64>() / recalls.len() as f64),
        repos,
        missing_checkouts: missing,
        queries,
        ablation: Vec::new(),
        tokens: Vec::new(),
        nonsense_empty_rate: None,
        nonsense_answered: Vec::new(),
    }
}

fn truncate(s: &str, max: usize) -> &str {
    s.char_indices().nth(max).map_or(s, |(i, _)| &s[..i])
}

/// Human rendering of a report.
pub fn render(report: &EvalReport) -> String {
    let mut out = String::new();
    let row = |out: &mut String, name: &str, m: &Metrics| {
        let _ = writeln!(
            out,
            "  {name:<14} {:>6.3} {:>6.3} {:>6.3} {:>5}",
            m.ndcg, m.mrr, m.recall, m.queries
        );
    };
    let header = |out: &mut String, title: &str| {
        let _ = writeln!(
            out,
            "{title}\n  {:<14} {:>6} {:>6} {:>6} {:>5}",
            "", "ndcg", "mrr", "recall", "n"
        );
    };
    header(&mut out, "overall (mean over repositories)");
    row(&mut out, "all", &report.overall);
    header(&mut out, "by category");
    for (c, m) in &report.by_category {
        row(&mut out, c, m);
    }
    header(&mut out, "by language");
    for (l, m) in &report.by_language {
        row(&mut out, l, m);
    }
    let _ = writeln!(
        out,
        "latency: p50 {:.2} ms, p95 {:.2} ms",
        report.latency_p50_ms, report.latency_p95_ms
    );
    if let Some(ms) = report.index_ms_median {
        let _ = writeln!(out, "index time: median {ms:.0} ms per repository");
        let stage = |r: &RepoReport, name: &str| {
            r.index_stages_ms.iter().find(|(n, _)| n == name).map_or(0.0, |s| s.1)
        };
        // The stages a text-only index would run too; `write` writes every
        // modality's files, so this slightly overstates a text-only build.
        const TEXT_STAGES: [&str; 5] = ["scan", "read", "fragment", "text", "write"];
        let pairs: Vec<(f64, f64)> = report
            .repos
            .iter()
            .filter(|r| !r.index_stages_ms.is_empty())
            .map(|r| (stage(r, "parse"), TEXT_STAGES.iter().map(|s| stage(r, s)).sum()))
            .collect();
        if !pairs.is_empty() {
            let ratios: Vec<f64> = pairs.iter().map(|(p, t)| p / t.max(f64::EPSILON)).collect();
            let max = ratios.iter().copied().fold(0.0, f64::max);
            let total = pairs.iter().map(|p| p.0).sum::<f64>()
                / pairs.iter().map(|p| p.1).sum::<f64>().max(f64::EPSILON);
            let over = ratios.iter().filter(|&&r| r > 2.0).count();
            let _ = writeln!(
                out,
                "parsing / text-only stages: all repositories {total:.2}x, median {:.2}x, max {max:.2}x, {over} of {} above 2x",
                quantile(&ratios, 0.5),
                ratios.len()
            );
        }
    }
    let _ = writeln!(out, "queries with no result: {:.1}%", report.zero_result_rate * 100.0);
    if let Some(rate) = report.nonsense_empty_rate {
        let _ = writeln!(out, "nonsense queries with no result: {:.1}%", rate * 100.0);
    }
    if let Some(r) = report.hnsw_recall_at_10 {
        let min = report
            .repos
            .iter()
            .filter_map(|r| r.hnsw_recall_at_10.map(|x| (x, r.name.as_str())))
            .min_by(|a, b| a.0.total_cmp(&b.0));
        let _ = write!(out, "HNSW recall@10 against the exact scan: mean {r:.3}");
        if let Some((m, name)) = min {
            let _ = write!(out, ", lowest {m:.3} ({name})");
        }
        let _ = writeln!(out);
    }
    if !report.ablation.is_empty() {
        let cats: Vec<&String> = report.by_category.keys().collect();
        let _ = write!(out, "ablation (ndcg@10)\n  {:<22} {:>6}", "", "all");
        for c in &cats {
            let _ = write!(out, " {:>9}", truncate(c, 9));
        }
        let _ = writeln!(out, " {:>8} {:>6}", "p50 ms", "empty");
        for row in &report.ablation {
            let _ = write!(out, "  {:<22} {:>6.3}", row.name, row.overall.ndcg);
            for c in &cats {
                let v = row.by_category.get(*c).map_or(f64::NAN, |m| m.ndcg);
                let _ = write!(out, " {v:>9.3}");
            }
            let _ = writeln!(
                out,
                " {:>8.2} {:>5.1}%",
                row.latency_p50_ms,
                row.zero_result_rate * 100.0
            );
        }
    }
    if !report.tokens.is_empty() {
        out.push_str(&render_tokens(&report.tokens));
    }
    if !report.missing_checkouts.is_empty() {
        let _ =
            writeln!(out, "missing checkouts (left out): {}", report.missing_checkouts.join(", "));
    }
    out
}

/// The token table: each system's figures overall, per category and per
/// language, side by side.
fn render_tokens(reports: &[tokens::TokenReport]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "tokens (cl100k_base; {} results read in rank order; means over queries)",
        tokens::TOKEN_K
    );
    let _ = write!(out, "  {:<16} {:<10}", "", "system");
    for b in tokens::BUDGETS {
        let _ = write!(out, " {:>7}", format!("r@{b}"));
    }
    let _ = writeln!(out, " {:>7} {:>7} {:>7} {:>5}", "first", "median", "packed", "n");
    let row = |out: &mut String, group: &str, system: &str, m: &tokens::TokenMetrics| {
        let _ = write!(out, "  {:<16} {:<10}", truncate(group, 16), truncate(system, 10));
        for r in m.recall {
            let _ = write!(out, " {r:>7.3}");
        }
        let packed = m.packed.map_or("-".to_string(), |p| format!("{p:.3}"));
        let _ = writeln!(
            out,
            " {:>7.0} {:>7.0} {packed:>7} {:>5}",
            m.first_mean, m.first_median, m.queries
        );
    };
    for r in reports {
        row(&mut out, "all", &r.system, &r.overall);
    }
    let Some(first) = reports.first() else { return out };
    for (group, by) in [
        (
            "category",
            (|r: &tokens::TokenReport| &r.by_category)
                as fn(&tokens::TokenReport) -> &BTreeMap<String, tokens::TokenMetrics>,
        ),
        ("language", |r: &tokens::TokenReport| &r.by_language),
    ] {
        let _ = writeln!(out, "  by {group}");
        for key in by(first).keys() {
            for r in reports {
                if let Some(m) = by(r).get(key) {
                    row(&mut out, key, &r.system, m);
                }
            }
        }
    }
    out
}

/// Several embedders side by side: NDCG@10 of the semantic modality alone
/// and of the preset (named `preset`), overall, per category and per
/// language, then the median index time. Embedders are numbered in a
/// legend, as their names (model folders) may be long.
pub fn render_embedders(reports: &[EmbedderReport], preset: &str) -> String {
    let mut out = String::new();
    for (i, r) in reports.iter().enumerate() {
        let _ = writeln!(out, "[{}] {}", i + 1, r.embedder);
    }
    let _ = write!(out, "ndcg@10 {:<15}", "");
    for i in 1..=reports.len() {
        let _ = write!(
            out,
            " {:>11} {:>11}",
            format!("[{i}] sem"),
            format!("[{i}] {}", truncate(preset, 7))
        );
    }
    let _ = writeln!(out);
    let row = |out: &mut String, name: &str, get: &dyn Fn(&EvalReport) -> Option<f64>| {
        let _ = write!(out, "  {:<20}", truncate(name, 20));
        for r in reports {
            for report in [&r.semantic, &r.preset] {
                let _ = write!(out, " {:>11.3}", get(report).unwrap_or(f64::NAN));
            }
        }
        let _ = writeln!(out);
    };
    row(&mut out, "all", &|r| Some(r.overall.ndcg));
    let keys = |by: fn(&EvalReport) -> &BTreeMap<String, Metrics>| -> Vec<String> {
        let mut keys: Vec<String> =
            reports.iter().flat_map(|r| by(&r.preset).keys().cloned()).collect();
        keys.sort();
        keys.dedup();
        keys
    };
    for (title, by) in [
        ("by category", (|r: &EvalReport| &r.by_category) as fn(&EvalReport) -> &BTreeMap<_, _>),
        ("by language", |r: &EvalReport| &r.by_language),
    ] {
        let _ = writeln!(out, "{title}");
        for k in keys(by) {
            row(&mut out, &k, &|r| by(r).get(&k).map(|m| m.ndcg));
        }
    }
    let _ = write!(out, "index time, median ms:");
    for (i, r) in reports.iter().enumerate() {
        let _ = match r.preset.index_ms_median {
            Some(ms) => write!(out, " [{}] {ms:.0}", i + 1),
            None => write!(out, " [{}] reused", i + 1),
        };
    }
    let _ = writeln!(out);
    out
}
