//! Resolving imports to files of the repository. One generic method serves
//! every language: a path relative to the importing file is looked up
//! directly; a module path (`shop.pricing`, `crate::a::b`, `Ecto.Changeset`,
//! `com.acme.Cart`, `example.com/app/pkg`) is matched against path suffixes
//! of the repository's files, dropping leading segments (a module prefix the
//! checkout does not show) and trailing ones (imported items). A match of a
//! single segment counts only in the importing file's folder or one above
//! it, so `import os` never binds to some `os.py` deep in the tree.

use crate::graph::package_scoped;
use crate::input::{FileInfo, Import};
use maguyva_core::{FileId, ImportKind, Language, join_relative as join};
use rustc_hash::FxHashMap as HashMap;

/// File names that stand for their folder as a module.
const INDEX_STEMS: &[&str] = &["mod", "__init__", "index", "init", "lib", "main"];

/// Lookup tables of a repository's paths.
#[derive(Debug)]
pub struct ModuleIndex<'a> {
    files: &'a [FileInfo],
    /// Normalized path suffixes without extension → files.
    by_suffix: HashMap<String, Vec<u32>>,
    /// Normalized path suffixes with extension → files.
    by_name: HashMap<String, Vec<u32>>,
    /// Normalized folder suffixes → the folders (paths) they name.
    by_dir: HashMap<String, Vec<&'a str>>,
    /// Folder path → files directly inside.
    in_dir: HashMap<&'a str, Vec<u32>>,
    /// Exact paths.
    by_path: HashMap<&'a str, u32>,
}

/// A key: lower case, without `_` and `-`, so `Ecto.Changeset` meets
/// `ecto/changeset.ex` and `HandlerStack` meets `handler_stack.php`.
fn key(segments: &[&str]) -> String {
    let mut k = String::new();
    for (i, s) in segments.iter().enumerate() {
        if i > 0 {
            k.push('/');
        }
        k.extend(
            s.chars().filter(|c| *c != '_' && *c != '-' && *c != '@').flat_map(char::to_lowercase),
        );
    }
    k
}

fn split_path(path: &str) -> (Vec<&str>, &str) {
    let mut parts: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let file = parts.pop().unwrap_or("");
    (parts, file)
}

fn stem(file: &str) -> &str {
    // A TypeScript declaration file stands for the module it declares.
    for declaration in [".d.ts", ".d.mts", ".d.cts"] {
        if let Some(s) = file.strip_suffix(declaration) {
            return s;
        }
    }
    file.rsplit_once('.').map_or(file, |(s, _)| s)
}

/// Folder of a path ("" for the root).
pub(crate) fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

/// Whether `ancestor` is `dir` or a folder above it.
fn is_ancestor(ancestor: &str, dir: &str) -> bool {
    ancestor.is_empty() || dir == ancestor || dir.starts_with(&format!("{ancestor}/"))
}

fn shared_prefix(a: &str, b: &str) -> usize {
    a.split('/').zip(b.split('/')).take_while(|(x, y)| x == y).count()
}

impl<'a> ModuleIndex<'a> {
    /// Indexes the paths of `files`.
    pub fn new(files: &'a [FileInfo]) -> ModuleIndex<'a> {
        let mut by_suffix: HashMap<String, Vec<u32>> = HashMap::default();
        let mut by_name: HashMap<String, Vec<u32>> = HashMap::default();
        let mut by_dir: HashMap<String, Vec<&str>> = HashMap::default();
        let mut in_dir: HashMap<&str, Vec<u32>> = HashMap::default();
        for (i, f) in files.iter().enumerate() {
            let id = i as u32;
            let (dirs, file) = split_path(&f.path);
            let mut segs: Vec<&str> = dirs.clone();
            segs.push(stem(file));
            for start in 0..segs.len() {
                by_suffix.entry(key(&segs[start..])).or_default().push(id);
            }
            // `pkg/mod.rs`, `pkg/__init__.py`, `pkg/index.ts` also stand for `pkg`.
            if INDEX_STEMS.contains(&stem(file)) && !dirs.is_empty() {
                for start in 0..dirs.len() {
                    by_suffix.entry(key(&dirs[start..])).or_default().push(id);
                }
            }
            let mut named: Vec<&str> = dirs.clone();
            named.push(file);
            for start in 0..named.len() {
                by_name.entry(key(&named[start..])).or_default().push(id);
            }
            let folder = dir_of(&f.path);
            let listed = in_dir.entry(folder).or_default();
            if listed.is_empty() {
                for start in 0..dirs.len() {
                    by_dir.entry(key(&dirs[start..])).or_default().push(folder);
                }
            }
            listed.push(id);
        }
        let by_path = files.iter().enumerate().map(|(i, f)| (f.path.as_str(), i as u32)).collect();
        ModuleIndex { files, by_suffix, by_name, by_dir, in_dir, by_path }
    }

    /// The files an import of file `file` refers to; empty when it is
    /// outside the repository (a standard or third-party module).
    pub fn resolve(&self, file: FileId, import: &maguyva_core::Import) -> Vec<u32> {
        let maguyva_core::Import { path, name, kind, line } = import.clone();
        self.resolve_import(&Import { file, path, name, kind, line })
    }

    /// [`ModuleIndex::resolve`] of an import the graph holds.
    pub(crate) fn resolve_import(&self, import: &Import) -> Vec<u32> {
        let Some(from) = self.files.get(import.file.index()) else { return Vec::new() };
        let dir = dir_of(&from.path);
        let lang = from.language;
        let path = import.path.trim();
        match import.kind {
            ImportKind::ModDecl => {
                let (_, file) = split_path(&from.path);
                let module_dir = if INDEX_STEMS.contains(&stem(file)) {
                    dir.to_string()
                } else {
                    join(dir, stem(file)).unwrap_or_default()
                };
                let base = join(&module_dir, path).unwrap_or_default();
                self.exact_with_ext(&[format!("{base}.rs"), format!("{base}/mod.rs")])
            }
            ImportKind::Relative => {
                self.relative(dir, path).unwrap_or_else(|| self.by_file_name(path, dir))
            }
            ImportKind::System => self.by_file_name(path, dir),
            ImportKind::Module if path.starts_with("./") || path.starts_with("../") => {
                self.relative(dir, path).unwrap_or_default()
            }
            ImportKind::Module => self.module(path, import.name.as_deref(), dir, lang),
        }
    }

    /// The files a module, package or file is named by, as a user names it
    /// in a question rather than in an import: `aiohttp.payload`,
    /// `axum::routing::route`, `absl/flags/marshalling.h`,
    /// `github.com/go-chi/chi/v5/middleware`, `helpers/formDataToJSON`.
    /// Leading segments the checkout does not show are dropped; a package
    /// of a language whose packages are folders (Go, the JVM languages, C#,
    /// Swift) is every file of its folder. Empty when nothing matches.
    pub fn resolve_name(&self, name: &str) -> Vec<u32> {
        let name = name.trim().trim_end_matches(['/', '\\']);
        if name.is_empty() {
            return Vec::new();
        }
        // A file named with its extension.
        if name.contains('/') || name.contains('.') {
            let segs: Vec<&str> =
                name.split('/').filter(|s| !s.is_empty() && *s != "." && *s != "..").collect();
            for start in 0..segs.len() {
                if let Some(v) = self.by_name.get(&key(&segs[start..]))
                    && let Some(hit) = self.shallowest(v)
                {
                    return vec![hit];
                }
            }
        }
        let segs: Vec<&str> = name.split(['.', ':', '/', '\\']).filter(|s| !s.is_empty()).collect();
        let n = segs.len();
        for len in (1..=n).rev() {
            // Dropping leading segments (a prefix the checkout does not
            // show) before trailing ones (an item of the module).
            for trailing in 0..=(n - len) {
                let lead = n - len - trailing;
                let part = &segs[lead..lead + len];
                let k = key(part);
                let folder = self.by_dir.get(&k).and_then(|folders| {
                    folders.iter().copied().min_by_key(|f| (f.matches('/').count(), f.len()))
                });
                let packaged = folder.and_then(|f| self.in_dir.get(f)).is_some_and(|v| {
                    v.iter().any(|&i| {
                        self.files.get(i as usize).is_some_and(|x| package_scoped(x.language))
                    })
                });
                let file = self.by_suffix.get(&k).and_then(|v| self.shallowest(v));
                match (file, folder) {
                    (Some(f), _) if !packaged => return vec![f],
                    (_, Some(dir)) if packaged || trailing == 0 => {
                        if let Some(v) = self.in_dir.get(dir) {
                            return v.clone();
                        }
                    }
                    (Some(f), _) => return vec![f],
                    _ => {}
                }
            }
        }
        Vec::new()
    }

    /// The candidate nearest the root.
    fn shallowest(&self, candidates: &[u32]) -> Option<u32> {
        candidates.iter().copied().min_by_key(|&c| {
            let p = self.files.get(c as usize).map_or("", |f| f.path.as_str());
            (p.matches('/').count(), p.len())
        })
    }

    fn exact_with_ext(&self, candidates: &[String]) -> Vec<u32> {
        candidates.iter().find_map(|c| self.by_path.get(c.as_str()).copied()).into_iter().collect()
    }

    /// A path relative to `dir`, with or without its extension, or a folder
    /// with an index file.
    pub(crate) fn relative(&self, dir: &str, rel: &str) -> Option<Vec<u32>> {
        let joined = join(dir, rel)?;
        let (dirs, file) = split_path(&joined);
        let mut named = dirs.clone();
        named.push(file);
        if let Some(hit) =
            self.by_name.get(&key(&named)).and_then(|v| self.pick(v, dir, Some(&joined)))
        {
            return Some(vec![hit]);
        }
        let mut segs = dirs;
        segs.push(stem(file));
        let k = key(&segs);
        self.by_suffix.get(&k).and_then(|v| self.pick(v, dir, Some(&joined))).map(|h| vec![h])
    }

    /// A file named by a path suffix with its extension (`cart.h`,
    /// `absl/strings/str_cat.h`).
    fn by_file_name(&self, path: &str, dir: &str) -> Vec<u32> {
        let segs: Vec<&str> =
            path.split('/').filter(|s| !s.is_empty() && *s != "." && *s != "..").collect();
        for start in 0..segs.len() {
            let tail = &segs[start..];
            if let Some(hit) =
                self.by_name.get(&key(tail)).and_then(|v| self.pick_near(v, dir, tail.len()))
            {
                return vec![hit];
            }
        }
        Vec::new()
    }

    fn module(
        &self,
        path: &str,
        name: Option<&str>,
        dir: &str,
        lang: Option<Language>,
    ) -> Vec<u32> {
        // Python: `.pricing`, `..pkg.mod`, `.` (with a name).
        let mut base_dir = None;
        let mut rest = path;
        if path.starts_with('.') && !path.contains('/') {
            let dots = path.chars().take_while(|&c| c == '.').count();
            let mut d: Vec<&str> = dir.split('/').filter(|s| !s.is_empty()).collect();
            for _ in 1..dots {
                d.pop();
            }
            base_dir = Some(d.join("/"));
            rest = &path[dots..];
        }
        // Rust: `crate::`, `self::`, `super::`.
        let mut segs: Vec<&str> =
            rest.split(['.', ':', '/', '\\']).filter(|s| !s.is_empty()).collect();
        while let Some(&first) = segs.first() {
            if matches!(first, "crate" | "self" | "super") {
                segs.remove(0);
            } else {
                break;
            }
        }
        if let Some(base) = base_dir {
            let mut full: Vec<&str> = base.split('/').filter(|s| !s.is_empty()).collect();
            full.extend(&segs);
            if let Some(n) = name {
                let mut with_name = full.clone();
                with_name.push(n);
                if let Some(v) =
                    self.by_suffix.get(&key(&with_name)).and_then(|v| self.pick(v, dir, None))
                {
                    return vec![v];
                }
            }
            return self
                .by_suffix
                .get(&key(&full))
                .and_then(|v| self.pick(v, dir, None))
                .map(|h| vec![h])
                .unwrap_or_default();
        }
        if let Some(n) = name {
            let mut with_name = segs.clone();
            with_name.push(n);
            let found = self.by_segments(&with_name, dir, lang);
            if !found.is_empty() {
                return found;
            }
        }
        self.by_segments(&segs, dir, lang)
    }

    /// The longest suffix match of a module path, dropping leading and
    /// trailing segments.
    fn by_segments(&self, segs: &[&str], dir: &str, lang: Option<Language>) -> Vec<u32> {
        let n = segs.len();
        let package_dirs = lang == Some(Language::Go);
        for len in (1..=n).rev() {
            for trailing in 0..=(n - len) {
                let lead = n - len - trailing;
                let part = &segs[lead..lead + len];
                let k = key(part);
                if !package_dirs
                    && let Some(v) = self.by_suffix.get(&k)
                    && let Some(hit) = self.pick_near(v, dir, len)
                {
                    return vec![hit];
                }
                // A package is its folder (Go, and wildcard imports elsewhere).
                if (package_dirs || trailing == 0)
                    && let Some(folders) = self.by_dir.get(&k)
                    && let Some(folder) = self.pick_folder(folders, dir, lang, len > 1 || n > 1)
                {
                    return self
                        .in_dir
                        .get(folder)
                        .map(|v| v.iter().copied().take(64).collect())
                        .unwrap_or_default();
                }
            }
        }
        Vec::new()
    }

    /// Whether a file, as a module, lives in `dir` or a folder above it. A
    /// package's index file (`shop/__init__.py`) lives where its folder does.
    fn near(&self, file: u32, dir: &str) -> bool {
        self.files.get(file as usize).is_some_and(|f| {
            let (_, name) = split_path(&f.path);
            let home = if INDEX_STEMS.contains(&stem(name)) {
                dir_of(dir_of(&f.path))
            } else {
                dir_of(&f.path)
            };
            is_ancestor(home, dir) || is_ancestor(dir_of(&f.path), dir)
        })
    }

    /// One folder among those a package path names: of the importing file's
    /// language, nearest to it.
    fn pick_folder(
        &self,
        folders: &[&'a str],
        dir: &str,
        lang: Option<Language>,
        far_ok: bool,
    ) -> Option<&'a str> {
        folders
            .iter()
            .copied()
            .filter(|f| far_ok || is_ancestor(f, dir))
            .filter(|f| {
                self.in_dir.get(f).is_some_and(|v| {
                    v.iter()
                        .any(|&i| self.files.get(i as usize).is_some_and(|x| x.language == lang))
                })
            })
            .max_by_key(|f| (shared_prefix(f, dir), std::cmp::Reverse(f.len())))
    }

    /// One of several candidates: a one-segment match must be near `dir`;
    /// otherwise the one sharing the most folders with it.
    fn pick_near(&self, candidates: &[u32], dir: &str, segments: usize) -> Option<u32> {
        if segments == 1 {
            let near: Vec<u32> =
                candidates.iter().copied().filter(|&c| self.near(c, dir)).collect();
            return self.pick(&near, dir, None);
        }
        self.pick(candidates, dir, None)
    }

    fn pick(&self, candidates: &[u32], dir: &str, exact: Option<&str>) -> Option<u32> {
        if let Some(e) = exact
            && let Some(&hit) = candidates.iter().find(|&&c| {
                self.files
                    .get(c as usize)
                    .is_some_and(|f| f.path == e || stem(&f.path) == e || dir_of(&f.path) == e)
            })
        {
            return Some(hit);
        }
        if exact.is_some() {
            return None;
        }
        candidates.iter().copied().max_by_key(|&c| {
            let p = self.files.get(c as usize).map_or("", |f| f.path.as_str());
            (shared_prefix(dir_of(p), dir), std::cmp::Reverse(p.len()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use maguyva_core::FileId;

    fn files(paths: &[(&str, Language)]) -> Vec<FileInfo> {
        paths
            .iter()
            .map(|(p, l)| FileInfo { path: p.to_string(), language: Some(*l), package: None })
            .collect()
    }

    fn resolve(
        files: &[FileInfo],
        from: usize,
        path: &str,
        name: Option<&str>,
        kind: ImportKind,
    ) -> Vec<String> {
        let idx = ModuleIndex::new(files);
        let imp = Import {
            file: FileId(from as u32),
            path: path.into(),
            name: name.map(str::to_string),
            kind,
            line: 1,
        };
        idx.resolve_import(&imp).into_iter().map(|i| files[i as usize].path.clone()).collect()
    }

    #[test]
    fn python_absolute_relative_and_external() {
        use Language::Python as P;
        let f = files(&[
            ("main.py", P),
            ("shop/__init__.py", P),
            ("shop/cart.py", P),
            ("shop/pricing.py", P),
            ("vendor/os.py", P),
        ]);
        assert_eq!(
            resolve(&f, 2, "shop.pricing", Some("total"), ImportKind::Module),
            vec!["shop/pricing.py"]
        );
        assert_eq!(
            resolve(&f, 2, ".pricing", Some("total"), ImportKind::Module),
            vec!["shop/pricing.py"]
        );
        assert_eq!(
            resolve(&f, 2, ".", Some("pricing"), ImportKind::Module),
            vec!["shop/pricing.py"]
        );
        assert_eq!(resolve(&f, 0, "shop", None, ImportKind::Module), vec!["shop/__init__.py"]);
        assert!(resolve(&f, 2, "requests", None, ImportKind::Module).is_empty());
        assert!(
            resolve(&f, 0, "os", None, ImportKind::Module).is_empty(),
            "a far one-segment match is refused"
        );
    }

    #[test]
    fn javascript_relative_with_and_without_extensions() {
        use Language::TypeScript as T;
        let f = files(&[("src/main.ts", T), ("src/cart.ts", T), ("src/util/index.ts", T)]);
        assert_eq!(resolve(&f, 0, "./cart", None, ImportKind::Module), vec!["src/cart.ts"]);
        assert_eq!(resolve(&f, 0, "./util", None, ImportKind::Module), vec!["src/util/index.ts"]);
        assert_eq!(resolve(&f, 2, "../cart.ts", None, ImportKind::Module), vec!["src/cart.ts"]);
        assert!(resolve(&f, 0, "lodash", None, ImportKind::Module).is_empty());
    }

    #[test]
    fn rust_modules_and_paths() {
        use Language::Rust as R;
        let f = files(&[
            ("src/main.rs", R),
            ("src/cart.rs", R),
            ("src/pricing.rs", R),
            ("src/net/mod.rs", R),
        ]);
        assert_eq!(resolve(&f, 0, "cart", None, ImportKind::ModDecl), vec!["src/cart.rs"]);
        assert_eq!(resolve(&f, 0, "net", None, ImportKind::ModDecl), vec!["src/net/mod.rs"]);
        assert_eq!(
            resolve(&f, 1, "crate::pricing::total_with_tax", None, ImportKind::Module),
            vec!["src/pricing.rs"]
        );
        assert!(resolve(&f, 1, "serde::Serialize", None, ImportKind::Module).is_empty());
    }

    #[test]
    fn go_packages_java_classes_c_includes() {
        let f = files(&[
            ("main.go", Language::Go),
            ("shop/cart.go", Language::Go),
            ("shop/pricing.go", Language::Go),
            ("src/main/java/com/acme/shop/Cart.java", Language::Java),
            ("src/cart.h", Language::C),
            ("src/cart.c", Language::C),
            ("strings/str_cat.h", Language::Cpp),
        ]);
        let mut go = resolve(&f, 0, "example.com/shop/shop", None, ImportKind::Module);
        go.sort();
        assert_eq!(go, vec!["shop/cart.go", "shop/pricing.go"]);
        assert!(resolve(&f, 0, "github.com/acme/payments", None, ImportKind::Module).is_empty());
        assert_eq!(
            resolve(&f, 3, "com.acme.shop.Cart", None, ImportKind::Module),
            vec!["src/main/java/com/acme/shop/Cart.java"]
        );
        assert_eq!(resolve(&f, 5, "cart.h", None, ImportKind::Relative), vec!["src/cart.h"]);
        assert_eq!(
            resolve(&f, 6, "absl/strings/str_cat.h", None, ImportKind::Relative),
            vec!["strings/str_cat.h"]
        );
        assert!(resolve(&f, 5, "curl/curl.h", None, ImportKind::System).is_empty());
    }

    #[test]
    fn module_names_meet_file_names() {
        let f = files(&[
            ("lib/ecto/changeset.ex", Language::Elixir),
            ("lib/ecto/repo.ex", Language::Elixir),
        ]);
        assert_eq!(
            resolve(&f, 1, "Ecto.Changeset", None, ImportKind::Module),
            vec!["lib/ecto/changeset.ex"]
        );
    }

    #[test]
    fn declaration_files_stand_for_their_module() {
        let f = files(&[
            ("types/plugin.d.ts", Language::TypeScript),
            ("types/index.d.ts", Language::TypeScript),
        ]);
        assert_eq!(resolve(&f, 1, "./plugin", None, ImportKind::Module), vec!["types/plugin.d.ts"]);
    }

    #[test]
    fn names_users_give_modules_packages_and_files() {
        let f = files(&[
            ("aiohttp/payload.py", Language::Python),
            ("aiohttp/__init__.py", Language::Python),
            ("absl/flags/marshalling.h", Language::Cpp),
            ("middleware/logger.go", Language::Go),
            ("middleware/middleware.go", Language::Go),
            ("routing/route.rs", Language::Rust),
            ("body/mod.rs", Language::Rust),
            ("helpers/formDataToJSON.js", Language::JavaScript),
        ]);
        let index = ModuleIndex::new(&f);
        let paths = |name: &str| -> Vec<&str> {
            index.resolve_name(name).into_iter().map(|i| f[i as usize].path.as_str()).collect()
        };
        assert_eq!(paths("aiohttp.payload"), vec!["aiohttp/payload.py"]);
        assert_eq!(paths("flags/marshalling.h"), vec!["absl/flags/marshalling.h"]);
        assert_eq!(paths("absl/flags/marshalling.h"), vec!["absl/flags/marshalling.h"]);
        // A Go package is its folder, whatever its files are called.
        assert_eq!(
            paths("github.com/acme/app/middleware"),
            vec!["middleware/logger.go", "middleware/middleware.go"]
        );
        assert_eq!(paths("acme::routing::route"), vec!["routing/route.rs"]);
        assert_eq!(paths("acme::body"), vec!["body/mod.rs"]);
        assert_eq!(paths("helpers/formDataToJSON"), vec!["helpers/formDataToJSON.js"]);
        assert_eq!(paths("__init__.py"), vec!["aiohttp/__init__.py"]);
        assert!(paths("nothing.here").is_empty());
        assert!(paths("").is_empty());
    }
}
