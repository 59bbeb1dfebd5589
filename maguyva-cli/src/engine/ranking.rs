//! Query-time ranking parameters, loadable from a JSON file so that research
//! runs (`maguyva eval --ranking FILE`) can tune them without rebuilding.

use maguyva_ast::StructuralParams;
use maguyva_fusion::{RRF_K_DEFAULT, WeightProfile};
use maguyva_trigram::KeywordParams;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Every query-time ranking parameter; absent fields keep their defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RankingConfig {
    /// Keyword ranking of the text modality.
    pub keyword: KeywordParams,
    /// Definition ranking of the structural modality.
    pub structural: StructuralParams,
    /// The weights of each intent.
    pub profiles: WeightProfile,
    /// The RRF constant k.
    pub rrf_k: f32,
}

impl Default for RankingConfig {
    fn default() -> Self {
        RankingConfig {
            keyword: KeywordParams::default(),
            structural: StructuralParams::default(),
            profiles: WeightProfile::default(),
            rrf_k: RRF_K_DEFAULT,
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
