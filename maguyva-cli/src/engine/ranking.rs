//! Query-time ranking parameters, loadable from a JSON file so that research
//! runs (`maguyva eval --ranking FILE`) can tune them without rebuilding.

use maguyva_ast::StructuralParams;
use maguyva_fusion::{RRF_K_DEFAULT, Signals, WeightProfile};
use maguyva_graph::GraphParams;
use maguyva_trigram::KeywordParams;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The centrality fed to SPEC's boost is PageRank over the largest
/// PageRank, times this: boosts then range from 1 to 1.03, enough to put a
/// hub above a leaf at (nearly) equal relevance, as SPEC intends, without
/// overriding relevance. Measured on the development benchmark (text and
/// structural fused, NDCG@10): no boost 0.844; this 0.843; PageRank over
/// the largest unscaled (boosts up to 1.21) 0.801; PageRank times the number
/// of nodes (average node 1, hubs capped at 1.5) 0.804.
pub const DEFAULT_CENTRALITY_FACTOR: f32 = 0.1;

/// How graph centrality is put on the scale of SPEC's boost
/// `min(1 + 0.3 ln(1 + c), 1.5)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CentralityScale {
    /// No boost.
    Off,
    /// PageRank times the number of nodes: an average node has 1.
    Mean,
    /// PageRank over the largest PageRank: the top hub has 1.
    Max,
}

/// How the semantic modality compares vectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SemanticPrecision {
    /// Binary codes only.
    Binary,
    /// Binary codes, best candidates rescored with full precision.
    Rescored,
    /// Full precision over every vector (for measuring what binary loses).
    Full,
}

impl SemanticPrecision {
    /// As search options.
    pub fn options(self) -> maguyva_semantic::SearchOptions {
        maguyva_semantic::SearchOptions {
            rescore: self != SemanticPrecision::Binary,
            exact: false,
            full_precision: self == SemanticPrecision::Full,
        }
    }
}

/// Every query-time ranking parameter; absent fields keep their defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RankingConfig {
    /// Keyword ranking of the text modality.
    pub keyword: KeywordParams,
    /// Definition ranking of the structural modality.
    pub structural: StructuralParams,
    /// The graph modality.
    pub graph: GraphParams,
    /// The semantic modality.
    pub semantic: SemanticPrecision,
    /// The weights of each intent.
    pub profiles: WeightProfile,
    /// The RRF constant k.
    pub rrf_k: f32,
    /// The scale of the centrality boost.
    pub centrality: CentralityScale,
    /// A factor on the scaled centrality (1 leaves it as scaled).
    pub centrality_factor: f32,
    /// Fragments fetched from each modality per wanted result (several may
    /// fall in one file, and results are one per file).
    pub fragments_per_result: usize,
    /// Fragments fetched from each modality at least.
    pub min_fetch: usize,
    /// Ranking signals beyond SPEC's recipe.
    pub signals: Signals,
}

impl Default for RankingConfig {
    fn default() -> Self {
        RankingConfig {
            keyword: KeywordParams::default(),
            structural: StructuralParams::default(),
            graph: GraphParams::default(),
            semantic: SemanticPrecision::Rescored,
            profiles: WeightProfile::default(),
            rrf_k: RRF_K_DEFAULT,
            centrality: CentralityScale::Max,
            centrality_factor: DEFAULT_CENTRALITY_FACTOR,
            fragments_per_result: 8,
            min_fetch: 50,
            signals: Signals::default(),
        }
    }
}

impl RankingConfig {
    /// Reads a JSON file; unknown fields are an error, so a typo never
    /// silently measures the defaults.
    pub fn load(path: &Path) -> anyhow::Result<RankingConfig> {
        use anyhow::Context;
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_files_keep_defaults_and_typos_fail() {
        let c: RankingConfig =
            serde_json::from_str(r#"{"keyword": {"path_weight": 2.5}}"#).unwrap();
        assert_eq!(c.keyword.path_weight, 2.5);
        assert_eq!(c.keyword.bm25, RankingConfig::default().keyword.bm25);
        assert!(
            serde_json::from_str::<RankingConfig>(r#"{"keyword": {"path_wieght": 2}}"#).is_err()
        );
    }
}
