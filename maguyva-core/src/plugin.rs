//! The interface a modality implements to take part in indexing and
//! search: its id, the files it writes, how it builds them from the corpus
//! every modality shares (and refreshes them from the generation they
//! replace), how it opens and checks them, the parameters it takes, and the
//! retriever that answers a query with ranked hits. The engine runs every
//! registered modality through it (`doc/adding-a-modality.md`).

use crate::content::ContentStore;
use crate::error::Result;
use crate::fragment::FragmentTable;
use crate::ids::FileId;
use crate::manifest::FileEntry;
use crate::modality::Modality;
use crate::retriever::Retriever;
use crate::sections::SectionFile;
use crate::store::FormatVersion;
use std::any::Any;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// One file a modality writes in a generation folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexFile {
    /// Its name in the folder (`text.mgv`).
    pub name: &'static str,
    /// Its kind and format version (`doc/format/`).
    pub format: FormatVersion,
    /// Whether it is a sectioned file (`sections.md`), whose every section
    /// [`ModalityPlugin::verify`] checks by default; else a framed one.
    pub sectioned: bool,
}

/// A number a modality takes at query time: ranking files set it, by the
/// modality's id and its name, and `maguyva eval --tune` learns it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ParamSpec {
    /// Its name.
    pub name: &'static str,
    /// What it does, one line.
    pub doc: &'static str,
    /// Its value unless a ranking gives another.
    pub default: f64,
    /// The smallest and largest values that make sense (the range tuning
    /// searches).
    pub range: (f64, f64),
}

/// Parameter values by name, as a ranking gives them; a parameter left out
/// has its default ([`ParamSpec::default`]).
#[derive(Debug, Clone, Copy)]
pub struct Params<'a> {
    specs: &'a [ParamSpec],
    given: Option<&'a BTreeMap<String, f64>>,
}

impl<'a> Params<'a> {
    /// The values `given` (if any) of the parameters `specs` declares.
    pub fn new(specs: &'a [ParamSpec], given: Option<&'a BTreeMap<String, f64>>) -> Params<'a> {
        Params { specs, given }
    }

    /// The value of parameter `name`: the one given, else its default, else 0.
    pub fn get(&self, name: &str) -> f64 {
        self.given
            .and_then(|g| g.get(name).copied())
            .or_else(|| self.specs.iter().find(|s| s.name == name).map(|s| s.default))
            .unwrap_or(0.0)
    }
}

/// What every modality builds from: the files a build read, their text, and
/// the fragments every modality shares; and, for a refresh, the generation
/// it replaces and which files are unchanged since.
#[derive(Clone, Copy)]
pub struct BuildInput<'a> {
    /// The indexed root.
    pub root: &'a Path,
    /// The files indexed; a file's id is its position.
    pub files: &'a [FileEntry],
    /// Their text (read on demand for the files a refresh did not read).
    pub content: &'a ContentStore,
    /// The fragments: runs of whole lines, the unit of every hit.
    pub fragments: &'a FragmentTable,
    /// The generation this build replaces, when it may take from it.
    pub previous: Option<&'a Path>,
    /// For each file, the file of `previous` it is, when its text and
    /// language are the same.
    pub kept: &'a [Option<FileId>],
    /// The modalities built beside this one, for one that builds on
    /// another's result (the graph on the structural modality's symbols).
    pub others: &'a dyn BuiltModalities,
    /// What the engine passes its own modalities (its build state); other
    /// modalities ignore it.
    pub engine: &'a (dyn Any + Send + Sync),
}

/// What a modality built, for the engine to keep (`Box<dyn Any>`): the
/// engine's own modalities return their opened indexes, so that a build
/// answers without reading its files back.
pub type Built = Arc<dyn Any + Send + Sync>;

/// The modalities of one build, by id: what another one built (built on
/// demand, once).
pub trait BuiltModalities: Sync {
    /// What modality `m` built.
    fn built(&self, m: Modality) -> Result<Built>;
}

/// What a modality opens its files with.
#[derive(Clone, Copy)]
pub struct OpenInput<'a> {
    /// The generation folder.
    pub gen_dir: &'a Path,
    /// How many files the index holds (the manifest's).
    pub files: usize,
    /// The fragments every hit names.
    pub fragments: &'a Arc<FragmentTable>,
    /// The text of every file, read from the tree and checked.
    pub content: &'a Arc<ContentStore>,
    /// The other modalities of the same index, opened on demand.
    pub others: &'a dyn OpenedModalities,
    /// What the engine passes its own modalities; other modalities ignore it.
    pub engine: &'a (dyn Any + Send + Sync),
}

/// The modalities of one opened index, by id.
pub trait OpenedModalities: Sync {
    /// Modality `m`, opened (once) if it was not.
    fn opened(&self, m: Modality) -> Result<Arc<dyn ModalityReader>>;
}

/// A modality's files, opened: what answers queries.
pub trait ModalityReader: Send + Sync + Any {
    /// A retriever for one query, with the ranking's parameters of this
    /// modality; `engine` is the engine's ranking, for its own modalities.
    fn retriever(
        &self,
        params: Params<'_>,
        engine: &(dyn Any + Send + Sync),
    ) -> Result<Box<dyn Retriever + '_>>;

    /// Itself, to be downcast by the code that made it.
    fn as_any(&self) -> &dyn Any;
}

/// A retrieval modality as the engine runs it.
pub trait ModalityPlugin: Send + Sync {
    /// Its id.
    fn modality(&self) -> Modality;

    /// What it finds, in a few words (listings and `--help`).
    fn summary(&self) -> &'static str;

    /// The files it writes in a generation folder.
    fn files(&self) -> Vec<IndexFile>;

    /// Its identity, recorded in the manifest: an index built with another
    /// (another format version, other settings) is rebuilt. By default its
    /// files' format versions.
    fn component(&self, engine: &(dyn Any + Send + Sync)) -> Result<String> {
        let _ = engine;
        let versions: Vec<String> = self
            .files()
            .iter()
            .map(|f| format!("{}:v{}", String::from_utf8_lossy(&f.format.kind), f.format.current))
            .collect();
        Ok(versions.join(","))
    }

    /// The parameters it takes at query time.
    fn params(&self) -> Vec<ParamSpec> {
        Vec::new()
    }

    /// The modalities whose build it takes as input (through
    /// [`BuildInput::others`]): they are built before it. The others are
    /// built side by side.
    fn builds_on(&self) -> Vec<Modality> {
        Vec::new()
    }

    /// Builds its files into `out` (a generation being written), taking
    /// what it can from `input.previous` when that is given (a refresh):
    /// the result must be what a build from scratch of the same corpus
    /// writes.
    fn build(&self, input: &BuildInput<'_>, out: &Path) -> Result<Built>;

    /// Opens its files in a generation folder, checking them against the
    /// corpus (`input.files`, `input.fragments`).
    fn open(&self, input: &OpenInput<'_>) -> Result<Arc<dyn ModalityReader>>;

    /// Checks every byte of its files against their checksums, so that
    /// damage a search would meet later is reported now.
    fn verify(&self, gen_dir: &Path) -> Result<()> {
        for file in self.files() {
            let path = gen_dir.join(file.name);
            match file.sectioned {
                true => SectionFile::open(&path, file.format)?.verify()?,
                false => {
                    crate::store::read_framed(&path, file.format)?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_fall_back_to_their_defaults() {
        let specs = [ParamSpec { name: "name_weight", doc: "", default: 2.0, range: (0.0, 4.0) }];
        let given = BTreeMap::from([("name_weight".to_string(), 3.0)]);
        assert_eq!(Params::new(&specs, Some(&given)).get("name_weight"), 3.0);
        assert_eq!(Params::new(&specs, None).get("name_weight"), 2.0);
        assert_eq!(Params::new(&specs, None).get("unknown"), 0.0);
    }
}
