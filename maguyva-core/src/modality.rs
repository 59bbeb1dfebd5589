//! Retrieval modalities, by id: the four built in (semantic, text,
//! structural, graph) and any other a program registers.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::sync::{LazyLock, PoisonError, RwLock};

/// One of Maguyva's independent retrievers (doc/ARCHITECTURE.md), by its
/// id: a short lowercase name, used in JSON, on the command line and in
/// ranking files. Modalities order as they were registered: the four built
/// in first, in the column order of the seed's weight table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Modality(&'static str);

/// How many modalities a process can register: weights are kept in arrays
/// of this length.
pub const MAX_MODALITIES: usize = 8;

/// The registered ids, in order; the built-in four first.
static REGISTERED: LazyLock<RwLock<Vec<&'static str>>> =
    LazyLock::new(|| RwLock::new(Modality::BUILT_IN.iter().map(|m| m.0).collect()));

impl Modality {
    /// Code by meaning: embeddings, packed binary vectors, Hamming search.
    pub const SEMANTIC: Modality = Modality("semantic");
    /// Literals, regexes and keyword ranking: trigrams and BM25.
    pub const TEXT: Modality = Modality("text");
    /// Definitions and signatures from tree-sitter.
    pub const STRUCTURAL: Modality = Modality("structural");
    /// Callers, callees and blast radius from the dependency graph.
    pub const GRAPH: Modality = Modality("graph");

    /// The four built in, in the column order of the seed's weight table.
    pub const BUILT_IN: [Modality; 4] =
        [Modality::SEMANTIC, Modality::TEXT, Modality::STRUCTURAL, Modality::GRAPH];

    /// A modality's id, as its plugin names it (`const PATHS: Modality =
    /// Modality::named("paths")`); it takes part once the engine has
    /// registered it ([`Modality::register`]).
    pub const fn named(id: &'static str) -> Modality {
        Modality(id)
    }

    /// Registers a modality by its id (lowercase ASCII letters, digits and
    /// `_`, starting with a letter), or returns the one registered with it.
    pub fn register(id: &'static str) -> Result<Modality, ModalityError> {
        let valid = id.len() <= 32
            && id.starts_with(|c: char| c.is_ascii_lowercase())
            && id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !valid {
            return Err(ModalityError::BadId(id.to_string()));
        }
        let mut registered = REGISTERED.write().unwrap_or_else(PoisonError::into_inner);
        if !registered.contains(&id) {
            if registered.len() == MAX_MODALITIES {
                return Err(ModalityError::TooMany(id.to_string()));
            }
            registered.push(id);
        }
        Ok(Modality(id))
    }

    /// Every registered modality, in order.
    pub fn all() -> Vec<Modality> {
        let registered = REGISTERED.read().unwrap_or_else(PoisonError::into_inner);
        registered.iter().map(|&id| Modality(id)).collect()
    }

    /// The id used in JSON and on the command line.
    pub fn as_str(self) -> &'static str {
        self.0
    }

    /// Position among the registered modalities, for per-modality arrays
    /// (below [`MAX_MODALITIES`]); the built-in four are 0 to 3.
    pub fn index(self) -> usize {
        if let Some(i) = Modality::BUILT_IN.iter().position(|&m| m == self) {
            return i;
        }
        let registered = REGISTERED.read().unwrap_or_else(PoisonError::into_inner);
        // A modality is only ever made by `register` (or is built in), so
        // it is found; the last slot is a safe answer otherwise.
        registered.iter().position(|&id| id == self.0).unwrap_or(MAX_MODALITIES - 1)
    }
}

impl PartialOrd for Modality {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Modality {
    /// In the order of registration, so that lists keyed by modality keep
    /// the seed's column order.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.index().cmp(&other.index()).then(self.0.cmp(other.0))
    }
}

impl std::fmt::Display for Modality {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

/// A modality that cannot be named or registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModalityError {
    /// No registered modality has this id.
    #[error("unknown modality {0:?}; expected one of {names}", names = registered_names())]
    Unknown(String),
    /// The id is not a lowercase word.
    #[error("a modality's id is a lowercase word of letters, digits and _, not {0:?}")]
    BadId(String),
    /// Every slot is taken.
    #[error("cannot register modality {0:?}: at most {MAX_MODALITIES} modalities")]
    TooMany(String),
}

/// The registered ids, comma-separated.
fn registered_names() -> String {
    Modality::all().iter().map(|m| m.as_str()).collect::<Vec<_>>().join(", ")
}

/// The old name of [`ModalityError`], for what parsing a name returns.
pub type ParseModalityError = ModalityError;

impl std::str::FromStr for Modality {
    type Err = ModalityError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Modality::all()
            .into_iter()
            .find(|m| m.as_str().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| ModalityError::Unknown(s.to_string()))
    }
}

impl Serialize for Modality {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0)
    }
}

impl<'de> Deserialize<'de> for Modality {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Modality, D::Error> {
        let name = String::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for m in Modality::BUILT_IN {
            assert_eq!(m.as_str().parse::<Modality>().unwrap(), m);
            assert_eq!(Modality::BUILT_IN[m.index()], m);
        }
        assert!("grep".parse::<Modality>().is_err());
    }

    #[test]
    fn a_registered_modality_is_named_ordered_and_counted() {
        let paths = Modality::register("test_paths").unwrap();
        assert_eq!(Modality::register("test_paths").unwrap(), paths, "registering again");
        assert_eq!("test_paths".parse::<Modality>().unwrap(), paths);
        assert!(paths.index() >= 4 && paths.index() < MAX_MODALITIES);
        assert!(Modality::GRAPH < paths && Modality::SEMANTIC < Modality::TEXT);
        assert!(Modality::all().contains(&paths));
        assert_eq!(serde_json::to_string(&paths).unwrap(), "\"test_paths\"");
        for bad in ["", "Paths", "9lives", "has space", "dash-ed"] {
            assert!(matches!(Modality::register(bad), Err(ModalityError::BadId(_))), "{bad}");
        }
    }
}
