//! Ranking signals beyond SPEC's recipe, each behind a named switch so that
//! `maguyva eval` can measure it alone. SPEC's numbers (weights, k, boost)
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

/// Which signals run; on by default are the ones that measured better on
/// the development benchmark (doc/ranking.md has the figures).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Signals {
    /// Tests, examples, benchmarks and generated files rank below the code.
    pub test_files: bool,
    /// Query words in a file's name lift it.
    pub path_words: bool,
    /// A file defining a symbol that the query names, exactly as written
    /// (`Router`, or `how IntoResponse converts ...`), is lifted.
    pub query_symbols: bool,
}

impl Default for Signals {
    fn default() -> Self {
        Signals { test_files: true, path_words: true, query_symbols: true }
    }
}

impl Signals {
    /// Every signal off: SPEC's recipe alone.
    pub const NONE: Signals =
        Signals { test_files: false, path_words: false, query_symbols: false };
}

/// Whether a path (relative, `/`-separated) is a test, example, benchmark,
/// fixture or generated file by the conventions of the common ecosystems.
pub fn is_test_path(path: &str) -> bool {
    const DIRS: [&str; 16] = [
        "test",
        "tests",
        "__tests__",
        "spec",
        "specs",
        "testing",
        "testdata",
        "test_data",
        "fixtures",
        "example",
        "examples",
        "bench",
        "benches",
        "benchmark",
        "benchmarks",
        "e2e",
    ];
    let mut parts = path.split('/');
    let file = parts.next_back().unwrap_or("");
    if parts.any(|d| DIRS.contains(&d.to_ascii_lowercase().as_str())) {
        return true;
    }
    let stem = file.split('.').next().unwrap_or(file);
    let lower = file.to_ascii_lowercase();
    stem.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with("_tests")
        || stem.ends_with("_spec")
        || stem.ends_with("Test")
        || stem.ends_with("Tests")
        || stem.ends_with("Spec")
        || stem.ends_with("_bench")
        || lower.contains(".test.")
        || lower.contains(".spec.")
        || lower.contains(".generated.")
        || lower.ends_with(".pb.go")
        || lower.ends_with("_pb2.py")
        || lower.ends_with(".g.dart")
}

/// The share of `query_words` found among the words of a file's name (its
/// stem, split at case and separators, compared case-insensitively).
pub fn path_word_share(query_words: &[String], path: &str) -> f32 {
    if query_words.is_empty() {
        return 0.0;
    }
    let file = path.rsplit('/').next().unwrap_or(path);
    let stem = file.split('.').next().unwrap_or(file);
    let name: Vec<String> =
        maguyva_core::tokens::split_identifier(stem).map(|w| w.to_ascii_lowercase()).collect();
    let found = query_words.iter().filter(|w| name.iter().any(|n| same_word(n, w))).count();
    found as f32 / query_words.len() as f32
}

/// `retry` and `retries`, `extract` and `extractors`: one is the other
/// with a short ending.
fn same_word(a: &str, b: &str) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    short == long || (short.len() >= 4 && long.starts_with(short) && long.len() - short.len() <= 3)
}

/// What the priors know of one file for one query.
#[derive(Debug, Clone, Copy)]
pub struct FileFacts<'a> {
    /// Its path, relative and `/`-separated.
    pub path: &'a str,
    /// Whether it defines a symbol the query names.
    pub defines_named_symbol: bool,
}

/// The file prior of a file for a query with `query_words` under `signals`.
pub fn file_prior(signals: &Signals, query_words: &[String], file: FileFacts<'_>) -> f32 {
    let path = file.path;
    let mut prior = 1.0;
    if signals.query_symbols && file.defines_named_symbol {
        prior *= 1.0 + QUERY_SYMBOL_LIFT;
    }
    if signals.test_files && is_test_path(path) {
        prior *= TEST_FILE_FACTOR;
    }
    if signals.path_words {
        prior *= 1.0 + PATH_WORDS_LIFT * path_word_share(query_words, path);
    }
    prior
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_paths() {
        for p in [
            "tests/test_client.py",
            "src/__tests__/cart.ts",
            "pkg/router_test.go",
            "src/main/java/FooTest.java",
            "spec/models/cart_spec.rb",
            "lib/cart.test.js",
            "examples/hello.rs",
            "benches/text.rs",
            "api/v1/types.pb.go",
        ] {
            assert!(is_test_path(p), "{p}");
        }
        for p in ["src/router.go", "lib/contest.py", "src/testing_utils_not.rs", "attest.c"] {
            assert!(!is_test_path(p), "{p}");
        }
    }

    #[test]
    fn path_words_and_priors() {
        let words = vec!["retry".to_string(), "policy".to_string()];
        assert_eq!(path_word_share(&words, "lib/retryPolicy.ts"), 1.0);
        assert_eq!(path_word_share(&words, "src/retry.rs"), 0.5);
        assert_eq!(path_word_share(&words, "retrying/other.rs"), 0.0);
        assert_eq!(path_word_share(&words, "src/Retrying.java"), 0.5);
        let facts = |path| FileFacts { path, defines_named_symbol: false };
        let on = Signals { path_words: true, ..Signals::NONE };
        assert!((file_prior(&on, &words, facts("src/retry.rs")) - 1.075).abs() < 1e-6);
        let tests = Signals { test_files: true, ..Signals::NONE };
        assert_eq!(file_prior(&tests, &words, facts("tests/retry.rs")), TEST_FILE_FACTOR);
        assert_eq!(file_prior(&Signals::NONE, &words, facts("tests/retry.rs")), 1.0);
        let named = FileFacts { path: "src/a.rs", defines_named_symbol: true };
        let symbols = Signals { query_symbols: true, ..Signals::NONE };
        assert_eq!(file_prior(&symbols, &words, named), 1.0 + QUERY_SYMBOL_LIFT);
    }
}
