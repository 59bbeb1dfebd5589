//! Per-modality weights and the fusion constants of doc/intents.md.

use maguyva_core::{MAX_MODALITIES, Modality};
use serde::{Deserialize, Serialize};

/// Seed preset (doc/intents.md): RRF k of the default preset.
pub const RRF_K_DEFAULT: f32 = 40.0;
/// Seed preset (doc/intents.md): RRF k of the thorough preset.
pub const RRF_K_THOROUGH: f32 = 60.0;
/// Seed (doc/intents.md): the boost grows as 0.3 ln(1 + centrality).
pub const BOOST_SCALE: f32 = 0.3;
/// Seed (doc/intents.md): a hub outranks a leaf by at most 1.5x.
pub const MAX_BOOST: f32 = 1.5;
/// Score factor for hits under vendor, build-output and archive paths, and
/// minified bundles (the seed asks for down-ranking and leaves the amount open).
pub const VENDOR_FACTOR: f32 = 0.5;

/// A weight for each modality, by id; a modality of weight 0 does not run.
/// A modality without a weight of its own (one registered besides the
/// seed's four, unless a ranking gives it one) has 0. In JSON, an object
/// from modality ids to weights: the built-in four always, any other when
/// its weight is not 0.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ModalityWeights {
    /// By [`Modality::index`].
    weights: [f32; MAX_MODALITIES],
}

impl ModalityWeights {
    /// These weights, the others 0.
    pub fn of(weights: &[(Modality, f32)]) -> ModalityWeights {
        let mut w = ModalityWeights::default();
        for &(m, x) in weights {
            w.set(m, x);
        }
        w
    }

    /// The weight of one modality.
    pub fn get(&self, m: Modality) -> f32 {
        self.weights.get(m.index()).copied().unwrap_or(0.0)
    }

    /// Sets the weight of one modality.
    pub fn set(&mut self, m: Modality, w: f32) {
        if let Some(slot) = self.weights.get_mut(m.index()) {
            *slot = w;
        }
    }

    /// Modalities with a positive weight, in order.
    pub fn active(&self) -> Vec<Modality> {
        Modality::all().into_iter().filter(|&m| self.get(m) > 0.0).collect()
    }

    /// The modality of the largest weight (the first on ties).
    pub fn dominant(&self) -> Option<Modality> {
        Modality::all().into_iter().filter(|&m| self.get(m) > 0.0).fold(
            None,
            |best: Option<Modality>, m| match best {
                Some(b) if self.get(b) >= self.get(m) => Some(b),
                _ => Some(m),
            },
        )
    }

    /// These weights with every modality outside `keep` set to 0.
    pub fn restricted_to(&self, keep: &[Modality]) -> ModalityWeights {
        let mut w = ModalityWeights::default();
        for &m in keep {
            w.set(m, self.get(m));
        }
        w
    }
}

/// A row of the seed's weight table (doc/intents.md), whose columns are
/// the built-in four in order: semantic, text, structural, graph.
pub(crate) fn seed_row(row: [f32; 4]) -> ModalityWeights {
    let mut w = ModalityWeights::default();
    for (m, x) in Modality::BUILT_IN.into_iter().zip(row) {
        w.set(m, x);
    }
    w
}

impl Serialize for ModalityWeights {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let shown: Vec<Modality> = Modality::all()
            .into_iter()
            .filter(|&m| Modality::BUILT_IN.contains(&m) || self.get(m) != 0.0)
            .collect();
        let mut map = s.serialize_map(Some(shown.len()))?;
        for m in shown {
            map.serialize_entry(m.as_str(), &self.get(m))?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for ModalityWeights {
    /// Every id must name a registered modality; one left out has weight 0.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<ModalityWeights, D::Error> {
        let given = std::collections::BTreeMap::<String, f32>::deserialize(d)?;
        let mut w = ModalityWeights::default();
        for (name, weight) in given {
            let m: Modality = name.parse().map_err(serde::de::Error::custom)?;
            w.set(m, weight);
        }
        Ok(w)
    }
}

/// The seed's graph-importance boost: `min(1 + 0.3 ln(1 + centrality), 1.5)`.
/// Centrality is never negative; a negative or NaN input counts as 0.
pub fn centrality_boost(centrality: f32) -> f32 {
    let c = if centrality.is_finite() && centrality > 0.0 { centrality } else { 0.0 };
    (1.0 + BOOST_SCALE * c.ln_1p()).min(MAX_BOOST)
}

/// Whether a path lies under vendored, generated or build-output folders, or
/// is a minified bundle or an archive (the seed down-ranks such hits).
pub fn is_vendor_path(path: &str) -> bool {
    const DIRS: [&str; 8] = [
        "vendor",
        "third_party",
        "thirdparty",
        "node_modules",
        "dist",
        "build",
        "target",
        "bower_components",
    ];
    let mut parts = path.split('/');
    let file = parts.next_back().unwrap_or("");
    if parts.any(|d| DIRS.contains(&d)) {
        return true;
    }
    let f = file.to_ascii_lowercase();
    [
        ".min.js",
        ".min.css",
        ".bundle.js",
        "-bundle.js",
        ".min.mjs",
        ".zip",
        ".tar",
        ".tar.gz",
        ".tgz",
        ".jar",
        ".whl",
    ]
    .iter()
    .any(|s| f.ends_with(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_constants() {
        assert_eq!(RRF_K_DEFAULT, 40.0);
        assert_eq!(RRF_K_THOROUGH, 60.0);
        assert_eq!(centrality_boost(0.0), 1.0);
        assert!((centrality_boost(1.0) - (1.0 + 0.3 * 2f32.ln())).abs() < 1e-6);
        assert_eq!(centrality_boost(1e9), 1.5);
        assert_eq!(centrality_boost(f32::NAN), 1.0);
        assert_eq!(centrality_boost(-3.0), 1.0);
    }

    #[test]
    fn vendor_paths() {
        for p in [
            "vendor/x.go",
            "a/node_modules/b.js",
            "dist/app.js",
            "build/gen.c",
            "target/debug/x.rs",
            "js/app.min.js",
        ] {
            assert!(is_vendor_path(p), "{p}");
        }
        for p in ["src/build.rs", "lib/vendors/mysql.kt", "distance.py", "src/target.c"] {
            assert!(!is_vendor_path(p), "{p}");
        }
    }

    #[test]
    fn dominant_and_active() {
        let w = seed_row([0.2, 0.1, 0.6, 0.1]);
        assert_eq!(w.dominant(), Some(Modality::STRUCTURAL));
        assert_eq!(w.active().len(), 4);
        assert_eq!(
            seed_row([0.0, 0.9, 0.1, 0.0]).active(),
            vec![Modality::TEXT, Modality::STRUCTURAL]
        );
        assert_eq!(ModalityWeights::default().dominant(), None);
    }
}
