//! The features the learned reranker reads of each fused candidate
//! (`maguyva_fusion::RerankModel`): what each modality said of the file,
//! what its path and definitions say of the query, and what kind of file it
//! is. Everything here is already in memory once a query's lists are in, so
//! the features of thirty candidates cost microseconds.

use crate::Index;
use crate::admission::AdmissionParams;
use crate::search::PreparedQuery;
use maguyva_core::{FileId, Hit, Modality, is_data_path, is_doc_path};
use maguyva_fusion::{
    FEATURE_COUNT, Features, FusedHit, Intent, QuestionKind, folded_name, is_test_path,
    is_vendor_path, path_word_share,
};
use std::collections::HashMap;

/// What one modality's list says of one file.
#[derive(Debug, Clone, Copy)]
struct ListEntry {
    /// The file's rank among the list's distinct files.
    rank: usize,
    /// Its best fragment's score over the list's best score.
    score: f32,
    /// The position of its second fragment in the list, if any.
    second: Option<usize>,
}

fn list_entries(hits: &[Hit]) -> HashMap<FileId, ListEntry> {
    let top = hits.iter().map(|h| h.score).fold(0.0f32, f32::max);
    let mut out: HashMap<FileId, ListEntry> = HashMap::new();
    for (pos, h) in hits.iter().enumerate() {
        let n = out.len();
        match out.get_mut(&h.file) {
            Some(e) => {
                e.second.get_or_insert(pos);
            }
            None => {
                let score = if top > 0.0 { (h.score / top).clamp(-1.0, 1.0) } else { 0.0 };
                out.insert(h.file, ListEntry { rank: n, score, second: None });
            }
        }
    }
    out
}

fn reciprocal(rank: Option<usize>) -> f32 {
    rank.map_or(0.0, |r| 1.0 / (1.0 + r as f32))
}

/// The kind of question, for the model's weight vectors.
pub(crate) fn question_kind(prepared: &PreparedQuery) -> QuestionKind {
    if prepared.classification.is_bare_name() {
        QuestionKind::BareName
    } else if prepared.intent == Intent::FindDefinition {
        QuestionKind::Definition
    } else {
        QuestionKind::Other
    }
}

impl Index {
    /// The features of each of the first `depth` fused candidates.
    pub(crate) fn candidate_features(
        &self,
        params: &AdmissionParams,
        prepared: &PreparedQuery,
        lists: &[(Modality, Vec<Hit>)],
        fused: &[FusedHit],
        depth: usize,
    ) -> Vec<Features> {
        let list = |m: Modality| {
            lists.iter().find(|(x, _)| *x == m).map(|(_, h)| list_entries(h)).unwrap_or_default()
        };
        let semantic = list(Modality::SEMANTIC);
        let text = list(Modality::TEXT);
        let structural = list(Modality::STRUCTURAL);
        let graph = list(Modality::GRAPH);
        let best = fused.first().map_or(0.0, |h| h.score);
        let evidence = prepared.evidence(self, params);
        let files = self.manifest.files.len() as u64;
        fused
            .iter()
            .take(depth)
            .enumerate()
            .map(|(i, hit)| {
                let mut x = [0.0f32; FEATURE_COUNT];
                let path =
                    self.manifest.files.get(hit.file.index()).map_or("", |f| f.path.as_str());
                let size = self.manifest.files.get(hit.file.index()).map_or(0, |f| f.size);
                let get = |m: &HashMap<FileId, ListEntry>| m.get(&hit.file).copied();
                let (s, t, st, g) = (get(&semantic), get(&text), get(&structural), get(&graph));
                x[0] = if best > 0.0 { hit.score / best } else { 0.0 };
                x[1] = reciprocal(Some(i));
                x[2] = reciprocal(s.map(|e| e.rank));
                x[3] = s.map_or(0.0, |e| e.score);
                x[4] = reciprocal(s.and_then(|e| e.second));
                x[5] = reciprocal(t.map(|e| e.rank));
                x[6] = t.map_or(0.0, |e| e.score);
                x[7] = reciprocal(t.and_then(|e| e.second));
                x[8] = reciprocal(st.map(|e| e.rank));
                x[9] = st.map_or(0.0, |e| e.score);
                x[10] = reciprocal(g.map(|e| e.rank));
                x[11] = g.map_or(0.0, |e| e.score);
                x[12] = [s, t, st, g].iter().filter(|e| e.is_some_and(|e| e.rank < 10)).count()
                    as f32
                    / 4.0;
                x[13] = path_word_share(&prepared.content_words, path);
                let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
                x[14] = dir_word_share(&prepared.content_words, dir);
                x[15] = f32::from(u8::from(prepared.named_files.contains(&hit.file)));
                let stem = folded_name(maguyva_core::file_stem(path));
                x[16] = f32::from(u8::from(prepared.named_symbols.contains(&stem)));
                x[17] = f32::from(u8::from(is_test_path(path)));
                x[18] = f32::from(u8::from(is_vendor_path(path)));
                x[19] = f32::from(u8::from(is_doc_path(path)));
                x[20] = (1.0 + size as f32).ln() / 12.0;
                let depth_of = path.matches('/').count();
                x[21] = depth_of as f32 / 10.0;
                let c = self.file_centrality.get(hit.file.index()).copied().unwrap_or(0.0);
                x[22] = c / self.max_centrality.max(f32::EPSILON);
                x[23] = f32::from(u8::from(depth_of <= 1));
                if let Some(e) = evidence {
                    x[24] = e.coverage(hit.file);
                    x[25] = e.rare_coverage(hit.file, files);
                }
                x[26] = name_precision(&prepared.content_words, path);
                x[27] = f32::from(u8::from(is_data_path(path)));
                x[28] = f32::from(u8::from(prepared.named_type_files.contains(&hit.file)));
                let language = self.manifest.files.get(hit.file.index()).and_then(|f| f.language);
                x[29] = language.and_then(|l| self.language_share.get(&l)).copied().unwrap_or(0.0);
                x
            })
            .collect()
    }
}

/// The share of the words of a file's name that are among `words` (how
/// much of the name the query explains).
fn name_precision(words: &[String], path: &str) -> f32 {
    let stem = maguyva_core::file_stem(path);
    let parts: Vec<String> =
        maguyva_core::tokens::split_identifier(stem).map(|p| p.to_lowercase()).collect();
    if parts.is_empty() || words.is_empty() {
        return 0.0;
    }
    let found = parts.iter().filter(|p| words.contains(p)).count();
    found as f32 / parts.len() as f32
}

/// The share of `words` among the words of a file's folders.
fn dir_word_share(words: &[String], dir: &str) -> f32 {
    if words.is_empty() || dir.is_empty() {
        return 0.0;
    }
    let parts: Vec<String> = dir
        .split(['/', '_', '-', '.'])
        .filter(|p| !p.is_empty())
        .map(|p| p.to_lowercase())
        .collect();
    let found = words.iter().filter(|w| parts.iter().any(|p| p == *w)).count();
    found as f32 / words.len() as f32
}

#[cfg(test)]
mod tests {
    use super::*;
    use maguyva_core::{ChunkId, LineSpan};

    fn hit(file: u32, score: f32) -> Hit {
        Hit { chunk: ChunkId(file), file: FileId(file), lines: LineSpan::line(1), score }
    }

    #[test]
    fn list_entries_rank_distinct_files_and_find_second_fragments() {
        let e = list_entries(&[hit(3, 4.0), hit(5, 2.0), hit(3, 1.0)]);
        assert_eq!(e[&FileId(3)].rank, 0);
        assert_eq!(e[&FileId(3)].second, Some(2));
        assert_eq!(e[&FileId(5)].rank, 1);
        assert!((e[&FileId(5)].score - 0.5).abs() < 1e-6);
        assert_eq!(e[&FileId(5)].second, None);
    }

    #[test]
    fn folder_words() {
        let w = vec!["router".to_string(), "http".to_string()];
        assert_eq!(dir_word_share(&w, "src/http/server"), 0.5);
        assert_eq!(dir_word_share(&w, ""), 0.0);
    }
}
