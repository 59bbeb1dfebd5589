//! Module roots from the manifests of a corpus: Go modules (`go.mod`), Rust
//! crates (`Cargo.toml`, read with the `toml` crate), JavaScript workspace
//! packages (`package.json`) and TypeScript path aliases (`tsconfig.json`,
//! JSON with comments and trailing commas, read with `jsonc-parser`), and the
//! Python packages a root sits in. Imports that name a module path resolve
//! to the files these roots give.

use crate::graph::ModuleRoot;
use maguyva_core::{ContentStore, FileId, Language};
use std::path::Path;

/// A file of the corpus as the manifest readers see it: its path and
/// language, and its text, read only when a manifest needs it.
#[derive(Debug, Clone, Copy)]
pub struct SourceFile<'a> {
    /// Relative to the root.
    pub path: &'a str,
    /// Its language, if one is recognised.
    pub language: Option<Language>,
    text: FileText<'a>,
}

/// Where a file's text is: most are never needed (a refresh does not read
/// the files it takes as unchanged).
#[derive(Debug, Clone, Copy)]
enum FileText<'a> {
    Given(&'a str),
    Stored(&'a ContentStore, FileId),
}

impl<'a> SourceFile<'a> {
    /// A file whose text is at hand.
    pub fn new(path: &'a str, language: Option<Language>, text: &'a str) -> SourceFile<'a> {
        SourceFile { path, language, text: FileText::Given(text) }
    }

    /// File `id` of a content store, read when needed.
    pub fn stored(
        path: &'a str,
        language: Option<Language>,
        content: &'a ContentStore,
        id: FileId,
    ) -> SourceFile<'a> {
        SourceFile { path, language, text: FileText::Stored(content, id) }
    }

    /// Its text.
    pub fn text(&self) -> &'a str {
        match self.text {
            FileText::Given(text) => text,
            FileText::Stored(content, id) => content.text(id),
        }
    }

    fn name(&self) -> &'a str {
        self.path.rsplit('/').next().unwrap_or(self.path)
    }
}

/// The module path a `go.mod` declares.
pub fn go_module_path(text: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let rest = l.trim().strip_prefix("module")?;
        rest.starts_with([' ', '\t']).then_some(())?;
        let path = rest.split("//").next()?.trim().trim_matches('"');
        (!path.is_empty()).then(|| path.to_string())
    })
}

/// The `name` of a `Cargo.toml`'s `[package]` table.
pub fn cargo_package_name(text: &str) -> Option<String> {
    let manifest: toml::Table = toml::from_str(text).ok()?;
    let name = manifest.get("package")?.get("name")?.as_str()?;
    (!name.is_empty()).then(|| name.to_string())
}

/// JSON with comments and trailing commas (`tsconfig.json`, some
/// `package.json`s).
fn json_with_comments(text: &str) -> Option<serde_json::Value> {
    let options = jsonc_parser::ParseOptions {
        allow_comments: true,
        allow_loose_object_property_names: false,
        allow_trailing_commas: true,
    };
    jsonc_parser::parse_to_serde_value(text, &options).ok()?
}

/// The folder of a root-relative file path, with a trailing `/` ("" at the
/// root).
fn folder_of(path: &str) -> String {
    path.rsplit_once('/').map_or_else(String::new, |(d, _)| format!("{d}/"))
}

/// A workspace package: the entry of its `name` and the folder of
/// `name/...`.
fn package_roots(f: &SourceFile<'_>, out: &mut Vec<ModuleRoot>) {
    let folder = folder_of(f.path);
    let Some(json) = json_with_comments(f.text()) else { return };
    let Some(pkg) = json.get("name").and_then(|n| n.as_str()) else { return };
    let entry = ["source", "module", "main", "types"]
        .iter()
        .find_map(|k| json.get(*k).and_then(|v| v.as_str()))
        .map(|e| e.trim_start_matches("./").to_string());
    let entry = entry
        .and_then(|e| maguyva_core::join_relative(&folder, &e))
        .map(|e| e.rsplit_once('.').map_or(e.clone(), |(s, _)| s.to_string()))
        .unwrap_or_else(|| folder.trim_end_matches('/').to_string());
    out.push(ModuleRoot { dir: entry, path: pkg.to_string(), language: Language::JavaScript });
    out.push(ModuleRoot { dir: folder, path: format!("{pkg}/"), language: Language::JavaScript });
}

/// `compilerOptions.paths` aliases, from `baseUrl`.
fn tsconfig_roots(f: &SourceFile<'_>, out: &mut Vec<ModuleRoot>) {
    let folder = folder_of(f.path);
    let Some(json) = json_with_comments(f.text()) else { return };
    let options = json.get("compilerOptions");
    let base = options
        .and_then(|o| o.get("baseUrl"))
        .and_then(|b| b.as_str())
        .and_then(|b| maguyva_core::join_relative(&folder, b))
        .map(|b| if b.is_empty() { b } else { format!("{b}/") })
        .unwrap_or_else(|| folder.clone());
    let Some(paths) = options.and_then(|o| o.get("paths")).and_then(|p| p.as_object()) else {
        return;
    };
    for (alias, targets) in paths {
        let Some(target) = targets.as_array().and_then(|t| t.first()).and_then(|t| t.as_str())
        else {
            continue;
        };
        let (alias, target) = match (alias.strip_suffix('*'), target.strip_suffix('*')) {
            (Some(a), Some(t)) => (a.to_string(), t.to_string()),
            (None, None) => (alias.clone(), target.to_string()),
            _ => continue,
        };
        let Some(dir) = maguyva_core::join_relative(&base, &target) else { continue };
        let dir = if alias.ends_with('/') && !dir.is_empty() { format!("{dir}/") } else { dir };
        out.push(ModuleRoot { dir, path: alias, language: Language::TypeScript });
    }
}

/// JavaScript and TypeScript module roots: workspace packages by their
/// `package.json` name (the entry for `name`, the folder for `name/sub`),
/// and `tsconfig.json` path aliases (`compilerOptions.paths`, from
/// `baseUrl`).
pub fn js_module_roots(files: &[SourceFile<'_>]) -> Vec<ModuleRoot> {
    let mut out = Vec::new();
    for f in files {
        let name = f.name();
        if name == "package.json" {
            package_roots(f, &mut out);
        } else if name.starts_with("tsconfig") && name.ends_with(".json") {
            tsconfig_roots(f, &mut out);
        }
    }
    out
}

/// Go modules and Rust crates of the corpus: every `go.mod` and
/// `Cargo.toml`'s package, for its folder (a crate's `src`).
fn manifest_roots(files: &[SourceFile<'_>]) -> Vec<ModuleRoot> {
    let mut out: Vec<ModuleRoot> = files
        .iter()
        .filter(|f| f.path == "go.mod" || f.path.ends_with("/go.mod"))
        .filter_map(|f| {
            let dir = f.path.strip_suffix("go.mod")?.trim_end_matches('/').to_string();
            Some(ModuleRoot { dir, path: go_module_path(f.text())?, language: Language::Go })
        })
        .collect();
    out.extend(
        files
            .iter()
            .filter(|f| f.path == "Cargo.toml" || f.path.ends_with("/Cargo.toml"))
            .filter_map(|f| {
                let dir = f.path.strip_suffix("Cargo.toml")?.trim_end_matches('/');
                let src = if dir.is_empty() { "src".to_string() } else { format!("{dir}/src") };
                Some(ModuleRoot {
                    dir: src,
                    path: cargo_package_name(f.text())?,
                    language: Language::Rust,
                })
            }),
    );
    out
}

/// For a root inside a module, crate or package (a checkout's subfolder),
/// what it is inside: the Python packages it sits in (a root holding an
/// `__init__.py`, like `src/pkg`), the crate whose `src` it is, the Go
/// module above it; so that imports spelled from the top name its files.
fn enclosing_roots(root: &Path, files: &[SourceFile<'_>], out: &mut Vec<ModuleRoot>) {
    if files.iter().any(|f| f.path == "__init__.py") {
        let mut names: Vec<String> = Vec::new();
        for dir in root.ancestors().take(16) {
            if !dir.join("__init__.py").is_file() {
                break;
            }
            match dir.file_name() {
                Some(n) => names.insert(0, n.to_string_lossy().into_owned()),
                None => break,
            }
        }
        if !names.is_empty() {
            out.push(ModuleRoot {
                dir: String::new(),
                path: names.join("."),
                language: Language::Python,
            });
        }
    }
    let has = |l: Language| files.iter().any(|f| f.language == Some(l));
    if has(Language::Rust) && !files.iter().any(|f| f.path == "Cargo.toml") {
        // The root is a crate's src folder: its Cargo.toml is just above.
        if let Some(name) = root
            .parent()
            .and_then(|p| std::fs::read_to_string(p.join("Cargo.toml")).ok())
            .and_then(|t| cargo_package_name(&t))
        {
            out.push(ModuleRoot { dir: String::new(), path: name, language: Language::Rust });
        }
    }
    if has(Language::Go) && !out.iter().any(|m| m.dir.is_empty()) {
        for above in root.ancestors().skip(1).take(8) {
            let Ok(text) = std::fs::read_to_string(above.join("go.mod")) else { continue };
            if let Some(path) = go_module_path(&text)
                && let Ok(rel) = root.strip_prefix(above)
            {
                let rel: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                out.push(ModuleRoot {
                    dir: String::new(),
                    path: format!("{path}/{}", rel.join("/")),
                    language: Language::Go,
                });
            }
            break;
        }
    }
}

/// Every module root of the corpus of `files` under `root`.
pub fn module_roots(root: &Path, files: &[SourceFile<'_>]) -> Vec<ModuleRoot> {
    let mut out = manifest_roots(files);
    out.extend(js_module_roots(files));
    enclosing_roots(root, files, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn javascript_module_roots_from_package_and_tsconfig_files() {
        let roots = js_module_roots(&[
            SourceFile::new(
                "packages/utils/package.json",
                None,
                r#"{"name": "@acme/utils", "main": "./dist/index.js", "source": "./src/index.ts"}"#,
            ),
            SourceFile::new(
                "tsconfig.json",
                None,
                "{\n  // aliases\n  \"compilerOptions\": {\n    \"baseUrl\": \".\",\n    \"paths\": { \"@/*\": [\"./src/*\"], \"#cfg\": [\"config/index.ts\"] },\n  },\n}\n",
            ),
        ]);
        let pairs: Vec<(&str, &str)> =
            roots.iter().map(|r| (r.path.as_str(), r.dir.as_str())).collect();
        assert_eq!(
            pairs,
            vec![
                ("@acme/utils", "packages/utils/src/index"),
                ("@acme/utils/", "packages/utils/"),
                ("#cfg", "config/index.ts"),
                ("@/", "src/"),
            ]
        );
    }

    #[test]
    fn module_files_name_their_modules() {
        assert_eq!(
            go_module_path("// x\nmodule example.com/app // c\n").as_deref(),
            Some("example.com/app")
        );
        assert_eq!(go_module_path("go 1.22\n"), None);
        assert_eq!(
            cargo_package_name("[workspace]\nname = \"no\"\n[package]\nname = \"grep-searcher\"\n")
                .as_deref(),
            Some("grep-searcher")
        );
        assert_eq!(cargo_package_name("[workspace]\nmembers = []\n"), None);
        // A comment after the value is not part of it.
        assert_eq!(
            cargo_package_name("[package]\nname = \"x\" # the crate\n").as_deref(),
            Some("x")
        );
        assert_eq!(cargo_package_name("[package]\nname = 'single'\n").as_deref(), Some("single"));
        // Not TOML: no name rather than a wrong one.
        assert_eq!(cargo_package_name("[package\nname = \"x\"\n"), None);
    }
}
