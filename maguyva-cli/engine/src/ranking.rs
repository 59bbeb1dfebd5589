//! Query-time ranking parameters, loadable from a JSON file so that research
//! runs (`maguyva eval --ranking FILE`) can tune them without rebuilding.

use crate::admission::AdmissionParams;
use maguyva_ast::StructuralParams;
use maguyva_fusion::{RRF_K_DEFAULT, RerankModel, Signals, WeightProfile};
use maguyva_graph::GraphParams;
use maguyva_trigram::KeywordParams;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::LazyLock;

/// The centrality fed to the seed's boost is PageRank over the largest
/// PageRank, times this: boosts then range from 1 to 1.03, enough to put a
/// hub above a leaf at (nearly) equal relevance, as the seed intends, without
/// overriding relevance. Measured on the development benchmark (text and
/// structural fused, NDCG@10): no boost 0.844; this 0.843; PageRank over
/// the largest unscaled (boosts up to 1.21) 0.801; PageRank times the number
/// of nodes (average node 1, hubs capped at 1.5) 0.804.
pub const DEFAULT_CENTRALITY_FACTOR: f32 = 0.1;

/// How graph centrality is put on the scale of the seed's boost
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

/// Every query-time ranking parameter. In a JSON file, absent fields keep
/// the values of the ranking the file is laid over.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default = "RankingConfig::seed", deny_unknown_fields)]
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
    /// Ranking signals beyond the seed recipe.
    pub signals: Signals,
    /// Which results a query's words admit (`admission`).
    pub admission: AdmissionParams,
    /// The weights of a report's evidence (the report route).
    pub report: crate::locate::ReportWeights,
    /// The learned reranker over the fused candidates (none: the fused
    /// order stands).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reranker: Option<RerankModel>,
    /// The parameters of the modalities registered besides the built-in
    /// four, by modality id and parameter name (the built-in four's are the
    /// fields above); a parameter left out has its default.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, BTreeMap<String, f64>>,
}

/// The learned ranking, as `maguyva eval --tune` wrote it: the fields it
/// changed from the seed's values.
const LEARNED_JSON: &str = include_str!("default-ranking.json");

static LEARNED: LazyLock<Result<RankingConfig, String>> = LazyLock::new(|| {
    let value: serde_json::Value = serde_json::from_str(LEARNED_JSON).map_err(|e| e.to_string())?;
    match RankingConfig::base_of(value)? {
        (Base::Seed, patch) => RankingConfig::seed().overlaid(patch).map_err(|e| e.to_string()),
        (Base::Default, _) => Err("the default ranking cannot be laid over itself".into()),
    }
});

/// The ranking a ranking file's fields are laid over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base {
    /// The seed (`"base": "seed"`, as `--tune` writes files).
    Seed,
    /// The default ranking (a file without `base`).
    Default,
}

impl Default for RankingConfig {
    /// The default ranking: the learned one.
    fn default() -> Self {
        RankingConfig::learned()
    }
}

impl RankingConfig {
    /// The seed ranking: the hand-set weight profiles, RRF k and centrality boost,
    /// the modalities' own priors, and no ranking signal.
    pub fn seed() -> RankingConfig {
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
            signals: Signals::NONE,
            admission: AdmissionParams::default(),
            report: crate::locate::ReportWeights::default(),
            reranker: None,
            params: BTreeMap::new(),
        }
    }

    /// The default ranking, learned from the training benchmarks
    /// (`default-ranking.json` over the seed; doc/ranking.md).
    pub fn learned() -> RankingConfig {
        match &*LEARNED {
            Ok(c) => c.clone(),
            // The file ships inside the binary and a unit test parses it,
            // so this is unreachable in a tested build; fall back to the
            // seed rather than fail every search.
            Err(_) => RankingConfig::seed(),
        }
    }

    /// Whether every parameter this ranking gives (`params`) is one its
    /// modality declares, and within its range.
    pub fn check_params(&self) -> Result<(), String> {
        if let Some(model) = &self.reranker {
            model.check().map_err(|e| format!("reranker: {e}"))?;
        }
        for (id, given) in &self.params {
            let m: maguyva_core::Modality = id.parse().map_err(|e| format!("params: {e}"))?;
            let specs = crate::plugin(m).map_err(|e| e.to_string())?.params();
            for (name, &value) in given {
                let Some(spec) = specs.iter().find(|s| s.name == name) else {
                    let known: Vec<&str> = specs.iter().map(|s| s.name).collect();
                    return Err(format!(
                        "params.{id}: {name:?} is not a parameter of {id} (it takes: {})",
                        if known.is_empty() { "none".to_string() } else { known.join(", ") }
                    ));
                };
                let (lo, hi) = spec.range;
                if !(lo..=hi).contains(&value) {
                    return Err(format!("params.{id}.{name}: {value} is outside {lo}..={hi}"));
                }
            }
        }
        Ok(())
    }

    /// This ranking with the fields of a JSON object laid over it; nested
    /// objects merge field by field, and unknown fields are an error.
    pub fn overlaid(&self, patch: serde_json::Value) -> serde_json::Result<RankingConfig> {
        // Modality ids in weights and parameters name registered modalities.
        let _ = crate::plugins();
        fn merge(base: &mut serde_json::Value, patch: serde_json::Value) {
            match (base, patch) {
                (serde_json::Value::Object(b), serde_json::Value::Object(p)) => {
                    for (k, v) in p {
                        match b.get_mut(&k) {
                            Some(slot) => merge(slot, v),
                            None => {
                                b.insert(k, v);
                            }
                        }
                    }
                }
                (slot, p) => *slot = p,
            }
        }
        let mut base = serde_json::to_value(self)?;
        merge(&mut base, patch);
        serde_json::from_value(base)
    }

    /// A ranking file's `base` and the rest of its fields.
    pub fn base_of(mut value: serde_json::Value) -> Result<(Base, serde_json::Value), String> {
        let base = match value.as_object_mut().and_then(|o| o.remove("base")) {
            None => Base::Default,
            Some(serde_json::Value::String(s)) if s == "seed" => Base::Seed,
            Some(serde_json::Value::String(s)) if s == "default" => Base::Default,
            Some(other) => {
                return Err(format!("base must be \"seed\" or \"default\", not {other}"));
            }
        };
        Ok((base, value))
    }

    /// This ranking as a file over `base`: `"base"` and the fields that
    /// differ (what `--tune` writes).
    pub fn to_file(&self, base: Base) -> serde_json::Result<serde_json::Value> {
        let (name, from) = match base {
            Base::Seed => ("seed", RankingConfig::seed()),
            Base::Default => ("default", RankingConfig::learned()),
        };
        let mut out = serde_json::Map::new();
        out.insert("base".into(), name.into());
        if let serde_json::Value::Object(diff) = self.diff_from(&from)? {
            out.extend(diff);
        }
        Ok(serde_json::Value::Object(out))
    }

    /// A ranking by name (`default`, `seed`) or from a JSON file, laid over
    /// the ranking its `base` field names (`seed` or `default`; the default
    /// when absent). Unknown fields are an error, so a typo never silently
    /// measures the defaults.
    pub fn named(name: &str) -> maguyva_core::Result<RankingConfig> {
        match name {
            "default" | "learned" => Ok(RankingConfig::learned()),
            "seed" => Ok(RankingConfig::seed()),
            path => {
                let path = Path::new(path);
                let bad = |why: String| {
                    maguyva_core::Error::InvalidQuery(format!("ranking {}: {why}", path.display()))
                };
                let text = std::fs::read_to_string(path)
                    .map_err(|e| maguyva_core::Error::io("reading ranking", path, e))?;
                let value: serde_json::Value =
                    serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
                let (base, patch) = RankingConfig::base_of(value).map_err(bad)?;
                let base = match base {
                    Base::Seed => RankingConfig::seed(),
                    Base::Default => RankingConfig::learned(),
                };
                let ranking = base.overlaid(patch).map_err(|e| bad(e.to_string()))?;
                ranking.check_params().map_err(bad)?;
                Ok(ranking)
            }
        }
    }

    /// The fields where this ranking differs from `base`, as a JSON object
    /// (what a ranking file needs to hold).
    pub fn diff_from(&self, base: &RankingConfig) -> serde_json::Result<serde_json::Value> {
        fn diff(a: &serde_json::Value, b: &serde_json::Value) -> Option<serde_json::Value> {
            match (a, b) {
                (serde_json::Value::Object(a), serde_json::Value::Object(b)) => {
                    let out: serde_json::Map<String, serde_json::Value> = a
                        .iter()
                        .filter_map(|(k, v)| match b.get(k) {
                            Some(w) => diff(v, w).map(|d| (k.clone(), d)),
                            None => Some((k.clone(), v.clone())),
                        })
                        .collect();
                    (!out.is_empty()).then_some(serde_json::Value::Object(out))
                }
                _ => (a != b).then(|| a.clone()),
            }
        }
        let (a, b) = (serde_json::to_value(self)?, serde_json::to_value(base)?);
        let mut out = diff(&a, &b).unwrap_or_else(|| serde_json::json!({}));
        shortest_floats(&mut out);
        Ok(out)
    }
}

/// Parameters are `f32`; as JSON values they widen to `f64` (`0.1` becomes
/// `0.10000000149011612`). Writing each as the shortest decimal that reads
/// back to the same `f32` keeps ranking files as the numbers were chosen.
fn shortest_floats(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Number(n) if n.is_f64() => {
            if let Some(x) = n.as_f64()
                && let Ok(short) = format!("{}", x as f32).parse::<f64>()
                && let Some(num) = serde_json::Number::from_f64(short)
            {
                *n = num;
            }
        }
        serde_json::Value::Object(map) => map.values_mut().for_each(shortest_floats),
        serde_json::Value::Array(items) => items.iter_mut().for_each(shortest_floats),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_files_keep_the_base_and_typos_fail() {
        let base = RankingConfig::learned();
        let c = base.overlaid(serde_json::json!({"keyword": {"path_weight": 2.5}})).unwrap();
        assert_eq!(c.keyword.path_weight, 2.5);
        assert_eq!(c.keyword.bm25, base.keyword.bm25);
        assert_eq!(c.profiles, base.profiles);
        assert!(base.overlaid(serde_json::json!({"keyword": {"path_wieght": 2}})).is_err());
    }

    #[test]
    fn the_shipped_ranking_parses() {
        assert!(LEARNED.is_ok(), "{:?}", LEARNED.as_ref().err());
        let learned = RankingConfig::learned();
        let back =
            RankingConfig::seed().overlaid(learned.diff_from(&RankingConfig::seed()).unwrap());
        assert_eq!(back.unwrap(), learned);
    }

    #[test]
    fn ranking_files_hold_the_numbers_as_written() {
        let mut r = RankingConfig::seed();
        r.keyword.file_evidence = 0.1;
        r.rrf_k = 5.0;
        let diff = r.diff_from(&RankingConfig::seed()).unwrap();
        assert_eq!(diff.to_string(), r#"{"keyword":{"file_evidence":0.1},"rrf_k":5.0}"#);
        assert_eq!(RankingConfig::seed().overlaid(diff).unwrap(), r);
    }

    #[test]
    fn files_name_their_base() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        let mut r = RankingConfig::seed();
        r.rrf_k = 7.0;
        let file = r.to_file(Base::Seed).unwrap();
        assert_eq!(file.to_string(), r#"{"base":"seed","rrf_k":7.0}"#);
        std::fs::write(&path, file.to_string()).unwrap();
        assert_eq!(RankingConfig::named(path.to_str().unwrap()).unwrap(), r);
        // Without a base, fields are laid over the default.
        std::fs::write(&path, r#"{"rrf_k": 7.0}"#).unwrap();
        let over_default = RankingConfig::named(path.to_str().unwrap()).unwrap();
        assert_eq!(over_default.profiles, RankingConfig::learned().profiles);
        assert_eq!(over_default.rrf_k, 7.0);
        std::fs::write(&path, r#"{"base": "best"}"#).unwrap();
        let err = RankingConfig::named(path.to_str().unwrap()).unwrap_err();
        assert!(format!("{err:#}").contains("base must be"), "{err:#}");
    }

    #[test]
    fn seed_is_spec() {
        let seed = RankingConfig::seed();
        assert_eq!(seed.profiles, WeightProfile::default());
        assert_eq!(seed.rrf_k, 40.0);
        assert_eq!(seed.signals, Signals::NONE);
        assert_eq!(RankingConfig::named("seed").unwrap(), seed);
        assert_eq!(RankingConfig::named("default").unwrap(), RankingConfig::default());
    }
}
