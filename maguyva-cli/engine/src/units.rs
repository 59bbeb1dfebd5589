//! More than one unit from a file: when a file's other fragments hold the
//! query's words as well as the one it ranked by, an answer can show them
//! too, each cut to its best lines like any result, instead of leaving the
//! reader to open the file.

use super::Index;
use crate::search::SearchResult;
use maguyva_core::{ChunkId, FileId};
use std::collections::{HashMap, HashSet};

/// Units shown per file unless asked otherwise.
pub const DEFAULT_PER_FILE: usize = 1;

impl Index {
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
        let wanted: HashSet<&str> = results.iter().map(|r| r.path.as_str()).collect();
        let ids: HashMap<&str, FileId> = self
            .manifest
            .files
            .iter()
            .enumerate()
            .filter(|(_, f)| wanted.contains(f.path.as_str()))
            .map(|(i, f)| (f.path.as_str(), FileId(i as u32)))
            .collect();
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
