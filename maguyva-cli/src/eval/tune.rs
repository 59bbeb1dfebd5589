//! `maguyva eval --tune`: learns the ranking parameters from training
//! benchmarks by coordinate ascent on mean NDCG@10, cross-validated by
//! repository, and reports the learned ranking next to the seed's on the
//! held-out folds and on a validation benchmark that is never fitted.
//!
//! Every query is read and retrieved once; a parameter of fusion (weights,
//! k, signal strengths, centrality) then costs one fusion per query, and a
//! parameter of a modality re-runs only that modality.

use super::{Benchmark, CUTOFF, Task, distinct_files, score};
use crate::engine::benchmark::path_matches;
use crate::engine::search::{Ordering, PreparedQuery};
use crate::engine::{Base, CentralityScale, Index, IndexSettings, RankingConfig, SearchRequest};
use anyhow::{Context, Result, bail};
use maguyva_core::{Hit, Modality};
use maguyva_fusion::plan;
use maguyva_fusion::{FitParams, RerankModel, TrainingQuestion};
use maguyva_fusion::{ModalityWeights, Preset, WeightProfile};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::PathBuf;
use std::sync::Arc;

/// What a parameter's change forces to be recomputed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Only fusion: the modalities' lists stay.
    Fusion,
    /// One modality's lists.
    Lists(Modality),
}

impl Stage {
    fn modality(self) -> Option<Modality> {
        match self {
            Stage::Fusion => None,
            Stage::Lists(m) => Some(m),
        }
    }
}

type Getter = Arc<dyn Fn(&RankingConfig) -> f32 + Send + Sync>;
type Setter = Arc<dyn Fn(&mut RankingConfig, f32) + Send + Sync>;

/// One tunable number of a ranking, with the values tried for it.
#[derive(Clone)]
pub struct Knob {
    /// Its path in the ranking file.
    pub name: String,
    /// What changing it recomputes.
    pub stage: Stage,
    /// The values tried, the seed's among them.
    pub grid: Vec<f32>,
    get: Getter,
    set: Setter,
}

impl std::fmt::Debug for Knob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Knob").field("name", &self.name).finish()
    }
}

impl Knob {
    fn new(
        name: impl Into<String>,
        stage: Stage,
        grid: &[f32],
        get: impl Fn(&RankingConfig) -> f32 + Send + Sync + 'static,
        set: impl Fn(&mut RankingConfig, f32) + Send + Sync + 'static,
    ) -> Knob {
        Knob {
            name: name.into(),
            stage,
            grid: grid.to_vec(),
            get: Arc::new(get),
            set: Arc::new(set),
        }
    }

    /// The knob's value in a ranking.
    pub fn get(&self, r: &RankingConfig) -> f32 {
        (self.get)(r)
    }

    /// Sets the knob's value in a ranking.
    pub fn set(&self, r: &mut RankingConfig, v: f32) {
        (self.set)(r, v)
    }
}

const WEIGHTS: &[f32] = &[0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0];
const LIFTS: &[f32] = &[0.0, 0.1, 0.15, 0.25, 0.4, 0.6, 1.0, 1.5];
const FACTORS: &[f32] = &[1.0, 0.9, 0.75, 0.6, 0.45, 0.3];

/// The intents whose weights `--tune` learns (the ones training queries
/// exercise), by their field of the weight profile.
type ProfileField = fn(&mut WeightProfile) -> &mut ModalityWeights;
const TUNED_PROFILES: [(&str, ProfileField); 3] = [
    ("understand_code", |p| &mut p.understand_code),
    ("find_definition", |p| &mut p.find_definition),
    ("find_definition_in_question", |p| &mut p.find_definition_in_question),
];

/// The weight of modality `m` in a tuned intent's profile.
fn weight_knob(profile: &str, field: ProfileField, m: Modality) -> Knob {
    Knob::new(
        format!("profiles.{profile}.{m}"),
        Stage::Fusion,
        WEIGHTS,
        move |r| field(&mut r.profiles.clone()).get(m),
        move |r, v| field(&mut r.profiles).set(m, v),
    )
}

/// A signal's strength; `$off` (the strength that changes nothing) switches
/// the signal off and keeps the last strength.
macro_rules! signal_knob {
    ($name:literal, $switch:ident, $strength:ident, $grid:expr, $off:expr) => {
        Knob::new(
            $name,
            Stage::Fusion,
            $grid,
            |r| if r.signals.$switch { r.signals.$strength } else { $off },
            |r, v| {
                r.signals.$switch = v != $off;
                if v != $off {
                    r.signals.$strength = v;
                }
            },
        )
    };
}

/// A number of a modality's own ranking, which re-runs its lists.
macro_rules! param_knob {
    ($name:literal, $m:expr, [$($v:expr),*], $($field:ident).+) => {
        Knob::new($name, Stage::Lists($m), &[$($v),*], |r| r.$($field).+, |r, v| r.$($field).+ = v)
    };
}

/// The values tried for a registered modality's parameter: its default and
/// six points across its range.
fn param_grid(spec: &maguyva_core::ParamSpec) -> Vec<f32> {
    let (lo, hi) = spec.range;
    let mut grid: Vec<f32> = (0..6).map(|i| (lo + (hi - lo) * i as f64 / 5.0) as f32).collect();
    grid.push(spec.default as f32);
    grid.sort_by(f32::total_cmp);
    grid.dedup();
    grid
}

/// The knobs of a modality registered besides the built-in four: its
/// weight in every tuned profile, and each of its parameters.
fn registered_knobs(m: Modality) -> Vec<Knob> {
    let mut out: Vec<Knob> =
        TUNED_PROFILES.iter().map(|&(name, field)| weight_knob(name, field, m)).collect();
    let specs = crate::engine::plugin(m).map(|p| p.params()).unwrap_or_default();
    for spec in specs {
        let (id, name, default) = (m.as_str(), spec.name, spec.default);
        let grid = param_grid(&spec);
        out.push(Knob::new(
            format!("params.{id}.{name}"),
            Stage::Lists(m),
            &grid,
            move |r| r.params.get(id).and_then(|p| p.get(name)).copied().unwrap_or(default) as f32,
            move |r, v| {
                r.params.entry(id.to_string()).or_default().insert(name.to_string(), f64::from(v));
            },
        ));
    }
    out
}

/// The parameters `--tune` learns. The intents that training queries
/// exercise (understand_code and find_definition) have their weights
/// learned; the others keep the seed's, since no training query measures
/// them. A modality registered besides the built-in four brings its weight
/// in those intents and its own parameters.
pub fn knobs() -> Vec<Knob> {
    let mut knobs: Vec<Knob> = TUNED_PROFILES
        .iter()
        .flat_map(|&(name, field)| {
            [Modality::SEMANTIC, Modality::TEXT, Modality::STRUCTURAL]
                .map(|m| weight_knob(name, field, m))
        })
        .collect();
    knobs.extend([
        Knob::new(
            "rrf_k",
            Stage::Fusion,
            &[5.0, 10.0, 20.0, 30.0, 40.0, 60.0, 100.0],
            |r| r.rrf_k,
            |r, v| r.rrf_k = v,
        ),
        Knob::new(
            "centrality_factor",
            Stage::Fusion,
            &[0.0, 0.05, 0.1, 0.2, 0.5, 1.0],
            |r| if r.centrality == CentralityScale::Off { 0.0 } else { r.centrality_factor },
            |r, v| {
                if v == 0.0 {
                    r.centrality = CentralityScale::Off;
                } else {
                    if r.centrality == CentralityScale::Off {
                        r.centrality = CentralityScale::Max;
                    }
                    r.centrality_factor = v;
                }
            },
        ),
        signal_knob!("signals.test_file_factor", test_files, test_file_factor, FACTORS, 1.0),
        signal_knob!("signals.path_words_lift", path_words, path_words_lift, LIFTS, 0.0),
        signal_knob!("signals.query_symbol_lift", query_symbols, query_symbol_lift, LIFTS, 0.0),
        signal_knob!("signals.named_file_lift", named_file, named_file_lift, LIFTS, 0.0),
        param_knob!("keyword.bm25.k1", Modality::TEXT, [0.6, 0.9, 1.2, 1.5, 2.0], keyword.bm25.k1),
        param_knob!("keyword.bm25.b", Modality::TEXT, [0.3, 0.5, 0.75, 0.9], keyword.bm25.b),
        param_knob!(
            "keyword.path_weight",
            Modality::TEXT,
            [0.0, 0.5, 1.0, 1.5, 2.0, 3.0],
            keyword.path_weight
        ),
        param_knob!(
            "keyword.name_weight",
            Modality::TEXT,
            [0.0, 0.5, 1.0, 2.0, 3.0, 5.0],
            keyword.name_weight
        ),
        param_knob!(
            "keyword.file_evidence",
            Modality::TEXT,
            [0.0, 0.1, 0.2, 0.35, 0.5, 0.75],
            keyword.file_evidence
        ),
        param_knob!(
            "keyword.test_factor",
            Modality::TEXT,
            [1.0, 0.8, 0.6, 0.4, 0.25],
            keyword.test_factor
        ),
        param_knob!(
            "keyword.other_factor",
            Modality::TEXT,
            [1.0, 0.8, 0.6, 0.4, 0.25],
            keyword.other_factor
        ),
        param_knob!(
            "structural.doc_words",
            Modality::STRUCTURAL,
            [0.0, 0.1, 0.2, 0.3, 0.5],
            structural.doc_words
        ),
        param_knob!(
            "structural.signature_words",
            Modality::STRUCTURAL,
            [0.0, 0.1, 0.2, 0.3, 0.5],
            structural.signature_words
        ),
    ]);
    for m in crate::engine::modalities().into_iter().filter(|m| !Modality::BUILT_IN.contains(m)) {
        knobs.extend(registered_knobs(m));
    }
    knobs
}

/// The least gain in the objective that changes a learned value, and that
/// keeps a signal on: less is noise at this data size.
const MIN_GAIN: f64 = 1e-4;

/// A ranking signal `--tune` can switch off (or on), for the report of what
/// each one is worth under cross-validation.
#[derive(Debug, Clone, Copy)]
struct Switch {
    /// How the report names it.
    name: &'static str,
    /// The knob that holds its strength.
    knob: &'static str,
    /// Its strength when switched on by the report (a prior, when the
    /// learned ranking has it off).
    on: f32,
    /// The knob's value that means off.
    off: f32,
}

const SWITCHES: [Switch; 9] = [
    Switch { name: "centrality boost", knob: "centrality_factor", on: 0.1, off: 0.0 },
    Switch { name: "test files (fused)", knob: "signals.test_file_factor", on: 0.75, off: 1.0 },
    Switch { name: "path words", knob: "signals.path_words_lift", on: 0.15, off: 0.0 },
    Switch { name: "named symbols", knob: "signals.query_symbol_lift", on: 0.15, off: 0.0 },
    Switch { name: "named file", knob: "signals.named_file_lift", on: 0.15, off: 0.0 },
    Switch { name: "text: test files", knob: "keyword.test_factor", on: 0.8, off: 1.0 },
    Switch { name: "text: other text", knob: "keyword.other_factor", on: 0.6, off: 1.0 },
    Switch { name: "text: file evidence", knob: "keyword.file_evidence", on: 0.1, off: 0.0 },
    Switch { name: "text: file-name field", knob: "keyword.name_weight", on: 1.0, off: 0.0 },
];

impl Switch {
    fn knob(&self) -> Option<Knob> {
        knobs().into_iter().find(|k| k.name == self.knob)
    }

    fn is_on(&self, r: &RankingConfig) -> bool {
        self.knob().is_some_and(|k| k.get(r) != self.off)
    }

    /// `r` with this signal on (at `r`'s strength, or the prior's when
    /// `r` has it off) or off.
    fn forced(&self, r: &RankingConfig, on: bool) -> RankingConfig {
        let mut out = r.clone();
        if let Some(k) = self.knob()
            && on != self.is_on(r)
        {
            k.set(&mut out, if on { self.on } else { self.off });
        }
        out
    }
}

/// What one signal is worth under cross-validation.
#[derive(Debug, Clone, Serialize)]
pub struct SwitchReport {
    /// The signal.
    pub name: String,
    /// Whether the ranking learned on all training data has it on.
    pub on_in_learned: bool,
    /// Per set: NDCG@10 of the fold-learned rankings on their held-out folds.
    pub cv_learned: Vec<f64>,
    /// Per set: the same with the signal switched against the final
    /// choice (off where the learned ranking has it on, and on at a prior
    /// strength where it has it off).
    pub cv_toggled: Vec<f64>,
    /// Whether the signal was switched off in the written ranking because
    /// switching it off cost less than `MIN_GAIN` under cross-validation.
    pub pruned: bool,
}

/// One benchmark's queries over indexes, ready to be ranked many times.
struct Query {
    set: usize,
    repo: usize,
    task: Task,
    request: SearchRequest,
    prepared: PreparedQuery,
    lists: Vec<(Modality, Vec<Hit>)>,
}

/// An opened repository of the training or validation sets.
struct Repo {
    name: String,
    language: String,
    prefix: String,
    index: Index,
}

/// Training queries, their indexes and their retrieved lists.
pub struct Corpus {
    sets: Vec<String>,
    weights: Vec<f64>,
    /// The ranking whose modality parameters made the cached lists.
    retrieved_with: Option<RankingConfig>,
    repos: Vec<Repo>,
    queries: Vec<Query>,
    /// How the reranker is fitted.
    fit: FitParams,
}

impl std::fmt::Debug for Corpus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Corpus")
            .field("sets", &self.sets)
            .field("repos", &self.repos.len())
            .field("queries", &self.queries.len())
            .finish()
    }
}

/// Every modality, retrieved for every query whatever the plan: a knob can
/// move a query from fused to direct or change which modalities fuse.
fn every_modality() -> Vec<Modality> {
    crate::engine::modalities()
}

impl Corpus {
    /// Opens (or builds) the index of every repository of `benches` found
    /// under `checkouts`, reads every query, and retrieves its lists with
    /// `ranking`. Benchmarks share indexes by repository name.
    pub fn load(
        benches: &[PathBuf],
        checkouts: &std::path::Path,
        index_root: &std::path::Path,
        settings: &IndexSettings,
        reuse: bool,
        ranking: &RankingConfig,
        status: &mut dyn FnMut(&str),
    ) -> Result<Corpus> {
        let mut repos: Vec<Repo> = Vec::new();
        let mut queries = Vec::new();
        let mut sets = Vec::new();
        for (set, dir) in benches.iter().enumerate() {
            let bench = Benchmark::load(dir)?;
            sets.push(dir.display().to_string());
            for br in &bench.repos {
                let r = match repos.iter().position(|r| r.name == br.spec.name) {
                    Some(r) => r,
                    None => {
                        let Some(index) =
                            super::open_repo(br, checkouts, index_root, settings, reuse)?
                        else {
                            status(&format!("{}: no checkout, left out", br.spec.name));
                            continue;
                        };
                        repos.push(Repo {
                            name: br.spec.name.clone(),
                            language: br.spec.language.clone(),
                            prefix: br.spec.root_prefix().to_string(),
                            index: index.0,
                        });
                        repos.len() - 1
                    }
                };
                for task in &br.tasks {
                    let mut request = SearchRequest::new(task.query.clone());
                    request.limit = CUTOFF;
                    request.ranking = ranking.clone();
                    let prepared = repos[r]
                        .index
                        .prepare(&request)
                        .with_context(|| format!("query {:?}", task.query))?;
                    queries.push(Query {
                        set,
                        repo: r,
                        task: task.clone(),
                        request,
                        prepared,
                        lists: Vec::new(),
                    });
                }
            }
            status(&format!("{}: {} repositories", dir.display(), bench.repos.len()));
        }
        if queries.is_empty() {
            bail!("no query of the training benchmarks has a checkout");
        }
        let weights = vec![1.0; sets.len()];
        let fit = FitParams::default();
        let mut corpus = Corpus { sets, weights, retrieved_with: None, repos, queries, fit };
        corpus.refresh(ranking)?;
        Ok(corpus)
    }

    /// Makes the cached lists those of `ranking`: re-runs only the
    /// modalities whose parameters differ from the ones that made them.
    fn refresh(&mut self, ranking: &RankingConfig) -> Result<()> {
        let stale: Vec<Modality> = match &self.retrieved_with {
            None => every_modality(),
            Some(r) => {
                let mut m = Vec::new();
                if r.keyword != ranking.keyword {
                    m.push(Modality::TEXT);
                }
                if r.structural != ranking.structural {
                    m.push(Modality::STRUCTURAL);
                }
                if r.graph != ranking.graph {
                    m.push(Modality::GRAPH);
                }
                for other in
                    every_modality().into_iter().filter(|x| !Modality::BUILT_IN.contains(x))
                {
                    if r.params.get(other.as_str()) != ranking.params.get(other.as_str()) {
                        m.push(other);
                    }
                }
                if r.semantic != ranking.semantic
                    || r.fragments_per_result != ranking.fragments_per_result
                    || r.min_fetch != ranking.min_fetch
                {
                    m = every_modality();
                }
                m
            }
        };
        if !stale.is_empty() {
            self.retrieve(&stale, ranking)?;
        }
        self.retrieved_with = Some(ranking.clone());
        Ok(())
    }

    /// Re-runs `modalities` for every query with `ranking`'s parameters.
    fn retrieve(&mut self, modalities: &[Modality], ranking: &RankingConfig) -> Result<()> {
        let repos = &self.repos;
        let fresh: Vec<Vec<(Modality, Vec<Hit>)>> = self
            .queries
            .par_iter()
            .map(|q| {
                let index = &repos[q.repo].index;
                let fetch = Index::fetch_size(&q.request);
                let runs = index.retrieve(&q.prepared.query, modalities, ranking, fetch)?;
                Ok(runs.into_iter().map(|(m, h, _)| (m, h)).collect())
            })
            .collect::<maguyva_core::Result<_>>()?;
        for (q, runs) in self.queries.iter_mut().zip(fresh) {
            for (m, hits) in runs {
                match q.lists.iter_mut().find(|(x, _)| *x == m) {
                    Some(slot) => slot.1 = hits,
                    None => q.lists.push((m, hits)),
                }
            }
        }
        Ok(())
    }

    /// The lists a stage would produce under `ranking`, per query, without
    /// keeping them.
    fn lists_for(&self, modality: Modality, ranking: &RankingConfig) -> Result<Vec<Vec<Hit>>> {
        let repos = &self.repos;
        Ok(self
            .queries
            .par_iter()
            .map(|q| {
                let fetch = Index::fetch_size(&q.request);
                let mut runs =
                    repos[q.repo].index.retrieve(&q.prepared.query, &[modality], ranking, fetch)?;
                Ok(runs.pop().map(|r| r.1).unwrap_or_default())
            })
            .collect::<maguyva_core::Result<_>>()?)
    }

    /// NDCG@10 of every query under `ranking`, with `replaced` standing in
    /// for one modality's lists when given.
    fn ndcgs(
        &self,
        ranking: &RankingConfig,
        preset: Preset,
        replaced: Option<(Modality, &[Vec<Hit>])>,
    ) -> Vec<f64> {
        self.ndcgs_of(ranking, preset, None, replaced)
    }

    /// As `ndcgs`, with `only` running those modalities instead of the
    /// preset's.
    fn ndcgs_of(
        &self,
        ranking: &RankingConfig,
        preset: Preset,
        only: Option<&[Modality]>,
        replaced: Option<(Modality, &[Vec<Hit>])>,
    ) -> Vec<f64> {
        self.queries
            .par_iter()
            .enumerate()
            .map(|(i, q)| {
                let repo = &self.repos[q.repo];
                let mut request = q.request.clone();
                request.ranking = ranking.clone();
                request.preset = preset;
                if let Some(only) = only {
                    request.modalities = Some(only.to_vec());
                }
                let p = plan(
                    &request.plan_request(&q.prepared.query),
                    &q.prepared.classification,
                    q.prepared.intent,
                );
                let lists: Vec<(Modality, Vec<Hit>)> = match replaced {
                    None => q.lists.clone(),
                    Some((m, fresh)) => q
                        .lists
                        .iter()
                        .map(|(x, h)| if *x == m { (m, fresh[i].clone()) } else { (*x, h.clone()) })
                        .collect(),
                };
                let ordering: Ordering = repo.index.order(ranking, &q.prepared, &p, &lists);
                let files =
                    distinct_files(ordering.files().into_iter().take(CUTOFF).filter_map(|f| {
                        let path = &repo.index.manifest.files.get(f.index())?.path;
                        Some(super::repo_path(&repo.prefix, path))
                    }));
                score(&files, &q.task.labels, CUTOFF).ndcg
            })
            .collect()
    }

    /// Mean NDCG@10 over the queries `keep` admits: per set, the mean over
    /// repositories of their query means; then the mean over sets, weighted.
    fn objective(&self, ndcgs: &[f64], keep: &dyn Fn(&Query) -> bool) -> f64 {
        let mut per_set: Vec<(f64, f64)> = Vec::new();
        for set in 0..self.sets.len() {
            let mut per_repo: BTreeMap<usize, (f64, usize)> = BTreeMap::new();
            for (q, &n) in self.queries.iter().zip(ndcgs) {
                if q.set == set && keep(q) {
                    let e = per_repo.entry(q.repo).or_default();
                    e.0 += n;
                    e.1 += 1;
                }
            }
            let weight = self.weights.get(set).copied().unwrap_or(1.0);
            if !per_repo.is_empty() && weight > 0.0 {
                let mean = per_repo.values().map(|(s, c)| s / *c as f64).sum::<f64>()
                    / per_repo.len() as f64;
                per_set.push((mean, weight));
            }
        }
        let total: f64 = per_set.iter().map(|p| p.1).sum();
        if total > 0.0 { per_set.iter().map(|(m, w)| m * w).sum::<f64>() / total } else { 0.0 }
    }

    /// The fold of each repository: repositories sorted by a hash of their
    /// name, dealt round-robin, so folds are fixed by the names alone.
    fn folds(&self, k: usize) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.repos.len()).collect();
        order.sort_by_key(|&r| (crc32fast::hash(self.repos[r].name.as_bytes()), r));
        let mut fold = vec![0; self.repos.len()];
        for (i, r) in order.into_iter().enumerate() {
            fold[r] = i % k.max(1);
        }
        fold
    }

    /// Coordinate ascent from `start` on the queries `keep` admits: each
    /// knob in turn takes the value of its grid that scores best (a change
    /// must gain more than `MIN_GAIN`), until a pass changes nothing.
    fn tune(
        &mut self,
        start: &RankingConfig,
        keep: &dyn Fn(&Query) -> bool,
        log: &mut dyn FnMut(&str),
    ) -> Result<(RankingConfig, f64)> {
        const MAX_PASSES: usize = 4;
        let mut best = start.clone();
        self.refresh(&best)?;
        let mut best_score = self.objective(&self.ndcgs(&best, Preset::Default, None), keep);
        for pass in 0..MAX_PASSES {
            let mut changed = false;
            for knob in knobs() {
                let current = knob.get(&best);
                let mut pick = (current, best_score, None);
                for &v in &knob.grid {
                    if v == current {
                        continue;
                    }
                    let mut trial = best.clone();
                    knob.set(&mut trial, v);
                    let (ndcgs, lists) = match knob.stage.modality() {
                        None => (self.ndcgs(&trial, Preset::Default, None), None),
                        Some(m) => {
                            let lists = self.lists_for(m, &trial)?;
                            (self.ndcgs(&trial, Preset::Default, Some((m, &lists))), Some(lists))
                        }
                    };
                    let s = self.objective(&ndcgs, keep);
                    if s > pick.1 + MIN_GAIN {
                        pick = (v, s, lists);
                    }
                }
                if pick.0 != current {
                    knob.set(&mut best, pick.0);
                    if pick.2.is_some() {
                        self.retrieved_with = Some(best.clone());
                    }
                    best_score = pick.1;
                    changed = true;
                    if let (Some(m), Some(lists)) = (knob.stage.modality(), pick.2) {
                        for (q, hits) in self.queries.iter_mut().zip(lists) {
                            if let Some(slot) = q.lists.iter_mut().find(|(x, _)| *x == m) {
                                slot.1 = hits;
                            }
                        }
                    }
                    log(&format!(
                        "pass {}: {} {} -> {} ({:.4})",
                        pass + 1,
                        knob.name,
                        current,
                        pick.0,
                        best_score
                    ));
                }
            }
            if !changed {
                break;
            }
        }
        Ok((best, best_score))
    }

    /// Each query's reranker training question under `ranking` (its fused
    /// candidates, their features and labels); None on the direct path.
    fn rerank_questions(
        &mut self,
        ranking: &RankingConfig,
        depth: usize,
    ) -> Result<Vec<Option<TrainingQuestion>>> {
        self.refresh(ranking)?;
        Ok(self
            .queries
            .par_iter()
            .map(|q| {
                let repo = &self.repos[q.repo];
                let mut request = q.request.clone();
                request.ranking = ranking.clone();
                let p = plan(
                    &request.plan_request(&q.prepared.query),
                    &q.prepared.classification,
                    q.prepared.intent,
                );
                let (kind, files, candidates) =
                    repo.index.rerank_candidates(ranking, &q.prepared, &p, &q.lists, depth)?;
                let relevant: Vec<bool> = files
                    .iter()
                    .map(|f| {
                        repo.index.manifest.files.get(f.index()).is_some_and(|e| {
                            let path = super::repo_path(&repo.prefix, &e.path);
                            q.task.labels.iter().any(|l| path_matches(&path, l))
                        })
                    })
                    .collect();
                Some(TrainingQuestion { kind, candidates, relevant })
            })
            .collect())
    }

    /// Fits the reranker on the queries `keep` admits, over `ranking`'s
    /// fused candidates.
    fn fit_reranker(
        &mut self,
        ranking: &RankingConfig,
        keep: &dyn Fn(&Query) -> bool,
    ) -> Result<RerankModel> {
        let params = self.fit;
        let questions = self.rerank_questions(ranking, params.depth)?;
        let chosen: Vec<TrainingQuestion> = self
            .queries
            .iter()
            .zip(questions)
            .filter(|(q, _)| keep(q))
            .filter_map(|(_, t)| t)
            .collect();
        Ok(RerankModel::fit(&chosen, &params))
    }

    /// Per-query NDCG@10 of a ranking, with its stage lists retrieved.
    fn evaluate(&mut self, ranking: &RankingConfig) -> Result<Vec<f64>> {
        self.refresh(ranking)?;
        Ok(self.ndcgs(ranking, Preset::Default, None))
    }

    /// NDCG@10 of the queries `keep` admits as `maguyva search` answers
    /// them under `ranking` (admission, definitions first and every other
    /// step after the ordering); 0 for the others.
    fn searched(&self, ranking: &RankingConfig, keep: &dyn Fn(&Query) -> bool) -> Result<Vec<f64>> {
        let keep: Vec<bool> = self.queries.iter().map(keep).collect();
        Ok(self
            .queries
            .par_iter()
            .zip(keep)
            .map(|(q, keep)| {
                if !keep {
                    return Ok(0.0);
                }
                let repo = &self.repos[q.repo];
                let mut request = q.request.clone();
                request.ranking = ranking.clone();
                request.snippet_tokens = None;
                let response = repo.index.search(&request)?;
                let files = distinct_files(
                    response.results.iter().map(|r| super::repo_path(&repo.prefix, &r.path)),
                );
                Ok(score(&files, &q.task.labels, CUTOFF).ndcg)
            })
            .collect::<maguyva_core::Result<_>>()?)
    }

    /// NDCG@10 of every query under `ranking`'s text modality alone.
    fn evaluate_text(&mut self, ranking: &RankingConfig) -> Result<Vec<f64>> {
        self.refresh(ranking)?;
        Ok(self.ndcgs_of(ranking, Preset::Default, Some(&[Modality::TEXT]), None))
    }

    /// Means of per-query NDCG@10 for one set: overall, per category and
    /// per language, each the mean over repositories of query means.
    fn breakdown(&self, ndcgs: &[f64], set: usize, keep: &dyn Fn(&Query) -> bool) -> Breakdown {
        let mean_over_repos = |f: &dyn Fn(&Query) -> bool| -> Option<f64> {
            let mut per_repo: BTreeMap<usize, (f64, usize)> = BTreeMap::new();
            for (q, &n) in self.queries.iter().zip(ndcgs) {
                if q.set == set && keep(q) && f(q) {
                    let e = per_repo.entry(q.repo).or_default();
                    e.0 += n;
                    e.1 += 1;
                }
            }
            (!per_repo.is_empty()).then(|| {
                per_repo.values().map(|(s, c)| s / *c as f64).sum::<f64>() / per_repo.len() as f64
            })
        };
        let mut cats: Vec<String> =
            self.queries.iter().filter(|q| q.set == set).map(|q| q.task.category.clone()).collect();
        cats.sort();
        cats.dedup();
        let mut langs: Vec<String> = self
            .queries
            .iter()
            .filter(|q| q.set == set)
            .map(|q| self.repos[q.repo].language.clone())
            .collect();
        langs.sort();
        langs.dedup();
        Breakdown {
            all: mean_over_repos(&|_| true).unwrap_or(0.0),
            by_category: cats
                .into_iter()
                .filter_map(|c| mean_over_repos(&|q| q.task.category == c).map(|m| (c.clone(), m)))
                .collect(),
            by_language: langs
                .into_iter()
                .filter_map(|l| {
                    mean_over_repos(&|q| self.repos[q.repo].language == l).map(|m| (l.clone(), m))
                })
                .collect(),
        }
    }
}

/// NDCG@10 of one set, overall and broken down.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Breakdown {
    /// Mean over repositories.
    pub all: f64,
    /// Per category.
    pub by_category: BTreeMap<String, f64>,
    /// Per language.
    pub by_language: BTreeMap<String, f64>,
}

/// What `--tune` found.
#[derive(Debug, Clone, Serialize)]
pub struct TuneReport {
    /// The training sets, in order.
    pub sets: Vec<String>,
    /// The parameters tuned, by their path in a ranking file (every
    /// registered modality's weights and parameters among them).
    pub knobs: Vec<String>,
    /// Their weights in the objective.
    pub weights: Vec<f64>,
    /// Number of folds.
    pub folds: usize,
    /// Per training set: the seed's NDCG@10 on the held-out folds.
    pub cv_seed: Vec<Breakdown>,
    /// Per training set: the shipped default's.
    pub cv_default: Vec<Breakdown>,
    /// Per training set: the ranking learned without each fold, on that fold.
    pub cv_learned: Vec<Breakdown>,
    /// Per training set: the fold-learned rankings with a reranker fit
    /// without each fold, on that fold.
    pub cv_reranked: Vec<Breakdown>,
    /// Per training set: the fold-learned rankings, without the reranker,
    /// as `maguyva search` answers (every step after the ordering too).
    pub cv_searched: Vec<Breakdown>,
    /// The same with the fold's reranker.
    pub cv_searched_reranked: Vec<Breakdown>,
    /// Whether the written ranking has the reranker (it helped under
    /// cross-validation).
    pub reranker_kept: bool,
    /// Per training set: the seed's text modality alone.
    pub cv_seed_text: Vec<Breakdown>,
    /// Per training set: the text modality alone under the ranking learned
    /// without each fold, on that fold.
    pub cv_learned_text: Vec<Breakdown>,
    /// Each signal switched the other way in every fold's learned ranking.
    pub switches: Vec<SwitchReport>,
    /// The ranking learned on all training data, as a file over the seed.
    pub learned: serde_json::Value,
    /// Its objective on all training data.
    pub train_objective: f64,
    /// On the validation benchmark (never fitted): seed, default, learned,
    /// and the learned ranking's text modality alone.
    pub validation: Option<[Breakdown; 4]>,
}

/// Options of a tuning run.
#[derive(Debug, Clone)]
pub struct TuneOptions {
    /// The training benchmarks.
    pub benches: Vec<PathBuf>,
    /// The weight of each benchmark in the objective (1 for those not given).
    pub weights: Vec<f64>,
    /// Their checkouts.
    pub checkouts: PathBuf,
    /// Where their indexes go.
    pub index_root: PathBuf,
    /// A validation benchmark, its checkouts and index folder.
    pub validation: Option<(PathBuf, PathBuf, PathBuf)>,
    /// Index settings.
    pub settings: IndexSettings,
    /// Reuse up-to-date indexes.
    pub reuse: bool,
    /// Folds of repositories for cross-validation.
    pub folds: usize,
    /// Keep this ranking's parameters and fit only the reranker (None:
    /// fit the parameters from the seed first).
    pub start: Option<RankingConfig>,
    /// Regression trees grown on the reranker's linear score (0: none).
    pub rerank_trees: usize,
}

/// Learns a ranking; `status` receives progress lines.
pub fn run(opts: &TuneOptions, status: &mut dyn FnMut(&str)) -> Result<TuneReport> {
    let seed = RankingConfig::seed();
    let shipped = RankingConfig::learned();
    let mut corpus = Corpus::load(
        &opts.benches,
        &opts.checkouts,
        &opts.index_root,
        &opts.settings,
        opts.reuse,
        &seed,
        status,
    )?;
    corpus.fit.trees.trees = opts.rerank_trees;
    for (i, w) in opts.weights.iter().enumerate() {
        if let Some(slot) = corpus.weights.get_mut(i) {
            *slot = *w;
        }
    }
    status(&format!(
        "{} queries over {} repositories in {} sets",
        corpus.queries.len(),
        corpus.repos.len(),
        corpus.sets.len()
    ));
    let k = opts.folds.max(2);
    let fold_of = corpus.folds(k);
    let seed_text_ndcg = corpus.evaluate_text(&seed)?;
    let seed_ndcg = corpus.evaluate(&seed)?;
    let default_ndcg = corpus.evaluate(&shipped)?;
    let all = |_: &Query| true;
    // With a starting ranking, its knobs stay and only the reranker is fit.
    let start = opts.start.as_ref().map(|r| RankingConfig { reranker: None, ..r.clone() });
    let (learned, train_objective) = match &start {
        Some(r) => {
            let n = corpus.evaluate(r)?;
            (r.clone(), corpus.objective(&n, &all))
        }
        None => corpus.tune(&seed, &all, &mut |line| status(&format!("all folds {line}")))?,
    };
    // Each query's NDCG under the ranking learned without its fold, and
    // under that ranking with each signal switched against the final choice.
    let mut cv_ndcg = vec![0.0; corpus.queries.len()];
    let mut cv_text_ndcg = vec![0.0; corpus.queries.len()];
    let mut cv_reranked_ndcg = vec![0.0; corpus.queries.len()];
    let mut cv_searched_ndcg = vec![0.0; corpus.queries.len()];
    let mut cv_searched_reranked_ndcg = vec![0.0; corpus.queries.len()];
    let mut toggled_ndcg = vec![vec![0.0; corpus.queries.len()]; SWITCHES.len()];
    for fold in 0..k {
        let train = |q: &Query| fold_of[q.repo] != fold;
        let (fold_learned, obj) = match &start {
            Some(r) => (r.clone(), 0.0),
            None => corpus.tune(&seed, &train, &mut |line| {
                status(&format!("fold {}/{k} {line}", fold + 1))
            })?,
        };
        let text = corpus.evaluate_text(&fold_learned)?;
        let ndcgs = corpus.evaluate(&fold_learned)?;
        let reranker = corpus.fit_reranker(&fold_learned, &train)?;
        let with_reranker = RankingConfig { reranker: Some(reranker), ..fold_learned.clone() };
        let reranked = corpus.evaluate(&with_reranker)?;
        let held = |q: &Query| fold_of[q.repo] == fold;
        let searched = corpus.searched(&fold_learned, &held)?;
        let searched_reranked = corpus.searched(&with_reranker, &held)?;
        for (i, q) in corpus.queries.iter().enumerate() {
            if fold_of[q.repo] == fold {
                cv_ndcg[i] = ndcgs[i];
                cv_text_ndcg[i] = text[i];
                cv_reranked_ndcg[i] = reranked[i];
                cv_searched_ndcg[i] = searched[i];
                cv_searched_reranked_ndcg[i] = searched_reranked[i];
            }
        }
        let switches_here: &[Switch] = if start.is_some() { &[] } else { &SWITCHES };
        for (si, switch) in switches_here.iter().enumerate() {
            let flipped = switch.forced(&fold_learned, !switch.is_on(&learned));
            let ndcgs = corpus.evaluate(&flipped)?;
            for (i, q) in corpus.queries.iter().enumerate() {
                if fold_of[q.repo] == fold {
                    toggled_ndcg[si][i] = ndcgs[i];
                }
            }
        }
        status(&format!(
            "fold {}/{k}: train {obj:.4}; held out: seed {:.4}, learned {:.4}, reranked {:.4}",
            fold + 1,
            corpus.objective(&seed_ndcg, &held),
            corpus.objective(&ndcgs, &held),
            corpus.objective(&reranked, &held),
        ));
    }
    let per_set = |ndcgs: &[f64], c: &Corpus| -> Vec<Breakdown> {
        (0..c.sets.len()).map(|s| c.breakdown(ndcgs, s, &all)).collect()
    };
    let cv_seed = per_set(&seed_ndcg, &corpus);
    let cv_default = per_set(&default_ndcg, &corpus);
    let cv_learned = per_set(&cv_ndcg, &corpus);
    let cv_seed_text = per_set(&seed_text_ndcg, &corpus);
    let cv_learned_text = per_set(&cv_text_ndcg, &corpus);
    let set_means = |ndcgs: &[f64], c: &Corpus| -> Vec<f64> {
        (0..c.sets.len()).map(|s| c.breakdown(ndcgs, s, &all).all).collect()
    };
    // A signal stays on only where cross-validation says it helps: one
    // that costs less than MIN_GAIN to switch off is switched off.
    let cv_objective = corpus.objective(&cv_ndcg, &all);
    let mut learned = learned;
    let mut switches = Vec::new();
    let switches_run: &[Switch] = if start.is_some() { &[] } else { &SWITCHES };
    for (sw, toggled) in switches_run.iter().zip(&toggled_ndcg) {
        let on = sw.is_on(&learned);
        let pruned = on && corpus.objective(toggled, &all) > cv_objective - MIN_GAIN;
        switches.push(SwitchReport {
            name: sw.name.to_string(),
            on_in_learned: on,
            cv_learned: set_means(&cv_ndcg, &corpus),
            cv_toggled: set_means(toggled, &corpus),
            pruned,
        });
    }
    for (sw, report) in SWITCHES.iter().zip(&switches) {
        if report.pruned {
            learned = sw.forced(&learned, false);
            status(&format!("{}: off, it does not help under cross-validation", sw.name));
        }
    }
    // Admission decides which results are shown, not their order, and has
    // its own fit (doc/ranking.md): the learned file carries the shipped one.
    learned.admission = shipped.admission;
    let train_objective = if switches.iter().any(|s| s.pruned) {
        let ndcgs = corpus.evaluate(&learned)?;
        corpus.objective(&ndcgs, &all)
    } else {
        train_objective
    };
    // The reranker ships only where cross-validation says it helps.
    let cv_reranked = per_set(&cv_reranked_ndcg, &corpus);
    let cv_searched = per_set(&cv_searched_ndcg, &corpus);
    let cv_searched_reranked = per_set(&cv_searched_reranked_ndcg, &corpus);
    let reranker_kept = corpus.objective(&cv_reranked_ndcg, &all) > cv_objective + MIN_GAIN;
    if reranker_kept {
        learned.reranker = Some(corpus.fit_reranker(&learned, &all)?);
    } else {
        status("reranker: not kept, it does not help under cross-validation");
    }
    let validation = match &opts.validation {
        None => None,
        Some((bench, checkouts, index_root)) => {
            let mut dev = Corpus::load(
                std::slice::from_ref(bench),
                checkouts,
                index_root,
                &opts.settings,
                opts.reuse,
                &seed,
                status,
            )?;
            let mut out = Vec::new();
            for r in [&seed, &shipped, &learned] {
                let n = dev.evaluate(r)?;
                out.push(dev.breakdown(&n, 0, &all));
            }
            let n = dev.evaluate_text(&learned)?;
            out.push(dev.breakdown(&n, 0, &all));
            out.try_into().ok()
        }
    };
    Ok(TuneReport {
        knobs: knobs().into_iter().map(|k| k.name).collect(),
        sets: corpus.sets.clone(),
        weights: corpus.weights.clone(),
        folds: k,
        cv_seed,
        cv_seed_text,
        cv_learned_text,
        cv_default,
        cv_learned,
        cv_reranked,
        cv_searched,
        cv_searched_reranked,
        reranker_kept,
        switches,
        learned: learned.to_file(Base::Seed)?,
        train_objective,
        validation,
    })
}

/// Human rendering of a tuning report.
pub fn render(r: &TuneReport) -> String {
    let mut out = String::new();
    let table = |out: &mut String, title: &str, cols: &[(&str, &Breakdown)]| {
        let _ = write!(out, "{title}\n  {:<14}", "");
        for (name, _) in cols {
            let _ = write!(out, " {name:>9}");
        }
        let _ = writeln!(out);
        let row = |out: &mut String, label: &str, f: &dyn Fn(&Breakdown) -> Option<f64>| {
            let _ = write!(out, "  {label:<14}");
            for (_, b) in cols {
                let _ = write!(out, " {:>9}", f(b).map_or("-".into(), |v| format!("{v:.3}")));
            }
            let _ = writeln!(out);
        };
        row(out, "all", &|b| Some(b.all));
        let first = cols.first().map(|c| c.1);
        for c in
            first.map(|b| b.by_category.keys().cloned().collect::<Vec<_>>()).unwrap_or_default()
        {
            row(out, &c, &|b| b.by_category.get(&c).copied());
        }
        for l in
            first.map(|b| b.by_language.keys().cloned().collect::<Vec<_>>()).unwrap_or_default()
        {
            row(out, &l, &|b| b.by_language.get(&l).copied());
        }
    };
    for (i, set) in r.sets.iter().enumerate() {
        table(
            &mut out,
            &format!(
                "{set} (weight {}): NDCG@10, {}-fold cross-validation by repository",
                r.weights.get(i).copied().unwrap_or(1.0),
                r.folds
            ),
            &[
                ("seed", &r.cv_seed[i]),
                ("default", &r.cv_default[i]),
                ("learned", &r.cv_learned[i]),
                ("reranked", &r.cv_reranked[i]),
                ("searched", &r.cv_searched[i]),
                ("srch+rr", &r.cv_searched_reranked[i]),
                ("seed text", &r.cv_seed_text[i]),
                ("lrnd text", &r.cv_learned_text[i]),
            ],
        );
    }
    if r.sets.len() > 1 {
        let mean = |b: &[Breakdown]| b.iter().map(|b| b.all).sum::<f64>() / b.len() as f64;
        let _ = writeln!(
            out,
            "mean of the {} sets: seed {:.5}, learned {:.5}, reranked {:.5}, searched {:.5}, srch+rr {:.5}",
            r.sets.len(),
            mean(&r.cv_seed),
            mean(&r.cv_learned),
            mean(&r.cv_reranked),
            mean(&r.cv_searched),
            mean(&r.cv_searched_reranked),
        );
    }
    if !r.switches.is_empty() {
        let _ = writeln!(
            out,
            "signals switched against the learned choice in every fold's ranking (NDCG@10 on held-out folds; delta per set)"
        );
        let _ = write!(out, "  {:<22} {:>8} {:>10}", "", "learned", "as learned");
        for set in &r.sets {
            let short = set.rsplit('/').next().unwrap_or(set);
            let _ = write!(out, " {:>12}", short.chars().take(12).collect::<String>());
        }
        let _ = writeln!(out);
        for sw in &r.switches {
            let state = match (sw.on_in_learned, sw.pruned) {
                (true, true) => "pruned",
                (true, false) => "on",
                (false, _) => "off",
            };
            let _ = write!(
                out,
                "  {:<22} {:>8} {:>10.4}",
                sw.name,
                state,
                sw.cv_learned.first().copied().unwrap_or(0.0)
            );
            for (a, b) in sw.cv_learned.iter().zip(&sw.cv_toggled) {
                let _ = write!(out, " {:>+12.4}", b - a);
            }
            let _ = writeln!(out);
        }
    }
    if let Some([seed, default, learned, learned_text]) = &r.validation {
        table(
            &mut out,
            "validation (never fitted): NDCG@10",
            &[
                ("seed", seed),
                ("default", default),
                ("learned", learned),
                ("lrnd text", learned_text),
            ],
        );
    }
    let _ = writeln!(out, "learned on all training data (objective {:.4}):", r.train_objective);
    let _ = writeln!(out, "{}", serde_json::to_string_pretty(&r.learned).unwrap_or_default());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_knob_reads_what_it_writes_and_tries_the_seed() {
        let seed = RankingConfig::seed();
        for knob in knobs() {
            assert!(
                knob.grid.contains(&knob.get(&seed)),
                "{}: the seed's value {} is not in the grid",
                knob.name,
                knob.get(&seed)
            );
            for &v in &knob.grid {
                let mut r = seed.clone();
                knob.set(&mut r, v);
                assert_eq!(knob.get(&r), v, "{}", knob.name);
            }
        }
    }

    #[test]
    fn switches_follow_their_strengths() {
        let knobs = knobs();
        let find = |n: &str| knobs.iter().find(|k| k.name == n).cloned().unwrap();
        let mut r = RankingConfig::seed();
        find("signals.test_file_factor").set(&mut r, 0.6);
        assert!(r.signals.test_files);
        find("signals.test_file_factor").set(&mut r, 1.0);
        assert!(!r.signals.test_files);
        find("centrality_factor").set(&mut r, 0.0);
        assert_eq!(r.centrality, CentralityScale::Off);
        find("profiles.understand_code.text").set(&mut r, 0.7);
        assert_eq!(r.profiles.understand_code.get(Modality::TEXT), 0.7);
    }
}
