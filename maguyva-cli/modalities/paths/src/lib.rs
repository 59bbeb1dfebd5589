//! An example modality: files ranked by the words of their paths, the
//! words of the file's own name counting more (`name_weight`) than those of
//! its folders (`folder_weight`), each weighted by how few files have it
//! (inverse document frequency). Small, but a real modality: it writes a
//! file of its own (`paths.mgv`, a framed file of kind `PATH`), builds it
//! from the corpus every modality shares, opens and checks it, takes two
//! parameters that ranking files set and `maguyva eval --tune` learns, and
//! answers queries with ranked hits that fusion takes in. Registered in the
//! engine with one line; see `doc/adding-a-modality.md`.
//!
//! Its seed weight is 0 in every intent, so it runs only when asked for
//! (`--modality paths`), or when a ranking gives it a weight.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

use maguyva_core::store::{self, FormatVersion};
use maguyva_core::{
    Analyzer, BuildInput, Built, Error, FileId, Hit, IndexFile, Modality, ModalityPlugin,
    ModalityReader, OpenInput, ParamSpec, Params, Query, Result, Retriever,
};
use serde::{Deserialize, Serialize};
use std::any::Any;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// The modality's id.
pub const PATHS: Modality = Modality::named("paths");

/// Its file in a generation folder.
pub const PATHS_FILE: &str = "paths.mgv";

/// Its format. Changelog: v1 initial.
pub const PATHS_FORMAT: FormatVersion = FormatVersion { kind: *b"PATH", current: 1, oldest: 1 };

/// The words of every file's path: a dictionary, and for each file its
/// terms (by number) with where they are (`true`: in the file's name).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PathWords {
    terms: Vec<String>,
    files: Vec<Vec<(u32, bool)>>,
}

impl PathWords {
    /// The words of `paths` (root-relative), analyzed as the index
    /// analyzes code.
    pub fn build<'a>(paths: impl IntoIterator<Item = &'a str>) -> PathWords {
        let analyzer = Analyzer::default();
        let mut per_file: Vec<Vec<(String, bool)>> = Vec::new();
        for path in paths {
            let (folder, name) = path.rsplit_once('/').unwrap_or(("", path));
            let mut words: Vec<(String, bool)> = Vec::new();
            for (text, in_name) in [(folder, false), (name, true)] {
                analyzer.for_each_term(text, |t| words.push((t.to_string(), in_name)));
            }
            words.sort();
            words.dedup();
            per_file.push(words);
        }
        let mut terms: Vec<String> = per_file.iter().flatten().map(|(t, _)| t.clone()).collect();
        terms.sort();
        terms.dedup();
        let number = |t: &str| terms.binary_search_by(|x| x.as_str().cmp(t)).unwrap_or(0) as u32;
        let files = per_file
            .iter()
            .map(|words| words.iter().map(|(t, in_name)| (number(t), *in_name)).collect())
            .collect();
        PathWords { terms, files }
    }

    /// How many files have term `t`.
    fn document_frequency(&self) -> Vec<u32> {
        let mut df = vec![0u32; self.terms.len()];
        for file in &self.files {
            let mut seen: Vec<u32> = file.iter().map(|&(t, _)| t).collect();
            seen.dedup();
            for t in seen {
                if let Some(n) = df.get_mut(t as usize) {
                    *n += 1;
                }
            }
        }
        df
    }
}

/// The paths modality.
#[derive(Debug, Clone, Copy, Default)]
pub struct PathsModality;

impl ModalityPlugin for PathsModality {
    fn modality(&self) -> Modality {
        PATHS
    }

    fn summary(&self) -> &'static str {
        "files by the words of their paths and names"
    }

    fn files(&self) -> Vec<IndexFile> {
        vec![IndexFile { name: PATHS_FILE, format: PATHS_FORMAT, sectioned: false }]
    }

    fn params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec {
                name: "name_weight",
                doc: "what a word of the file's own name counts",
                default: 2.0,
                range: (0.0, 5.0),
            },
            ParamSpec {
                name: "folder_weight",
                doc: "what a word of its folders counts",
                default: 1.0,
                range: (0.0, 3.0),
            },
        ]
    }

    /// Paths are few and short: a refresh builds anew, which is what a
    /// build from scratch writes.
    fn build(&self, input: &BuildInput<'_>, out: &Path) -> Result<Built> {
        let words = PathWords::build(input.files.iter().map(|f| f.path.as_str()));
        store::save(&out.join(PATHS_FILE), PATHS_FORMAT, "path words", &words)?;
        Ok(Arc::new(words))
    }

    fn open(&self, input: &OpenInput<'_>) -> Result<Arc<dyn ModalityReader>> {
        let path = input.gen_dir.join(PATHS_FILE);
        let words: PathWords = store::load(&path, PATHS_FORMAT)?;
        let terms = words.terms.len() as u32;
        if words.files.len() != input.files
            || words.files.iter().flatten().any(|&(t, _)| t >= terms)
        {
            return Err(Error::corrupt(path, "path words do not match the files"));
        }
        Ok(Arc::new(PathsReader {
            document_frequency: words.document_frequency(),
            words,
            fragments: input.fragments.clone(),
        }))
    }
}

/// The opened paths modality.
#[derive(Debug)]
pub struct PathsReader {
    words: PathWords,
    document_frequency: Vec<u32>,
    fragments: Arc<maguyva_core::FragmentTable>,
}

impl ModalityReader for PathsReader {
    fn retriever(
        &self,
        params: Params<'_>,
        _: &(dyn Any + Send + Sync),
    ) -> Result<Box<dyn Retriever + '_>> {
        Ok(Box::new(PathsRetriever {
            reader: self,
            name_weight: params.get("name_weight") as f32,
            folder_weight: params.get("folder_weight") as f32,
        }))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The paths modality's retriever for one query.
struct PathsRetriever<'a> {
    reader: &'a PathsReader,
    name_weight: f32,
    folder_weight: f32,
}

impl Retriever for PathsRetriever<'_> {
    fn modality(&self) -> Modality {
        PATHS
    }

    /// Each file scores the sum, over the query's words its path has, of
    /// the word's inverse document frequency times where it is (its name
    /// or its folders); best first, ties in path order.
    fn search(&self, query: &Query, limit: usize) -> Result<Vec<Hit>> {
        let r = self.reader;
        let mut wanted: BTreeMap<u32, ()> = BTreeMap::new();
        Analyzer::default().for_each_term(query.text(), |t| {
            if let Ok(i) = r.words.terms.binary_search_by(|x| x.as_str().cmp(t)) {
                wanted.insert(i as u32, ());
            }
        });
        let files = r.words.files.len() as f32;
        let mut scored: Vec<(f32, usize)> = (r.words.files.iter().enumerate())
            .filter_map(|(f, words)| {
                let score: f32 = words
                    .iter()
                    .filter(|(t, _)| wanted.contains_key(t))
                    .map(|&(t, in_name)| {
                        let df = r.document_frequency.get(t as usize).copied().unwrap_or(1) as f32;
                        let idf = (1.0 + files / df.max(1.0)).ln();
                        idf * if in_name { self.name_weight } else { self.folder_weight }
                    })
                    .sum();
                (score > 0.0).then_some((score, f))
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        Ok(scored
            .into_iter()
            .filter_map(|(score, f)| r.fragments.file_hit(FileId(f as u32), score))
            .take(limit)
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_of_names_count_more_than_words_of_folders() {
        let words = PathWords::build(["src/config/loader.rs", "src/parse_config.rs", "README.md"]);
        assert!(words.terms.iter().any(|t| t == "config"));
        let df = words.document_frequency();
        let config = words.terms.iter().position(|t| t == "config").unwrap_or(usize::MAX);
        assert_eq!(df.get(config), Some(&2));
        // "config" is in the first file's folders and the second file's name.
        assert!(words.files[0].iter().any(|&(t, in_name)| t as usize == config && !in_name));
        assert!(words.files[1].iter().any(|&(t, in_name)| t as usize == config && in_name));
    }

    #[test]
    fn it_declares_its_files_and_parameters() {
        let m = PathsModality;
        assert_eq!(m.modality().as_str(), "paths");
        assert_eq!(m.files()[0].name, PATHS_FILE);
        let specs = m.params();
        assert_eq!(Params::new(&specs, None).get("name_weight"), 2.0);
    }
}
