//! The six intents of the classifier and their weight profiles
//! (doc/intents.md).

use crate::classify::Classification;
use crate::weights::{ModalityWeights, seed_row};
use maguyva_core::Modality;
use serde::{Deserialize, Serialize};

/// What kind of question a query asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Intent {
    /// "where is parseConfig defined": one definition.
    FindDefinition,
    /// "who calls parseConfig": call sites and references.
    FindReferences,
    /// "how does authentication work": code that explains a concept.
    UnderstandCode,
    /// "code similar to this": neighbours in meaning and shape.
    FindSimilar,
    /// "what breaks if I change this": transitive dependents.
    ImpactAnalysis,
    /// `"ECONNREFUSED"`: a literal.
    ExactMatch,
}

impl Intent {
    /// Every intent, in the seed's table order.
    pub const ALL: [Intent; 6] = [
        Intent::FindDefinition,
        Intent::FindReferences,
        Intent::UnderstandCode,
        Intent::FindSimilar,
        Intent::ImpactAnalysis,
        Intent::ExactMatch,
    ];

    /// Its name in doc/intents.md.
    pub fn as_str(self) -> &'static str {
        match self {
            Intent::FindDefinition => "find_definition",
            Intent::FindReferences => "find_references",
            Intent::UnderstandCode => "understand_code",
            Intent::FindSimilar => "find_similar",
            Intent::ImpactAnalysis => "impact_analysis",
            Intent::ExactMatch => "exact_match",
        }
    }

    /// The seed (doc/intents.md): the default weights of this intent.
    pub fn profile(self) -> ModalityWeights {
        match self {
            Intent::FindDefinition => seed_row([0.2, 0.1, 0.6, 0.1]),
            Intent::FindReferences => seed_row([0.1, 0.2, 0.2, 0.5]),
            Intent::UnderstandCode => seed_row([0.5, 0.2, 0.2, 0.1]),
            Intent::FindSimilar => seed_row([0.4, 0.3, 0.2, 0.1]),
            Intent::ImpactAnalysis => seed_row([0.1, 0.1, 0.1, 0.7]),
            Intent::ExactMatch => seed_row([0.0, 0.9, 0.1, 0.0]),
        }
    }
}

impl std::fmt::Display for Intent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Intent {
    type Err = String;

    fn from_str(s: &str) -> Result<Intent, String> {
        Intent::ALL
            .into_iter()
            .find(|i| i.as_str() == s.trim())
            .ok_or_else(|| format!("unknown intent {s:?}"))
    }
}

/// The weights of every intent, configurable as a whole (for research runs).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WeightProfile {
    /// find_definition.
    pub find_definition: ModalityWeights,
    /// find_references.
    pub find_references: ModalityWeights,
    /// understand_code.
    pub understand_code: ModalityWeights,
    /// find_similar.
    pub find_similar: ModalityWeights,
    /// impact_analysis.
    pub impact_analysis: ModalityWeights,
    /// exact_match.
    pub exact_match: ModalityWeights,
    /// find_definition asked as a question that names an identifier
    /// (`how parseConfig reads defaults`) rather than as the bare name: such
    /// a question wants the code about the name as much as its definition.
    /// The seed gives it find_definition's weights; the default ranking learns
    /// its own.
    pub find_definition_in_question: ModalityWeights,
}

impl Default for WeightProfile {
    fn default() -> Self {
        WeightProfile {
            find_definition: Intent::FindDefinition.profile(),
            find_references: Intent::FindReferences.profile(),
            understand_code: Intent::UnderstandCode.profile(),
            find_similar: Intent::FindSimilar.profile(),
            impact_analysis: Intent::ImpactAnalysis.profile(),
            exact_match: Intent::ExactMatch.profile(),
            find_definition_in_question: Intent::FindDefinition.profile(),
        }
    }
}

impl WeightProfile {
    /// Whether any intent gives modality `m` a weight: one that none does
    /// never runs for a question.
    pub fn weighs(&self, m: Modality) -> bool {
        [
            self.find_definition,
            self.find_references,
            self.understand_code,
            self.find_similar,
            self.impact_analysis,
            self.exact_match,
            self.find_definition_in_question,
        ]
        .iter()
        .any(|w| w.get(m) > 0.0)
    }

    /// The weights for a classified query: its intent's, except for a
    /// find_definition question that names an identifier inside other words.
    pub fn weights_for(&self, intent: Intent, c: &Classification) -> ModalityWeights {
        if intent == Intent::FindDefinition && c.names_in_question() {
            self.find_definition_in_question
        } else {
            self.weights(intent)
        }
    }

    /// The weights of one intent.
    pub fn weights(&self, intent: Intent) -> ModalityWeights {
        match intent {
            Intent::FindDefinition => self.find_definition,
            Intent::FindReferences => self.find_references,
            Intent::UnderstandCode => self.understand_code,
            Intent::FindSimilar => self.find_similar,
            Intent::ImpactAnalysis => self.impact_analysis,
            Intent::ExactMatch => self.exact_match,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_weighs_the_modalities_some_intent_runs() {
        let mut profiles = WeightProfile::default();
        assert!(profiles.weighs(Modality::TEXT));
        let plugin = Modality::named("history");
        assert!(!profiles.weighs(plugin));
        profiles.find_similar.set(plugin, 0.2);
        assert!(profiles.weighs(plugin));
    }

    #[test]
    fn spec_weight_table() {
        let rows = [
            (Intent::FindDefinition, [0.2, 0.1, 0.6, 0.1]),
            (Intent::FindReferences, [0.1, 0.2, 0.2, 0.5]),
            (Intent::UnderstandCode, [0.5, 0.2, 0.2, 0.1]),
            (Intent::FindSimilar, [0.4, 0.3, 0.2, 0.1]),
            (Intent::ImpactAnalysis, [0.1, 0.1, 0.1, 0.7]),
            (Intent::ExactMatch, [0.0, 0.9, 0.1, 0.0]),
        ];
        for (intent, row) in rows {
            let w = intent.profile();
            for (m, expected) in Modality::BUILT_IN.into_iter().zip(row) {
                assert_eq!(w.get(m), expected, "{intent} {m}");
            }
            assert_eq!(intent.as_str().parse::<Intent>().unwrap(), intent);
            assert_eq!(WeightProfile::default().weights(intent), w);
        }
        assert!(Intent::ExactMatch.profile().active().iter().all(|&m| m != Modality::SEMANTIC));
    }

    #[test]
    fn a_question_naming_an_identifier_has_its_own_weights() {
        use crate::IntentClassifier;
        let p = WeightProfile {
            find_definition_in_question: seed_row([0.5, 1.0, 0.1, 0.0]),
            ..WeightProfile::default()
        };
        let classify = |q: &str| IntentClassifier::new().classify(q);
        let bare = classify("parseConfig");
        assert_eq!(p.weights_for(bare.intent, &bare), p.find_definition);
        let question = classify("how parseConfig reads the defaults");
        assert_eq!(question.intent, Intent::FindDefinition);
        assert_eq!(p.weights_for(question.intent, &question), p.find_definition_in_question);
        let keyword = classify("fn parse_config");
        assert_eq!(p.weights_for(keyword.intent, &keyword), p.find_definition);
        let plain = classify("how are routes registered");
        assert_eq!(p.weights_for(plain.intent, &plain), p.understand_code);
    }

    #[test]
    fn profiles_load_from_partial_json() {
        let p: WeightProfile = serde_json::from_str(r#"{"exact_match": {"text": 1.0}}"#).unwrap();
        assert_eq!(p.exact_match, seed_row([0.0, 1.0, 0.0, 0.0]));
        assert_eq!(p.find_definition, Intent::FindDefinition.profile());
    }
}
