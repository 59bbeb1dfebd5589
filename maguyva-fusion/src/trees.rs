//! Gradient-boosted regression trees on LambdaRank gradients (LambdaMART)
//! for the reranker: the trees correct the linear score of
//! [`crate::RerankModel`] where features interact (a test file that the
//! meaning modality ranks first, a large file a short question names).
//! Fitting is deterministic: no sampling, features cut at fixed quantiles.

use crate::rerank::{FEATURE_COUNT, Features, QuestionKind};
use serde::{Deserialize, Serialize};

/// The number a tree reads for the kind of question, after the features.
pub(crate) const KIND_FEATURE: usize = FEATURE_COUNT;

/// The numbers a tree reads per candidate.
pub(crate) const INPUTS: usize = FEATURE_COUNT + 1;

/// Marks a leaf in [`Tree::feature`].
const LEAF: u8 = u8::MAX;

/// One regression tree in arrays: node `i` splits on `feature[i]` at
/// `threshold[i]` (at or below goes to `left[i]`, above to `right[i]`), or
/// is a leaf worth `value[i]` when `feature[i]` is 255. Node 0 is the root.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tree {
    /// The feature each node splits on (the kind of question is number
    /// `FEATURE_COUNT`), 255 on leaves.
    pub feature: Vec<u8>,
    /// The split points.
    pub threshold: Vec<f32>,
    /// The node taken at or below the split point.
    pub left: Vec<u16>,
    /// The node taken above it.
    pub right: Vec<u16>,
    /// The leaves' values (0 on splits).
    pub value: Vec<f32>,
}

/// What a tree reads of one candidate: its features, then the kind of
/// question.
pub(crate) fn inputs(x: &Features, kind: QuestionKind) -> [f32; INPUTS] {
    let mut r = [0.0f32; INPUTS];
    r[..FEATURE_COUNT].copy_from_slice(x);
    r[KIND_FEATURE] = kind.index() as f32;
    r
}

impl Tree {
    /// The tree's value for one candidate.
    pub fn eval(&self, x: &Features, kind: QuestionKind) -> f32 {
        self.value_of(&inputs(x, kind))
    }

    /// The tree's value for a candidate's [`inputs`]; 0 for a malformed
    /// tree (which [`Tree::check`] refuses before use).
    pub(crate) fn value_of(&self, r: &[f32; INPUTS]) -> f32 {
        let mut i = 0usize;
        // A well-formed tree reaches a leaf within its node count.
        for _ in 0..=self.feature.len() {
            let Some(&f) = self.feature.get(i) else { return 0.0 };
            if f == LEAF {
                return self.value.get(i).copied().unwrap_or(0.0);
            }
            let t = self.threshold.get(i).copied().unwrap_or(0.0);
            let x = r.get(f as usize).copied().unwrap_or(0.0);
            let next = if x <= t { &self.left } else { &self.right };
            i = next.get(i).copied().unwrap_or(u16::MAX) as usize;
        }
        0.0
    }

    /// Whether the arrays agree in length, every split names a feature,
    /// every child comes after its parent (so a walk ends), and every
    /// number is finite.
    pub fn check(&self) -> Result<(), String> {
        let n = self.feature.len();
        if [self.threshold.len(), self.left.len(), self.right.len(), self.value.len()]
            .iter()
            .any(|&l| l != n)
            || n == 0
        {
            return Err("a tree's arrays differ in length or are empty".into());
        }
        for i in 0..n {
            if self.feature[i] == LEAF {
                continue;
            }
            if self.feature[i] as usize > KIND_FEATURE {
                return Err(format!("a tree splits on feature {}", self.feature[i]));
            }
            let (l, r) = (self.left[i] as usize, self.right[i] as usize);
            if l <= i || r <= i || l >= n || r >= n {
                return Err("a tree's node points backwards or outside it".into());
            }
        }
        if self.threshold.iter().chain(&self.value).any(|v| !v.is_finite()) {
            return Err("a tree holds a number that is not finite".into());
        }
        Ok(())
    }
}

/// How trees are grown.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TreeParams {
    /// Trees grown.
    pub trees: usize,
    /// Splits from the root to a leaf at most.
    pub max_depth: usize,
    /// The factor on each tree's leaves.
    pub rate: f32,
    /// Candidates a leaf holds at least.
    pub min_rows: usize,
    /// L2 on leaf values.
    pub leaf_l2: f32,
    /// Split points tried per feature.
    pub bins: usize,
    /// Ranks that count (NDCG@cutoff).
    pub cutoff: usize,
}

impl Default for TreeParams {
    fn default() -> Self {
        TreeParams {
            trees: 0,
            max_depth: 4,
            rate: 0.05,
            min_rows: 50,
            leaf_l2: 1.0,
            bins: 32,
            cutoff: 10,
        }
    }
}

/// The training rows of the trees: every candidate of every question.
pub(crate) struct TreeData<'a> {
    /// Per question: its kind, candidates, labels.
    pub questions: Vec<(QuestionKind, &'a [Features], &'a [bool])>,
    /// The score each candidate starts from (the linear model's).
    pub start: Vec<Vec<f32>>,
}

/// Fits `params.trees` trees to LambdaRank gradients from the start scores.
pub(crate) fn fit_trees(data: &TreeData<'_>, params: &TreeParams) -> Vec<Tree> {
    // Rows in question order; each row's inputs cut into bins.
    let mut rows: Vec<[f32; INPUTS]> = Vec::new();
    let mut ranges = Vec::new();
    for (kind, cands, _) in &data.questions {
        let start = rows.len();
        rows.extend(cands.iter().map(|x| inputs(x, *kind)));
        ranges.push(start..rows.len());
    }
    if rows.is_empty() {
        return Vec::new();
    }
    let cuts: Vec<Vec<f32>> = (0..INPUTS).map(|f| quantile_cuts(&rows, f, params.bins)).collect();
    let binned: Vec<[u8; INPUTS]> = rows
        .iter()
        .map(|r| {
            let mut b = [0u8; INPUTS];
            for f in 0..INPUTS {
                b[f] = cuts[f].partition_point(|&c| c < r[f]) as u8;
            }
            b
        })
        .collect();
    let mut scores: Vec<f32> = data.start.iter().flatten().copied().collect();
    let mut trees = Vec::with_capacity(params.trees);
    for _ in 0..params.trees {
        let (grad, hess) = lambdas(data, &ranges, &scores, params.cutoff);
        let all: Vec<u32> = (0..rows.len() as u32).collect();
        let mut tree = Tree {
            feature: Vec::new(),
            threshold: Vec::new(),
            left: Vec::new(),
            right: Vec::new(),
            value: Vec::new(),
        };
        let grower = Grower { binned: &binned, cuts: &cuts, grad: &grad, hess: &hess, params };
        grower.grow(&mut tree, all, 0);
        for (s, r) in scores.iter_mut().zip(&rows) {
            *s += tree.value_of(r);
        }
        trees.push(tree);
    }
    trees
}

/// Up to `bins` split points of input `f`: distinct values at even
/// quantiles of the rows.
fn quantile_cuts(rows: &[[f32; INPUTS]], f: usize, bins: usize) -> Vec<f32> {
    let mut v: Vec<f32> = rows.iter().map(|r| r[f]).collect();
    v.sort_by(f32::total_cmp);
    let mut cuts: Vec<f32> =
        (1..bins).map(|i| v[(i * v.len() / bins).min(v.len() - 1)]).collect::<Vec<_>>();
    cuts.dedup();
    // The largest value splits nothing off.
    if cuts.last() == v.last() {
        cuts.pop();
    }
    cuts
}

/// LambdaRank gradients and second derivatives of every row under the
/// current scores.
fn lambdas(
    data: &TreeData<'_>,
    ranges: &[std::ops::Range<usize>],
    scores: &[f32],
    cutoff: usize,
) -> (Vec<f32>, Vec<f32>) {
    let mut grad = vec![0.0f32; scores.len()];
    let mut hess = vec![0.0f32; scores.len()];
    for ((_, _, relevant), range) in data.questions.iter().zip(ranges) {
        let s = &scores[range.clone()];
        let n_rel = relevant.iter().filter(|&&r| r).count();
        if n_rel == 0 || n_rel == relevant.len() {
            continue;
        }
        let pos = crate::rerank::positions(s);
        let discount = |p: usize| if p < cutoff { 1.0 / ((p + 2) as f32).log2() } else { 0.0 };
        let ideal = crate::rerank::ideal_dcg(n_rel);
        for i in (0..s.len()).filter(|&i| relevant[i]) {
            for j in (0..s.len()).filter(|&j| !relevant[j]) {
                let delta = (discount(pos[i]) - discount(pos[j])).abs() / ideal;
                if delta == 0.0 {
                    continue;
                }
                let rho = 1.0 / (1.0 + (s[i] - s[j]).exp());
                let (gi, gj) = (range.start + i, range.start + j);
                grad[gi] -= rho * delta;
                grad[gj] += rho * delta;
                let h = (rho * (1.0 - rho) * delta).max(1e-6);
                hess[gi] += h;
                hess[gj] += h;
            }
        }
    }
    (grad, hess)
}

struct Grower<'a> {
    binned: &'a [[u8; INPUTS]],
    cuts: &'a [Vec<f32>],
    grad: &'a [f32],
    hess: &'a [f32],
    params: &'a TreeParams,
}

impl Grower<'_> {
    /// Adds the node for `rows` (and its subtree) to `tree`; returns its
    /// index.
    fn grow(&self, tree: &mut Tree, rows: Vec<u32>, depth: usize) -> u16 {
        let at = tree.feature.len();
        let (g, h) = rows.iter().fold((0.0f64, 0.0f64), |(g, h), &r| {
            (g + self.grad[r as usize] as f64, h + self.hess[r as usize] as f64)
        });
        let l2 = self.params.leaf_l2 as f64;
        let leaf = (-g / (h + l2)) as f32 * self.params.rate;
        tree.feature.push(LEAF);
        tree.threshold.push(0.0);
        tree.left.push(0);
        tree.right.push(0);
        tree.value.push(leaf);
        if depth >= self.params.max_depth || rows.len() < 2 * self.params.min_rows {
            return at as u16;
        }
        let Some((f, bin)) = self.best_split(&rows, g, h) else { return at as u16 };
        let (left, right): (Vec<u32>, Vec<u32>) =
            rows.into_iter().partition(|&r| self.binned[r as usize][f] as usize <= bin);
        let l = self.grow(tree, left, depth + 1);
        let r = self.grow(tree, right, depth + 1);
        tree.feature[at] = f as u8;
        tree.threshold[at] = self.cuts[f][bin];
        tree.left[at] = l;
        tree.right[at] = r;
        tree.value[at] = 0.0;
        at as u16
    }

    /// The split of most gain: (input, last bin on the left).
    fn best_split(&self, rows: &[u32], g: f64, h: f64) -> Option<(usize, usize)> {
        let l2 = self.params.leaf_l2 as f64;
        let parent = g * g / (h + l2);
        let mut best: Option<(f64, usize, usize)> = None;
        for f in 0..INPUTS {
            let n_bins = self.cuts[f].len() + 1;
            if n_bins < 2 {
                continue;
            }
            let mut hist = vec![(0.0f64, 0.0f64, 0usize); n_bins];
            for &r in rows {
                let b = self.binned[r as usize][f] as usize;
                let e = &mut hist[b];
                e.0 += self.grad[r as usize] as f64;
                e.1 += self.hess[r as usize] as f64;
                e.2 += 1;
            }
            let (mut gl, mut hl, mut nl) = (0.0, 0.0, 0usize);
            for (b, e) in hist.iter().enumerate().take(n_bins - 1) {
                gl += e.0;
                hl += e.1;
                nl += e.2;
                let nr = rows.len() - nl;
                if nl < self.params.min_rows || nr < self.params.min_rows {
                    continue;
                }
                let (gr, hr) = (g - gl, h - hl);
                let gain = gl * gl / (hl + l2) + gr * gr / (hr + l2) - parent;
                if gain > 1e-9 && best.is_none_or(|(bg, _, _)| gain > bg) {
                    best = Some((gain, f, b));
                }
            }
        }
        best.map(|(_, f, b)| (f, b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rerank::{FitParams, RerankModel, TrainingQuestion};

    fn features(a: f32, b: f32) -> Features {
        let mut x = [0.0; FEATURE_COUNT];
        x[3] = a;
        x[7] = b;
        x
    }

    #[test]
    fn a_hand_made_tree_walks_to_its_leaves() {
        // Root splits feature 3 at 0.5; its right child splits the kind.
        let t = Tree {
            feature: vec![3, LEAF, KIND_FEATURE as u8, LEAF, LEAF],
            threshold: vec![0.5, 0.0, 1.0, 0.0, 0.0],
            left: vec![1, 0, 3, 0, 0],
            right: vec![2, 0, 4, 0, 0],
            value: vec![0.0, -1.0, 0.0, 2.0, 3.0],
        };
        assert!(t.check().is_ok());
        assert_eq!(t.eval(&features(0.2, 0.0), QuestionKind::Other), -1.0);
        assert_eq!(t.eval(&features(0.9, 0.0), QuestionKind::BareName), 2.0);
        assert_eq!(t.eval(&features(0.9, 0.0), QuestionKind::Other), 3.0);
    }

    #[test]
    fn malformed_trees_are_refused() {
        let ok = Tree {
            feature: vec![3, LEAF, LEAF],
            threshold: vec![0.5, 0.0, 0.0],
            left: vec![1, 0, 0],
            right: vec![2, 0, 0],
            value: vec![0.0, 1.0, 2.0],
        };
        assert!(ok.check().is_ok());
        let backwards = Tree { left: vec![0, 0, 0], ..ok.clone() };
        assert!(backwards.check().is_err());
        let short = Tree { value: vec![0.0], ..ok.clone() };
        assert!(short.check().is_err());
        let unknown = Tree { feature: vec![200, LEAF, LEAF], ..ok.clone() };
        assert!(unknown.check().is_err());
        let nan = Tree { threshold: vec![f32::NAN, 0.0, 0.0], ..ok };
        assert!(nan.check().is_err());
    }

    #[test]
    fn trees_learn_an_interaction_a_linear_score_cannot() {
        // Relevant: exactly one of the two features high (an exclusive
        // or), which no weighted sum of them can rank first.
        let mut questions = Vec::new();
        for q in 0..60 {
            let shift = (q % 5) as f32 * 0.01;
            let candidates = vec![
                features(0.9 + shift, 0.9),
                features(0.9, 0.1 + shift),
                features(0.1 + shift, 0.1),
                features(0.1, 0.9 - shift),
            ];
            let mut c = candidates.clone();
            for x in &mut c {
                x[crate::rerank::FUSED_FEATURE] = 0.0;
            }
            questions.push(TrainingQuestion {
                kind: QuestionKind::Other,
                candidates: c,
                relevant: vec![false, true, false, true],
            });
        }
        let linear = RerankModel::fit(&questions, &FitParams::default());
        let params = FitParams {
            trees: TreeParams { trees: 40, min_rows: 5, rate: 0.3, ..TreeParams::default() },
            ..FitParams::default()
        };
        let boosted = RerankModel::fit(&questions, &params);
        assert!(boosted.check().is_ok());
        assert!(!boosted.trees.is_empty());
        let top_two_right = |m: &RerankModel| {
            questions
                .iter()
                .filter(|q| {
                    let order = m.order(q.kind, &q.candidates);
                    order[..2].iter().all(|&i| q.relevant[i])
                })
                .count()
        };
        assert_eq!(top_two_right(&boosted), questions.len());
        assert!(top_two_right(&linear) < questions.len());
        // Deterministic: the same data gives the same trees.
        assert_eq!(RerankModel::fit(&questions, &params), boosted);
    }
}
