//! What an answer shows of each file: its best lines within the snippet
//! budget, each the file's own lines, and with `per_file` more units of a
//! file after its first, never overlapping. Checked on the fixture
//! repositories of several languages and on this project's own core crate
//! (real code, not written for the test).

use maguyva_core::{IndexDir, NoProgress};
use maguyva_engine::budget::{DEFAULT_SNIPPET_TOKENS, result_tokens};
use maguyva_engine::{
    BuildOptions, Index, IndexSettings, SearchRequest, SearchResult, build_index_with,
};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const QUERIES: [&str; 6] = [
    "how is the discount applied",
    "where is the stock reserved",
    "fragment table of a file",
    "how are index files written to disk",
    "parse",
    "checksum",
];

fn roots() -> Vec<PathBuf> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut roots: Vec<PathBuf> = ["python", "rust", "typescript", "go", "java"]
        .iter()
        .map(|f| here.join("../tests/fixtures").join(f))
        .collect();
    roots.push(here.join("../../maguyva-core/src"));
    roots
}

fn indexes() -> &'static Vec<(PathBuf, tempfile::TempDir, Index)> {
    static INDEXES: OnceLock<Vec<(PathBuf, tempfile::TempDir, Index)>> = OnceLock::new();
    INDEXES.get_or_init(|| {
        roots()
            .into_iter()
            .map(|root| {
                let dir = tempfile::tempdir().unwrap();
                let (index, _) = build_index_with(
                    &root,
                    &IndexDir::new(dir.path()),
                    &IndexSettings::default(),
                    BuildOptions::FULL,
                    &NoProgress,
                )
                .unwrap();
                (root, dir, index)
            })
            .collect()
    })
}

/// Whether `r`'s snippet is exactly lines `start..=end` of its file.
fn is_the_files_lines(root: &Path, r: &SearchResult) -> bool {
    let text = std::fs::read_to_string(root.join(&r.path)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let want = lines[r.start_line as usize - 1..r.end_line as usize].join("\n");
    want == r.snippet
}

#[test]
fn results_show_their_best_lines_within_the_snippet_budget() {
    let (mut shaped, mut whole_larger) = (0, 0);
    for (root, _, index) in indexes() {
        for q in QUERIES {
            let mut request = SearchRequest::new(q);
            let shown = index.search(&request).unwrap().results;
            request.snippet_tokens = None;
            let whole = index.search(&request).unwrap().results;
            let paths = |rs: &[SearchResult]| rs.iter().map(|r| r.path.clone()).collect::<Vec<_>>();
            assert_eq!(paths(&shown), paths(&whole), "{q:?}: the same files in the same order");
            for (s, w) in shown.iter().zip(&whole) {
                assert!(
                    is_the_files_lines(root, s),
                    "{}:{}-{} {:?} {q}",
                    s.path,
                    s.start_line,
                    s.end_line,
                    s.snippet
                );
                assert!(s.start_line >= w.start_line && s.end_line <= w.end_line);
                assert!(
                    result_tokens(s) <= DEFAULT_SNIPPET_TOKENS || s.start_line == s.end_line,
                    "{} costs {}",
                    s.path,
                    result_tokens(s)
                );
                shaped += usize::from(s != w);
                whole_larger += usize::from(result_tokens(w) > DEFAULT_SNIPPET_TOKENS);
            }
        }
    }
    assert!(
        shaped > 0 && shaped == whole_larger,
        "{shaped} shaped, {whole_larger} over the budget"
    );
}

#[test]
fn more_units_per_file_follow_their_first_and_never_overlap() {
    let mut extra = 0;
    for (root, _, index) in indexes() {
        for q in QUERIES {
            let mut request = SearchRequest::new(q);
            let one = index.search(&request).unwrap().results;
            request.per_file = 3;
            let many = index.search(&request).unwrap().results;
            let firsts: Vec<&SearchResult> = many
                .iter()
                .enumerate()
                .filter(|(i, r)| *i == 0 || many[i - 1].path != r.path)
                .map(|(_, r)| r)
                .collect();
            assert_eq!(firsts.len(), one.len(), "{q:?}: one group per file");
            for (a, b) in firsts.iter().zip(&one) {
                assert_eq!(*a, b, "{q:?}: a file's first unit is the one-per-file answer");
            }
            for group in many.chunk_by(|a, b| a.path == b.path) {
                assert!(group.len() <= 3);
                extra += group.len() - 1;
                for (i, a) in group.iter().enumerate() {
                    assert!(is_the_files_lines(root, a));
                    for b in &group[i + 1..] {
                        assert!(
                            a.end_line < b.start_line || b.end_line < a.start_line,
                            "{}: {}-{} overlaps {}-{}",
                            a.path,
                            a.start_line,
                            a.end_line,
                            b.start_line,
                            b.end_line
                        );
                    }
                }
            }
        }
    }
    assert!(extra > 0, "some file shows more than one unit");
}
