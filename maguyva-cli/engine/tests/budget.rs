//! A token budget never lets an answer grow past it: over random budgets,
//! queries and the fixture repositories of several languages, the results
//! kept cost at most the budget, in their unbudgeted order, and each one
//! left out would not have fitted.

use maguyva_core::{IndexDir, NoProgress};
use maguyva_engine::budget::result_tokens;
use maguyva_engine::{BuildOptions, Index, IndexSettings, SearchRequest, build_index_with};
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
            if kept.peek().is_some_and(|k| k.path == r.path && k.start_line == r.start_line) {
                spent += cost;
                kept.next();
            } else {
                prop_assert!(spent + cost > budget, "{} was left out but fitted", r.path);
            }
        }
        prop_assert!(kept.next().is_none());
    }
}

#[test]
fn a_small_budget_leaves_results_out_and_keeps_some() {
    let (mut kept, mut left_out) = (0, 0);
    for (_, index) in indexes() {
        for q in QUERIES {
            let mut request = SearchRequest::new(q);
            request.max_tokens = Some(60);
            let response = index.search(&request).unwrap();
            kept += response.results.len();
            left_out += response.budget.unwrap().left_out;
        }
    }
    assert!(kept > 0 && left_out > 0, "kept {kept}, left out {left_out}");
}
