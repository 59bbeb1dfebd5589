//! Per-modality weights and the fusion constants of doc/intents.md.

use maguyva_core::Modality;
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

/// A weight for each modality; a modality of weight 0 does not run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModalityWeights {
    /// Semantic embeddings.
    pub semantic: f32,
    /// Trigram text and BM25.
    pub text: f32,
    /// Tree-sitter definitions.
    pub structural: f32,
    /// The dependency graph.
    pub graph: f32,
}

impl Default for ModalityWeights {
    fn default() -> Self {
        ModalityWeights { semantic: 0.0, text: 0.0, structural: 0.0, graph: 0.0 }
    }
}

impl ModalityWeights {
    /// Weights in the seed's column order: semantic, text, structural, graph.
    pub const fn new(semantic: f32, text: f32, structural: f32, graph: f32) -> Self {
        ModalityWeights { semantic, text, structural, graph }
    }

    /// The weight of one modality.
    pub fn get(&self, m: Modality) -> f32 {
        match m {
            Modality::Semantic => self.semantic,
            Modality::Text => self.text,
            Modality::Structural => self.structural,
            Modality::Graph => self.graph,
        }
    }

    /// Sets the weight of one modality.
    pub fn set(&mut self, m: Modality, w: f32) {
        match m {
            Modality::Semantic => self.semantic = w,
            Modality::Text => self.text = w,
            Modality::Structural => self.structural = w,
            Modality::Graph => self.graph = w,
        }
    }

    /// Modalities with a positive weight, in the seed's order.
    pub fn active(&self) -> Vec<Modality> {
        Modality::ALL.into_iter().filter(|&m| self.get(m) > 0.0).collect()
    }

    /// The modality of the largest weight (the first on ties).
    pub fn dominant(&self) -> Option<Modality> {
        Modality::ALL.into_iter().filter(|&m| self.get(m) > 0.0).fold(
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
        let w = ModalityWeights::new(0.2, 0.1, 0.6, 0.1);
        assert_eq!(w.dominant(), Some(Modality::Structural));
        assert_eq!(w.active().len(), 4);
        assert_eq!(
            ModalityWeights::new(0.0, 0.9, 0.1, 0.0).active(),
            vec![Modality::Text, Modality::Structural]
        );
        assert_eq!(ModalityWeights::default().dominant(), None);
    }
}
