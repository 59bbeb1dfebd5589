//! The four retrieval modalities.

use serde::{Deserialize, Serialize};

/// One of Maguyva's independent retrievers (doc/ARCHITECTURE.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Modality {
    /// Code by meaning: embeddings, packed binary vectors, Hamming search.
    Semantic,
    /// Literals, regexes and keyword ranking: trigrams and BM25.
    Text,
    /// Definitions and signatures from tree-sitter.
    Structural,
    /// Callers, callees and blast radius from the dependency graph.
    Graph,
}

impl Modality {
    /// Every modality, in the column order of the seed's weight table.
    pub const ALL: [Modality; 4] =
        [Modality::Semantic, Modality::Text, Modality::Structural, Modality::Graph];

    /// The name used in JSON and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Modality::Semantic => "semantic",
            Modality::Text => "text",
            Modality::Structural => "structural",
            Modality::Graph => "graph",
        }
    }

    /// Position in [`Modality::ALL`], for per-modality arrays.
    pub fn index(self) -> usize {
        match self {
            Modality::Semantic => 0,
            Modality::Text => 1,
            Modality::Structural => 2,
            Modality::Graph => 3,
        }
    }
}

impl std::fmt::Display for Modality {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The name of a modality was not one of `semantic`, `text`, `structural`, `graph`.
#[derive(Debug, Clone, thiserror::Error)]
#[error("unknown modality {0:?}; expected semantic, text, structural or graph")]
pub struct ParseModalityError(String);

impl std::str::FromStr for Modality {
    type Err = ParseModalityError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Modality::ALL
            .into_iter()
            .find(|m| m.as_str().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| ParseModalityError(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for m in Modality::ALL {
            assert_eq!(m.as_str().parse::<Modality>().unwrap(), m);
            assert_eq!(Modality::ALL[m.index()], m);
        }
        assert!("grep".parse::<Modality>().is_err());
    }
}
