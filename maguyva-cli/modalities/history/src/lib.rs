//! The history modality: files ranked by the repository's past commits
//! whose messages are like the query. A bug report is often like an
//! earlier one, and the files an earlier fix modified are where to look
//! again; a file fixed often for problems of one kind is likelier to hold
//! the next.
//!
//! At build time it reads the most recent commits of the work tree's
//! `HEAD` (`git log`, [`log::MAX_COMMITS`] of them, merges left out), when
//! the indexed folder is the top of a git work tree; each commit keeps the
//! words of its message and the indexed files it modified. A query ranks
//! the commits by BM25 over their messages, and each of the `commits` best
//! gives its score to the files it modified, shared among them (divided by
//! their count to the power `spread`); a file's score is the sum.
//!
//! It writes `history.mgv` (a framed file of kind `HIST`). A folder that
//! is not a repository's top, or a machine without git, gives an empty
//! history: the modality answers nothing there. History is read when the
//! index is built, and when a refresh finds `HEAD` moved or the indexed
//! files changed in number or name (otherwise it keeps the history it
//! has); a commit that changes no file of the work tree is seen at the next
//! refresh that has something to do.
//!
//! Its seed weight is 0 in every intent: it serves the report route
//! (doc/reports.md), or a query that asks for it (`--modality history`).
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod log;

use maguyva_core::store::{self, FormatVersion};
use maguyva_core::{
    Analyzer, BuildInput, Built, Error, FileId, Hit, IndexFile, Modality, ModalityPlugin,
    ModalityReader, OpenInput, ParamSpec, Params, Query, Result, Retriever,
};
use serde::{Deserialize, Serialize};
use std::any::Any;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// The modality's id.
pub const HISTORY: Modality = Modality::named("history");

/// Its file in a generation folder.
pub const HISTORY_FILE: &str = "history.mgv";

/// Its format. Changelog: v1 initial; v2 records the head commit and a
/// hash of the indexed paths, for a refresh to keep the history it has.
pub const HISTORY_FORMAT: FormatVersion = FormatVersion { kind: *b"HIST", current: 2, oldest: 2 };

/// BM25's term-frequency saturation.
const K1: f32 = 1.2;
/// BM25's length normalisation.
const B: f32 = 0.75;

/// The words of past commit messages and the files each commit modified:
/// a sorted dictionary, each term's postings (commit, count), each
/// commit's length in terms and its files.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CommitIndex {
    /// The commit the history was read up to; `None` without history.
    head: Option<String>,
    /// A hash of the indexed paths in order ([`paths_hash`]): with the
    /// same head and the same paths, a refresh keeps this index as it is.
    paths_hash: u64,
    terms: Vec<String>,
    postings: Vec<Vec<(u32, u16)>>,
    lengths: Vec<u32>,
    files: Vec<Vec<u32>>,
}

impl CommitIndex {
    /// The index of `commits` over the indexed `paths` (a file's id is its
    /// position). A commit keeps only the files that are indexed, and is
    /// left out when it has none or more than
    /// [`log::MAX_FILES_PER_COMMIT`].
    pub fn build(commits: &[log::PastCommit], paths: &[&str]) -> CommitIndex {
        let analyzer = Analyzer::default();
        let id_of: HashMap<&str, u32> =
            paths.iter().enumerate().map(|(i, p)| (*p, i as u32)).collect();
        let mut by_term: HashMap<String, Vec<(u32, u16)>> = HashMap::new();
        let mut lengths = Vec::new();
        let mut files = Vec::new();
        for c in commits {
            let mut ids: Vec<u32> =
                c.paths.iter().filter_map(|p| id_of.get(p.as_str()).copied()).collect();
            ids.sort_unstable();
            ids.dedup();
            if ids.is_empty() || ids.len() > log::MAX_FILES_PER_COMMIT {
                continue;
            }
            let mut counts: HashMap<String, u16> = HashMap::new();
            let mut length = 0u32;
            analyzer.for_each_term(&c.message, |t| {
                let n = counts.entry(t.to_string()).or_default();
                *n = n.saturating_add(1);
                length += 1;
            });
            if length == 0 {
                continue;
            }
            let id = lengths.len() as u32;
            for (t, n) in counts {
                by_term.entry(t).or_default().push((id, n));
            }
            lengths.push(length);
            files.push(ids);
        }
        let mut terms: Vec<(String, Vec<(u32, u16)>)> = by_term.into_iter().collect();
        terms.sort_by(|a, b| a.0.cmp(&b.0));
        let (terms, mut postings): (Vec<String>, Vec<Vec<(u32, u16)>>) = terms.into_iter().unzip();
        for p in &mut postings {
            p.sort_unstable();
        }
        CommitIndex { head: None, paths_hash: paths_hash(paths), terms, postings, lengths, files }
    }

    /// How many commits it holds.
    pub fn commits(&self) -> usize {
        self.lengths.len()
    }

    /// Whether its numbers agree with each other and with `files` indexed
    /// files.
    fn is_consistent(&self, files: usize) -> bool {
        let commits = self.lengths.len();
        self.terms.len() == self.postings.len()
            && self.files.len() == commits
            && self.postings.iter().flatten().all(|&(c, _)| (c as usize) < commits)
            && self.files.iter().flatten().all(|&f| (f as usize) < files)
    }

    /// The commits whose messages are most like `text` by BM25, best
    /// first, at most `limit`.
    pub fn similar_commits(&self, text: &str, limit: usize) -> Vec<(u32, f32)> {
        let n = self.lengths.len();
        if n == 0 {
            return Vec::new();
        }
        let mut wanted: Vec<usize> = Vec::new();
        Analyzer::default().for_each_term(text, |t| {
            if let Ok(i) = self.terms.binary_search_by(|x| x.as_str().cmp(t)) {
                wanted.push(i);
            }
        });
        wanted.sort_unstable();
        wanted.dedup();
        let average = self.lengths.iter().map(|&l| l as f32).sum::<f32>() / n as f32;
        let mut scores: HashMap<u32, f32> = HashMap::new();
        for t in wanted {
            let Some(postings) = self.postings.get(t) else { continue };
            let df = postings.len() as f32;
            let idf = (1.0 + (n as f32 - df + 0.5) / (df + 0.5)).ln();
            for &(c, tf) in postings {
                let length = self.lengths.get(c as usize).copied().unwrap_or(1) as f32;
                let tf = f32::from(tf);
                let norm = K1 * (1.0 - B + B * length / average.max(1.0));
                *scores.entry(c).or_default() += idf * tf * (K1 + 1.0) / (tf + norm);
            }
        }
        let mut ranked: Vec<(u32, f32)> = scores.into_iter().collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked.truncate(limit);
        ranked
    }

    /// Files by what the `commits` commits most like `text` say of them:
    /// each commit's score shared among its files (divided by their count
    /// to the power `spread`), summed per file; best first, ties by id.
    pub fn ranked_files(&self, text: &str, commits: usize, spread: f32) -> Vec<(FileId, f32)> {
        let mut scores: HashMap<u32, f32> = HashMap::new();
        for (c, score) in self.similar_commits(text, commits) {
            let Some(files) = self.files.get(c as usize) else { continue };
            let share = score / (files.len() as f32).powf(spread);
            for &f in files {
                *scores.entry(f).or_default() += share;
            }
        }
        let mut ranked: Vec<(FileId, f32)> =
            scores.into_iter().map(|(f, s)| (FileId(f), s)).collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked
    }
}

/// A hash of `paths` in order, for telling whether a refresh indexes the
/// same files as the generation it replaces.
fn paths_hash(paths: &[&str]) -> u64 {
    let mut joined = Vec::new();
    for p in paths {
        joined.extend_from_slice(p.as_bytes());
        joined.push(0);
    }
    xxhash_rust::xxh3::xxh3_64(&joined)
}

/// The history modality.
#[derive(Debug, Clone, Copy, Default)]
pub struct HistoryModality;

impl ModalityPlugin for HistoryModality {
    fn modality(&self) -> Modality {
        HISTORY
    }

    fn summary(&self) -> &'static str {
        "files modified by past commits whose messages are like the query"
    }

    fn files(&self) -> Vec<IndexFile> {
        vec![IndexFile { name: HISTORY_FILE, format: HISTORY_FORMAT, sectioned: false }]
    }

    fn params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec {
                name: "commits",
                doc: "how many of the most similar past commits give their files",
                default: 30.0,
                range: (1.0, 500.0),
            },
            ParamSpec {
                name: "spread",
                doc: "a commit's score is divided by its file count to this power",
                default: 0.5,
                range: (0.0, 1.0),
            },
        ]
    }

    /// History follows `HEAD`, not the files: a refresh whose `HEAD` and
    /// indexed paths are those of the generation it replaces keeps that
    /// generation's history (reading it again costs a large repository
    /// half a second); anything else reads it anew.
    fn build(&self, input: &BuildInput<'_>, out: &Path) -> Result<Built> {
        let paths: Vec<&str> = input.files.iter().map(|f| f.path.as_str()).collect();
        let head = log::head(input.root);
        let kept = input.previous.zip(head.as_ref()).and_then(|(previous, head)| {
            let old: CommitIndex =
                store::load(&previous.join(HISTORY_FILE), HISTORY_FORMAT).ok()?;
            (old.head.as_ref() == Some(head)
                && old.paths_hash == paths_hash(&paths)
                && old.is_consistent(paths.len()))
            .then_some(old)
        });
        let index = match (kept, head) {
            (Some(old), _) => old,
            (None, Some(head)) => {
                let commits = log::read_commits(input.root, &head);
                CommitIndex { head: Some(head), ..CommitIndex::build(&commits, &paths) }
            }
            (None, None) => CommitIndex::build(&[], &paths),
        };
        store::save(&out.join(HISTORY_FILE), HISTORY_FORMAT, "commit history", &index)?;
        Ok(Arc::new(index))
    }

    fn open(&self, input: &OpenInput<'_>) -> Result<Arc<dyn ModalityReader>> {
        let path = input.gen_dir.join(HISTORY_FILE);
        let index: CommitIndex = store::load(&path, HISTORY_FORMAT)?;
        if !index.is_consistent(input.files) {
            return Err(Error::corrupt(path, "the commit history does not match the files"));
        }
        Ok(Arc::new(HistoryReader { index, fragments: input.fragments.clone() }))
    }
}

/// The opened history modality.
#[derive(Debug)]
pub struct HistoryReader {
    index: CommitIndex,
    fragments: Arc<maguyva_core::FragmentTable>,
}

impl ModalityReader for HistoryReader {
    fn retriever(
        &self,
        params: Params<'_>,
        _: &(dyn Any + Send + Sync),
    ) -> Result<Box<dyn Retriever + '_>> {
        Ok(Box::new(HistoryRetriever {
            reader: self,
            commits: params.get("commits").round().max(1.0) as usize,
            spread: params.get("spread") as f32,
        }))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The history modality's retriever for one query.
struct HistoryRetriever<'a> {
    reader: &'a HistoryReader,
    commits: usize,
    spread: f32,
}

impl Retriever for HistoryRetriever<'_> {
    fn modality(&self) -> Modality {
        HISTORY
    }

    fn search(&self, query: &Query, limit: usize) -> Result<Vec<Hit>> {
        let r = self.reader;
        Ok(r.index
            .ranked_files(query.text(), self.commits, self.spread)
            .into_iter()
            .filter_map(|(file, score)| r.fragments.file_hit(file, score))
            .take(limit)
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::log::PastCommit;
    use super::*;

    fn commit(message: &str, paths: &[&str]) -> PastCommit {
        PastCommit {
            message: message.to_string(),
            paths: paths.iter().map(|p| p.to_string()).collect(),
        }
    }

    #[test]
    fn files_of_similar_fixes_rank_first() {
        let paths = ["src/cli.rs", "src/lexer.rs", "src/parser.rs"];
        let commits = [
            commit("Fix crash in the parser on unterminated strings", &["src/parser.rs"]),
            commit("Parser: unterminated comment hangs", &["src/parser.rs", "src/lexer.rs"]),
            commit("Add a --verbose flag", &["src/cli.rs"]),
            commit("Rename a file nobody indexes", &["gone.rs"]),
        ];
        let index = CommitIndex::build(&commits, &paths);
        assert_eq!(index.commits(), 3, "the commit of no indexed file is left out");
        let ranked = index.ranked_files("the parser crashes on an unterminated string", 30, 0.5);
        let order: Vec<u32> = ranked.iter().map(|(f, _)| f.0).collect();
        assert_eq!(order, vec![2, 1]);
        assert!(index.ranked_files("verbose flag", 30, 0.5)[0].0 == FileId(0));
        assert!(index.ranked_files("zebra", 30, 0.5).is_empty());
    }

    #[test]
    fn a_commit_of_too_many_files_says_nothing() {
        let paths: Vec<String> =
            (0..=log::MAX_FILES_PER_COMMIT).map(|i| format!("f{i:03}.rs")).collect();
        let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
        let index = CommitIndex::build(&[commit("Reformat everything", &refs)], &refs);
        assert_eq!(index.commits(), 0);
    }

    #[test]
    fn consistency_is_checked_against_the_file_count() {
        let index = CommitIndex::build(&[commit("Fix a bug", &["b.rs"])], &["a.rs", "b.rs"]);
        assert!(index.is_consistent(2));
        assert!(!index.is_consistent(1));
    }

    #[test]
    fn it_declares_its_files_and_parameters() {
        let m = HistoryModality;
        assert_eq!(m.modality().as_str(), "history");
        assert_eq!(m.files()[0].name, HISTORY_FILE);
        let specs = m.params();
        assert_eq!(Params::new(&specs, None).get("commits"), 30.0);
    }
}
