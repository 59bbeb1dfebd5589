//! The package, namespace or module a file declares, as its importers
//! name it: `package com.acme.codec;` (Java, Kotlin, Scala, chained
//! Scala clauses joined), `namespace Acme.Billing` (C#), `namespace
//! Acme\Billing;` (PHP, written with dots here), `module Data.Aeson.Types`
//! (Haskell). Imports in these languages name packages, not folders, and
//! the two often differ (`src-2/fastparse/` and `src/fastparse/` are one
//! package; a C# namespace rarely spells its folder).

use maguyva_core::Language;

/// Lines read from the top of a file before giving up: declarations come
/// first, after a licence header at most.
const MAX_LINES: usize = 400;

/// The package or namespace `text` declares, with `.` between segments;
/// None when it declares none or the language has no such declaration.
pub fn declared_package(language: Language, text: &str) -> Option<String> {
    let keyword = match language {
        Language::Java | Language::Kotlin | Language::Scala => "package",
        Language::CSharp | Language::Php => "namespace",
        Language::Haskell => "module",
        _ => return None,
    };
    let mut parts: Vec<String> = Vec::new();
    let mut in_block_comment = false;
    for line in text.lines().take(MAX_LINES) {
        let t = line.trim().trim_start_matches('\u{FEFF}');
        if in_block_comment {
            if let Some(i) = t.find("*/").or_else(|| t.find("-}")) {
                in_block_comment = false;
                if !t[i + 2..].trim().is_empty() {
                    continue;
                }
            }
            continue;
        }
        if t.starts_with("/*") || t.starts_with("{-") {
            in_block_comment = !(t.contains("*/") || t.contains("-}"));
            continue;
        }
        let Some(rest) = t.strip_prefix(keyword) else {
            // Scala chains `package a` / `package b` clauses; anything else
            // after the first clause ends them.
            if !parts.is_empty() && language == Language::Scala && !t.is_empty() {
                break;
            }
            continue;
        };
        if !rest.starts_with([' ', '\t']) {
            continue;
        }
        let rest = rest.trim_start();
        if language == Language::Scala && rest.starts_with("object") {
            break;
        }
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '\\' | '`'))
            .filter(|&c| c != '`')
            .collect();
        let name = name.replace('\\', ".").trim_matches('.').to_string();
        if name.is_empty() {
            continue;
        }
        parts.push(name);
        if language != Language::Scala {
            break;
        }
    }
    (!parts.is_empty()).then(|| parts.join("."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declarations_of_each_language() {
        let java =
            "/*\n * Licence\n */\npackage org.apache.commons.lang3;\n\nimport java.util.List;\n";
        assert_eq!(
            declared_package(Language::Java, java).as_deref(),
            Some("org.apache.commons.lang3")
        );
        assert_eq!(
            declared_package(Language::Kotlin, "package org.jetbrains.`exposed`.v1\n").as_deref(),
            Some("org.jetbrains.exposed.v1")
        );
        let scala = "package cats\npackage data\n\nimport cats.syntax._\n\npackage object x\n";
        assert_eq!(declared_package(Language::Scala, scala).as_deref(), Some("cats.data"));
        assert_eq!(declared_package(Language::Scala, "package object data extends X\n"), None);
        assert_eq!(
            declared_package(
                Language::CSharp,
                "\u{FEFF}using System;\nnamespace Dapper.Tests\n{\n"
            )
            .as_deref(),
            Some("Dapper.Tests")
        );
        assert_eq!(
            declared_package(Language::CSharp, "namespace Polly.Telemetry;\n").as_deref(),
            Some("Polly.Telemetry")
        );
        assert_eq!(
            declared_package(Language::Php, "<?php\n\nnamespace GuzzleHttp\\Handler;\n").as_deref(),
            Some("GuzzleHttp.Handler")
        );
        assert_eq!(
            declared_package(
                Language::Haskell,
                "{- |\nDoc\n-}\nmodule Data.Aeson.Types\n  ( x ) where\n"
            )
            .as_deref(),
            Some("Data.Aeson.Types")
        );
        assert_eq!(declared_package(Language::Python, "package x\n"), None);
        assert_eq!(declared_package(Language::Java, "packages x;\nclass A {}\n"), None);
        assert_eq!(declared_package(Language::Java, ""), None);
    }
}
