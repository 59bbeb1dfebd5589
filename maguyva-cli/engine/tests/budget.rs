//! A token budget never lets an answer grow past it: over random budgets,
//! queries and the fixture repositories of several languages, the results
//! kept cost at most the budget, in their unbudgeted order, each whole when
//! it fitted, else a run of its lines, and each one left out had not even
//! one line that fitted.

use maguyva_core::{IndexDir, NoProgress};
use maguyva_engine::budget::{cut_to_fit, query_words, result_tokens};
use maguyva_engine::{
    BuildOptions, Index, IndexSettings, SearchRequest, SearchResult, build_index_with,
};
use proptest::prelude::*;
use std::path::Path;
use std::sync::OnceLock;

const FIXTURES: [&str; 4] = ["python", "rust", "typescript", "go"];

const QUERIES: [&str; 6] = [
    "how is the discount applied",
    "where is the stock reserved",
    "what breaks if I change the cart",
    "\"return\"",
    "parse",
    "who calls total",
];

/// One index per fixture, built once for every case.
fn indexes() -> &'static Vec<(tempfile::TempDir, Index)> {
    static INDEXES: OnceLock<Vec<(tempfile::TempDir, Index)>> = OnceLock::new();
    INDEXES.get_or_init(|| {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
        FIXTURES
            .iter()
            .map(|name| {
                let dir = tempfile::tempdir().unwrap();
                let (index, _) = build_index_with(
                    &fixtures.join(name),
                    &IndexDir::new(dir.path()),
                    &IndexSettings::default(),
                    BuildOptions::FULL,
                    &NoProgress,
                )
                .unwrap();
                (dir, index)
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn answers_stay_within_the_budget(
        fixture in 0..FIXTURES.len(),
        query in 0..QUERIES.len(),
        budget in 1usize..600,
        limit in 1usize..12,
    ) {
        let index = &indexes()[fixture].1;
        let mut request = SearchRequest::new(QUERIES[query]);
        request.limit = limit;
        let full = index.search(&request).unwrap().results;
        request.max_tokens = Some(budget);
        let response = index.search(&request).unwrap();
        let report = response.budget.unwrap();
        let used: usize = response.results.iter().map(result_tokens).sum();
        prop_assert!(used <= budget);
        prop_assert_eq!(used, report.used_tokens);
        prop_assert_eq!(response.results.len() + report.left_out, full.len());
        let mut spent = 0;
        let mut kept = response.results.iter().peekable();
        for r in &full {
            let cost = result_tokens(r);
            let within = |k: &&SearchResult| {
                k.path == r.path && k.start_line >= r.start_line && k.end_line <= r.end_line
            };
            if kept.peek().is_some_and(within) {
                let k = kept.next().unwrap();
                if spent + cost <= budget {
                    prop_assert_eq!(k, r, "a result that fitted is kept whole");
                } else {
                    prop_assert!(r.snippet.contains(&k.snippet), "{} was cut to other text", r.path);
                }
                spent += result_tokens(k);
            } else {
                prop_assert!(spent + cost > budget, "{} was left out but fitted", r.path);
                let words = query_words(QUERIES[query]);
                prop_assert!(cut_to_fit(r, budget - spent, &words).is_none(), "{} had a line that fitted", r.path);
            }
        }
        prop_assert!(kept.next().is_none());
    }
}

#[test]
fn a_small_budget_leaves_results_out_and_keeps_some() {
    let (mut kept, mut left_out, mut cut) = (0, 0, 0);
    for (_, index) in indexes() {
        for q in QUERIES {
            let mut request = SearchRequest::new(q);
            request.max_tokens = Some(60);
            let response = index.search(&request).unwrap();
            kept += response.results.len();
            left_out += response.budget.unwrap().left_out;
            cut += response.budget.unwrap().cut;
        }
    }
    assert!(kept > 0 && left_out > 0 && cut > 0, "kept {kept}, left out {left_out}, cut {cut}");
}
