//! Weighted Reciprocal Rank Fusion (doc/intents.md, fusion).
//!
//! Fusion works on files: each modality's ranked fragments are reduced to
//! its ranked distinct files (a file's rank is that of its best fragment), so
//! that two modalities agreeing on a file add up even when they point at
//! different fragments of it. A file at zero-based rank `r` in the list of a
//! modality of weight `w` contributes `w / (k + r + 1)`, times the centrality
//! boost; contributions are summed; hits under vendor or build paths are
//! down-ranked; the file keeps the fragment of its largest contribution. A
//! per-file prior from the context (signals beyond the seed, off by default in
//! `NoContext`) multiplies the sum last.

use crate::weights::{ModalityWeights, VENDOR_FACTOR, centrality_boost};
use maguyva_core::{ChunkId, FileId, Hit, LineSpan, Modality, Rank};
use serde::Serialize;
use std::collections::HashMap;

/// What fusion needs to know about files beyond the ranked lists.
pub trait FusionContext {
    /// Centrality of a fragment's code (0 when unknown); see `centrality_boost`.
    fn centrality(&self, _file: FileId, _chunk: ChunkId) -> f32 {
        0.0
    }

    /// Whether the file is vendored, generated or build output.
    fn is_vendor(&self, _file: FileId) -> bool {
        false
    }

    /// A factor on the file's fused score from signals beyond the seed's
    /// recipe (see `signals`); 1 leaves it alone.
    fn prior(&self, _file: FileId) -> f32 {
        1.0
    }
}

/// A context with no centrality and no vendor paths.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoContext;

impl FusionContext for NoContext {}

/// Parameters of one fusion.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FusionParams {
    /// The RRF constant k.
    pub k: f32,
    /// Apply the centrality boost.
    pub boost: bool,
    /// Down-rank vendor and build paths.
    pub downrank_vendor: bool,
}

impl Default for FusionParams {
    fn default() -> Self {
        FusionParams { k: crate::weights::RRF_K_DEFAULT, boost: true, downrank_vendor: true }
    }
}

/// One modality's part in a fused hit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Contribution {
    /// The modality.
    pub modality: Modality,
    /// The file's zero-based rank among that modality's distinct files.
    pub rank: Rank,
    /// `w / (k + rank + 1) * boost`.
    pub value: f32,
}

/// A fused result: one file, its best fragment, and why it ranked there.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FusedHit {
    /// The fragment shown for the file.
    pub chunk: ChunkId,
    /// The file.
    pub file: FileId,
    /// The lines that matter in that fragment.
    pub lines: LineSpan,
    /// The fused score.
    pub score: f32,
    /// The centrality boost applied (1 when off).
    pub boost: f32,
    /// The vendor factor applied (1 when not vendor).
    pub vendor_factor: f32,
    /// The file prior applied (1 when no signal moved it).
    pub prior: f32,
    /// Per-modality contributions, in the seed's modality order.
    pub contributions: Vec<Contribution>,
}

struct Acc {
    best: (f32, Hit),
    boost: f32,
    contributions: Vec<Contribution>,
}

/// Fuses ranked lists. Lists of modalities with weight 0 have no influence;
/// the order of `lists` does not matter; the output has one hit per file,
/// best first, ties broken by file id.
pub fn fuse(
    lists: &[(Modality, Vec<Hit>)],
    weights: &ModalityWeights,
    params: &FusionParams,
    context: &dyn FusionContext,
) -> Vec<FusedHit> {
    let mut by_file: HashMap<FileId, Acc> = HashMap::new();
    let mut ordered: Vec<&(Modality, Vec<Hit>)> = lists.iter().collect();
    ordered.sort_by_key(|(m, _)| m.index());
    for (modality, hits) in ordered {
        let w = weights.get(*modality);
        if w <= 0.0 || !w.is_finite() {
            continue;
        }
        let mut rank = 0u32;
        let mut seen: HashMap<FileId, ()> = HashMap::new();
        for hit in hits {
            if seen.insert(hit.file, ()).is_some() {
                continue;
            }
            let boost = if params.boost {
                centrality_boost(context.centrality(hit.file, hit.chunk))
            } else {
                1.0
            };
            let value = w / (params.k + rank as f32 + 1.0) * boost;
            let c = Contribution { modality: *modality, rank: Rank(rank), value };
            rank += 1;
            match by_file.get_mut(&hit.file) {
                Some(acc) => {
                    acc.contributions.push(c);
                    if value > acc.best.0 {
                        acc.best = (value, hit.clone());
                        acc.boost = boost;
                    }
                }
                None => {
                    by_file.insert(
                        hit.file,
                        Acc { best: (value, hit.clone()), boost, contributions: vec![c] },
                    );
                }
            }
        }
    }
    let mut out: Vec<FusedHit> = by_file
        .into_iter()
        .map(|(file, acc)| {
            let vendor_factor =
                if params.downrank_vendor && context.is_vendor(file) { VENDOR_FACTOR } else { 1.0 };
            let prior = context.prior(file);
            let prior = if prior.is_finite() && prior > 0.0 { prior } else { 1.0 };
            let score =
                acc.contributions.iter().map(|c| c.value).sum::<f32>() * vendor_factor * prior;
            FusedHit {
                chunk: acc.best.1.chunk,
                file,
                lines: acc.best.1.lines,
                score,
                boost: acc.boost,
                vendor_factor,
                prior,
                contributions: acc.contributions,
            }
        })
        .collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.file.cmp(&b.file)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::weights::seed_row;
    use proptest::prelude::*;

    fn hit(file: u32, chunk: u32) -> Hit {
        Hit { chunk: ChunkId(chunk), file: FileId(file), lines: LineSpan::line(1), score: 1.0 }
    }

    #[derive(Debug, Clone)]
    struct Ctx {
        central: HashMap<u32, f32>,
        vendor: Vec<u32>,
    }

    impl FusionContext for Ctx {
        fn centrality(&self, file: FileId, _: ChunkId) -> f32 {
            self.central.get(&file.0).copied().unwrap_or(0.0)
        }
        fn is_vendor(&self, file: FileId) -> bool {
            self.vendor.contains(&file.0)
        }
    }

    fn score_of(out: &[FusedHit], file: u32) -> f32 {
        out.iter().find(|h| h.file.0 == file).map_or(0.0, |h| h.score)
    }

    #[test]
    fn worked_example() {
        // text: f1, f2; structural: f2. k = 40, weights text 0.1, structural 0.6.
        let lists = vec![
            (Modality::TEXT, vec![hit(1, 10), hit(2, 20)]),
            (Modality::STRUCTURAL, vec![hit(2, 21)]),
        ];
        let w = seed_row([0.2, 0.1, 0.6, 0.1]);
        let out = fuse(&lists, &w, &FusionParams::default(), &NoContext);
        assert_eq!(out[0].file, FileId(2));
        assert!((out[0].score - (0.1 / 42.0 + 0.6 / 41.0)).abs() < 1e-7);
        assert_eq!(out[0].chunk, ChunkId(21), "the fragment of the largest contribution");
        assert!((out[1].score - 0.1 / 41.0).abs() < 1e-7);
    }

    #[test]
    fn ranks_count_distinct_files() {
        let lists = vec![(Modality::TEXT, vec![hit(1, 1), hit(1, 2), hit(2, 3)])];
        let out =
            fuse(&lists, &seed_row([0.0, 1.0, 0.0, 0.0]), &FusionParams::default(), &NoContext);
        assert_eq!(out[1].contributions[0].rank, Rank(1));
        assert_eq!(out[0].chunk, ChunkId(1));
    }

    #[test]
    fn vendor_files_are_downranked() {
        let lists = vec![(Modality::TEXT, vec![hit(1, 1), hit(2, 2)])];
        let ctx = Ctx { central: HashMap::new(), vendor: vec![1] };
        let out = fuse(&lists, &seed_row([0.0, 1.0, 0.0, 0.0]), &FusionParams::default(), &ctx);
        assert_eq!(out[0].file, FileId(2));
        assert_eq!(out[1].vendor_factor, VENDOR_FACTOR);
    }

    fn lists_strategy() -> impl Strategy<Value = Vec<(Modality, Vec<Hit>)>> {
        let list = proptest::collection::vec((0u32..12, 0u32..40), 0..10)
            .prop_map(|v| v.into_iter().map(|(f, c)| hit(f, f * 100 + c)).collect::<Vec<_>>());
        (list.clone(), list.clone(), list.clone(), list).prop_map(|(a, b, c, d)| {
            vec![
                (Modality::SEMANTIC, a),
                (Modality::TEXT, b),
                (Modality::STRUCTURAL, c),
                (Modality::GRAPH, d),
            ]
        })
    }

    fn weights_strategy() -> impl Strategy<Value = ModalityWeights> {
        (0.0f32..1.0, 0.0f32..1.0, 0.0f32..1.0, 0.0f32..1.0)
            .prop_map(|(a, b, c, d)| seed_row([a, b, c, d]))
    }

    fn ctx_strategy() -> impl Strategy<Value = Ctx> {
        (
            proptest::collection::hash_map(0u32..12, 0.0f32..100.0, 0..12),
            proptest::collection::vec(0u32..12, 0..3),
        )
            .prop_map(|(central, vendor)| Ctx { central, vendor })
    }

    proptest! {
        #[test]
        fn permuting_modalities_changes_nothing(lists in lists_strategy(), w in weights_strategy(), ctx in ctx_strategy(), seed in 0usize..24) {
            let mut permuted = lists.clone();
            // Any of the 24 orders of four lists.
            let mut s = seed;
            for i in (1..permuted.len()).rev() {
                permuted.swap(i, s % (i + 1));
                s /= i + 1;
            }
            let p = FusionParams::default();
            prop_assert_eq!(fuse(&lists, &w, &p, &ctx), fuse(&permuted, &w, &p, &ctx));
        }

        #[test]
        fn a_hit_ranked_higher_in_every_list_never_scores_lower(lists in lists_strategy(), w in weights_strategy()) {
            // File 100 is put just above file 101 in every list that holds either.
            let mut lists = lists;
            for (_, hits) in &mut lists {
                hits.retain(|h| h.file.0 < 100);
                let at = hits.len() / 2;
                hits.insert(at, hit(101, 10_101));
                hits.insert(at, hit(100, 10_100));
            }
            let out = fuse(&lists, &w, &FusionParams::default(), &NoContext);
            prop_assert!(score_of(&out, 100) >= score_of(&out, 101));
        }

        #[test]
        fn adding_a_list_in_which_a_hit_appears_never_lowers_its_score(lists in lists_strategy(), w in weights_strategy(), ctx in ctx_strategy(), extra in proptest::collection::vec(0u32..12, 1..6)) {
            let mut fewer = lists.clone();
            fewer.retain(|(m, _)| *m != Modality::GRAPH);
            let mut more = fewer.clone();
            more.push((Modality::GRAPH, extra.iter().map(|&f| hit(f, f * 100)).collect()));
            let p = FusionParams::default();
            let before = fuse(&fewer, &w, &p, &ctx);
            let after = fuse(&more, &w, &p, &ctx);
            for f in extra {
                prop_assert!(score_of(&after, f) >= score_of(&before, f));
            }
        }

        #[test]
        fn weight_zero_removes_a_modality(lists in lists_strategy(), w in weights_strategy(), ctx in ctx_strategy()) {
            let mut zero = w;
            zero.set(Modality::TEXT, 0.0);
            let without: Vec<_> = lists.iter().filter(|(m, _)| *m != Modality::TEXT).cloned().collect();
            let p = FusionParams::default();
            prop_assert_eq!(fuse(&lists, &zero, &p, &ctx), fuse(&without, &zero, &p, &ctx));
        }

        #[test]
        fn boost_never_exceeds_1_5(c in proptest::num::f32::ANY) {
            let b = centrality_boost(c);
            prop_assert!((1.0..=1.5).contains(&b));
        }

        #[test]
        fn boosted_scores_stay_within_1_5x_of_unboosted(lists in lists_strategy(), w in weights_strategy(), ctx in ctx_strategy()) {
            let plain = fuse(&lists, &w, &FusionParams { boost: false, ..FusionParams::default() }, &ctx);
            let boosted = fuse(&lists, &w, &FusionParams::default(), &ctx);
            for h in &plain {
                let b = score_of(&boosted, h.file.0);
                prop_assert!(b >= h.score * 0.9999 && b <= h.score * 1.5001);
            }
        }

        #[test]
        fn a_prior_scales_only_its_own_file(lists in lists_strategy(), w in weights_strategy(), ctx in ctx_strategy(), file in 0u32..12, prior in 0.5f32..1.5) {
            struct WithPrior<'a> { inner: &'a Ctx, file: u32, prior: f32 }
            impl FusionContext for WithPrior<'_> {
                fn centrality(&self, f: FileId, c: ChunkId) -> f32 { self.inner.centrality(f, c) }
                fn is_vendor(&self, f: FileId) -> bool { self.inner.is_vendor(f) }
                fn prior(&self, f: FileId) -> f32 { if f.0 == self.file { self.prior } else { 1.0 } }
            }
            let p = FusionParams::default();
            let plain = fuse(&lists, &w, &p, &ctx);
            let lifted = fuse(&lists, &w, &p, &WithPrior { inner: &ctx, file, prior });
            for h in &plain {
                let expect = if h.file.0 == file { h.score * prior } else { h.score };
                prop_assert!((score_of(&lifted, h.file.0) - expect).abs() <= 1e-6 * expect.max(1.0));
            }
        }

        #[test]
        fn output_has_at_most_one_hit_per_file(lists in lists_strategy(), w in weights_strategy(), ctx in ctx_strategy()) {
            let out = fuse(&lists, &w, &FusionParams::default(), &ctx);
            let mut files: Vec<u32> = out.iter().map(|h| h.file.0).collect();
            let n = files.len();
            files.sort();
            files.dedup();
            prop_assert_eq!(files.len(), n);
            prop_assert!(out.windows(2).all(|p| p[0].score >= p[1].score));
        }
    }
}
