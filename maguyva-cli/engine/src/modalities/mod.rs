//! The registered modalities: the four built in (their adapters here, over
//! their crates) and any other, one line each in [`registered`]. A build
//! runs every one through [`BuildSet`], an opened index through
//! [`OpenSet`]; ranking, presets, ablations and tuning go over
//! [`modalities`].

pub(crate) mod graph;
pub(crate) mod semantic;
pub(crate) mod structural;
pub(crate) mod text;

use maguyva_core::{
    BuildInput, Built, BuiltModalities, ContentStore, Error, FileEntry, FileId, FragmentTable,
    Modality, ModalityPlugin, ModalityReader, OpenInput, OpenedModalities, Result,
};
use std::any::Any;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, OnceLock};

/// Every modality a build indexes and a search may run: the built-in four,
/// then the others (a line each).
fn registered() -> Vec<Arc<dyn ModalityPlugin>> {
    vec![
        Arc::new(semantic::SemanticModality),
        Arc::new(text::TextModality),
        Arc::new(structural::StructuralModality),
        Arc::new(graph::GraphModality),
        Arc::new(maguyva_paths::PathsModality),
        Arc::new(maguyva_history::HistoryModality),
    ]
}

/// The registered modalities, their ids registered with the core.
static PLUGINS: LazyLock<Vec<Arc<dyn ModalityPlugin>>> = LazyLock::new(|| {
    registered()
        .into_iter()
        // An id that cannot be registered (malformed, or one too many) is
        // left out; `tests::every_modality_registers` keeps that from
        // shipping.
        .filter(|p| Modality::register(p.modality().as_str()).is_ok())
        .collect()
});

/// The registered modalities' plugins, in order.
pub fn plugins() -> &'static [Arc<dyn ModalityPlugin>] {
    &PLUGINS
}

/// The registered modalities, in order (the built-in four first).
pub fn modalities() -> Vec<Modality> {
    plugins().iter().map(|p| p.modality()).collect()
}

/// The plugin of modality `m`.
pub fn plugin(m: Modality) -> Result<&'static Arc<dyn ModalityPlugin>> {
    Ok(&plugins()[position(m)?])
}

/// Where modality `m` is in [`plugins`].
fn position(m: Modality) -> Result<usize> {
    plugins()
        .iter()
        .position(|p| p.modality() == m)
        .ok_or_else(|| Error::InvalidQuery(format!("no modality {m} is registered")))
}

/// The error for a modality's reader that is not of the engine's type.
pub(crate) fn not_the_engines(m: Modality) -> Error {
    Error::InvalidQuery(format!("the {m} modality is not the engine's own"))
}

/// What a modality's build or opening made, or its failure, kept for every
/// later use.
type Kept<T> = std::result::Result<T, Arc<Error>>;

/// One build's modalities: each built once, on demand, into `out`.
pub(crate) struct BuildSet<'a> {
    pub(crate) root: &'a Path,
    pub(crate) files: &'a [FileEntry],
    pub(crate) content: &'a ContentStore,
    pub(crate) fragments: &'a FragmentTable,
    pub(crate) previous: Option<&'a Path>,
    pub(crate) kept: &'a [Option<FileId>],
    pub(crate) engine: &'a (dyn Any + Send + Sync),
    pub(crate) out: &'a Path,
    slots: Vec<OnceLock<(Kept<Built>, f64)>>,
}

impl<'a> BuildSet<'a> {
    /// A build of every registered modality.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        root: &'a Path,
        files: &'a [FileEntry],
        content: &'a ContentStore,
        fragments: &'a FragmentTable,
        previous: Option<&'a Path>,
        kept: &'a [Option<FileId>],
        engine: &'a (dyn Any + Send + Sync),
        out: &'a Path,
    ) -> BuildSet<'a> {
        let slots = plugins().iter().map(|_| OnceLock::new()).collect();
        BuildSet { root, files, content, fragments, previous, kept, engine, out, slots }
    }

    /// Builds every modality: those that build on none first, side by
    /// side, then the others. Returns each one's build time, in ms.
    pub(crate) fn build_all(&self) -> Result<Vec<(Modality, f64)>> {
        use rayon::prelude::*;
        let all = modalities();
        let (first, then): (Vec<Modality>, Vec<Modality>) = plugins()
            .iter()
            .map(|p| p.modality())
            .partition(|&m| plugin(m).map_or(true, |p| p.builds_on().is_empty()));
        for wave in [first, then] {
            wave.par_iter().map(|&m| self.built(m).map(|_| ())).collect::<Result<Vec<()>>>()?;
        }
        Ok(all.iter().zip(&self.slots).filter_map(|(&m, slot)| Some((m, slot.get()?.1))).collect())
    }
}

impl BuildSet<'_> {
    /// What every modality built (those whose build succeeded).
    pub(crate) fn into_built(self) -> Vec<(Modality, Built)> {
        modalities()
            .into_iter()
            .zip(self.slots)
            .filter_map(|(m, slot)| Some((m, slot.into_inner()?.0.ok()?)))
            .collect()
    }
}

/// What modality `m` built, among `built`, as the engine's type `T`.
pub(crate) fn built_as<T: Any + Send + Sync>(
    built: &[(Modality, Built)],
    m: Modality,
) -> Result<Arc<T>> {
    let missing = || Error::InvalidQuery(format!("the {m} modality built nothing"));
    let (_, b) = built.iter().find(|(x, _)| *x == m).ok_or_else(missing)?;
    Arc::downcast::<T>(b.clone()).map_err(|_| missing())
}

impl BuiltModalities for BuildSet<'_> {
    fn built(&self, m: Modality) -> Result<Built> {
        let i = position(m)?;
        let (built, _) = self.slots[i].get_or_init(|| {
            let t = std::time::Instant::now();
            let input = BuildInput {
                root: self.root,
                files: self.files,
                content: self.content,
                fragments: self.fragments,
                previous: self.previous,
                kept: self.kept,
                others: self,
                engine: self.engine,
            };
            let built = plugins()[i].build(&input, self.out).map_err(Arc::new);
            (built, crate::millis(t.elapsed()))
        });
        built.clone().map_err(|e| replay(&e, m))
    }
}

/// What the engine gives its own modalities when an index is opened.
pub(crate) struct EngineOpen {
    /// The settings queries are embedded with.
    pub(crate) settings: crate::IndexSettings,
    /// The manifest of the generation.
    pub(crate) manifest: Arc<maguyva_core::Manifest>,
    /// Their files, opened (headers and tables checked) when the index was.
    pub(crate) sections: std::sync::Mutex<Vec<(&'static str, maguyva_core::SectionFile)>>,
}

impl EngineOpen {
    /// The opened file `name`, or the file opened now.
    pub(crate) fn section(
        &self,
        gen_dir: &Path,
        name: &'static str,
        format: maguyva_core::store::FormatVersion,
    ) -> Result<maguyva_core::SectionFile> {
        let mut opened = self.sections.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match opened.iter().position(|(n, _)| *n == name) {
            Some(i) => Ok(opened.swap_remove(i).1),
            None => maguyva_core::SectionFile::open(&gen_dir.join(name), format),
        }
    }
}

/// The modalities of an opened index, each opened on its first use (a
/// search pays only for the ones its plan runs); a failure to open is kept
/// and reported to every later use too.
pub(crate) struct OpenSet {
    gen_dir: Option<PathBuf>,
    files: usize,
    fragments: Arc<FragmentTable>,
    content: Arc<ContentStore>,
    engine: EngineOpen,
    slots: Vec<OnceLock<Kept<Arc<dyn ModalityReader>>>>,
}

impl std::fmt::Debug for OpenSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state: Vec<String> = modalities()
            .iter()
            .zip(&self.slots)
            .map(|(m, s)| {
                let state = match s.get() {
                    None => "not opened",
                    Some(Ok(_)) => "opened",
                    Some(Err(_)) => "failed",
                };
                format!("{m}: {state}")
            })
            .collect();
        f.debug_struct("OpenSet").field("modalities", &state).finish()
    }
}

impl OpenSet {
    /// The modalities of the generation at `gen_dir` (`None` for one just
    /// built and not yet committed, whose modalities are all `ready`).
    pub(crate) fn new(
        gen_dir: Option<PathBuf>,
        files: usize,
        fragments: Arc<FragmentTable>,
        content: Arc<ContentStore>,
        engine: EngineOpen,
    ) -> OpenSet {
        let slots = plugins().iter().map(|_| OnceLock::new()).collect();
        OpenSet { gen_dir, files, fragments, content, engine, slots }
    }

    /// Modality `m`, opened already (what a build made of it).
    pub(crate) fn ready(self, m: Modality, reader: Arc<dyn ModalityReader>) -> OpenSet {
        if let Some(i) = plugins().iter().position(|p| p.modality() == m) {
            let _ = self.slots[i].set(Ok(reader));
        }
        self
    }

    /// Modality `m`, opened now if it was not.
    pub(crate) fn reader(&self, m: Modality) -> Result<&Arc<dyn ModalityReader>> {
        let i = position(m)?;
        let opened = self.slots[i].get_or_init(|| {
            let gen_dir = self.gen_dir.as_deref().ok_or_else(|| {
                Arc::new(Error::InvalidQuery(format!("the {m} modality was not built")))
            })?;
            let input = OpenInput {
                gen_dir,
                files: self.files,
                fragments: &self.fragments,
                content: &self.content,
                others: self,
                engine: &self.engine,
            };
            plugins()[i].open(&input).map_err(Arc::new)
        });
        opened.as_ref().map_err(|e| replay(e, m))
    }

    /// The reader of modality `m` as the engine's type `T`, only if it is
    /// open already (nothing is read from disk).
    pub(crate) fn opened_reader<T: 'static>(&self, m: Modality) -> Option<&T> {
        let slot = self.slots.get(position(m).ok()?)?;
        slot.get()?.as_ref().ok()?.as_any().downcast_ref::<T>()
    }

    /// The reader of modality `m` as the engine's type `T`.
    pub(crate) fn engine_reader<T: 'static>(&self, m: Modality) -> Result<&T> {
        self.reader(m)?.as_any().downcast_ref::<T>().ok_or_else(|| not_the_engines(m))
    }
}

impl OpenedModalities for OpenSet {
    fn opened(&self, m: Modality) -> Result<Arc<dyn ModalityReader>> {
        self.reader(m).cloned()
    }
}

/// The error of a failed load, again: a damaged file as itself (so that it
/// reads, and is handled, as at the first use), anything else with its cause.
fn replay(e: &Arc<Error>, modality: Modality) -> Error {
    match &**e {
        Error::Corrupt { path, reason } => Error::corrupt(path, reason.clone()),
        Error::IncompatibleFormat { path, found, oldest, current } => Error::IncompatibleFormat {
            path: path.clone(),
            found: *found,
            oldest: *oldest,
            current: *current,
        },
        _ => Error::modality(modality, Shared(e.clone())),
    }
}

/// A shared error, shown as its original.
#[derive(Debug)]
struct Shared(Arc<Error>);

impl std::fmt::Display for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for Shared {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&*self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_is_replayed_as_itself_or_with_its_cause() {
        let corrupt = Arc::new(Error::corrupt("/i/semantic.mgv", "bad"));
        for _ in 0..2 {
            let e = replay(&corrupt, Modality::SEMANTIC);
            assert!(matches!(e, Error::Corrupt { .. }), "{e}");
            assert!(e.to_string().contains("semantic.mgv"));
        }
        let other = Arc::new(Error::InvalidQuery("no key".into()));
        let chain = maguyva_core::error_chain(&replay(&other, Modality::SEMANTIC));
        assert!(chain.contains("semantic modality") && chain.contains("no key"), "{chain}");
    }

    #[test]
    fn every_modality_registers() {
        assert_eq!(plugins().len(), registered().len(), "a modality's id did not register");
        assert_eq!(modalities()[..4], Modality::BUILT_IN);
        for p in plugins() {
            assert!(!p.files().is_empty() && !p.summary().is_empty(), "{}", p.modality());
        }
    }
}
