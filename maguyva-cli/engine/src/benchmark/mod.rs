//! Reading a benchmark (the format of `benches/train/README.md`): `repos.json`
//! and one `annotations/NAME.json` per repository.

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// A repository of the benchmark.
#[derive(Debug, Clone, Deserialize)]
pub struct RepoSpec {
    /// Short name; also the annotation file's and the checkout folder's name.
    pub name: String,
    /// The repository's main language.
    pub language: String,
    /// Where it came from.
    #[serde(default)]
    pub url: String,
    /// The pinned revision.
    #[serde(default)]
    pub revision: String,
    /// The folder, relative to the repository root, that is indexed.
    #[serde(default)]
    pub benchmark_root: Option<String>,
}

impl RepoSpec {
    /// The benchmark root relative to the repository root (`""` for the whole).
    pub fn root_prefix(&self) -> &str {
        match self.benchmark_root.as_deref() {
            None | Some(".") | Some("") => "",
            Some(r) => r.trim_end_matches('/'),
        }
    }
}

/// A labelled path: a plain string, or an object with a `path`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum Label {
    Path(String),
    Located { path: String },
}

impl Label {
    fn into_path(self) -> String {
        match self {
            Label::Path(p) | Label::Located { path: p } => p,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
struct RawTask {
    query: String,
    #[serde(default)]
    relevant: Vec<Label>,
    #[serde(default)]
    secondary: Vec<Label>,
    #[serde(default)]
    category: Option<String>,
}

/// One labelled query.
#[derive(Debug, Clone)]
pub struct Task {
    /// The query text.
    pub query: String,
    /// Relevant and secondary paths together (both count as gain 1).
    pub labels: Vec<String>,
    /// `semantic`, `architecture` or `symbol`.
    pub category: String,
}

/// A repository with its queries.
#[derive(Debug, Clone)]
pub struct BenchRepo {
    /// The repository.
    pub spec: RepoSpec,
    /// Its queries.
    pub tasks: Vec<Task>,
}

/// A whole benchmark.
#[derive(Debug, Clone)]
pub struct Benchmark {
    /// Repositories in `repos.json` order that have annotations.
    pub repos: Vec<BenchRepo>,
}

impl Benchmark {
    /// Reads `dir/repos.json` and `dir/annotations/*.json`.
    pub fn load(dir: &Path) -> Result<Benchmark> {
        let repos_path = dir.join("repos.json");
        let text = std::fs::read_to_string(&repos_path)
            .with_context(|| format!("reading {}", repos_path.display()))?;
        let specs: Vec<RepoSpec> = serde_json::from_str(&text)
            .with_context(|| format!("parsing {}", repos_path.display()))?;
        let mut repos = Vec::new();
        for spec in specs {
            let path: PathBuf = dir.join("annotations").join(format!("{}.json", spec.name));
            if !path.exists() {
                continue;
            }
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", path.display()))?;
            let raw: Vec<RawTask> = serde_json::from_str(&text)
                .with_context(|| format!("parsing {}", path.display()))?;
            let tasks = raw
                .into_iter()
                .map(|t| Task {
                    category: t.category.unwrap_or_else(|| infer_category(&t.query)),
                    labels: t
                        .relevant
                        .into_iter()
                        .chain(t.secondary)
                        .map(Label::into_path)
                        .collect(),
                    query: t.query,
                })
                .collect();
            repos.push(BenchRepo { spec, tasks });
        }
        if repos.is_empty() {
            bail!("{} lists no repository with annotations", repos_path.display());
        }
        Ok(Benchmark { repos })
    }
}

/// The category of an unlabelled query: one word is a symbol, "how ..." is
/// architecture, anything else semantic.
fn infer_category(query: &str) -> String {
    let q = query.trim().to_lowercase();
    if !q.contains(' ') {
        "symbol".into()
    } else if q.starts_with("how ") {
        "architecture".into()
    } else {
        "semantic".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_both_label_forms() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("annotations")).unwrap();
        std::fs::write(
            dir.path().join("repos.json"),
            r#"[{"name":"r","language":"go","url":"u","revision":"x","benchmark_root":null},
                {"name":"none","language":"c"}]"#,
        )
        .unwrap();
        std::fs::write(
            dir.path().join("annotations/r.json"),
            r#"[{"query":"q1","relevant":["a.go"],"secondary":[{"path":"b.go","start_line":1}],"category":"semantic"},
                {"query":"Router","relevant":["c.go"]}]"#,
        )
        .unwrap();
        let b = Benchmark::load(dir.path()).unwrap();
        assert_eq!(b.repos.len(), 1);
        assert_eq!(b.repos[0].spec.root_prefix(), "");
        assert_eq!(b.repos[0].tasks[0].labels, vec!["a.go", "b.go"]);
        assert_eq!(b.repos[0].tasks[1].category, "symbol");
    }
}
