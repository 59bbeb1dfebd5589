//! The units an answer shows: each result cut to the definition around its
//! best line, or to its best lines ([`crate::budget::shape`]); and more
//! than one unit from a file when the file's other fragments hold the
//! query's words as well as the one it ranked by, instead of leaving the
//! reader to open the file.

use super::Index;
use crate::search::SearchResult;
use maguyva_core::{ChunkId, FileId};
use std::collections::{HashMap, HashSet};

/// Units shown per file unless asked otherwise.
pub const DEFAULT_PER_FILE: usize = 1;

impl Index {
    /// Each result costing more than `max_tokens` cut to what answers
    /// ([`crate::budget::shape`]): the smallest definition holding its best
    /// line when it fits, as the structural modality knows definitions (when
    /// the query has opened it: a quick search reads nothing more for this),
    /// else its best lines.
    pub(crate) fn shape_units(&self, results: &mut [SearchResult], max_tokens: usize, query: &str) {
        let table = self.structural_if_open().map(|s| s.table());
        let ids = match table {
            Some(_) => self.file_ids(results),
            None => HashMap::new(),
        };
        crate::budget::shape(results, max_tokens, query, |r, line| {
            let file = *ids.get(r.path.as_str())?;
            table?
                .spans_of_file(file)
                .filter(|s| s.contains(line))
                .map(|s| (s.start(), s.end()))
                .min_by_key(|(a, b)| (b - a, *a))
        });
    }

    /// The ids of the results' files (a manifest lists its files in path
    /// order, as the walk gives them).
    fn file_ids(&self, results: &[SearchResult]) -> HashMap<String, FileId> {
        results
            .iter()
            .filter_map(|r| Some((r.path.clone(), self.manifest.file_id(&r.path)?)))
            .collect()
    }

    /// `results` with up to `per_file - 1` more units of each file placed
    /// after its first: the file's other fragments holding at least half
    /// of the query's distinct words (of three letters or more), most
    /// words first, then in file order. A fragment overlapping the lines
    /// already shown is not repeated.
    pub(crate) fn more_units(
        &self,
        results: Vec<SearchResult>,
        query: &str,
        per_file: usize,
    ) -> Vec<SearchResult> {
        let words = crate::budget::query_words(query);
        if per_file <= 1 || words.is_empty() || results.is_empty() {
            return results;
        }
        let need = words.len().div_ceil(2);
        let ids = self.file_ids(&results);
        let mut out = Vec::with_capacity(results.len() * per_file);
        let mut done = HashSet::new();
        for r in &results {
            out.push(r.clone());
            if !done.insert(r.path.as_str()) {
                continue;
            }
            let Some(&file) = ids.get(r.path.as_str()) else { continue };
            let mut scored: Vec<(usize, ChunkId)> = self
                .fragments
                .of_file(file)
                .filter_map(|c| {
                    let frag = self.fragments.try_get(c)?;
                    if frag.lines.start() <= r.end_line && frag.lines.end() >= r.start_line {
                        return None;
                    }
                    let text = self.content.fragment_text(frag).to_lowercase();
                    let held = words.iter().filter(|w| text.contains(w.as_str())).count();
                    (held >= need).then_some((held, c))
                })
                .collect();
            scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            for (_, c) in scored.into_iter().take(per_file - 1) {
                let Some(frag) = self.fragments.try_get(c) else { continue };
                if let Some(unit) = self.result(c, file, frag.lines, r.score, r.ranks.clone()) {
                    out.push(SearchResult { admitted: r.admitted.clone(), ..unit });
                }
            }
        }
        out
    }
}
