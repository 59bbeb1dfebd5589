//! Token budgets: an answer that must fit a reader's context (a model's, or
//! a terminal's) keeps results best first while they fit; a result too
//! large for what is left is cut to the lines around the ones that answer
//! (its definition's line, else the lines with the most of the query's
//! words) instead of being left out.
//!
//! Tokens are estimated, not counted with any one model's tokenizer: a
//! result costs one token per [`BYTES_PER_TOKEN`] bytes (rounded up) of
//! `PATH:START-END`, a line break, its snippet and a line break, which is
//! what a reader is given of it (the JSON and MCP answers carry exactly
//! that snippet, and the terminal prints all of its lines when a budget is
//! given). Code averages three to four bytes a token in the tokenizers of
//! current models, so the estimate errs towards spending less than the
//! budget.

use crate::search::SearchResult;
use serde::Serialize;

/// Bytes counted as one token.
pub const BYTES_PER_TOKEN: usize = 3;

/// The estimated tokens a result shows unless asked otherwise: its best
/// lines (about a dozen lines of code) rather than its whole fragment.
pub const DEFAULT_SNIPPET_TOKENS: usize = 150;

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
    /// Results left out because not even one of their lines fitted.
    pub left_out: usize,
    /// Results kept with fewer lines than found, to fit.
    pub cut: usize,
}

/// Keeps the results that fit in `max_tokens`, in order: each in turn is
/// kept whole when it fits in what the ones before it left, else cut to
/// the lines around its best ones that fit ([`cut_to_fit`]), else left out
/// (a later, smaller result may still fit). `query` is the question, whose
/// words tell a result's best lines.
pub fn pack(
    results: Vec<SearchResult>,
    max_tokens: usize,
    query: &str,
) -> (Vec<SearchResult>, BudgetReport) {
    let mut report = BudgetReport { max_tokens, used_tokens: 0, left_out: 0, cut: 0 };
    let words = query_words(query);
    let mut kept = Vec::with_capacity(results.len());
    for r in results {
        let left = max_tokens - report.used_tokens;
        let cost = result_tokens(&r);
        let (r, cost) = match cost <= left {
            true => (r, cost),
            false => match cut_to_fit(&r, left, &words) {
                Some(cut) => {
                    report.cut += 1;
                    let cost = result_tokens(&cut);
                    (cut, cost)
                }
                None => {
                    report.left_out += 1;
                    continue;
                }
            },
        };
        report.used_tokens += cost;
        kept.push(r);
    }
    (kept, report)
}

/// The lowercase words of a query that can tell a line apart: three
/// characters or more.
pub fn query_words(query: &str) -> Vec<String> {
    let mut words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| w.chars().count() >= 3)
        .map(str::to_lowercase)
        .collect();
    words.sort();
    words.dedup();
    words
}

/// The index of the line of `lines` that best answers: the line of its
/// definition if it has one, else the line holding the most of `words`,
/// else its first line that is not blank.
fn anchor(r: &SearchResult, lines: &[&str], words: &[String]) -> usize {
    let defined = r
        .definition_line
        .and_then(|d| d.checked_sub(r.start_line))
        .map(|i| i as usize)
        .filter(|&i| i < lines.len());
    if let Some(i) = defined {
        return i;
    }
    let matches = |l: &str| {
        let l = l.to_lowercase();
        words.iter().filter(|w| l.contains(w.as_str())).count()
    };
    let best = (0..lines.len())
        .map(|i| (matches(lines[i]), std::cmp::Reverse(i)))
        .max()
        .filter(|&(n, _)| n > 0)
        .map(|(_, std::cmp::Reverse(i))| i);
    match best {
        Some(i) => i,
        None => (0..lines.len()).find(|&i| !lines[i].trim().is_empty()).unwrap_or(0),
    }
}

/// `r` showing only `lines[a..=b]` of its snippet.
fn window(r: &SearchResult, lines: &[&str], a: usize, b: usize) -> SearchResult {
    let mut cut = r.clone();
    cut.snippet = lines[a..=b].join("\n");
    cut.start_line = r.start_line + a as u32;
    cut.end_line = r.start_line + b as u32;
    cut
}

/// `r` cut to the most lines around its best line ([`anchor`]) that fit
/// in `max_tokens`: the lines after it are taken first, then the ones
/// before. `None` when not even that line fits.
pub fn cut_to_fit(r: &SearchResult, max_tokens: usize, words: &[String]) -> Option<SearchResult> {
    let lines: Vec<&str> = r.snippet.lines().collect();
    if lines.is_empty() {
        return None;
    }
    grow(r, &lines, anchor(r, &lines, words), max_tokens)
}

/// `r` cut to the most of its `lines` around line `at` that fit in
/// `max_tokens`, the lines after it first; `None` when `at` alone does not.
fn grow(r: &SearchResult, lines: &[&str], at: usize, max_tokens: usize) -> Option<SearchResult> {
    // What `result_tokens` would charge for `window(r, lines, a, b)`,
    // without building it: the location line, the lines joined, a break.
    let mut ends = Vec::with_capacity(lines.len() + 1);
    ends.push(0);
    for l in lines {
        ends.push(ends[ends.len() - 1] + l.len());
    }
    let digits = |n: u32| n.checked_ilog10().unwrap_or(0) as usize + 1;
    let fits = |a: usize, b: usize| {
        let (start, end) = (r.start_line + a as u32, r.start_line + b as u32);
        let location = r.path.len() + digits(start) + digits(end) + 3;
        let text = ends[b + 1] - ends[a] + (b - a);
        (location + text + 1).div_ceil(BYTES_PER_TOKEN) <= max_tokens
    };
    if !fits(at, at) {
        return None;
    }
    let (mut a, mut b) = (at, at);
    while b + 1 < lines.len() && fits(a, b + 1) {
        b += 1;
    }
    while a > 0 && fits(a - 1, b) {
        a -= 1;
    }
    let cut = window(r, lines, a, b);
    debug_assert!(result_tokens(&cut) <= max_tokens);
    Some(cut)
}

/// Each result costing more than `max_tokens` cut to what answers: the
/// whole definition around its best line ([`anchor`]) when `definition`
/// names one (its first and last line, for a result and a line of it) and
/// it fits, else the lines around it that fit ([`cut_to_fit`]), else its best
/// line alone when even that line is longer. What an answer shows of a
/// file is the part that answers, not the whole fragment the file ranked
/// by. Returns how many were cut.
pub fn shape(
    results: &mut [SearchResult],
    max_tokens: usize,
    query: &str,
    definition: impl Fn(&SearchResult, u32) -> Option<(u32, u32)>,
) -> usize {
    let words = query_words(query);
    let mut cut = 0;
    for r in results.iter_mut() {
        if result_tokens(r) <= max_tokens {
            continue;
        }
        let lines: Vec<&str> = r.snippet.lines().collect();
        if lines.is_empty() {
            continue;
        }
        let at = anchor(r, &lines, &words);
        let whole = definition(r, r.start_line + at as u32)
            .map(|(a, b)| {
                let a = a.max(r.start_line) - r.start_line;
                let b = b.min(r.start_line + lines.len() as u32 - 1) - r.start_line;
                window(r, &lines, a as usize, (b as usize).max(a as usize))
            })
            .filter(|w| result_tokens(w) <= max_tokens);
        let shaped = match whole.or_else(|| grow(r, &lines, at, max_tokens)) {
            Some(c) => c,
            None => window(r, &lines, at, at),
        };
        *r = shaped;
        cut += 1;
    }
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn result(path: &str, snippet: &str, line: u32) -> SearchResult {
        SearchResult::lines(path, line, line + snippet.lines().count() as u32, 1.0, snippet)
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
    fn a_large_result_is_cut_to_its_best_lines() {
        let snippet = "use std::io;\n\nfn helper() {}\n\npub fn parse_config(path: &str) {\n    read(path)\n}\n// trailing\n";
        let r = result("src/config.rs", snippet, 10);
        let whole = result_tokens(&r);
        let (kept, report) = pack(vec![r.clone()], whole - 1, "where is parse_config");
        assert_eq!(report.cut, 1);
        let cut = &kept[0];
        // The best line, then what follows it, then what comes before.
        assert!(
            cut.snippet.starts_with("pub fn parse_config")
                || cut.snippet.contains("\npub fn parse_config"),
            "{:?}",
            cut.snippet
        );
        assert_eq!(cut.snippet.lines().count() as u32, cut.end_line - cut.start_line + 1);
        assert!(result_tokens(cut) < whole);
        // Its definition's line is the anchor when known.
        let mut r = result("src/config.rs", snippet, 10);
        r.definition_line = Some(14);
        let cut = cut_to_fit(&r, 20, &query_words("unrelated words")).unwrap();
        assert!(cut.start_line <= 14 && cut.end_line >= 14, "{:?}", cut.snippet);
        assert!(cut.snippet.contains("pub fn parse_config"), "{:?}", cut.snippet);
        assert!(!cut.snippet.contains("use std"), "{:?}", cut.snippet);
    }

    #[test]
    fn shaping_keeps_small_results_and_cuts_large_ones_to_their_best_lines() {
        let body: String = (0..60).map(|i| format!("    let v{i} = compute({i});\n")).collect();
        let snippet =
            format!("use std::io;\n{body}fn retry_policy() {{\n    backoff()\n}}\n{body}");
        let mut rs = vec![result("small.rs", "fn retry() {}", 1), result("big.rs", &snippet, 1)];
        let small = rs[0].clone();
        assert_eq!(shape(&mut rs, 40, "the retry_policy", |_, _| None), 1);
        assert_eq!(rs[0], small);
        let big = &rs[1];
        assert!(result_tokens(big) <= 40, "{}", result_tokens(big));
        assert!(big.snippet.starts_with("fn retry_policy"), "{:?}", big.snippet);
        assert_eq!(big.start_line, 62);
        assert_eq!(big.snippet.lines().count() as u32, big.end_line - big.start_line + 1);
        // A line longer than the cap is shown alone rather than left out.
        let mut rs = vec![result("min.js", &format!("{}\nnext", "x".repeat(500)), 1)];
        assert_eq!(shape(&mut rs, 10, "", |_, _| None), 1);
        assert_eq!((rs[0].start_line, rs[0].end_line), (1, 1));
        assert_eq!(rs[0].snippet.len(), 500);
    }

    #[test]
    fn shaping_shows_the_whole_definition_around_the_best_line_when_it_fits() {
        let body: String = (0..60).map(|i| format!("    let v{i} = compute({i});\n")).collect();
        let snippet = format!(
            "{body}fn retry_policy() {{\n    // the retry policy\n    backoff()\n}}\n{body}"
        );
        let original = result("big.rs", &snippet, 1);
        // The definition holding line 62 is lines 61-64.
        let around = |_: &SearchResult, line: u32| (61..=64).contains(&line).then_some((61, 64));
        let mut rs = vec![original.clone()];
        shape(&mut rs, 40, "retry policy", around);
        assert_eq!((rs[0].start_line, rs[0].end_line), (61, 64), "{:?}", rs[0].snippet);
        assert!(rs[0].snippet.starts_with("fn retry_policy"));
        // A definition too large for the budget gives way to the best lines.
        let mut rs = vec![original.clone()];
        shape(&mut rs, 40, "retry policy", |_, _| Some((1, 120)));
        assert!(result_tokens(&rs[0]) <= 40);
        assert!(rs[0].snippet.contains("the retry policy"), "{:?}", rs[0].snippet);
        // A definition reaching past the result is cut to the result's lines.
        let mut rs = vec![original];
        shape(&mut rs, 100, "retry policy", |_, _| Some((55, 70)));
        assert!(rs[0].start_line == 55 || result_tokens(&rs[0]) <= 100);
        assert!(rs[0].end_line <= 121);
    }

    #[test]
    fn a_large_result_is_skipped_and_a_later_small_one_kept() {
        let rs = vec![
            result("a.rs", "short", 1),
            result("b.rs", &"long ".repeat(100), 1),
            result("c.rs", "tiny", 1),
        ];
        let (kept, report) = pack(rs, 20, "");
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
            let (kept, report) = pack(rs.clone(), budget, "");
            let used: usize = kept.iter().map(result_tokens).sum();
            prop_assert!(used <= budget);
            prop_assert_eq!(used, report.used_tokens);
            prop_assert_eq!(kept.len() + report.left_out, rs.len());
            // Kept results keep their order; each is its result whole when
            // that fitted in what was left at its turn, else a run of its
            // lines; each one left out had not even one line that fitted.
            let mut spent = 0;
            let mut next = kept.iter().peekable();
            for r in &rs {
                let cost = result_tokens(r);
                if next.peek().is_some_and(|k| k.path == r.path) {
                    let k = next.next().unwrap();
                    if spent + cost <= budget {
                        prop_assert_eq!(k, r);
                    } else {
                        prop_assert!(r.snippet.contains(&k.snippet));
                        prop_assert!(k.start_line >= r.start_line && k.end_line <= r.end_line);
                    }
                    spent += result_tokens(k);
                } else {
                    prop_assert!(spent + cost > budget);
                    prop_assert!(cut_to_fit(r, budget - spent, &[]).is_none());
                }
            }
            prop_assert!(next.next().is_none());
        }
    }
}
