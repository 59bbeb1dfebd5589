//! Rust `use` paths resolved the way the compiler reads them: a crate is
//! a `src/` folder with `lib.rs` or `main.rs`; a file's module path is its
//! path inside that folder (`a/b.rs` and `a/b/mod.rs` are `a::b`); `crate::`,
//! `self::` and `super::` start from the crate or the file's module, a
//! workspace crate's name (from its `Cargo.toml`) from that crate, and a
//! 2018-style path from the file's own module when it names a child. A
//! path names the deepest module it reaches: `use crate::a::Item` depends
//! on `a.rs`, and `use crate::Item` on the crate root.

use crate::graph::ModuleRoot;
use crate::input::FileInfo;
use crate::resolve::dir_of;
use maguyva_core::Language;
use std::collections::HashMap;

/// The crates of a repository and the module each Rust file is.
#[derive(Debug, Default, Clone)]
pub(crate) struct RustCrates {
    /// (crate src folder, module path) → file.
    modules: HashMap<(String, Vec<String>), u32>,
    /// file → (crate src folder, module path).
    file_module: HashMap<u32, (String, Vec<String>)>,
    /// crate name → crate src folder.
    by_name: HashMap<String, String>,
}

impl RustCrates {
    pub(crate) fn new(files: &[FileInfo], roots: &[ModuleRoot]) -> RustCrates {
        let mut crates: Vec<String> = files
            .iter()
            .filter(|f| f.language == Some(Language::Rust))
            .filter_map(|f| {
                let name = f.path.rsplit('/').next()?;
                let dir = dir_of(&f.path);
                ((name == "lib.rs" || name == "main.rs")
                    && (dir.is_empty() || dir == "src" || dir.ends_with("/src")))
                .then(|| dir.to_string())
            })
            .collect();
        crates.sort();
        crates.dedup();
        let mut out = RustCrates::default();
        if crates.is_empty() {
            return out;
        }
        for r in roots.iter().filter(|r| r.language == Language::Rust) {
            if crates.contains(&r.dir) {
                out.by_name.insert(r.path.replace('-', "_"), r.dir.clone());
            }
        }
        for (i, f) in files.iter().enumerate() {
            if f.language != Some(Language::Rust) {
                continue;
            }
            // The innermost crate folder holding the file.
            let Some(krate) = crates
                .iter()
                .filter(|c| c.is_empty() || f.path.starts_with(&format!("{c}/")))
                .max_by_key(|c| c.len())
            else {
                continue;
            };
            let inner = if krate.is_empty() { f.path.as_str() } else { &f.path[krate.len() + 1..] };
            let Some(stem) = inner.strip_suffix(".rs") else { continue };
            let mut parts: Vec<String> = stem.split('/').map(str::to_string).collect();
            if parts.first().is_some_and(|p| p == "bin") {
                continue;
            }
            if stem == "lib" || stem == "main" {
                // main.rs is the root only of a crate without lib.rs.
                let lib = format!("{}{}lib.rs", krate, if krate.is_empty() { "" } else { "/" });
                if stem == "main" && files.iter().any(|x| x.path == lib) {
                    continue;
                }
                parts.clear();
            } else if parts.last().is_some_and(|p| p == "mod") {
                parts.pop();
            }
            let key = (krate.clone(), parts);
            out.modules.entry(key.clone()).or_insert(i as u32);
            out.file_module.insert(i as u32, key);
        }
        out
    }

    /// The file a `use` path (`crate::a::B`, `super::c`, `other_crate::d`,
    /// `child::E`) in `file` depends on; None for paths outside the
    /// repository's crates.
    pub(crate) fn resolve(&self, file: u32, path: &str) -> Option<u32> {
        let (krate, here) = self.file_module.get(&file)?;
        let segs: Vec<&str> =
            path.split("::").map(str::trim).filter(|s| !s.is_empty() && *s != "*").collect();
        let first = *segs.first()?;
        let mut krate = krate.clone();
        let (base, rest): (Vec<String>, &[&str]) = match first {
            "crate" => (Vec::new(), &segs[1..]),
            "self" => (here.clone(), &segs[1..]),
            "super" => {
                let mut base = here.clone();
                let mut i = 0;
                while segs.get(i) == Some(&"super") {
                    base.pop()?;
                    i += 1;
                }
                (base, &segs[i..])
            }
            name if self.by_name.contains_key(name) => {
                krate = self.by_name.get(name)?.clone();
                (Vec::new(), &segs[1..])
            }
            _ => {
                // A 2018 path relative to this module counts only when it
                // names one of its child modules.
                let mut child = here.clone();
                child.push(first.to_string());
                if !self.modules.contains_key(&(krate.clone(), child)) {
                    return None;
                }
                (here.clone(), &segs[..])
            }
        };
        for take in (0..=rest.len()).rev() {
            let mut module = base.clone();
            module.extend(rest[..take].iter().map(|s| s.to_string()));
            if let Some(&f) = self.modules.get(&(krate.clone(), module)) {
                return (f != file).then_some(f);
            }
        }
        None
    }

    /// Whether `file` lies in a known crate.
    pub(crate) fn knows(&self, file: u32) -> bool {
        self.file_module.contains_key(&file)
    }

    /// The file a path as a user writes it names: `crate_name`,
    /// `crate_name::a::b` (or `crate::a` when there is one crate).
    pub(crate) fn resolve_name(&self, path: &str) -> Option<u32> {
        let segs: Vec<&str> = path.split("::").map(str::trim).filter(|s| !s.is_empty()).collect();
        let first = segs.first()?.replace('-', "_");
        let krate = match self.by_name.get(&first) {
            Some(k) => k.clone(),
            None if first == "crate" => {
                let mut all: Vec<&String> = self.modules.keys().map(|(k, _)| k).collect();
                all.sort();
                all.dedup();
                match all.as_slice() {
                    [one] => (*one).clone(),
                    _ => return None,
                }
            }
            None => return None,
        };
        (0..segs.len()).rev().find_map(|take| {
            let module: Vec<String> = segs[1..=take].iter().map(|s| s.to_string()).collect();
            self.modules.get(&(krate.clone(), module)).copied()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(paths: &[&str]) -> Vec<FileInfo> {
        crate::input::files_in(Language::Rust, paths)
    }

    #[test]
    fn use_paths_name_modules_and_crate_roots() {
        let f = files(&[
            "core/src/lib.rs",
            "core/src/a.rs",
            "core/src/a/b.rs",
            "core/src/c/mod.rs",
            "cli/src/main.rs",
            "cli/src/args.rs",
        ]);
        let roots = [ModuleRoot {
            dir: "core/src".into(),
            path: "acme-core".into(),
            language: Language::Rust,
        }];
        let r = RustCrates::new(&f, &roots);
        let at = |file: u32, path: &str| r.resolve(file, path).map(|i| f[i as usize].path.as_str());
        assert_eq!(at(1, "crate::Item"), Some("core/src/lib.rs"));
        assert_eq!(at(3, "crate::a::b::Thing"), Some("core/src/a/b.rs"));
        assert_eq!(at(1, "self::b::Thing"), Some("core/src/a/b.rs"));
        assert_eq!(at(1, "b"), Some("core/src/a/b.rs"));
        assert_eq!(at(1, "super::c::X"), Some("core/src/c/mod.rs"));
        assert_eq!(at(2, "super::super::c"), Some("core/src/c/mod.rs"));
        // A path back into the file itself is no dependency.
        assert_eq!(at(2, "self::Thing"), None);
        assert_eq!(at(5, "acme_core::a::X"), Some("core/src/a.rs"));
        assert_eq!(at(5, "crate::Cli"), Some("cli/src/main.rs"));
        assert_eq!(at(4, "crate::args::Args"), Some("cli/src/args.rs"));
        assert_eq!(at(5, "std::io"), None);
        assert_eq!(at(0, "super::x"), None);
        let named = |path: &str| r.resolve_name(path).map(|i| f[i as usize].path.as_str());
        assert_eq!(named("acme_core"), Some("core/src/lib.rs"));
        assert_eq!(named("acme-core::a::b"), Some("core/src/a/b.rs"));
        assert_eq!(named("acme_core::c::Item"), Some("core/src/c/mod.rs"));
        assert_eq!(named("crate::a"), None);
        assert_eq!(named("other::a"), None);
    }
}
