//! Presets, and the direct and fused strategies (doc/intents.md).

use crate::weights::{ModalityWeights, RRF_K_DEFAULT, RRF_K_THOROUGH};
use maguyva_core::Modality;
use serde::{Deserialize, Serialize};

/// How much work a search does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Preset {
    /// The semantic modality alone; fusion never runs.
    Quick,
    /// Semantic, text and structural fused with k = 40; the graph supplies
    /// the centrality boost.
    #[default]
    Default,
    /// All four modalities fused with k = 60.
    Thorough,
}

impl Preset {
    /// Every preset, from the least work to the most.
    pub const ALL: [Preset; 3] = [Preset::Quick, Preset::Default, Preset::Thorough];

    /// Its name in doc/intents.md.
    pub fn as_str(self) -> &'static str {
        match self {
            Preset::Quick => "quick",
            Preset::Default => "default",
            Preset::Thorough => "thorough",
        }
    }

    /// The modalities the preset may run (those of positive weight among
    /// them run): quick the semantic modality alone; default the semantic,
    /// text and structural modalities, and any registered besides the
    /// built-in four (which run once a ranking gives them a weight);
    /// thorough every registered one.
    pub fn modalities(self) -> Vec<Modality> {
        match self {
            Preset::Quick => vec![Modality::SEMANTIC],
            Preset::Default => {
                let mut set = vec![Modality::SEMANTIC, Modality::TEXT, Modality::STRUCTURAL];
                set.extend(Modality::all().into_iter().filter(|m| !Modality::BUILT_IN.contains(m)));
                set
            }
            Preset::Thorough => Modality::all(),
        }
    }

    /// Seed preset (doc/intents.md): the RRF constant (quick never fuses).
    pub fn rrf_k(self) -> f32 {
        match self {
            Preset::Thorough => RRF_K_THOROUGH,
            Preset::Quick | Preset::Default => RRF_K_DEFAULT,
        }
    }

    /// An intent's weights as this preset runs them: modalities outside the
    /// preset get weight 0 and do not run.
    pub fn weights(self, profile: ModalityWeights) -> ModalityWeights {
        profile.restricted_to(&self.modalities())
    }
}

impl std::fmt::Display for Preset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Preset {
    type Err = String;

    fn from_str(s: &str) -> Result<Preset, String> {
        match s.trim() {
            "quick" => Ok(Preset::Quick),
            "default" => Ok(Preset::Default),
            "thorough" => Ok(Preset::Thorough),
            other => Err(format!("unknown preset {other:?}; expected quick, default or thorough")),
        }
    }
}

/// Whether a search fused lists or asked one modality.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FusionStrategy {
    /// One modality answered alone.
    Direct,
    /// Several modalities were fused by weighted RRF.
    Rrf,
    /// The direct route's modality found nothing (a graph with no edge for
    /// the name, no definition of it), and the text and structural
    /// modalities answered instead.
    Fallback,
}

impl FusionStrategy {
    /// Its name in doc/intents.md.
    pub fn as_str(self) -> &'static str {
        match self {
            FusionStrategy::Direct => "direct",
            FusionStrategy::Rrf => "rrf",
            FusionStrategy::Fallback => "fallback",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intent::Intent;

    #[test]
    fn spec_presets() {
        assert_eq!(Preset::Quick.modalities(), &[Modality::SEMANTIC]);
        assert_eq!(Preset::Default.modalities().len(), 3);
        assert!(!Preset::Default.modalities().contains(&Modality::GRAPH));
        assert_eq!(Preset::Thorough.modalities().len(), 4);
        assert_eq!(Preset::Default.rrf_k(), 40.0);
        assert_eq!(Preset::Thorough.rrf_k(), 60.0);
        for p in [Preset::Quick, Preset::Default, Preset::Thorough] {
            assert_eq!(p.as_str().parse::<Preset>().unwrap(), p);
        }
        // exact_match never runs the embedder, in any preset.
        assert_eq!(
            Preset::Thorough.weights(Intent::ExactMatch.profile()).get(Modality::SEMANTIC),
            0.0
        );
    }
}
