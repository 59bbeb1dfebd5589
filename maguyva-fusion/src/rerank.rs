//! A learned reranker over the fused candidates (doc/ranking.md,
//! "Reranking"): each of the first candidates of a fused ranking is described
//! by a fixed set of features (its ranks and scores in each modality, what
//! its path and definitions say about the query, its kind and size), and
//! reordered by a linear score with one weight vector per kind of question.
//!
//! The model is data: the default ranking ships one, and `maguyva eval
//! --tune` fits it ([`RerankModel::fit`]) on training benchmarks by a
//! pairwise logistic loss, regularised toward the fused order itself, so
//! that what is learned is a correction of RRF and never more than the data
//! supports.

use crate::trees::{Tree, TreeData, TreeParams, fit_trees};
use serde::{Deserialize, Serialize};

/// The features of one candidate, in the order of [`FEATURE_NAMES`].
pub type Features = [f32; FEATURE_COUNT];

/// How many features describe a candidate.
pub const FEATURE_COUNT: usize = 30;

/// The features' names, as the model file lists them.
pub const FEATURE_NAMES: [&str; FEATURE_COUNT] = [
    "fused_score",
    "fused_reciprocal_rank",
    "semantic_reciprocal_rank",
    "semantic_score",
    "semantic_second",
    "text_reciprocal_rank",
    "text_score",
    "text_second",
    "structural_reciprocal_rank",
    "structural_score",
    "graph_reciprocal_rank",
    "graph_score",
    "modalities_agreeing",
    "path_word_share",
    "folder_word_share",
    "defines_named_symbol",
    "named_after_symbol",
    "test_file",
    "vendor_file",
    "doc_file",
    "log_lines",
    "path_depth",
    "centrality",
    "top_level",
    "word_coverage",
    "rare_word_coverage",
    "name_precision",
    "data_file",
    "defines_named_type",
    "main_language",
];

/// The index of the feature every model starts from (and is held to): the
/// fused score, so that the zero correction is RRF's own order.
pub const FUSED_FEATURE: usize = 0;

/// The kinds of question with a weight vector of their own.
pub const QUESTION_KINDS: usize = 3;

/// Which weight vector a question uses: a bare name, another definition
/// question, or any other question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuestionKind {
    /// A single identifier (`Router`).
    BareName,
    /// "where is Router defined", "fn spawn".
    Definition,
    /// Everything else ("how are routes registered").
    Other,
}

impl QuestionKind {
    pub(crate) fn index(self) -> usize {
        match self {
            QuestionKind::BareName => 0,
            QuestionKind::Definition => 1,
            QuestionKind::Other => 2,
        }
    }
}

/// A linear reranker: a weight per feature and kind of question; the first
/// `depth` candidates of a fused ranking are reordered by it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RerankModel {
    /// Candidates reordered (the rest keep their fused order after them).
    pub depth: usize,
    /// The feature names, which must be [`FEATURE_NAMES`] in order.
    pub features: Vec<String>,
    /// Per kind of question (bare name, definition, other), one weight per
    /// feature.
    pub weights: Vec<Vec<f32>>,
    /// Regression trees whose values add to the linear score.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trees: Vec<Tree>,
}

/// Why a model file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelMismatch(pub String);

impl std::fmt::Display for ModelMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ModelMismatch {}

/// One training question: its candidates' features and whether each is
/// labelled relevant.
#[derive(Debug, Clone)]
pub struct TrainingQuestion {
    /// The kind of question.
    pub kind: QuestionKind,
    /// The candidates, in fused order.
    pub candidates: Vec<Features>,
    /// Whether each candidate is relevant.
    pub relevant: Vec<bool>,
}

/// How a model is fitted.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FitParams {
    /// Candidates reordered.
    pub depth: usize,
    /// The pull toward the fused order (L2 on the difference).
    pub l2: f32,
    /// Full-batch gradient steps.
    pub steps: usize,
    /// The step size.
    pub rate: f32,
    /// Weigh each pair by what swapping it changes of the question's
    /// NDCG under the current weights (LambdaRank), so that the top of the
    /// ranking counts most.
    pub lambda: bool,
    /// The trees grown on the linear score (none when `trees.trees` is 0).
    pub trees: TreeParams,
}

impl Default for FitParams {
    fn default() -> Self {
        FitParams {
            depth: 30,
            l2: 0.0001,
            steps: 300,
            rate: 0.5,
            lambda: false,
            trees: TreeParams::default(),
        }
    }
}

impl RerankModel {
    /// The model that keeps the fused order: weight 1 on the fused score.
    pub fn identity(depth: usize) -> RerankModel {
        let mut w = vec![0.0; FEATURE_COUNT];
        w[FUSED_FEATURE] = 1.0;
        RerankModel {
            depth,
            features: FEATURE_NAMES.iter().map(|s| s.to_string()).collect(),
            weights: vec![w; QUESTION_KINDS],
            trees: Vec::new(),
        }
    }

    /// Checks that the model names the features this build computes.
    pub fn check(&self) -> Result<(), ModelMismatch> {
        if self.features.iter().map(String::as_str).ne(FEATURE_NAMES) {
            return Err(ModelMismatch(format!(
                "the reranker names features {:?}; this build computes {:?}",
                self.features, FEATURE_NAMES
            )));
        }
        if self.weights.len() != QUESTION_KINDS
            || self.weights.iter().any(|w| w.len() != FEATURE_COUNT)
        {
            return Err(ModelMismatch(format!(
                "the reranker needs {QUESTION_KINDS} weight vectors of {FEATURE_COUNT} numbers"
            )));
        }
        if self.weights.iter().flatten().any(|w| !w.is_finite()) {
            return Err(ModelMismatch("the reranker has a weight that is not a number".into()));
        }
        for t in &self.trees {
            t.check().map_err(ModelMismatch)?;
        }
        Ok(())
    }

    /// The score of one candidate of a question of `kind`.
    pub fn score(&self, kind: QuestionKind, x: &Features) -> f32 {
        let linear = match self.weights.get(kind.index()) {
            Some(w) => w.iter().zip(x).map(|(w, x)| w * x).sum(),
            None => x[FUSED_FEATURE],
        };
        if self.trees.is_empty() {
            return linear;
        }
        let inputs = crate::trees::inputs(x, kind);
        linear + self.trees.iter().map(|t| t.value_of(&inputs)).sum::<f32>()
    }

    /// The order of `candidates` (indices into it), best first: the first
    /// `depth` by score (ties keep the fused order), then the rest as given.
    pub fn order(&self, kind: QuestionKind, candidates: &[Features]) -> Vec<usize> {
        let depth = self.depth.min(candidates.len());
        let scores: Vec<f32> = candidates[..depth].iter().map(|x| self.score(kind, x)).collect();
        let mut head: Vec<usize> = (0..depth).collect();
        head.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
        head.extend(depth..candidates.len());
        head
    }

    /// Fits a model to `questions` by full-batch gradient descent on a
    /// pairwise logistic loss (each relevant candidate against each other
    /// candidate of its question, pairs weighted so that every question
    /// counts once), plus `l2` times the squared distance from the identity
    /// model. Deterministic: the same questions give the same model.
    pub fn fit(questions: &[TrainingQuestion], params: &FitParams) -> RerankModel {
        let mut model = RerankModel::identity(params.depth);
        for kind in [QuestionKind::BareName, QuestionKind::Definition, QuestionKind::Other] {
            let of_kind: Vec<&TrainingQuestion> =
                questions.iter().filter(|q| q.kind == kind).collect();
            let start = model.weights[kind.index()].clone();
            model.weights[kind.index()] = fit_vector(&of_kind, &start, params);
        }
        if params.trees.trees > 0 {
            let questions: Vec<(QuestionKind, &[Features], &[bool])> = questions
                .iter()
                .map(|q| {
                    let n = q.candidates.len().min(params.depth).min(q.relevant.len());
                    (q.kind, &q.candidates[..n], &q.relevant[..n])
                })
                .collect();
            let start = questions
                .iter()
                .map(|(kind, c, _)| c.iter().map(|x| model.score(*kind, x)).collect())
                .collect();
            model.trees = fit_trees(&TreeData { questions, start }, &params.trees);
        }
        model
    }
}

/// The pairs of one question that say something: (relevant, other)
/// candidate indices within `depth`, and the weight of each pair.
fn pairs(q: &TrainingQuestion, depth: usize) -> (Vec<(usize, usize)>, f32) {
    let n = q.candidates.len().min(depth);
    let mut pairs = Vec::new();
    for p in (0..n).filter(|&i| q.relevant[i]) {
        for o in (0..n).filter(|&i| !q.relevant[i]) {
            pairs.push((p, o));
        }
    }
    let w = if pairs.is_empty() { 0.0 } else { 1.0 / pairs.len() as f32 };
    (pairs, w)
}

fn fit_vector(questions: &[&TrainingQuestion], start: &[f32], params: &FitParams) -> Vec<f32> {
    type Paired<'a> = (&'a TrainingQuestion, Vec<(usize, usize)>, f32);
    let prepared: Vec<Paired<'_>> = questions
        .iter()
        .map(|q| {
            let (p, w) = pairs(q, params.depth);
            (*q, p, w)
        })
        .filter(|(_, p, _)| !p.is_empty())
        .collect();
    let mut w = start.to_vec();
    if prepared.is_empty() {
        return w;
    }
    let n = prepared.len() as f32;
    // Adam keeps one step size sensible for features of different scales.
    let (b1, b2, eps) = (0.9f32, 0.999f32, 1e-8f32);
    let mut m = vec![0.0f32; w.len()];
    let mut v = vec![0.0f32; w.len()];
    for step in 1..=params.steps {
        let mut grad = vec![0.0f32; w.len()];
        for (q, pairs, pw) in &prepared {
            let scores: Vec<f32> =
                q.candidates.iter().map(|x| w.iter().zip(x).map(|(a, b)| a * b).sum()).collect();
            let position = if params.lambda { positions(&scores) } else { Vec::new() };
            let ideal = ideal_dcg(q.relevant.iter().filter(|&&r| r).count());
            for &(p, o) in pairs {
                let pair_weight = if params.lambda {
                    let gain = |r: usize| 1.0 / ((r + 2) as f32).log2();
                    (gain(position[p]) - gain(position[o])).abs() / ideal
                } else {
                    *pw
                };
                // d/dw log(1 + exp(-(s_p - s_o))) = -sigmoid(s_o - s_p) (x_p - x_o)
                let g = -sigmoid(scores[o] - scores[p]) * pair_weight / n;
                for ((gi, xp), xo) in grad.iter_mut().zip(&q.candidates[p]).zip(&q.candidates[o]) {
                    *gi += g * (xp - xo);
                }
            }
        }
        for (i, gi) in grad.iter_mut().enumerate() {
            *gi += 2.0 * params.l2 * (w[i] - start[i]);
        }
        let t = step as i32;
        for i in 0..w.len() {
            m[i] = b1 * m[i] + (1.0 - b1) * grad[i];
            v[i] = b2 * v[i] + (1.0 - b2) * grad[i] * grad[i];
            let mh = m[i] / (1.0 - b1.powi(t));
            let vh = v[i] / (1.0 - b2.powi(t));
            w[i] -= params.rate * 0.1 * mh / (vh.sqrt() + eps);
        }
    }
    w
}

/// Each candidate's zero-based position when sorted by `scores`, best
/// first.
pub(crate) fn positions(scores: &[f32]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    let mut at = vec![0; scores.len()];
    for (pos, i) in order.into_iter().enumerate() {
        at[i] = pos;
    }
    at
}

/// The DCG of `relevant` labels all ranked first (at least one, so that it
/// can divide).
pub(crate) fn ideal_dcg(relevant: usize) -> f32 {
    (0..relevant.clamp(1, 10)).map(|i| 1.0 / ((i + 2) as f32).log2()).sum()
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn features(fused: f32, text: f32) -> Features {
        let mut x = [0.0; FEATURE_COUNT];
        x[FUSED_FEATURE] = fused;
        x[5] = text;
        x
    }

    #[test]
    fn identity_keeps_the_fused_order() {
        let m = RerankModel::identity(30);
        assert!(m.check().is_ok());
        let c = [features(1.0, 0.0), features(0.5, 1.0), features(0.2, 0.0)];
        assert_eq!(m.order(QuestionKind::Other, &c), vec![0, 1, 2]);
    }

    #[test]
    fn only_the_first_depth_move() {
        let mut m = RerankModel::identity(2);
        m.weights[2][5] = 10.0;
        let c = [features(1.0, 0.0), features(0.5, 1.0), features(0.2, 1.0)];
        assert_eq!(m.order(QuestionKind::Other, &c), vec![1, 0, 2]);
        // Another kind of question keeps its own weights.
        assert_eq!(m.order(QuestionKind::BareName, &c), vec![0, 1, 2]);
    }

    #[test]
    fn fitting_learns_a_feature_that_tells_relevant_files_apart() {
        // The relevant file is always second by fused score and first by
        // the text feature: the fit must learn to put it first.
        let q = |shift: f32| TrainingQuestion {
            kind: QuestionKind::Other,
            candidates: vec![
                features(1.0 - shift, 0.0),
                features(0.8 - shift, 1.0),
                features(0.3, 0.0),
            ],
            relevant: vec![false, true, false],
        };
        let questions: Vec<_> = (0..20).map(|i| q(i as f32 * 0.01)).collect();
        let m = RerankModel::fit(&questions, &FitParams::default());
        assert!(m.check().is_ok());
        for question in &questions {
            assert_eq!(m.order(QuestionKind::Other, &question.candidates)[0], 1);
        }
        // No question of the other kinds: their weights stay the identity's.
        assert_eq!(m.weights[0], RerankModel::identity(30).weights[0]);
    }

    #[test]
    fn a_model_naming_other_features_is_refused() {
        let mut m = RerankModel::identity(30);
        m.features[3] = "something_else".into();
        assert!(m.check().is_err());
        let mut m = RerankModel::identity(30);
        m.weights[1].pop();
        assert!(m.check().is_err());
        let mut m = RerankModel::identity(30);
        m.weights[1][0] = f32::NAN;
        assert!(m.check().is_err());
    }
}
