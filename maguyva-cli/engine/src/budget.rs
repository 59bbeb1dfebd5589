//! Token budgets: an answer that must fit a reader's context (a model's, or
//! a terminal's) keeps whole results, best first, while they fit.
//!
//! Tokens are estimated, not counted with any one model's tokenizer: a
//! result costs one token per [`BYTES_PER_TOKEN`] bytes (rounded up) of
//! `PATH:START-END`, a line break, its snippet and a line break, which is
//! what a reader is given of it. Code averages three to four bytes a token
//! in the tokenizers of current models, so the estimate errs towards
//! spending less than the budget.

use crate::search::SearchResult;
use serde::Serialize;

/// Bytes counted as one token.
pub const BYTES_PER_TOKEN: usize = 3;

/// The estimated tokens of `text`.
pub fn estimate_tokens(text: &str) -> usize {
    text.len().div_ceil(BYTES_PER_TOKEN)
}

/// The estimated tokens of one result: its location line and its snippet.
pub fn result_tokens(r: &SearchResult) -> usize {
    let location = format!("{}:{}-{}\n", r.path, r.start_line, r.end_line);
    (location.len() + r.snippet.len() + 1).div_ceil(BYTES_PER_TOKEN)
}

/// What a budget did to an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BudgetReport {
    /// The budget, in estimated tokens.
    pub max_tokens: usize,
    /// The estimated tokens of the results kept.
    pub used_tokens: usize,
    /// Results left out because they did not fit.
    pub left_out: usize,
}

/// Keeps the results that fit in `max_tokens`, in order: each in turn is
/// kept when it fits in what the ones before it left, and left out
/// otherwise (a later, smaller result may still fit).
pub fn pack(results: Vec<SearchResult>, max_tokens: usize) -> (Vec<SearchResult>, BudgetReport) {
    let mut report = BudgetReport { max_tokens, used_tokens: 0, left_out: 0 };
    let mut kept = Vec::with_capacity(results.len());
    for r in results {
        let cost = result_tokens(&r);
        if report.used_tokens + cost <= max_tokens {
            report.used_tokens += cost;
            kept.push(r);
        } else {
            report.left_out += 1;
        }
    }
    (kept, report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn result(path: &str, snippet: &str, line: u32) -> SearchResult {
        SearchResult {
            path: path.into(),
            start_line: line,
            end_line: line + snippet.lines().count() as u32,
            score: 1.0,
            snippet: snippet.into(),
            ranks: BTreeMap::new(),
            explain: None,
            evidence: None,
            definition_line: None,
            admitted: None,
        }
    }

    #[test]
    fn estimates_round_up() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("ab"), 1);
        assert_eq!(estimate_tokens("abcd"), 2);
        // "a.rs:1-1\n" (9 bytes) + "x" + "\n": 11 bytes.
        assert_eq!(result_tokens(&result("a.rs", "x", 1)), 4);
    }

    #[test]
    fn a_large_result_is_skipped_and_a_later_small_one_kept() {
        let rs = vec![
            result("a.rs", "short", 1),
            result("b.rs", &"long ".repeat(100), 1),
            result("c.rs", "tiny", 1),
        ];
        let (kept, report) = pack(rs, 20);
        let paths: Vec<&str> = kept.iter().map(|r| r.path.as_str()).collect();
        assert_eq!(paths, vec!["a.rs", "c.rs"]);
        assert_eq!(report.left_out, 1);
        assert!(report.used_tokens <= 20);
    }

    proptest! {
        #[test]
        fn never_over_budget_and_in_order(
            snippets in proptest::collection::vec(("[a-z]{1,8}", "[ -~\n]{0,300}"), 0..20),
            budget in 0usize..400,
        ) {
            let rs: Vec<SearchResult> = snippets
                .iter()
                .enumerate()
                .map(|(i, (p, s))| result(&format!("{p}{i}.rs"), s, i as u32 + 1))
                .collect();
            let (kept, report) = pack(rs.clone(), budget);
            let used: usize = kept.iter().map(result_tokens).sum();
            prop_assert!(used <= budget);
            prop_assert_eq!(used, report.used_tokens);
            prop_assert_eq!(kept.len() + report.left_out, rs.len());
            // Kept results keep their order, and each one left out did not
            // fit in what was left at its turn.
            let mut spent = 0;
            let mut next = kept.iter().peekable();
            for r in &rs {
                let cost = result_tokens(r);
                if next.peek().is_some_and(|k| k.path == r.path) {
                    prop_assert!(spent + cost <= budget);
                    spent += cost;
                    next.next();
                } else {
                    prop_assert!(spent + cost > budget);
                }
            }
            prop_assert!(next.next().is_none());
        }
    }
}
