//! Parts of an opened index that are read on first use: most searches need
//! one or two modalities, and a part never used costs nothing, not even the
//! checksum of its sections.

use maguyva_core::{Error, Modality, Result};
use std::sync::{Arc, Mutex, OnceLock};

type Loader<T> = Box<dyn FnOnce() -> Result<T> + Send>;

/// A value loaded once, on first use, by a loader given up front; its
/// failure is kept and reported to every later use too.
pub(crate) struct Lazy<T> {
    modality: Modality,
    cell: OnceLock<std::result::Result<T, Arc<Error>>>,
    loader: Mutex<Option<Loader<T>>>,
}

impl<T> std::fmt::Debug for Lazy<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match self.cell.get() {
            None => "not loaded",
            Some(Ok(_)) => "loaded",
            Some(Err(_)) => "failed",
        };
        write!(f, "Lazy({}, {state})", self.modality)
    }
}

impl<T> Lazy<T> {
    /// A value that is loaded already.
    pub(crate) fn ready(modality: Modality, value: T) -> Lazy<T> {
        Lazy { modality, cell: OnceLock::from(Ok(value)), loader: Mutex::new(None) }
    }

    /// A value `loader` makes on first use.
    pub(crate) fn new(
        modality: Modality,
        loader: impl FnOnce() -> Result<T> + Send + 'static,
    ) -> Lazy<T> {
        Lazy { modality, cell: OnceLock::new(), loader: Mutex::new(Some(Box::new(loader))) }
    }

    /// The value, loading it when this is the first use.
    pub(crate) fn get(&self) -> Result<&T> {
        let loaded = self.cell.get_or_init(|| {
            let loader = match self.loader.lock() {
                Ok(mut l) => l.take(),
                Err(poisoned) => poisoned.into_inner().take(),
            };
            match loader {
                Some(load) => load().map_err(Arc::new),
                None => Err(Arc::new(Error::InvalidQuery(format!(
                    "the {} modality could not be loaded",
                    self.modality
                )))),
            }
        });
        loaded.as_ref().map_err(|e| replay(e, self.modality))
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
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn loads_once_on_first_use() {
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = calls.clone();
        let lazy = Lazy::new(Modality::Text, move || {
            counted.fetch_add(1, Ordering::SeqCst);
            Ok(7)
        });
        assert_eq!(calls.load(Ordering::SeqCst), 0);
        assert_eq!(*lazy.get().unwrap(), 7);
        assert_eq!(*lazy.get().unwrap(), 7);
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert_eq!(*Lazy::ready(Modality::Graph, 3).get().unwrap(), 3);
    }

    #[test]
    fn a_failure_is_reported_to_every_use() {
        let lazy: Lazy<u8> =
            Lazy::new(Modality::Semantic, || Err(Error::corrupt("/i/semantic.mgv", "bad")));
        for _ in 0..2 {
            let e = lazy.get().unwrap_err();
            assert!(matches!(e, Error::Corrupt { .. }), "{e}");
            assert!(e.to_string().contains("semantic.mgv"));
        }
        let lazy: Lazy<u8> =
            Lazy::new(Modality::Semantic, || Err(Error::InvalidQuery("no key".into())));
        let e = lazy.get().unwrap_err();
        let chain = format!("{:#}", anyhow_like(&e));
        assert!(chain.contains("semantic modality") && chain.contains("no key"), "{chain}");
    }

    fn anyhow_like(e: &Error) -> String {
        let mut out = e.to_string();
        let mut source = std::error::Error::source(e);
        while let Some(s) = source {
            out.push_str(&format!(": {s}"));
            source = s.source();
        }
        out
    }
}
