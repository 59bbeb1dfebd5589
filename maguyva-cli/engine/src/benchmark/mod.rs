//! Labelled benchmarks (the format of `benches/train/README.md`): reading
//! `repos.json` and one `annotations/NAME.json` per repository, and the
//! metrics they are scored with (`metrics`). What `maguyva eval` and the
//! benchmark tools share.

mod metrics;

pub use metrics::{QueryScore, distinct_files, path_matches, quantile, score};

use serde::Deserialize;
use std::path::{Path, PathBuf};

/// A benchmark that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum BenchmarkError {
    /// A file of it cannot be read.
    #[error("reading {path}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A file of it is not what the format says.
    #[error("parsing {path}: {reason}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// It lists no repository with annotations.
    #[error("{0} lists no repository with annotations")]
    Empty(PathBuf),
}

type Result<T> = std::result::Result<T, BenchmarkError>;

/// The text of a benchmark file.
fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path)
        .map_err(|source| BenchmarkError::Read { path: path.to_path_buf(), source })
}

/// A benchmark file parsed.
fn parse<T: serde::de::DeserializeOwned>(path: &Path, text: &str) -> Result<T> {
    serde_json::from_str(text)
        .map_err(|e| BenchmarkError::Parse { path: path.to_path_buf(), reason: e.to_string() })
}

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

/// `path`, relative to the benchmark root whose [`RepoSpec::root_prefix`]
/// is `prefix`, as relative to the repository root (what labels name).
pub fn repo_path(prefix: &str, path: &str) -> String {
    if prefix.is_empty() { path.to_string() } else { format!("{prefix}/{path}") }
}

/// A labelled path: a plain string, or an object with a `path`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum Label {
    Path(String),
    Located {
        path: String,
        #[serde(default)]
        start_line: Option<u32>,
        #[serde(default)]
        end_line: Option<u32>,
    },
}

impl Label {
    fn into_parts(self) -> (String, Option<(u32, u32)>) {
        match self {
            Label::Path(p) => (p, None),
            Label::Located { path, start_line, end_line } => {
                let span = match (start_line, end_line) {
                    (Some(a), Some(b)) => Some((a.min(b), a.max(b))),
                    (Some(a), None) | (None, Some(a)) => Some((a, a)),
                    (None, None) => None,
                };
                (path, span)
            }
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
    /// The lines each label names, in the order of `labels` (`None`: the
    /// whole file).
    pub spans: Vec<Option<(u32, u32)>>,
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
        let specs: Vec<RepoSpec> = parse(&repos_path, &read(&repos_path)?)?;
        let mut repos = Vec::new();
        for spec in specs {
            let path: PathBuf = dir.join("annotations").join(format!("{}.json", spec.name));
            if !path.exists() {
                continue;
            }
            let raw: Vec<RawTask> = parse(&path, &read(&path)?)?;
            let tasks = raw
                .into_iter()
                .map(|t| {
                    let (labels, spans) =
                        t.relevant.into_iter().chain(t.secondary).map(Label::into_parts).unzip();
                    Task {
                        category: t.category.unwrap_or_else(|| infer_category(&t.query)),
                        labels,
                        spans,
                        query: t.query,
                    }
                })
                .collect();
            repos.push(BenchRepo { spec, tasks });
        }
        if repos.is_empty() {
            return Err(BenchmarkError::Empty(repos_path));
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
