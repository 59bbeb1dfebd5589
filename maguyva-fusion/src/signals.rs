//! Ranking signals beyond the seed recipe, each behind a named switch so that
//! `maguyva eval` can measure it alone. The seed's numbers (weights, k, boost)
//! are untouched by them: each is a per-file prior that multiplies the
//! fused score.

use serde::{Deserialize, Serialize};

/// The prior of a test, example, benchmark or generated file: such files
/// exercise or repeat the code a question is about, and rank below it.
pub const TEST_FILE_FACTOR: f32 = 0.75;

/// The most a file gains when every query word is in its name.
pub const PATH_WORDS_LIFT: f32 = 0.15;

/// The lift of a file that defines a symbol named in the query.
pub const QUERY_SYMBOL_LIFT: f32 = 0.15;

/// The lift of a file named after a symbol the query names.
pub const NAMED_FILE_LIFT: f32 = 0.15;

/// Which signals run, and how strongly. The switches and strengths of the
/// default ranking are learned (doc/ranking.md); `Signals::NONE` is the seed's
/// recipe alone.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Signals {
    /// Tests, examples, benchmarks and generated files rank below the code.
    pub test_files: bool,
    /// The factor on such a file's fused score.
    pub test_file_factor: f32,
    /// Query words in a file's name lift it.
    pub path_words: bool,
    /// The lift when every query word is in the file's name.
    pub path_words_lift: f32,
    /// A file defining a symbol that the query names, exactly as written
    /// (`Router`, or `how IntoResponse converts ...`), is lifted.
    pub query_symbols: bool,
    /// That lift.
    pub query_symbol_lift: f32,
    /// A file named after a symbol that the query names (`Infallible.swift`
    /// for `Infallible`, not `Infallible+Operators.swift`) is lifted.
    pub named_file: bool,
    /// That lift.
    pub named_file_lift: f32,
}

impl Default for Signals {
    fn default() -> Self {
        Signals {
            test_files: true,
            test_file_factor: TEST_FILE_FACTOR,
            path_words: true,
            path_words_lift: PATH_WORDS_LIFT,
            query_symbols: true,
            query_symbol_lift: QUERY_SYMBOL_LIFT,
            named_file: false,
            named_file_lift: NAMED_FILE_LIFT,
        }
    }
}

impl Signals {
    /// Every signal off: the seed recipe alone.
    pub const NONE: Signals = Signals {
        test_files: false,
        test_file_factor: TEST_FILE_FACTOR,
        path_words: false,
        path_words_lift: PATH_WORDS_LIFT,
        query_symbols: false,
        query_symbol_lift: QUERY_SYMBOL_LIFT,
        named_file: false,
        named_file_lift: NAMED_FILE_LIFT,
    };
}

pub use maguyva_core::is_test_path;

/// The share of `query_words` found among the words of a file's name (its
/// stem, split at case and separators, compared case-insensitively).
pub fn path_word_share(query_words: &[String], path: &str) -> f32 {
    if query_words.is_empty() {
        return 0.0;
    }
    let file = path.rsplit('/').next().unwrap_or(path);
    let stem = file.split('.').next().unwrap_or(file);
    // Ranking asks this of every candidate file: no allocation.
    let found = query_words
        .iter()
        .filter(|w| maguyva_core::tokens::split_identifier(stem).any(|n| same_word(n, w)))
        .count();
    found as f32 / query_words.len() as f32
}

/// `retry` and `retries`, `extract` and `extractors`: one is the other
/// with a short ending (ASCII letter case aside).
fn same_word(a: &str, b: &str) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let (short, long) = (short.as_bytes(), long.as_bytes());
    let prefix = long.get(..short.len()).is_some_and(|p| p.eq_ignore_ascii_case(short));
    prefix && (short.len() == long.len() || (short.len() >= 4 && long.len() - short.len() <= 3))
}

/// What the priors know of one file for one query.
#[derive(Debug, Clone, Copy)]
pub struct FileFacts<'a> {
    /// Its path, relative and `/`-separated.
    pub path: &'a str,
    /// Whether it defines a symbol the query names.
    pub defines_named_symbol: bool,
    /// Whether its name (without folders and extensions) is a symbol the
    /// query names, letter case and `_`/`-` aside.
    pub named_after_symbol: bool,
}

/// A name as file names and symbols are compared: lowercase, without `_`
/// and `-` (`parse_config`, `ParseConfig` and `parse-config` are one).
pub fn folded_name(name: &str) -> String {
    name.chars().filter(|c| *c != '_' && *c != '-').flat_map(char::to_lowercase).collect()
}

/// The file prior of a file for a query with `query_words` under `signals`.
pub fn file_prior(signals: &Signals, query_words: &[String], file: FileFacts<'_>) -> f32 {
    let path = file.path;
    let mut prior = 1.0;
    if signals.query_symbols && file.defines_named_symbol {
        prior *= 1.0 + signals.query_symbol_lift;
    }
    if signals.named_file && file.named_after_symbol {
        prior *= 1.0 + signals.named_file_lift;
    }
    if signals.test_files && is_test_path(path) {
        prior *= signals.test_file_factor;
    }
    if signals.path_words {
        prior *= 1.0 + signals.path_words_lift * path_word_share(query_words, path);
    }
    prior
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The share agrees with lowercasing the file's sub-words into
        /// strings and comparing those (the plain way to say it).
        #[test]
        fn path_word_share_agrees_with_lowercased_words(
            path in "[abAB0_./-]{0,24}",
            words in proptest::collection::vec("[ab0]{1,7}", 0..4),
        ) {
            let file = path.rsplit('/').next().unwrap_or(&path);
            let stem = file.split('.').next().unwrap_or(file);
            let name: Vec<String> = maguyva_core::tokens::split_identifier(stem)
                .map(|w| w.to_ascii_lowercase())
                .collect();
            let plain = |a: &str, b: &str| {
                let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
                short == long
                    || (short.len() >= 4 && long.starts_with(short) && long.len() - short.len() <= 3)
            };
            let found = words.iter().filter(|w| name.iter().any(|n| plain(n, w))).count();
            let expected = if words.is_empty() { 0.0 } else { found as f32 / words.len() as f32 };
            prop_assert_eq!(path_word_share(&words, &path), expected);
        }
    }

    #[test]
    fn path_words_and_priors() {
        let words = vec!["retry".to_string(), "policy".to_string()];
        assert_eq!(path_word_share(&words, "lib/retryPolicy.ts"), 1.0);
        assert_eq!(path_word_share(&words, "src/retry.rs"), 0.5);
        assert_eq!(path_word_share(&words, "retrying/other.rs"), 0.0);
        assert_eq!(path_word_share(&words, "src/Retrying.java"), 0.5);
        let facts =
            |path| FileFacts { path, defines_named_symbol: false, named_after_symbol: false };
        let on = Signals { path_words: true, ..Signals::NONE };
        assert!((file_prior(&on, &words, facts("src/retry.rs")) - 1.075).abs() < 1e-6);
        let tests = Signals { test_files: true, ..Signals::NONE };
        assert_eq!(file_prior(&tests, &words, facts("tests/retry.rs")), TEST_FILE_FACTOR);
        assert_eq!(file_prior(&Signals::NONE, &words, facts("tests/retry.rs")), 1.0);
        let named =
            FileFacts { path: "src/a.rs", defines_named_symbol: true, named_after_symbol: false };
        let symbols = Signals { query_symbols: true, ..Signals::NONE };
        assert_eq!(file_prior(&symbols, &words, named), 1.0 + QUERY_SYMBOL_LIFT);
        let after = FileFacts { named_after_symbol: true, ..facts("src/Infallible.swift") };
        let files = Signals { named_file: true, ..Signals::NONE };
        assert_eq!(file_prior(&files, &words, after), 1.0 + NAMED_FILE_LIFT);
        assert_eq!(file_prior(&Signals::NONE, &words, after), 1.0);
        assert_eq!(folded_name("parse_config"), folded_name("ParseConfig"));
        assert_eq!(folded_name("parse-config"), "parseconfig");
    }
}
