//! Which modalities run for a query, and how their lists combine: straight
//! from one modality (`Direct`) or fused by weighted RRF (`Rrf`); and the
//! fallback when a direct route finds nothing. A pure function of the
//! request, the classification and the weights, pinned by the property
//! tests below: a modality runs only with a positive weight, and only when
//! the request allows it.

use crate::classify::{Classification, DIRECT_THRESHOLD};
use crate::intent::{Intent, WeightProfile};
use crate::preset::{FusionStrategy, Preset};
use crate::weights::ModalityWeights;
use maguyva_core::Modality;

/// Which modalities run, and how their lists combine.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Direct or fused.
    pub strategy: FusionStrategy,
    /// The weights of the modalities that run (the others have 0).
    pub weights: ModalityWeights,
    /// The RRF constant.
    pub k: f32,
}

/// What a plan depends on besides the classification.
#[derive(Debug, Clone, Copy)]
pub struct PlanRequest<'a> {
    /// The fusion weights per intent (learned or seed).
    pub profiles: &'a WeightProfile,
    /// The RRF constant of the ranking (the thorough preset has its own).
    pub rrf_k: f32,
    /// How much work to do.
    pub preset: Preset,
    /// Modalities asked for explicitly, replacing the preset's.
    pub modalities: Option<&'a [Modality]>,
    /// An exact string or a regex rather than words.
    pub exact: bool,
}

/// Decides the direct or fused path.
///
/// An explicit modality list replaces the preset's modalities and bounds
/// the direct path too, so `--modality text,structural` is the whole
/// pipeline with the other modalities switched off (what ablations need).
pub fn plan(request: &PlanRequest<'_>, c: &Classification, intent: Intent) -> Plan {
    let profile = request.profiles.weights_for(intent, c);
    let k = match request.preset {
        Preset::Thorough => request.preset.rrf_k(),
        _ => request.rrf_k,
    };
    let single = |m: Modality| {
        let mut weights = ModalityWeights::default();
        weights.set(m, 1.0);
        Plan { strategy: FusionStrategy::Direct, weights, k }
    };
    // Literals and regexes are the text modality's alone.
    if request.exact {
        return single(Modality::TEXT);
    }
    let explicit = request.modalities;
    match explicit {
        Some([m]) => return single(*m),
        None if request.preset == Preset::Quick => return single(Modality::SEMANTIC),
        _ => {}
    }
    let allowed = |m: Modality| explicit.is_none_or(|e| e.contains(&m));
    // The dominant modality comes from the whole profile, not the preset:
    // "who calls X" goes to the graph even though the default preset does
    // not fuse it. The route is the seed profile's rule: learned weights
    // tune fusion, and no training query measures a direct route, so
    // learning never moves one.
    let route = WeightProfile::default().weights_for(intent, c);
    if c.confidence >= DIRECT_THRESHOLD
        && !c.mixed
        && let Some(dominant) = route.dominant()
        && allowed(dominant)
    {
        return single(dominant);
    }
    let preset = request.preset.modalities();
    let set = explicit.unwrap_or(&preset);
    let mut weights = profile.restricted_to(set);
    if weights.active().is_empty() {
        // The intent weighs none of the allowed modalities: weigh them
        // equally rather than answer nothing.
        for &m in set {
            weights.set(m, 1.0);
        }
    }
    match weights.active().as_slice() {
        [m] => single(*m),
        _ => Plan { strategy: FusionStrategy::Rrf, weights, k },
    }
}

/// What a direct route to the graph or the structural modality falls back
/// to when that modality finds nothing: the text and structural modalities
/// (the evidence that the name occurs at all) with the intent's weights,
/// so that "who calls X" is never empty where the text has X. A direct
/// route to the text modality (a literal, an error string) has no
/// fallback: nothing found is the answer.
pub fn fallback_plan(
    request: &PlanRequest<'_>,
    c: &Classification,
    intent: Intent,
    direct: &Plan,
) -> Option<Plan> {
    let [m] = direct.weights.active()[..] else { return None };
    if direct.strategy != FusionStrategy::Direct
        || !matches!(m, Modality::GRAPH | Modality::STRUCTURAL)
        || request.modalities.is_some()
        || request.preset == Preset::Quick
        || request.exact
    {
        return None;
    }
    let others: Vec<Modality> =
        [Modality::TEXT, Modality::STRUCTURAL].into_iter().filter(|&x| x != m).collect();
    let mut weights = request.profiles.weights_for(intent, c).restricted_to(&others);
    if weights.active().is_empty() {
        weights.set(Modality::TEXT, 1.0);
    }
    Some(Plan { strategy: FusionStrategy::Fallback, weights, k: direct.k })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::IntentClassifier;
    use crate::weights::seed_row;
    use proptest::prelude::*;

    const QUERIES: [&str; 8] = [
        "where is parseConfig defined",
        "how does authentication work",
        "who calls open_socket",
        "what breaks if I change Router",
        "ECONNREFUSED",
        "parse_config",
        "retry with backoff when the connection drops",
        "find code like fn main() { run() }",
    ];

    fn modality() -> impl Strategy<Value = Modality> {
        prop::sample::select(Modality::BUILT_IN.to_vec())
    }

    fn preset() -> impl Strategy<Value = Preset> {
        prop::sample::select(vec![Preset::Quick, Preset::Default, Preset::Thorough])
    }

    fn weights() -> impl Strategy<Value = ModalityWeights> {
        // Zero often, so that switched-off modalities are common.
        let w = prop::sample::select(vec![0.0f32, 0.0, 0.05, 0.3, 1.0]);
        (w.clone(), w.clone(), w.clone(), w).prop_map(|(a, b, c, d)| seed_row([a, b, c, d]))
    }

    fn profile_with(w: ModalityWeights) -> WeightProfile {
        WeightProfile {
            find_definition: w,
            find_references: w,
            understand_code: w,
            find_similar: w,
            impact_analysis: w,
            exact_match: w,
            find_definition_in_question: w,
        }
    }

    proptest! {
        #[test]
        fn only_positive_allowed_modalities_run(
            q in prop::sample::select(QUERIES.to_vec()),
            w in weights(),
            preset in preset(),
            explicit in prop::option::of(prop::collection::vec(modality(), 1..4)),
            exact in any::<bool>(),
            rrf_k in 1.0f32..100.0,
        ) {
            let c = IntentClassifier::new().classify(q);
            let profiles = profile_with(w);
            let request = PlanRequest {
                profiles: &profiles,
                rrf_k,
                preset,
                modalities: explicit.as_deref(),
                exact,
            };
            let p = plan(&request, &c, c.intent);
            let active = p.weights.active();
            prop_assert!(!active.is_empty());
            for m in Modality::BUILT_IN {
                let runs = active.contains(&m);
                prop_assert_eq!(runs, p.weights.get(m) > 0.0, "{:?} runs only with weight > 0", m);
            }
            // An exact string is the text modality's whatever was asked;
            // otherwise nothing runs that the request did not allow.
            if let Some(e) = explicit.as_ref().filter(|_| !exact) {
                prop_assert!(active.iter().all(|m| e.contains(m)), "{:?} outside {:?}", active, e);
            }
            match p.strategy {
                FusionStrategy::Direct => prop_assert_eq!(active.len(), 1),
                FusionStrategy::Rrf => {
                    prop_assert!(active.len() > 1);
                    let preset_set = preset.modalities();
                    let set = explicit.as_deref().unwrap_or(&preset_set);
                    prop_assert!(active.iter().all(|m| set.contains(m)));
                    // Fused, a modality the intent weighs 0 never runs
                    // unless the intent weighs every allowed one 0.
                    let profile = profiles.weights_for(c.intent, &c);
                    if set.iter().any(|&m| profile.get(m) > 0.0) {
                        prop_assert!(active.iter().all(|&m| profile.get(m) > 0.0));
                    }
                }
                FusionStrategy::Fallback => prop_assert!(false, "plan never falls back"),
            }
            if exact {
                prop_assert_eq!(&active, &vec![Modality::TEXT]);
            }
            if let Some(f) = fallback_plan(&request, &c, c.intent, &p) {
                let fa = f.weights.active();
                prop_assert!(!fa.is_empty() && !fa.iter().any(|m| active.contains(m)));
                prop_assert!(fa.iter().all(|&m| f.weights.get(m) > 0.0));
            }
        }
    }

    #[test]
    fn routes_of_the_seed() {
        let profiles = WeightProfile::default();
        let request = PlanRequest {
            profiles: &profiles,
            rrf_k: 60.0,
            preset: Preset::Default,
            modalities: None,
            exact: false,
        };
        let go = |q: &str| {
            let c = IntentClassifier::new().classify(q);
            plan(&request, &c, c.intent)
        };
        let who = go("who calls open_socket");
        assert_eq!(
            (who.strategy, who.weights.active()),
            (FusionStrategy::Direct, vec![Modality::GRAPH])
        );
        let how = go("how does authentication work");
        assert_eq!(how.strategy, FusionStrategy::Rrf);
        let exact = PlanRequest { exact: true, ..request };
        let c = IntentClassifier::new().classify("\"ECONNREFUSED\"");
        assert_eq!(plan(&exact, &c, c.intent).weights.active(), vec![Modality::TEXT]);
    }
}
