//! Python imports resolved the way the interpreter reads them: a file's
//! module name is its path through the folders that are packages (they hold
//! an `__init__.py`), so `pkg/sub/mod.py` is `pkg.sub.mod` and a folder's
//! `__init__.py` is the package itself. An absolute import (`import a.b`,
//! `from a.b import c`) names a module by that whole dotted name; a name no
//! file carries is the standard library's or a third party's, never a file
//! that merely shares its last part (`from http import HTTPStatus` is not
//! `aiohttp/http.py`). When the indexed root is itself inside a package,
//! the package names above it come from a module root.

use crate::graph::ModuleRoot;
use crate::input::FileInfo;
use crate::resolve::dir_of;
use maguyva_core::Language;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// Module names of a repository's Python files.
#[derive(Debug, Default, Clone)]
pub(crate) struct PythonModules {
    by_name: HashMap<String, Vec<u32>>,
}

impl PythonModules {
    pub(crate) fn new(files: &[FileInfo], roots: &[ModuleRoot]) -> PythonModules {
        let packages: HashSet<&str> = files
            .iter()
            .filter(|f| f.path == "__init__.py" || f.path.ends_with("/__init__.py"))
            .map(|f| dir_of(&f.path))
            .collect();
        // The package the root itself is in, if any.
        let above: Option<&str> = roots
            .iter()
            .find(|r| r.language == Language::Python && r.dir.is_empty())
            .map(|r| r.path.as_str());
        let mut out = PythonModules::default();
        for (i, f) in files.iter().enumerate() {
            if f.language != Some(Language::Python) {
                continue;
            }
            let Some(stem) = f.path.strip_suffix(".py").or_else(|| f.path.strip_suffix(".pyi"))
            else {
                continue;
            };
            let mut parts: Vec<&str> = stem.split('/').collect();
            if parts.last() == Some(&"__init__") {
                parts.pop();
            }
            // The deepest run of package folders above the file.
            let mut dir = dir_of(&f.path).to_string();
            let mut depth = 0;
            let file_dirs = stem.split('/').count() - 1;
            while depth < file_dirs && packages.contains(dir.as_str()) {
                depth += 1;
                dir = dir_of(&dir).to_string();
            }
            let reaches_root = depth == file_dirs && packages.contains("");
            let keep = parts.len().saturating_sub(file_dirs - depth);
            let mut name: Vec<&str> = parts[parts.len() - keep..].to_vec();
            if reaches_root && let Some(prefix) = above {
                name.insert(0, prefix);
            }
            if name.is_empty() {
                continue;
            }
            out.by_name.entry(name.join(".")).or_default().push(i as u32);
        }
        out
    }

    /// The file of a module name (the one nearest `near`'s folder, then the
    /// shallowest, when scripts in several folders share a name).
    pub(crate) fn file_of(&self, files: &[FileInfo], name: &str, near: &str) -> Option<u32> {
        let found = self.by_name.get(name)?;
        found.iter().copied().min_by_key(|&f| {
            let p = files.get(f as usize).map_or("", |x| x.path.as_str());
            (dir_of(p) != near, p.matches('/').count(), p.len())
        })
    }

    /// The file an absolute import in `file` depends on: `path` (`a.b`)
    /// with the imported `name` as a submodule first; None when it names
    /// no module of the repository.
    pub(crate) fn resolve(
        &self,
        files: &[FileInfo],
        file: u32,
        path: &str,
        name: Option<&str>,
    ) -> Option<u32> {
        let near = files.get(file as usize).map_or("", |f| dir_of(&f.path));
        if let Some(n) = name
            && let Some(f) = self.file_of(files, &format!("{path}.{n}"), near)
        {
            return Some(f);
        }
        let parts: Vec<&str> = path.split('.').collect();
        (1..=parts.len()).rev().find_map(|k| self.file_of(files, &parts[..k].join("."), near))
    }

    /// Whether the repository has Python modules at all.
    pub(crate) fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(paths: &[&str]) -> Vec<FileInfo> {
        crate::input::files_in(Language::Python, paths)
    }

    #[test]
    fn module_names_follow_packages() {
        let f = files(&["__init__.py", "http.py", "web/__init__.py", "web/app.py", "tools/run.py"]);
        let roots =
            [ModuleRoot { dir: String::new(), path: "aio".into(), language: Language::Python }];
        let m = PythonModules::new(&f, &roots);
        let at = |path: &str, name: Option<&str>| {
            m.resolve(&f, 3, path, name).map(|i| f[i as usize].path.as_str())
        };
        assert_eq!(at("aio.http", None), Some("http.py"));
        assert_eq!(at("aio", Some("http")), Some("http.py"));
        assert_eq!(at("aio.web.app", Some("App")), Some("web/app.py"));
        assert_eq!(at("aio.web", Some("Thing")), Some("web/__init__.py"));
        // The standard library's `http` is not the package's `http.py`.
        assert_eq!(at("http", Some("HTTPStatus")), None);
        assert_eq!(at("http.cookies", None), None);
        // A folder that is not a package holds top-level scripts.
        assert_eq!(at("run", None), Some("tools/run.py"));
    }
}
