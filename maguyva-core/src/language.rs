//! Language detection by file name, extension and shebang.

use serde::{Deserialize, Serialize};

/// A programming language Maguyva recognises; each has a tree-sitter grammar
/// in the structural modality. Files in no listed language are still indexed
/// as text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[allow(missing_docs)]
pub enum Language {
    Bash,
    C,
    Cpp,
    CSharp,
    Elixir,
    Go,
    Haskell,
    Java,
    JavaScript,
    Kotlin,
    Lua,
    Php,
    Python,
    Ruby,
    Rust,
    Scala,
    Swift,
    TypeScript,
    Tsx,
    Zig,
}

impl Language {
    /// Every language, in name order.
    pub const ALL: [Language; 20] = [
        Language::Bash,
        Language::C,
        Language::Cpp,
        Language::CSharp,
        Language::Elixir,
        Language::Go,
        Language::Haskell,
        Language::Java,
        Language::JavaScript,
        Language::Kotlin,
        Language::Lua,
        Language::Php,
        Language::Python,
        Language::Ruby,
        Language::Rust,
        Language::Scala,
        Language::Swift,
        Language::TypeScript,
        Language::Tsx,
        Language::Zig,
    ];

    /// The lowercase name used in output and in query files.
    pub fn name(self) -> &'static str {
        match self {
            Language::Bash => "bash",
            Language::C => "c",
            Language::Cpp => "cpp",
            Language::CSharp => "csharp",
            Language::Elixir => "elixir",
            Language::Go => "go",
            Language::Haskell => "haskell",
            Language::Java => "java",
            Language::JavaScript => "javascript",
            Language::Kotlin => "kotlin",
            Language::Lua => "lua",
            Language::Php => "php",
            Language::Python => "python",
            Language::Ruby => "ruby",
            Language::Rust => "rust",
            Language::Scala => "scala",
            Language::Swift => "swift",
            Language::TypeScript => "typescript",
            Language::Tsx => "tsx",
            Language::Zig => "zig",
        }
    }

    /// Detects the language of a file from its name, then its first line.
    /// `head` is the beginning of the file's text, which decides `.h` files
    /// (C or C++) and extensionless scripts (shebang).
    pub fn detect(file_name: &str, head: &str) -> Option<Language> {
        let lower = file_name.to_ascii_lowercase();
        if let Some(lang) = by_file_name(&lower) {
            return Some(lang);
        }
        match lower.rsplit_once('.') {
            Some((_, "h")) => Some(if looks_like_cpp(head) { Language::Cpp } else { Language::C }),
            Some((_, ext)) => by_extension(ext).or_else(|| by_shebang(head)),
            None => by_shebang(head),
        }
    }
}

impl std::fmt::Display for Language {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

fn by_file_name(name: &str) -> Option<Language> {
    Some(match name {
        "rakefile" | "gemfile" | "guardfile" | "podfile" | "vagrantfile" | "config.ru" => {
            Language::Ruby
        }
        ".bashrc" | ".bash_profile" | ".profile" | "pkgbuild" | ".zshrc" => Language::Bash,
        "build.zig" => Language::Zig,
        _ => return None,
    })
}

fn by_extension(ext: &str) -> Option<Language> {
    Some(match ext {
        "sh" | "bash" | "zsh" | "ksh" | "bats" | "ebuild" => Language::Bash,
        "c" => Language::C,
        "cc" | "cpp" | "cxx" | "c++" | "hpp" | "hh" | "hxx" | "h++" | "inl" | "ipp" | "tcc"
        | "cu" => Language::Cpp,
        "cs" | "csx" => Language::CSharp,
        "ex" | "exs" => Language::Elixir,
        "go" => Language::Go,
        "hs" | "lhs" | "hs-boot" => Language::Haskell,
        "java" => Language::Java,
        "js" | "mjs" | "cjs" | "jsx" => Language::JavaScript,
        "kt" | "kts" => Language::Kotlin,
        "lua" => Language::Lua,
        "php" | "phtml" | "php3" | "php4" | "php5" | "php7" | "phps" => Language::Php,
        "py" | "pyi" | "pyw" => Language::Python,
        "rb" | "rake" | "gemspec" | "ru" | "rbi" => Language::Ruby,
        "rs" => Language::Rust,
        "scala" | "sc" | "sbt" => Language::Scala,
        "swift" => Language::Swift,
        "ts" | "mts" | "cts" => Language::TypeScript,
        "tsx" => Language::Tsx,
        "zig" | "zon" => Language::Zig,
        _ => return None,
    })
}

fn by_shebang(head: &str) -> Option<Language> {
    let first = head.lines().next()?.strip_prefix("#!")?;
    let mut words = first.split_whitespace();
    let mut prog = words.next()?.rsplit('/').next()?;
    if prog == "env" {
        // `#!/usr/bin/env -S python3 -u` and `#!/usr/bin/env python3` alike.
        prog = words.find(|w| !w.starts_with('-'))?;
    }
    let prog = prog.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    Some(match prog {
        "sh" | "bash" | "zsh" | "ksh" | "dash" | "ash" => Language::Bash,
        "python" | "pypy" => Language::Python,
        "ruby" => Language::Ruby,
        "node" | "nodejs" | "deno" | "bun" => Language::JavaScript,
        "ts-node" => Language::TypeScript,
        "php" => Language::Php,
        "lua" | "luajit" => Language::Lua,
        "elixir" => Language::Elixir,
        "runhaskell" | "runghc" | "stack" => Language::Haskell,
        "scala" => Language::Scala,
        "swift" => Language::Swift,
        _ => return None,
    })
}

/// A `.h` header is C++ when its text uses constructs C does not have.
fn looks_like_cpp(head: &str) -> bool {
    const MARKERS: [&str; 8] = [
        "namespace ",
        "template <",
        "template<",
        "class ",
        "public:",
        "private:",
        "::",
        "#include <string>",
    ];
    MARKERS.iter().any(|m| head.contains(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions() {
        let cases = [
            ("main.rs", Language::Rust),
            ("a.PY", Language::Python),
            ("x.tsx", Language::Tsx),
            ("x.ts", Language::TypeScript),
            ("x.mjs", Language::JavaScript),
            ("Foo.kt", Language::Kotlin),
            ("Foo.cs", Language::CSharp),
            ("mix.exs", Language::Elixir),
            ("Main.hs", Language::Haskell),
            ("init.lua", Language::Lua),
            ("index.php", Language::Php),
            ("Rakefile", Language::Ruby),
            ("x.scala", Language::Scala),
            ("x.swift", Language::Swift),
            ("x.zig", Language::Zig),
            ("x.cc", Language::Cpp),
            ("x.c", Language::C),
            ("x.go", Language::Go),
            ("X.java", Language::Java),
            ("x.bash", Language::Bash),
        ];
        for (name, lang) in cases {
            assert_eq!(Language::detect(name, ""), Some(lang), "{name}");
        }
        assert_eq!(Language::detect("README.md", ""), None);
    }

    #[test]
    fn headers_and_shebangs() {
        assert_eq!(Language::detect("a.h", "int f(void);"), Some(Language::C));
        assert_eq!(Language::detect("a.h", "namespace absl {"), Some(Language::Cpp));
        assert_eq!(Language::detect("run", "#!/usr/bin/env python3\n"), Some(Language::Python));
        assert_eq!(Language::detect("run", "#!/bin/bash -e\n"), Some(Language::Bash));
        assert_eq!(
            Language::detect("run", "#!/usr/bin/env -S node --x\n"),
            Some(Language::JavaScript)
        );
        assert_eq!(Language::detect("run.txt", "#!/usr/bin/ruby\n"), Some(Language::Ruby));
        assert_eq!(Language::detect("run", "plain text"), None);
    }

    #[test]
    fn names_are_unique() {
        let mut names: Vec<_> = Language::ALL.iter().map(|l| l.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), Language::ALL.len());
    }
}
