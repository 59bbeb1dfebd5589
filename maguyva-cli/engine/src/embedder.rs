//! Which embedder the semantic modality uses, and how to make it.

use maguyva_core::{Error, Result};
use maguyva_semantic::{CodeModel, DEFAULT_CORPUS_DIMENSIONS, Embedder};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The environment variable that holds a Voyage AI key; when set, Voyage
/// embeds unless another embedder is asked for.
pub const VOYAGE_KEY_VAR: &str = "VOYAGE_API_KEY";
/// The environment variable that points the Voyage client elsewhere (tests
/// use a local server).
pub const VOYAGE_URL_VAR: &str = "MAGUYVA_VOYAGE_URL";

/// The semantic modality's embedder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EmbedderChoice {
    /// The built-in default: latent semantic analysis learned from the
    /// indexed corpus, of this many dimensions, joined with the code model
    /// built into the program. No download, no key.
    Joined {
        /// Dimensions of the corpus model.
        dimensions: usize,
    },
    /// Latent semantic analysis learned from the indexed corpus alone, of
    /// this many dimensions.
    Corpus {
        /// Dimensions.
        dimensions: usize,
    },
    /// The built-in code model alone.
    Code,
    /// A model2vec-format model folder.
    Model(PathBuf),
    /// Voyage AI, with this many bits per vector.
    Voyage {
        /// 256, 512, 1024 or 2048.
        dimensions: usize,
    },
}

/// The code model built into this program (the engine's `builtin-model`
/// feature), or an error saying it was built without.
pub(crate) fn builtin_code_model() -> Result<Arc<CodeModel>> {
    #[cfg(feature = "builtin-model")]
    return Ok(CodeModel::builtin()?);
    #[cfg(not(feature = "builtin-model"))]
    Err(Error::InvalidQuery(
        "this program was built without the built-in code model (the engine's builtin-model \
         feature): choose the corpus embedder (--embedder corpus)"
            .into(),
    ))
}

impl Default for EmbedderChoice {
    fn default() -> Self {
        EmbedderChoice::builtin()
    }
}

impl EmbedderChoice {
    /// The built-in default, which needs no download, key or server: the
    /// corpus model joined with the built-in code model, or, in a program
    /// built without that model (the engine's `builtin-model` feature off),
    /// the corpus model alone.
    pub fn builtin() -> EmbedderChoice {
        match cfg!(feature = "builtin-model") {
            true => EmbedderChoice::Joined { dimensions: DEFAULT_CORPUS_DIMENSIONS },
            false => EmbedderChoice::Corpus { dimensions: DEFAULT_CORPUS_DIMENSIONS },
        }
    }

    /// The dimensions of the corpus model, for a choice that learns one.
    pub fn corpus_dimensions(&self) -> Option<usize> {
        match self {
            EmbedderChoice::Joined { dimensions } | EmbedderChoice::Corpus { dimensions } => {
                Some(*dimensions)
            }
            _ => None,
        }
    }

    /// Voyage when its key is set in the environment, else the built-in.
    pub fn from_environment() -> EmbedderChoice {
        match std::env::var(VOYAGE_KEY_VAR) {
            Ok(k) if !k.trim().is_empty() => EmbedderChoice::Voyage { dimensions: 1024 },
            _ => EmbedderChoice::builtin(),
        }
    }

    /// An identity for the manifest; changing it rebuilds the index.
    pub fn identity(&self) -> Result<String> {
        Ok(match self {
            EmbedderChoice::Joined { dimensions } => {
                format!("corpus-lsa:v1:{dimensions}+{}", builtin_code_model()?.identity())
            }
            EmbedderChoice::Corpus { dimensions } => format!("corpus-lsa:v1:{dimensions}"),
            EmbedderChoice::Code => builtin_code_model()?.identity(),
            EmbedderChoice::Model(dir) => {
                let file = dir.join("model.safetensors");
                let bytes = std::fs::read(&file).map_err(|e| Error::io("reading", &file, e))?;
                format!("model2vec:{}:{:08x}", dir.display(), crc32fast::hash(&bytes))
            }
            EmbedderChoice::Voyage { dimensions } => {
                format!("voyage:voyage-code-3:ubinary:{dimensions}")
            }
        })
    }

    /// The embedder itself, for a choice that is not learned from the corpus.
    pub fn open(&self) -> Result<Option<Arc<dyn Embedder>>> {
        Ok(match self {
            EmbedderChoice::Joined { .. } | EmbedderChoice::Corpus { .. } => None,
            EmbedderChoice::Code => Some(builtin_code_model()?),
            EmbedderChoice::Model(dir) => Some(open_model(dir)?),
            EmbedderChoice::Voyage { dimensions } => Some(open_voyage(*dimensions)?),
        })
    }

    /// The choice written so that [`EmbedderChoice::parse`] reads it back:
    /// `joined:DIMENSIONS`, `corpus:DIMENSIONS`, `code`,
    /// `voyage:DIMENSIONS` or a model folder's path.
    pub fn spec(&self) -> String {
        match self {
            EmbedderChoice::Joined { dimensions } => format!("joined:{dimensions}"),
            EmbedderChoice::Corpus { dimensions } => format!("corpus:{dimensions}"),
            EmbedderChoice::Code => "code".to_string(),
            EmbedderChoice::Model(dir) => dir.display().to_string(),
            EmbedderChoice::Voyage { dimensions } => format!("voyage:{dimensions}"),
        }
    }

    /// A model2vec-format model folder, as `--model` takes it; kept as an
    /// absolute path, so that an index records a folder any later run finds.
    pub fn model_dir(path: &str) -> std::result::Result<EmbedderChoice, String> {
        let p = Path::new(path);
        if p.join("model.safetensors").is_file() {
            Ok(EmbedderChoice::Model(std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())))
        } else {
            Err(format!("{path:?} is not a folder with model.safetensors"))
        }
    }

    /// Parses `builtin` (the same as `joined`), `joined[:DIMENSIONS]`,
    /// `corpus[:DIMENSIONS]`, `code`, `voyage[:DIMENSIONS]` or a model
    /// folder's path.
    pub fn parse(s: &str) -> std::result::Result<EmbedderChoice, String> {
        let dimensions = |n: &str| match n.parse::<usize>() {
            Ok(d) if (1..=4096).contains(&d) => Ok(d),
            _ => Err(format!("{s:?}: corpus dimensions must be a number from 1 to 4096")),
        };
        match s {
            "builtin" | "joined" => Ok(EmbedderChoice::builtin()),
            "corpus" => Ok(EmbedderChoice::Corpus { dimensions: DEFAULT_CORPUS_DIMENSIONS }),
            "code" => Ok(EmbedderChoice::Code),
            "voyage" => Ok(EmbedderChoice::Voyage { dimensions: 1024 }),
            _ if s.starts_with("corpus:") => {
                Ok(EmbedderChoice::Corpus { dimensions: dimensions(&s["corpus:".len()..])? })
            }
            _ if s.starts_with("joined:") => {
                Ok(EmbedderChoice::Joined { dimensions: dimensions(&s["joined:".len()..])? })
            }
            _ if s.starts_with("voyage:") => {
                let n = &s["voyage:".len()..];
                match n.parse::<usize>() {
                    Ok(d) if maguyva_semantic::VOYAGE_DIMENSIONS.contains(&d) => {
                        Ok(EmbedderChoice::Voyage { dimensions: d })
                    }
                    _ => Err(format!(
                        "{n:?} is not a Voyage output dimension; use 256, 512, 1024 or 2048"
                    )),
                }
            }
            path => EmbedderChoice::model_dir(path).map_err(|_| {
                format!(
                    "{path:?} is not builtin, joined[:N], corpus[:N], code, voyage[:N], or a \
                     folder with model.safetensors"
                )
            }),
        }
    }
}

#[cfg(feature = "model2vec")]
fn open_model(dir: &Path) -> Result<Arc<dyn Embedder>> {
    Ok(Arc::new(maguyva_semantic::StaticModel::load(dir)?))
}

#[cfg(not(feature = "model2vec"))]
fn open_model(dir: &Path) -> Result<Arc<dyn Embedder>> {
    Err(Error::InvalidQuery(format!(
        "cannot load the model in {}: this build has no model2vec support (feature `model2vec`)",
        dir.display()
    )))
}

#[cfg(feature = "voyage")]
fn open_voyage(dimensions: usize) -> Result<Arc<dyn Embedder>> {
    use maguyva_semantic::{VoyageClient, VoyageConfig};
    let key = std::env::var(VOYAGE_KEY_VAR)
        .map_err(|_| Error::InvalidQuery(format!("{VOYAGE_KEY_VAR} is not set")))?;
    let mut config = VoyageConfig::new(key);
    config.dimension = dimensions;
    if let Ok(url) = std::env::var(VOYAGE_URL_VAR) {
        config.base_url = url;
    }
    Ok(Arc::new(VoyageClient::new(config)?))
}

#[cfg(not(feature = "voyage"))]
fn open_voyage(_dimensions: usize) -> Result<Arc<dyn Embedder>> {
    Err(Error::InvalidQuery(
        "cannot embed with Voyage: this build has no Voyage client (feature `voyage`)".into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_parse() {
        assert_eq!(EmbedderChoice::parse("builtin"), Ok(EmbedderChoice::builtin()));
        assert_eq!(
            EmbedderChoice::parse("voyage:512"),
            Ok(EmbedderChoice::Voyage { dimensions: 512 })
        );
        assert!(EmbedderChoice::parse("voyage:300").unwrap_err().contains("256, 512"));
        assert!(EmbedderChoice::parse("/no/such/model").unwrap_err().contains("model.safetensors"));
        assert!(EmbedderChoice::parse("corpus:0").is_err());
        assert!(EmbedderChoice::parse("joined:5000").is_err());
        assert_eq!(EmbedderChoice::parse("joined"), Ok(EmbedderChoice::builtin()));
        for choice in [
            EmbedderChoice::builtin(),
            EmbedderChoice::Joined { dimensions: 32 },
            EmbedderChoice::Corpus { dimensions: 64 },
            EmbedderChoice::Code,
            EmbedderChoice::Voyage { dimensions: 256 },
        ] {
            assert_eq!(EmbedderChoice::parse(&choice.spec()), Ok(choice));
        }
    }

    #[test]
    fn each_choice_has_its_own_identity() {
        let ids: Vec<String> = [
            EmbedderChoice::builtin(),
            EmbedderChoice::Corpus { dimensions: DEFAULT_CORPUS_DIMENSIONS },
            EmbedderChoice::Code,
        ]
        .iter()
        .map(|c| c.identity().expect("the built-in model reads"))
        .collect();
        assert!(ids[0] != ids[1] && ids[1] != ids[2] && ids[0] != ids[2], "{ids:?}");
        assert!(ids[0].contains(&ids[2]), "the joined identity names the code model: {ids:?}");
    }
}
