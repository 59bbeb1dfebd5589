//! What a file's path says about its part in a repository: code, its
//! tests and examples, or other text (documentation, data, configuration).
//! Ranking uses it to put the code a question is about above the files that
//! exercise or describe it.

use crate::language::Language;
use serde::{Deserialize, Serialize};

/// The part a file plays in a repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(u8)]
pub enum FileRole {
    /// Source code in a recognised language.
    Source = 0,
    /// A test, example, benchmark, fixture or generated file.
    Test = 1,
    /// Text in no recognised language: documentation, data, configuration.
    Other = 2,
}

impl FileRole {
    /// The role of a file with this path (relative, `/`-separated) and
    /// detected language.
    pub fn of(path: &str, language: Option<Language>) -> FileRole {
        if is_test_path(path) {
            FileRole::Test
        } else if language.is_none() {
            FileRole::Other
        } else {
            FileRole::Source
        }
    }

    /// The role stored as `byte`, or `None` for an unknown byte.
    pub fn from_byte(byte: u8) -> Option<FileRole> {
        match byte {
            0 => Some(FileRole::Source),
            1 => Some(FileRole::Test),
            2 => Some(FileRole::Other),
            _ => None,
        }
    }
}

/// Whether a path (relative, `/`-separated) is a test, example, benchmark,
/// fixture, documentation sample or generated file by the conventions of the
/// common ecosystems.
pub fn is_test_path(path: &str) -> bool {
    const DIRS: [&str; 23] = [
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
        "sample",
        "samples",
        "snippets",
        "demo",
        "demos",
        "doc",
        "docs",
    ];
    let mut parts = path.split('/');
    let file = parts.next_back().unwrap_or("");
    // Case is folded in place: ranking asks this of every candidate file.
    if parts.any(|d| DIRS.iter().any(|x| x.eq_ignore_ascii_case(d))) {
        return true;
    }
    let stem = file.split('.').next().unwrap_or(file);
    let lower = file.as_bytes();
    let contains =
        |part: &str| lower.windows(part.len()).any(|w| w.eq_ignore_ascii_case(part.as_bytes()));
    let ends_with = |end: &str| {
        lower.len() >= end.len()
            && lower[lower.len() - end.len()..].eq_ignore_ascii_case(end.as_bytes())
    };
    stem.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with("_tests")
        || stem.ends_with("_spec")
        || stem.ends_with("Test")
        || stem.ends_with("Tests")
        || stem.ends_with("Spec")
        || stem.ends_with("_bench")
        || contains(".test.")
        || contains(".spec.")
        || contains(".generated.")
        || ends_with(".pb.go")
        || ends_with("_pb2.py")
        || ends_with(".g.dart")
}

/// Whether a path is documentation rather than code, by its extension.
pub fn is_doc_path(path: &str) -> bool {
    let ext = path.rsplit_once('.').map_or("", |(_, e)| e);
    matches!(ext.to_ascii_lowercase().as_str(), "md" | "markdown" | "rst" | "txt" | "adoc")
}

/// Whether a path holds data or settings rather than code, by its
/// extension.
pub fn is_data_path(path: &str) -> bool {
    let ext = path.rsplit_once('.').map_or("", |(_, e)| e);
    matches!(
        ext.to_ascii_lowercase().as_str(),
        "json"
            | "yaml"
            | "yml"
            | "toml"
            | "xml"
            | "lock"
            | "csv"
            | "ini"
            | "cfg"
            | "properties"
            | "plist"
    )
}

/// Whether a file holds no code: documentation, data and settings (and
/// Xcode projects), manual pages, or one of the notes a project keeps
/// without an extension (README, LICENSE, CHANGELOG, ...).
pub fn holds_no_code(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rsplit_once('.') {
        Some((_, ext)) => {
            ext.eq_ignore_ascii_case("pbxproj")
                || is_manual_page(ext)
                || is_doc_path(name)
                || is_data_path(name)
        }
        None => matches!(
            name.to_ascii_uppercase().as_str(),
            "README"
                | "LICENSE"
                | "LICENCE"
                | "CHANGELOG"
                | "CHANGES"
                | "NEWS"
                | "AUTHORS"
                | "CONTRIBUTING"
                | "COPYING"
                | "HISTORY"
                | "NOTICE"
        ),
    }
}

/// Whether an extension is a manual page's: its section (`git.1`,
/// `printf.3p`) or roff's own.
fn is_manual_page(ext: &str) -> bool {
    let mut chars = ext.chars();
    match (chars.next(), chars.next(), chars.next()) {
        (Some('1'..='9'), None | Some('a'..='z'), None) => true,
        _ => ext.eq_ignore_ascii_case("man") || ext.eq_ignore_ascii_case("roff"),
    }
}

/// A file name without its directories and extensions: `Infallible` for
/// `RxSwift/Traits/Infallible.swift`, `scanscalar` for `src/scanscalar.h`,
/// `Infallible+Operators` for `Infallible+Operators.swift`. A name that is
/// all extension (`.gitignore`) is kept whole.
pub fn file_stem(path: &str) -> &str {
    let file = path.rsplit('/').next().unwrap_or(path);
    match file.find('.') {
        Some(0) | None => file,
        Some(i) => &file[..i],
    }
}

/// Joins a relative path to a folder (both `/`-separated, relative to a
/// root), resolving `.` and `..`; None when it climbs above the root.
pub fn join_relative(dir: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = dir.split('/').filter(|s| !s.is_empty()).collect();
    for seg in rel.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documentation_data_and_notes_hold_no_code() {
        assert!(is_doc_path("docs/README.md"));
        assert!(!is_doc_path("src/main.rs"));
        for path in ["README.md", "docs/usage.rst", "Package.json", "App.xcodeproj/project.pbxproj"]
        {
            assert!(holds_no_code(path), "{path}");
        }
        for path in ["LICENSE", "sub/CHANGELOG", "README", "man/git.1", "doc/printf.3p", "x.roff"] {
            assert!(holds_no_code(path), "{path}");
        }
        for path in [
            "src/readme.rs",
            "Makefile",
            "bin/git-summary",
            "Quick/QuickSpec.m",
            "lib/v1.12",
            "a.10",
        ] {
            assert!(!holds_no_code(path), "{path}");
        }
    }

    #[test]
    fn relative_paths_join_within_the_root() {
        assert_eq!(join_relative("src/a", "../b/c.ts").as_deref(), Some("src/b/c.ts"));
        assert_eq!(join_relative("", "./x/./y").as_deref(), Some("x/y"));
        assert_eq!(join_relative("src/", "").as_deref(), Some("src"));
        assert_eq!(join_relative("", ".."), None);
    }

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
            "src/Snippets/Docs/Registry.cs",
            "docs/examples/basic.py",
        ] {
            assert!(is_test_path(p), "{p}");
        }
        for p in ["src/router.go", "lib/contest.py", "src/testing_utils_not.rs", "attest.c"] {
            assert!(!is_test_path(p), "{p}");
        }
    }

    #[test]
    fn roles_and_stems() {
        assert_eq!(FileRole::of("src/a.rs", Some(Language::Rust)), FileRole::Source);
        assert_eq!(FileRole::of("src/a_test.go", Some(Language::Go)), FileRole::Test);
        assert_eq!(FileRole::of("README.md", None), FileRole::Other);
        for r in [FileRole::Source, FileRole::Test, FileRole::Other] {
            assert_eq!(FileRole::from_byte(r as u8), Some(r));
        }
        assert_eq!(FileRole::from_byte(9), None);
        assert_eq!(file_stem("RxSwift/Traits/Infallible.swift"), "Infallible");
        assert_eq!(file_stem("a/Infallible+Operators.swift"), "Infallible+Operators");
        assert_eq!(file_stem("lib/cart.test.js"), "cart");
        assert_eq!(file_stem(".gitignore"), ".gitignore");
        assert_eq!(file_stem("Makefile"), "Makefile");
    }
}
