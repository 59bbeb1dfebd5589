//! Answering a query over an opened index: classify the question, decide
//! between the direct path and fusion, run the modalities in parallel, fuse
//! their lists by weighted RRF, and explain the result on request.

use super::{CentralityScale, Index, RankingConfig};
use crate::admission::{Admission, AdmissionParams, QueryEvidence};
use crate::budget::BudgetReport;
use maguyva_core::{
    ChunkId, FileId, Fragment, Hit, LineSpan, MatchMode, Modality, Query, Result, Retriever,
};
use maguyva_fusion::{
    Classification, Features, FileFacts, FusedHit, FusionContext, FusionParams, FusionStrategy,
    Intent, IntentClassifier, ModalityWeights, Plan, PlanRequest, Preset, QuestionKind,
    ReportAnalysis, RerankModel, Signals, bare_name, definition_name, fallback_plan, file_prior,
    folded_name, fuse, is_test_path, is_vendor_path, last_segment, named_identifiers, plan,
    whole_quoted,
};
use maguyva_graph::{EdgeKind, GraphRetriever};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::{BTreeMap, HashSet};
use std::sync::OnceLock;
use std::time::Instant;

/// Results asked for when the caller does not say.
pub const DEFAULT_LIMIT: usize = 10;

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
    /// Run exactly these modalities instead of the preset's (research and
    /// ablations); several are fused with the intent's weights.
    pub modalities: Option<Vec<Modality>>,
    /// Use this intent instead of the classifier's.
    pub intent: Option<Intent>,
    /// How much work to do.
    pub preset: Preset,
    /// Add each result's per-modality ranks, contributions and boost.
    pub explain: bool,
    /// Keep only the results that fit in this many estimated tokens
    /// ([`crate::budget`]).
    pub max_tokens: Option<usize>,
    /// Cut each result to its best lines within this many estimated tokens
    /// ([`crate::budget::shape`]); `None` shows each file's whole best
    /// fragment.
    pub snippet_tokens: Option<usize>,
    /// Units shown per file at most ([`crate::units`]): the first is the
    /// fragment the file ranked by, the others its fragments holding the
    /// query's words as well.
    pub per_file: usize,
    /// Answer the text as a report (the files to change), whatever its
    /// length; a long report takes the report route without it.
    pub as_report: bool,
}

impl SearchRequest {
    /// What planning needs of the request, for a query read from it.
    pub fn plan_request<'a>(&'a self, query: &Query) -> PlanRequest<'a> {
        PlanRequest {
            profiles: &self.ranking.profiles,
            rrf_k: self.ranking.rrf_k,
            preset: self.preset,
            modalities: self.modalities.as_deref(),
            exact: query.mode() != MatchMode::Keyword,
        }
    }

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
            preset: Preset::Default,
            explain: false,
            max_tokens: None,
            snippet_tokens: Some(crate::budget::DEFAULT_SNIPPET_TOKENS),
            per_file: crate::units::DEFAULT_PER_FILE,
            as_report: false,
        }
    }

    /// The validated query the retrievers run: a keyword query that is one
    /// double-quoted string becomes a literal search for its inside.
    pub fn query(&self) -> Result<Query> {
        if self.mode == MatchMode::Keyword {
            // `""` would match every file: it is a mistake, not a search.
            let t = self.text.trim();
            let inside = t.strip_prefix('"').and_then(|t| t.strip_suffix('"'));
            if inside.is_some_and(|i| i.trim().is_empty()) {
                return Err(maguyva_core::Error::InvalidQuery(
                    "the quoted string is empty; put the text to find between the quotes".into(),
                ));
            }
            if let Some(inner) = whole_quoted(&self.text) {
                return Query::with_mode(inner, MatchMode::Literal, self.case_insensitive);
            }
        }
        Query::with_mode(self.text.clone(), self.mode, self.case_insensitive)
    }
}

/// One modality's part in a result, for explanations.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContributionReport {
    /// The modality.
    pub modality: Modality,
    /// The file's zero-based rank among that modality's files.
    pub rank: u32,
    /// Its weight.
    pub weight: f32,
    /// `weight / (k + rank + 1) * boost`.
    pub contribution: f32,
}

/// Why a result ranked where it did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explanation {
    /// Per modality.
    pub contributions: Vec<ContributionReport>,
    /// The centrality boost applied.
    pub boost: f32,
    /// The factor for vendor and build paths (1 elsewhere).
    pub vendor_factor: f32,
    /// The factor from ranking signals (test files, path words, named
    /// symbols; 1 when none applied).
    pub prior: f32,
}

/// Why the graph's answer holds a file: what the file does with the target
/// (`call`, `type_use`, `import`, `reexport`, `mention`, `definition` for
/// references; `import`, `call`, `reference` for impact), how it was found
/// (`resolved` by the graph, `word` in code, `defining`, `string`,
/// `comment`), and for impact how many hops away it is.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Evidence {
    /// What the file does with the target.
    pub kind: &'static str,
    /// How it was found.
    pub confidence: &'static str,
    /// Hops from the target (impact only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
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
    /// The fused score (the retriever's own on the direct path).
    pub score: f32,
    /// The text of lines `start_line..=end_line`.
    pub snippet: String,
    /// Zero-based rank of this file in each modality's list.
    pub ranks: BTreeMap<Modality, u32>,
    /// Present with `--explain`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<Explanation>,
    /// Present on the graph's answers to references and impact questions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Evidence>,
    /// On a definition shown for the name asked: the line that names it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub definition_line: Option<u32>,
    /// The evidence that admitted the result (absent on the graph's
    /// answers, which carry `evidence`, and without admission).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub admitted: Option<Admission>,
    /// On the answer to a report: what ties the file to it (a traceback
    /// frame, a path or module named, a name it defines, its words).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ties: Vec<crate::locate::Tie>,
}

impl SearchResult {
    /// A result showing `snippet`, lines `start_line..=end_line` of `path`,
    /// with nothing else said of it yet (no ranks, evidence or ties).
    pub fn lines(
        path: impl Into<String>,
        start_line: u32,
        end_line: u32,
        score: f32,
        snippet: impl Into<String>,
    ) -> SearchResult {
        SearchResult {
            path: path.into(),
            start_line,
            end_line,
            score,
            snippet: snippet.into(),
            ranks: BTreeMap::new(),
            explain: None,
            evidence: None,
            definition_line: None,
            admitted: None,
            ties: Vec::new(),
        }
    }
}

/// How a search was run, for explanations.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanReport {
    /// The classifier's rule.
    pub rule: maguyva_fusion::Rule,
    /// Whether the question mixed intents.
    pub mixed: bool,
    /// The preset.
    pub preset: Preset,
    /// The weights of the modalities that ran.
    pub weights: ModalityWeights,
    /// The RRF constant (when fused).
    pub k: f32,
}

/// The answer to a query; this JSON shape is the contract that evaluation
/// tools read, so fields are only ever added.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchResponse {
    /// The query as given.
    pub query: String,
    /// The classified intent.
    pub intent: Option<String>,
    /// The classifier's confidence.
    pub confidence: Option<f32>,
    /// `direct` or `rrf`.
    pub fusion_strategy: Option<String>,
    /// The modalities that ran.
    pub modalities: Vec<Modality>,
    /// Time spent, by stage, in milliseconds.
    pub timings_ms: BTreeMap<String, f64>,
    /// The results, best first, one per file.
    pub results: Vec<SearchResult>,
    /// Present with `--explain`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<PlanReport>,
    /// Present with a token budget: what it kept and left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<BudgetReport>,
    /// Files left out because they changed since the index was built
    /// (only from [`Index::search_as_indexed`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<String>,
    /// On a report, with `--explain`: what the report route read and found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<crate::locate::ReportReport>,
}

/// What a query asks, read once: its validated form, its intent, and what
/// the file priors need of it. Ranking the same prepared query under other
/// parameters (`maguyva eval --tune`) never reads it again.
#[derive(Debug, Clone)]
pub struct PreparedQuery {
    /// The validated query the retrievers run.
    pub query: Query,
    /// The classifier's verdict.
    pub classification: Classification,
    /// The intent in effect (the request's, or the classifier's).
    pub intent: Intent,
    /// The query's content words, for the path-words signal. None for a
    /// bare name: its parts in a file name say nothing (`path_router.go`
    /// is not about `Router`); the exact-name signals judge it.
    pub content_words: Vec<String>,
    /// The files defining a symbol the query names.
    pub named_files: HashSet<FileId>,
    /// Those of them defining it as a type (class, struct, enum,
    /// interface, trait, type or module).
    pub named_type_files: HashSet<FileId>,
    /// The symbols the query names, folded (`folded_name`), for matching
    /// file names.
    pub named_symbols: Vec<String>,
    /// The query's words looked up in the text index, once: by admission
    /// while the modalities run, or by the reranker when admission is off.
    pub evidence: OnceLock<Option<QueryEvidence>>,
}

impl PreparedQuery {
    /// The query's words looked up in `index`'s text index with `params`
    /// (None for a query without content words, or an unreadable index).
    pub(crate) fn evidence(
        &self,
        index: &Index,
        params: &AdmissionParams,
    ) -> Option<&QueryEvidence> {
        self.evidence
            .get_or_init(|| {
                let text = index.text().ok()?;
                QueryEvidence::of(self.query.text(), text, &index.fragments, params).ok().flatten()
            })
            .as_ref()
    }
}

/// A query's ranked files before they become results: the direct path's
/// hits, or the fused ranking.
#[derive(Debug, Clone)]
pub enum Ordering {
    /// One modality answered alone; its hits, best first.
    Direct(Modality, Vec<Hit>),
    /// Several lists fused.
    Fused(Vec<FusedHit>),
}

impl Ordering {
    /// The distinct files, best first.
    pub fn files(&self) -> Vec<FileId> {
        match self {
            Ordering::Direct(_, hits) => {
                let mut seen = HashSet::new();
                hits.iter().map(|h| h.file).filter(|f| seen.insert(*f)).collect()
            }
            Ordering::Fused(fused) => fused.iter().map(|h| h.file).collect(),
        }
    }
}

/// What fusion knows of this index's files, for one query.
struct IndexContext<'a> {
    index: &'a Index,
    scale: CentralityScale,
    factor: f32,
    max: f32,
    signals: Signals,
    prepared: &'a PreparedQuery,
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

    fn prior(&self, file: FileId) -> f32 {
        let Some(entry) = self.index.manifest.files.get(file.index()) else { return 1.0 };
        let named_after_symbol = self.signals.named_file
            && !self.prepared.named_symbols.is_empty()
            && self
                .prepared
                .named_symbols
                .contains(&folded_name(maguyva_core::file_stem(&entry.path)));
        let facts = FileFacts {
            path: &entry.path,
            defines_named_symbol: self.prepared.named_files.contains(&file),
            named_after_symbol,
        };
        file_prior(&self.signals, &self.prepared.content_words, facts)
    }
}

impl Index {
    /// The recall@`k` of the HNSW graph against the exact Hamming scan for
    /// one query (codes at the `k`-th exact distance count as found, since
    /// ties make the exact set ambiguous); None without a graph.
    #[cfg(feature = "hnsw")]
    pub fn hnsw_recall(&self, text: &str, k: usize) -> Result<Option<f64>> {
        let semantic = self.semantic()?;
        let q = semantic.embedder().embed(&[text], maguyva_semantic::Role::Query)?;
        let Some((exact, approx)) = semantic.index().compare_hnsw(&q, k) else {
            return Ok(None);
        };
        let Some(&(_, cutoff)) = exact.last() else { return Ok(None) };
        let found = approx.iter().filter(|&&(_, d)| d <= cutoff).count().min(exact.len());
        Ok(Some(found as f64 / exact.len() as f64))
    }

    /// The files that define a symbol the query names, with the same letter
    /// case; the files re-exporting it only when none defines it.
    fn files_defining_named_symbols(
        &self,
        text: &str,
    ) -> Result<(HashSet<FileId>, HashSet<FileId>)> {
        let table = self.symbols()?;
        let mut files = HashSet::new();
        let mut types = HashSet::new();
        for ident in named_identifiers(text) {
            let name = last_segment(ident);
            let (mut defining, mut reexporting) = (Vec::new(), Vec::new());
            for id in table.by_normalized_name(&maguyva_ast::normalize(name)) {
                match table.get(id) {
                    Some(sym) if sym.name == name => match sym.kind {
                        maguyva_ast::SymbolKind::Reexport => reexporting.push(sym.file),
                        kind => {
                            // A bare name more often asks for a type (or a
                            // module) than for a function or field of it.
                            use maguyva_ast::SymbolKind as K;
                            if kind.is_type() || matches!(kind, K::Type | K::Module) {
                                types.insert(sym.file);
                            }
                            defining.push(sym.file)
                        }
                    },
                    _ => {}
                }
            }
            // A name defined outside the indexed tree (another crate or
            // package) is best answered by the file that brings it in.
            files.extend(if defining.is_empty() { reexporting } else { defining });
        }
        Ok((files, types))
    }
}

/// Shows each file that defines a symbol the query names through that
/// definition (the structural modality's fragment), whichever modality
/// contributed most: "where is Router defined" wants the definition's
/// lines. Order and scores do not change.
fn show_definitions(
    fused: &mut [FusedHit],
    prepared: &PreparedQuery,
    lists: &[(Modality, Vec<Hit>)],
) {
    let Some((_, structural)) = lists.iter().find(|(m, _)| *m == Modality::STRUCTURAL) else {
        return;
    };
    for hit in fused.iter_mut().filter(|h| prepared.named_files.contains(&h.file)) {
        if let Some(def) = structural.iter().find(|d| d.file == hit.file) {
            hit.chunk = def.chunk;
            hit.lines = def.lines;
        }
    }
}

/// The files defining a name asked, in the order that puts its primary
/// definition first: code before tests, then the route's order (the
/// reranked one, which weighs kinds of file and definition), then the
/// structural modality's order for files the route did not rank.
fn primary_definitions_first(
    defining: Vec<SearchResult>,
    route: &[SearchResult],
) -> Vec<SearchResult> {
    let position = |path: &str| route.iter().position(|r| r.path == path);
    let mut keyed: Vec<(bool, usize, usize, SearchResult)> = defining
        .into_iter()
        .enumerate()
        .map(|(i, r)| (is_test_path(&r.path), position(&r.path).unwrap_or(usize::MAX), i, r))
        .collect();
    keyed.sort_by_key(|k| (k.0, k.1, k.2));
    keyed.into_iter().map(|k| k.3).collect()
}

/// Byte offsets of `word` in `text` with no identifier character on either
/// side (`$` is not one: `$name` holds `name`).
pub(super) fn whole_word_offsets<'a>(
    text: &'a str,
    word: &'a str,
) -> impl Iterator<Item = usize> + 'a {
    maguyva_core::whole_words(text, word, false)
}

/// How many times `word` occurs whole in `text`.
fn word_count(text: &str, word: &str) -> usize {
    whole_word_offsets(text, word).count()
}

/// The line (1-based) of the first whole occurrence of `word`; 1 if none.
fn first_word_line(text: &str, word: &str) -> u32 {
    whole_word_offsets(text, word)
        .next()
        .map_or(1, |at| text[..at].bytes().filter(|&b| b == b'\n').count() as u32 + 1)
}

/// Whether `word` occurs in `text` with no identifier character on either
/// side.
fn has_whole_word(text: &str, word: &str) -> bool {
    whole_word_offsets(text, word).next().is_some()
}

impl Index {
    /// The retriever of modality `modality` for one query, with the
    /// ranking's parameters of it.
    pub(crate) fn retriever(
        &self,
        modality: Modality,
        ranking: &RankingConfig,
    ) -> Result<Box<dyn Retriever + '_>> {
        let specs = crate::plugin(modality)?.params();
        let params = maguyva_core::Params::new(&specs, ranking.params.get(modality.as_str()));
        self.modality(modality)?.retriever(params, ranking)
    }

    /// Reads a query once: validates it, classifies it, and collects what
    /// the file priors need.
    pub fn prepare(&self, request: &SearchRequest) -> Result<PreparedQuery> {
        let query = request.query()?;
        let classification = IntentClassifier::new().classify(&request.text);
        let intent = request.intent.unwrap_or(classification.intent);
        // Only fused rankings use the file priors; an exact string or a
        // regex goes straight to the text modality and never needs symbols.
        let (named_files, named_type_files) = match query.mode() {
            MatchMode::Keyword => self.files_defining_named_symbols(&request.text)?,
            MatchMode::Literal | MatchMode::Regex => (HashSet::new(), HashSet::new()),
        };
        Ok(PreparedQuery {
            query,
            classification,
            intent,
            content_words: if classification.is_bare_name() {
                Vec::new()
            } else {
                maguyva_core::tokens::content_words(&request.text)
            },
            named_files,
            named_type_files,
            named_symbols: named_identifiers(&request.text)
                .into_iter()
                .map(|ident| folded_name(last_segment(ident)))
                .collect(),
            evidence: OnceLock::new(),
        })
    }

    /// Fragments fetched from each modality for a request.
    pub fn fetch_size(request: &SearchRequest) -> usize {
        request
            .limit
            .saturating_mul(request.ranking.fragments_per_result)
            .max(request.ranking.min_fetch)
    }

    /// Runs `modalities` in parallel; each returns its ranked hits and the
    /// time it took in milliseconds.
    pub fn retrieve(
        &self,
        query: &Query,
        modalities: &[Modality],
        ranking: &RankingConfig,
        fetch: usize,
    ) -> Result<Vec<(Modality, Vec<Hit>, f64)>> {
        modalities
            .par_iter()
            .map(|&m| {
                let t = Instant::now();
                let hits = self.retriever(m, ranking)?.search(query, fetch)?;
                Ok((m, hits, crate::millis(t.elapsed())))
            })
            .collect()
    }

    /// Orders the files of a plan's lists: the one list of the direct path,
    /// or the lists fused with the ranking's parameters and file priors.
    /// Lists of modalities outside the plan are ignored.
    pub fn order(
        &self,
        ranking: &RankingConfig,
        prepared: &PreparedQuery,
        plan: &Plan,
        lists: &[(Modality, Vec<Hit>)],
    ) -> Ordering {
        if let [m] = plan.weights.active().as_slice() {
            let hits = lists.iter().find(|(x, _)| x == m).map(|(_, h)| h.clone());
            return Ordering::Direct(*m, hits.unwrap_or_default());
        }
        let mut fused = self.fuse_lists(ranking, prepared, plan, lists);
        if let Some(model) = &ranking.reranker {
            self.rerank(model, ranking, prepared, lists, &mut fused);
        }
        if prepared.intent == Intent::FindDefinition {
            show_definitions(&mut fused, prepared, lists);
        }
        Ordering::Fused(fused)
    }

    /// A plan's lists fused with the ranking's parameters and file priors,
    /// before the reranker.
    fn fuse_lists(
        &self,
        ranking: &RankingConfig,
        prepared: &PreparedQuery,
        plan: &Plan,
        lists: &[(Modality, Vec<Hit>)],
    ) -> Vec<FusedHit> {
        let context = IndexContext {
            index: self,
            scale: ranking.centrality,
            factor: ranking.centrality_factor,
            max: self.max_centrality,
            signals: ranking.signals,
            prepared,
        };
        let params = FusionParams {
            k: plan.k,
            boost: ranking.centrality != CentralityScale::Off,
            ..FusionParams::default()
        };
        fuse(lists, &plan.weights, &params, &context)
    }

    /// Reorders the first fused candidates by the learned reranker; the
    /// scores stay where they were, so they still fall down the list.
    fn rerank(
        &self,
        model: &RerankModel,
        ranking: &RankingConfig,
        prepared: &PreparedQuery,
        lists: &[(Modality, Vec<Hit>)],
        fused: &mut Vec<FusedHit>,
    ) {
        let features =
            self.candidate_features(&ranking.admission, prepared, lists, fused, model.depth);
        let order = model.order(crate::rerank::question_kind(prepared), &features);
        let scores: Vec<f32> = fused.iter().map(|h| h.score).collect();
        let mut old: Vec<Option<FusedHit>> = std::mem::take(fused).into_iter().map(Some).collect();
        for (i, j) in order.into_iter().enumerate() {
            if let Some(mut h) = old.get_mut(j).and_then(Option::take) {
                h.score = scores[i];
                fused.push(h);
            }
        }
        fused.extend(old.into_iter().flatten());
    }

    /// The fused candidates of a plan's lists before the reranker, with
    /// their features (training the reranker); None on the direct path.
    pub fn rerank_candidates(
        &self,
        ranking: &RankingConfig,
        prepared: &PreparedQuery,
        plan: &Plan,
        lists: &[(Modality, Vec<Hit>)],
        depth: usize,
    ) -> Option<(QuestionKind, Vec<FileId>, Vec<Features>)> {
        if plan.weights.active().len() < 2 {
            return None;
        }
        let fused = self.fuse_lists(ranking, prepared, plan, lists);
        let features = self.candidate_features(&ranking.admission, prepared, lists, &fused, depth);
        let files = fused.iter().take(depth).map(|h| h.file).collect();
        Some((crate::rerank::question_kind(prepared), files, features))
    }

    /// Runs a query.
    pub fn search(&self, request: &SearchRequest) -> Result<SearchResponse> {
        let response = self.search_unchecked(request, false)?;
        // A damaged block of text read on the way makes the answer wrong.
        self.content.damage().map_or(Ok(response), Err)
    }

    /// Runs a query on an index the tree has moved away from, as a server
    /// does while a refresh is under way: the files found changed (or
    /// unreadable) since the index was built are left out of the answer,
    /// and named in [`SearchResponse::changed`], instead of failing it.
    pub fn search_as_indexed(&self, request: &SearchRequest) -> Result<SearchResponse> {
        self.search_unchecked(request, true)
    }

    /// The paths of the files reads found changed since the index was built.
    pub(crate) fn changed_paths(&self) -> Vec<String> {
        let files = &self.manifest.files;
        let changed = self.content.changed_files().into_iter();
        changed.filter_map(|f| files.get(f.index()).map(|e| e.path.clone())).collect()
    }

    fn search_unchecked(
        &self,
        request: &SearchRequest,
        leave_out_changed: bool,
    ) -> Result<SearchResponse> {
        let start = Instant::now();
        let report = if request.as_report {
            Some(ReportAnalysis::read(&request.text))
        } else if request.mode == MatchMode::Keyword
            && request.modalities.is_none()
            && request.intent.is_none()
            && whole_quoted(&request.text).is_none()
        {
            ReportAnalysis::of(&request.text)
        } else {
            None
        };
        if let Some(report) = report {
            return self.search_report(request, &report, leave_out_changed, start);
        }
        let prepared = self.prepare(request)?;
        let plan_request = request.plan_request(&prepared.query);
        let mut plan = plan(&plan_request, &prepared.classification, prepared.intent);
        let mut modalities = plan.weights.active();
        let mut timings_ms = BTreeMap::new();
        timings_ms.insert("classify".to_string(), crate::millis(start.elapsed()));
        let graph_route = plan.strategy == FusionStrategy::Direct
            && plan.weights.active() == [Modality::GRAPH]
            && request.modalities.is_none();
        let admission = request.ranking.admission.on
            && !graph_route
            && request.modalities.is_none()
            && prepared.query.mode() == MatchMode::Keyword;
        let mut results = if graph_route {
            let t = Instant::now();
            let (results, used) = self.graph_answer(request, &prepared)?;
            timings_ms.insert("graph".to_string(), crate::millis(t.elapsed()));
            modalities = used;
            results
        } else {
            self.answer(request, &prepared, &plan, admission, &mut timings_ms)?
        };
        if results.is_empty()
            && let Some(fallback) =
                fallback_plan(&plan_request, &prepared.classification, prepared.intent, &plan)
        {
            results = self.answer(request, &prepared, &fallback, admission, &mut timings_ms)?;
            // Words of a name match parts of other names; only files where
            // a name the query gives occurs whole are an answer.
            let names: Vec<&str> =
                named_identifiers(&request.text).into_iter().map(last_segment).collect();
            if !names.is_empty() {
                results.retain(|r| self.file_has_any_word(&r.path, &names));
            }
            for m in fallback.weights.active() {
                if !modalities.contains(&m) {
                    modalities.push(m);
                }
            }
            plan = fallback;
        }
        if request.modalities.is_none() && prepared.query.mode() == MatchMode::Keyword {
            let named = if prepared.intent == Intent::FindDefinition {
                definition_name(&request.text)
            } else {
                bare_name(&request.text)
            };
            if let Some(name) = named {
                self.definitions_first(&request.text, name, &mut results, request.limit)?;
            }
        }
        if let MatchMode::Literal | MatchMode::Regex = prepared.query.mode() {
            let by = if prepared.query.mode() == MatchMode::Literal { "literal" } else { "regex" };
            for r in &mut results {
                r.admitted = Some(Admission::whole(by, prepared.query.text()));
            }
        }
        let (results, changed, budget) =
            self.leave_out_and_pack(request, results, leave_out_changed);
        timings_ms.insert("total".to_string(), crate::millis(start.elapsed()));
        let classification = prepared.classification;
        Ok(SearchResponse {
            query: request.text.clone(),
            intent: Some(prepared.intent.as_str().to_string()),
            confidence: Some(classification.confidence),
            fusion_strategy: Some(plan.strategy.as_str().to_string()),
            modalities,
            timings_ms,
            results,
            explain: request.explain.then_some(PlanReport {
                rule: classification.rule,
                mixed: classification.mixed,
                preset: request.preset,
                weights: plan.weights,
                k: plan.k,
            }),
            budget,
            changed,
            report: None,
        })
    }

    /// The results without the files changed since the index was built
    /// (with `leave_out_changed`), then within the request's token budget:
    /// left out before the budget, which then spends on what remains.
    fn leave_out_and_pack(
        &self,
        request: &SearchRequest,
        mut results: Vec<SearchResult>,
        leave_out_changed: bool,
    ) -> (Vec<SearchResult>, Vec<String>, Option<BudgetReport>) {
        let changed = match leave_out_changed {
            true => self.changed_paths(),
            false => Vec::new(),
        };
        results.retain(|r| !changed.contains(&r.path));
        let mut results = self.more_units(results, &request.text, request.per_file);
        if let Some(max) = request.snippet_tokens {
            self.shape_units(&mut results, max.max(1), &request.text);
        }
        match request.max_tokens {
            Some(max) => {
                let (kept, budget) = crate::budget::pack(results, max, &request.text);
                (kept, changed, Some(budget))
            }
            None => (results, changed, None),
        }
    }

    /// Runs a report through the report route.
    fn search_report(
        &self,
        request: &SearchRequest,
        report: &ReportAnalysis,
        leave_out_changed: bool,
        start: Instant,
    ) -> Result<SearchResponse> {
        request.query()?;
        let mut timings_ms = BTreeMap::new();
        let (results, modalities, explained) =
            self.answer_report(request, report, &mut timings_ms)?;
        let (results, changed, budget) =
            self.leave_out_and_pack(request, results, leave_out_changed);
        timings_ms.insert("total".to_string(), crate::millis(start.elapsed()));
        Ok(SearchResponse {
            query: request.text.clone(),
            intent: Some("report".to_string()),
            confidence: None,
            fusion_strategy: Some("rrf".to_string()),
            modalities,
            timings_ms,
            results,
            explain: None,
            budget,
            changed,
            report: explained,
        })
    }

    /// The graph's answer to a references or impact question: for impact,
    /// the dependents of the files, modules or definitions it names,
    /// nearest first; for references, every file that refers to the name,
    /// surest first (`Index::file_references`). Each result is shown
    /// through the line that makes it an answer, with its evidence.
    fn graph_answer(
        &self,
        request: &SearchRequest,
        prepared: &PreparedQuery,
    ) -> Result<(Vec<SearchResult>, Vec<Modality>)> {
        let text = &request.text;
        let graph = self.graph()?;
        let mut results = Vec::new();
        if prepared.intent == Intent::ImpactAnalysis || GraphRetriever::asks_impact(text) {
            let targets = graph.impact_targets(text);
            for d in graph.dependents(&targets, request.ranking.graph.impact_depth) {
                if results.len() >= request.limit {
                    break;
                }
                let score = 1.0 / (d.depth as f32 + results.len() as f32 / 1000.0);
                let kind = match d.kind {
                    EdgeKind::Imports => "import",
                    EdgeKind::Calls => "call",
                    _ => "reference",
                };
                if let Some(mut r) = self.result_at_line(d.file, d.line, score, results.len()) {
                    r.evidence =
                        Some(Evidence { kind, confidence: "resolved", depth: Some(d.depth) });
                    results.push(r);
                }
            }
            return Ok((results, vec![Modality::GRAPH]));
        }
        let (_, refs) = self.file_references(text)?;
        for r in refs {
            if results.len() >= request.limit {
                break;
            }
            let score = 1.0 / (1.0 + results.len() as f32);
            if let Some(mut res) = self.result_at_line(r.file, r.line, score, results.len()) {
                res.evidence = Some(Evidence {
                    kind: r.kind.as_str(),
                    confidence: r.confidence.as_str(),
                    depth: None,
                });
                results.push(res);
            }
        }
        Ok((results, vec![Modality::GRAPH, Modality::TEXT]))
    }

    /// A result showing one line of a file, through the fragment holding it.
    pub(crate) fn result_at_line(
        &self,
        file: FileId,
        line: u32,
        score: f32,
        rank: usize,
    ) -> Option<SearchResult> {
        let chunk =
            self.fragments.at_line(file, line).or_else(|| self.fragments.of_file(file).next())?;
        let frag = self.fragments.try_get(chunk)?;
        let lines = if frag.lines.contains(line) { LineSpan::line(line) } else { frag.lines };
        self.result(chunk, file, lines, score, BTreeMap::from([(Modality::GRAPH, rank as u32)]))
    }

    /// A query that is one bare name (`camelize`, `TryReadyError`,
    /// `Rack::Builder`), or a definition question about one name ("fn
    /// spawn", "where is session defined"), is answered by the files
    /// defining exactly that name first, each shown through its definition,
    /// whatever the route found; the other results follow in their order.
    fn definitions_first(
        &self,
        text: &str,
        name: &str,
        results: &mut Vec<SearchResult>,
        limit: usize,
    ) -> Result<()> {
        let structural = self.structural()?;
        let table = structural.table();
        let mut first: Vec<SearchResult> = Vec::new();
        for (id, score) in structural.definitions(text.trim(), limit.max(1)) {
            let Some(sym) = table.get(id) else { continue };
            let Some(entry) = self.manifest.files.get(sym.file.index()) else { continue };
            if sym.name != name
                || sym.kind == maguyva_ast::SymbolKind::Reexport
                || first.iter().any(|r| r.path == entry.path)
            {
                continue;
            }
            let Some(hit) = structural.hit_for(id, score) else { continue };
            let rank = first.len() as u32;
            if let Some(r) = self.result(
                hit.chunk,
                hit.file,
                hit.lines,
                hit.score,
                BTreeMap::from([(Modality::STRUCTURAL, rank)]),
            ) {
                first.push(SearchResult {
                    definition_line: Some(sym.name_line),
                    admitted: Some(Admission::whole("name", name)),
                    ..r
                });
            }
        }
        let mut first = primary_definitions_first(first, results);
        // Then the files where the name occurs whole (a constant written
        // `UPPER_SNAKE` is a literal): those the route found, in its
        // order, then those it missed, most occurrences first; then the
        // rest (files matching only parts of the name).
        results.retain(|r| !first.iter().any(|f| f.path == r.path));
        let (mut whole, parts): (Vec<SearchResult>, Vec<SearchResult>) = std::mem::take(results)
            .into_iter()
            .partition(|r| self.file_has_any_word(&r.path, &[name]));
        if whole.len() + first.len() < limit {
            let mut missed: Vec<(usize, FileId)> = self
                .text()?
                .files_possibly_containing(name)
                .unwrap_or_default()
                .into_iter()
                .filter_map(|f| {
                    let path = &self.manifest.files.get(f.index())?.path;
                    if first.iter().chain(&whole).any(|r| &r.path == path) {
                        return None;
                    }
                    let n = word_count(self.content.text(f), name);
                    (n > 0).then_some((n, f))
                })
                .collect();
            missed.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            for (_, f) in missed.into_iter().take(limit - whole.len() - first.len()) {
                let text = self.content.text(f);
                let line = first_word_line(text, name);
                if let Some(r) = self.result_at_line(f, line, 0.0, whole.len()) {
                    whole.push(r);
                }
            }
        }
        for r in &mut whole {
            // A fragment chosen for its meaning may not hold the name; the
            // answer is where the name is.
            if !has_whole_word(&r.snippet, name)
                && let Some(file) = self.manifest.file_id(&r.path)
            {
                let line = first_word_line(self.content.text(file), name);
                if let Some(at) = self.result_at_line(file, line, r.score, 0) {
                    (r.start_line, r.end_line, r.snippet) =
                        (at.start_line, at.end_line, at.snippet);
                }
            }
            r.admitted = Some(Admission::whole("name", name));
        }
        first.append(&mut whole);
        first.extend(parts);
        first.truncate(limit);
        *results = first;
        Ok(())
    }

    /// Whether the file at `path` holds one of `words` as a whole word.
    fn file_has_any_word(&self, path: &str, words: &[&str]) -> bool {
        let Some(file) = self.manifest.file_id(path) else { return false };
        let text = self.content.text(file);
        words.iter().any(|w| has_whole_word(text, w))
    }

    /// Runs a plan's modalities and orders their lists into results; with
    /// `admission`, only the results the query's words admit.
    fn answer(
        &self,
        request: &SearchRequest,
        prepared: &PreparedQuery,
        plan: &Plan,
        admission: bool,
        timings_ms: &mut BTreeMap<String, f64>,
    ) -> Result<Vec<SearchResult>> {
        let params = &request.ranking.admission;
        // The query's words are looked up while the modalities run.
        let (runs, evidence) = rayon::join(
            || {
                // A literal or regex answered alone gives each file's best
                // fragment first, so `limit` hits are `limit` files; asking
                // for no more lets a literal stop at its first files.
                let direct_match = plan.weights.active() == [Modality::TEXT]
                    && prepared.query.mode() != MatchMode::Keyword;
                let fetch = if direct_match { request.limit } else { Self::fetch_size(request) };
                self.retrieve(&prepared.query, &plan.weights.active(), &request.ranking, fetch)
            },
            || -> Result<f64> {
                if !admission || prepared.evidence.get().is_some() {
                    return Ok(0.0);
                }
                let t = Instant::now();
                let e = QueryEvidence::of(
                    prepared.query.text(),
                    self.text()?,
                    &self.fragments,
                    params,
                )?;
                // Set once: a fallback plan's second answer reads the same.
                let _ = prepared.evidence.set(e);
                Ok(crate::millis(t.elapsed()))
            },
        );
        let (runs, admission_ms) = (runs?, evidence?);
        if admission {
            timings_ms.insert("admission".to_string(), admission_ms);
        }
        let evidence =
            if admission { prepared.evidence.get().and_then(Option::as_ref) } else { None };
        let gate = Gate { evidence, floor: if admission { params.floor } else { 0.0 } };
        let gate = &gate;
        let mut lists = Vec::with_capacity(runs.len());
        for (m, hits, ms) in runs {
            timings_ms.insert(m.as_str().to_string(), ms);
            lists.push((m, hits));
        }
        let t = Instant::now();
        Ok(match self.order(&request.ranking, prepared, plan, &lists) {
            Ordering::Direct(m, hits) => self.one_per_file(&hits, m, request.limit, gate),
            Ordering::Fused(fused) => {
                timings_ms.insert("fusion".to_string(), crate::millis(t.elapsed()));
                self.fused_results(
                    &fused,
                    &lists,
                    &plan.weights,
                    request.limit,
                    request.explain,
                    gate,
                )
            }
        })
    }

    pub(crate) fn result(
        &self,
        chunk: ChunkId,
        file: FileId,
        lines: LineSpan,
        score: f32,
        ranks: BTreeMap<Modality, u32>,
    ) -> Option<SearchResult> {
        let frag = self.fragments.try_get(chunk)?;
        let entry = self.manifest.files.get(file.index())?;
        let snippet = lines_of(self.content.fragment_text(frag), frag, lines).to_string();
        // The snippet leaves out the span's trailing empty lines; so do
        // the line numbers, which must name exactly the lines shown.
        let shown = snippet.split('\n').count() as u32;
        let end = lines.end().min(lines.start() + shown - 1);
        Some(SearchResult {
            ranks,
            ..SearchResult::lines(entry.path.clone(), lines.start(), end, score, snippet)
        })
    }

    fn fused_results(
        &self,
        fused: &[FusedHit],
        lists: &[(Modality, Vec<Hit>)],
        weights: &ModalityWeights,
        limit: usize,
        explain: bool,
        gate: &Gate<'_>,
    ) -> Vec<SearchResult> {
        if !gate.answerable(fused.iter().map(|h| h.file)) {
            return Vec::new();
        }
        let best = fused.first().map_or(0.0, |h| h.score);
        fused
            .iter()
            .take_while(|h| h.score >= gate.floor * best)
            .filter_map(|h| {
                let admitted = gate.admit(h.file)?;
                let ranks = h.contributions.iter().map(|c| (c.modality, c.rank.0)).collect();
                let mut r = self.result(h.chunk, h.file, h.lines, h.score, ranks)?;
                let firsts = lists
                    .iter()
                    .flat_map(|(_, hits)| hits.iter().filter(|x| x.file == h.file).take(1));
                self.show_text_not_blanks(&mut r, h.file, firsts);
                r.admitted = admitted;
                if explain {
                    r.explain = Some(Explanation {
                        contributions: h
                            .contributions
                            .iter()
                            .map(|c| ContributionReport {
                                modality: c.modality,
                                rank: c.rank.0,
                                weight: weights.get(c.modality),
                                contribution: c.value,
                            })
                            .collect(),
                        boost: h.boost,
                        vendor_factor: h.vendor_factor,
                        prior: h.prior,
                    });
                }
                Some(r)
            })
            .take(limit)
            .collect()
    }

    fn one_per_file(
        &self,
        hits: &[Hit],
        modality: Modality,
        limit: usize,
        gate: &Gate<'_>,
    ) -> Vec<SearchResult> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        if !gate.answerable(hits.iter().map(|h| h.file)) {
            return Vec::new();
        }
        let best = hits.iter().map(|h| h.score).fold(0.0, f32::max);
        for hit in hits {
            if out.len() >= limit || hit.score < gate.floor * best {
                break;
            }
            if !seen.insert(hit.file) {
                continue;
            }
            let rank = seen.len() as u32 - 1;
            let Some(admitted) = gate.admit(hit.file) else { continue };
            if let Some(mut r) = self.result(
                hit.chunk,
                hit.file,
                hit.lines,
                hit.score,
                BTreeMap::from([(modality, rank)]),
            ) {
                r.admitted = admitted;
                let others = hits.iter().filter(|x| x.file == hit.file);
                self.show_text_not_blanks(&mut r, hit.file, others);
                out.push(r);
            }
        }
        out
    }

    /// A fragment of blank lines (the gap between two definitions) can be
    /// a file's best hit in meaning, through its file's context; it shows
    /// nothing, so a result showing only blanks is shown through the first
    /// of `hits` (the file's other hits) with text. The file's text is
    /// read already: its result is being made.
    fn show_text_not_blanks<'h>(
        &self,
        r: &mut SearchResult,
        file: FileId,
        hits: impl Iterator<Item = &'h Hit>,
    ) {
        if !r.snippet.trim().is_empty() {
            return;
        }
        for h in hits {
            if let Some(other) = self.result(h.chunk, file, h.lines, 0.0, BTreeMap::new())
                && !other.snippet.trim().is_empty()
            {
                (r.start_line, r.end_line, r.snippet) =
                    (other.start_line, other.end_line, other.snippet);
                return;
            }
        }
    }
}

/// What a result must show to be returned: evidence from the query's words
/// (when admission is on) and a score within the floor of the best.
struct Gate<'a> {
    evidence: Option<&'a QueryEvidence>,
    floor: f32,
}

impl Gate<'_> {
    /// Whether the query's words are held well enough by one of
    /// `candidates` for it to be answered (always without admission).
    fn answerable(&self, candidates: impl IntoIterator<Item = FileId>) -> bool {
        self.evidence.is_none_or(|e| e.answerable(candidates))
    }

    /// None when `file` is not admitted; Some(None) when admitted without
    /// word evidence (no admission asked, or a query of function words).
    #[allow(clippy::option_option)]
    fn admit(&self, file: FileId) -> Option<Option<Admission>> {
        match self.evidence {
            Some(e) => e.admit(file).map(Some),
            None => Some(None),
        }
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
    fn whole_words_only() {
        assert!(has_whole_word("see legacy_hook.", "legacy_hook"));
        assert!(has_whole_word("{\"legacy_hook\": 3}", "legacy_hook"));
        assert!(!has_whole_word("my_legacy_hook2", "legacy_hook"));
        assert!(!has_whole_word("legacy_hooks", "legacy_hook"));
        assert!(has_whole_word("legacy_hooks legacy_hook", "legacy_hook"));
        assert!(!has_whole_word("anything", ""));
        assert!(has_whole_word("é legacy_hook é", "legacy_hook"));
        assert_eq!(word_count("a MAX_SIZE b MAX_SIZES MAX_SIZE", "MAX_SIZE"), 2);
        assert_eq!(first_word_line("x\ny MAX_SIZE\nMAX_SIZE", "MAX_SIZE"), 2);
        assert_eq!(first_word_line("nothing", "MAX_SIZE"), 1);
    }

    #[test]
    fn quoted_text_becomes_a_literal() {
        let q = SearchRequest::new("\"ECONNREFUSED\"").query().unwrap();
        assert_eq!((q.text(), q.mode()), ("ECONNREFUSED", MatchMode::Literal));
        let q = SearchRequest::new("say \"hi\" there").query().unwrap();
        assert_eq!(q.mode(), MatchMode::Keyword);
        // An empty quoted string would match every file.
        assert!(SearchRequest::new("\"\"").query().is_err());
        assert!(SearchRequest::new(" \"  \" ").query().is_err());
    }

    fn result(path: &str) -> SearchResult {
        SearchResult::lines(path, 1, 1, 0.0, "")
    }

    #[test]
    fn primary_definitions_come_first() {
        // Structural order: a test double, a copy, the code.
        let defining = vec![result("tests/helpers.py"), result("legacy/v1.py"), result("app.py")];
        // The route (reranked) put the code above the copy.
        let route = vec![result("app.py"), result("readme.md"), result("legacy/v1.py")];
        let paths: Vec<String> =
            primary_definitions_first(defining, &route).into_iter().map(|r| r.path).collect();
        assert_eq!(paths, ["app.py", "legacy/v1.py", "tests/helpers.py"]);
        // Files the route did not rank keep the structural order, after it.
        let defining = vec![result("b.py"), result("a.py"), result("c.py")];
        let paths: Vec<String> = primary_definitions_first(defining, &[result("c.py")])
            .into_iter()
            .map(|r| r.path)
            .collect();
        assert_eq!(paths, ["c.py", "b.py", "a.py"]);
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
