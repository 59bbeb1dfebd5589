//! The intent classifier (doc/intents.md): an ordered list of
//! cheap rules, first match wins. It runs on every query, so it is a single
//! pass over the words with no regex and no allocation beyond the word list.

use crate::intent::Intent;
use crate::query_text::{
    has_quoted_span, is_camel, is_identifier_char, is_pascal_word, is_qualified, is_snake,
    name_token,
};
use serde::Serialize;

/// Rule 1: a query starting with a definition keyword.
pub const CONFIDENCE_DEFINITION_KEYWORD: f32 = 0.95;
/// Rule 2: "who calls", "callers of" ...
pub const CONFIDENCE_REFERENCES: f32 = 0.90;
/// "where is NAME defined", "definition of NAME": a question that asks for
/// one definition, as surely as a reference or impact question asks for
/// its kind of answer.
pub const CONFIDENCE_DEFINITION_QUESTION: f32 = 0.90;
/// Rule 3: "impact", "blast radius" ...
pub const CONFIDENCE_IMPACT: f32 = 0.90;
/// Rule 4: a quoted string.
pub const CONFIDENCE_QUOTED: f32 = 0.90;
/// Rule 4: an error token.
pub const CONFIDENCE_ERROR_TOKEN: f32 = 0.85;
/// Rule 5: the query is a bare identifier.
pub const CONFIDENCE_BARE_IDENTIFIER: f32 = 0.80;
/// Rule 5: an identifier inside a longer query (the floor).
pub const CONFIDENCE_IDENTIFIER_MIN: f32 = 0.60;
/// Rule 6: "how", "why", "explain" ...
pub const CONFIDENCE_UNDERSTAND: f32 = 0.75;
/// Rule 7: nothing matched.
pub const CONFIDENCE_FALLBACK: f32 = 0.40;
/// The find_similar rule (the seed leaves its design open): "similar to",
/// "like this", or a query that is itself code.
pub const CONFIDENCE_SIMILAR: f32 = 0.80;

/// More words than this after a definition keyword, none shaped like code,
/// make a description rather than a name.
const DESCRIPTION_WORDS: usize = 4;

/// The confidence at or above which an ordinary query skips fusion and goes
/// to its profile's dominant modality (doc/intents.md).
pub const DIRECT_THRESHOLD: f32 = 0.85;

const DEFINITION_KEYWORDS: &[&str] = &[
    "def",
    "class",
    "func",
    "fn",
    "function",
    "import",
    "struct",
    "interface",
    "type",
    "trait",
    "enum",
    "module",
    "impl",
    "const",
    "let",
    "var",
    "val",
    "package",
    "namespace",
    "protocol",
    "object",
    "macro",
    "typedef",
    "defmodule",
    "record",
];
const REFERENCE_PHRASES: &[&str] = &[
    "who calls",
    "callers of",
    "caller of",
    "usages",
    "usage of",
    "uses of",
    "references to",
    "where is it used",
    "called from",
];
const IMPACT_PHRASES: &[&str] =
    &["impact", "blast radius", "what depends on", "what breaks if", "depends on", "dependents of"];
const UNDERSTAND_WORDS: &[&str] =
    &["how", "why", "explain", "architecture", "overview", "understand"];
const SIMILAR_PHRASES: &[&str] =
    &["similar to", "like this", "code like", "same as", "resembles", "analogous to"];
/// Phrases that only appear in crash output, never in a description.
const PANIC_PHRASES: &[&str] = &[
    "traceback (most recent call last)",
    "panicked at",
    "segmentation fault",
    "core dumped",
    "is not a function",
    "cannot read properties of",
    "undefined reference to",
];

/// Which rule decided, for explanations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// Rule 1.
    DefinitionKeyword,
    /// Rule 1, asked as a question ("where is NAME defined").
    DefinitionQuestion,
    /// Rule 2.
    References,
    /// Rule 3.
    Impact,
    /// Rule 4, quoted.
    QuotedString,
    /// Rule 4, error token.
    ErrorToken,
    /// The find_similar rule.
    Similar,
    /// Rule 5.
    Identifier,
    /// Rule 6.
    UnderstandWords,
    /// Rule 7.
    Fallback,
}

impl Rule {
    /// A short name, as in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Rule::DefinitionKeyword => "definition_keyword",
            Rule::DefinitionQuestion => "definition_question",
            Rule::References => "references",
            Rule::Impact => "impact",
            Rule::QuotedString => "quoted_string",
            Rule::ErrorToken => "error_token",
            Rule::Similar => "similar",
            Rule::Identifier => "identifier",
            Rule::UnderstandWords => "understand_words",
            Rule::Fallback => "fallback",
        }
    }
}

/// The classifier's answer.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Classification {
    /// The intent.
    pub intent: Intent,
    /// How sure the rule is, 0 to 1.
    pub confidence: f32,
    /// The rule that matched.
    pub rule: Rule,
    /// Another rule of a different intent matched too (a mixed question):
    /// such a query is fused even when the confidence is high.
    pub mixed: bool,
}

impl Classification {
    /// Whether the query is a question or phrase naming an identifier among
    /// other words (rule 5 below the bare identifier's confidence), rather
    /// than the bare name or a definition keyword.
    pub fn names_in_question(&self) -> bool {
        self.rule == Rule::Identifier && self.confidence < CONFIDENCE_BARE_IDENTIFIER
    }

    /// Whether the query is a bare identifier (`Router`, `parse_config`).
    pub fn is_bare_name(&self) -> bool {
        self.rule == Rule::Identifier && self.confidence >= CONFIDENCE_BARE_IDENTIFIER
    }
}

/// Whether a lowercased query asks where one name is defined: "where is
/// NAME defined", "where's NAME declared", "where NAME is defined",
/// "definition of NAME" (a question mark allowed), NAME one word.
fn asks_for_definition(lower: &str) -> bool {
    let words: Vec<&str> = lower.trim_end_matches('?').split_whitespace().collect();
    let is_name = |w: &str| {
        !w.is_empty()
            && w.chars().all(|c| is_identifier_char(c) || matches!(c, '.' | ':' | '#'))
            && w.chars().any(char::is_alphabetic)
    };
    let defined = |w: &str| matches!(w, "defined" | "declared");
    match words.as_slice() {
        ["where", "is" | "are", name, d] | ["where", name, "is" | "are", d] => {
            is_name(name) && defined(d)
        }
        ["where's", name, d] => is_name(name) && defined(d),
        ["definition", "of", name] => is_name(name),
        _ => false,
    }
}

/// Classifies queries by the seed's ordered rules.
#[derive(Debug, Clone, Copy, Default)]
pub struct IntentClassifier;

/// `ECONNREFUSED`, `ENOENT`, `ValueError`, `NullPointerException`, `E_FAIL`.
fn is_error_token(w: &str) -> bool {
    let errno = w.len() >= 4
        && w.starts_with('E')
        && w.chars().all(|c| c.is_ascii_uppercase() || c == '_')
        && !w.contains("__");
    let named = (w.ends_with("Error") && w.len() > 5
        || w.ends_with("Exception") && w.len() > 9
        || w.ends_with("Panic") && w.len() > 5)
        && w.chars().next().is_some_and(char::is_uppercase)
        && w.chars().all(is_identifier_char);
    let constant = w.chars().all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit())
        && (w.contains("ERR") || w.contains("FAIL"))
        && w.len() >= 5;
    errno || named || constant
}

/// Whether the text reads as a code snippet rather than a question.
fn looks_like_code(text: &str) -> bool {
    let t = text.trim();
    let punct = t
        .chars()
        .filter(|c| matches!(c, '{' | '}' | ';' | '(' | ')' | '=' | '<' | '>' | '[' | ']'))
        .count();
    (t.contains('\n') && punct >= 2)
        || t.contains("=>")
        || t.contains("->") && punct >= 2
        || t.ends_with(';')
        || t.ends_with('{')
        || punct >= 6
}

fn contains_phrase(lower: &str, phrase: &str) -> bool {
    lower.match_indices(phrase).any(|(i, m)| {
        let before = lower[..i].chars().next_back().is_none_or(|c| !c.is_alphanumeric());
        let after = lower[i + m.len()..].chars().next().is_none_or(|c| !c.is_alphanumeric());
        before && after
    })
}

impl IntentClassifier {
    /// A classifier.
    pub fn new() -> IntentClassifier {
        IntentClassifier
    }

    /// Classifies one query.
    pub fn classify(&self, query: &str) -> Classification {
        let text = query.trim();
        let lower = text.to_lowercase();
        let words: Vec<&str> = text.split_whitespace().collect();
        let first = words.first().map(|w| w.to_lowercase()).unwrap_or_default();
        // Which of the strong rules of other kinds also fire, for `mixed`.
        let fires = [
            words.len() >= 2 && DEFINITION_KEYWORDS.contains(&first.as_str()),
            REFERENCE_PHRASES.iter().any(|p| contains_phrase(&lower, p)),
            IMPACT_PHRASES.iter().any(|p| contains_phrase(&lower, p)),
            has_quoted_span(text),
        ];
        // A definition keyword opening a description ("class utility
        // methods for reflection") is a question about code, not a name.
        let described = fires[0]
            && words.len() > DESCRIPTION_WORDS
            && !words[1..].iter().any(|w| {
                let w = name_token(w);
                is_camel(w) || is_snake(w) || is_qualified(w)
            });
        let mixed = described || fires.iter().filter(|&&f| f).count() > 1;
        let c = |intent, confidence, rule| Classification { intent, confidence, rule, mixed };

        // Rule 1: a definition keyword, followed by a name.
        if words.len() >= 2 && DEFINITION_KEYWORDS.contains(&first.as_str()) {
            return c(
                Intent::FindDefinition,
                CONFIDENCE_DEFINITION_KEYWORD,
                Rule::DefinitionKeyword,
            );
        }
        // Rule 1, as a question.
        if asks_for_definition(&lower) {
            return c(
                Intent::FindDefinition,
                CONFIDENCE_DEFINITION_QUESTION,
                Rule::DefinitionQuestion,
            );
        }
        // Rule 2.
        if REFERENCE_PHRASES.iter().any(|p| contains_phrase(&lower, p)) {
            return c(Intent::FindReferences, CONFIDENCE_REFERENCES, Rule::References);
        }
        // Rule 3.
        if IMPACT_PHRASES.iter().any(|p| contains_phrase(&lower, p)) {
            return c(Intent::ImpactAnalysis, CONFIDENCE_IMPACT, Rule::Impact);
        }
        // Rule 4: a quoted string, or an error token.
        if has_quoted_span(text) {
            return c(Intent::ExactMatch, CONFIDENCE_QUOTED, Rule::QuotedString);
        }
        let bare: Vec<&str> =
            words.iter().map(|w| w.trim_matches(|c: char| !is_identifier_char(c))).collect();
        if bare.iter().any(|w| is_error_token(w)) || PANIC_PHRASES.iter().any(|p| lower.contains(p))
        {
            return c(Intent::ExactMatch, CONFIDENCE_ERROR_TOKEN, Rule::ErrorToken);
        }
        // The find_similar rule: said in words, or the query is code.
        if SIMILAR_PHRASES.iter().any(|p| contains_phrase(&lower, p)) || looks_like_code(text) {
            return c(Intent::FindSimilar, CONFIDENCE_SIMILAR, Rule::Similar);
        }
        // Rule 5: an identifier; the bare identifier is the surest.
        let single = words.len() == 1;
        let identifiers = words
            .iter()
            .map(|w| name_token(w))
            .filter(|w| {
                is_camel(w) || is_snake(w) || is_qualified(w) || (single && is_pascal_word(w))
            })
            .count();
        if identifiers > 0 {
            let confidence = if single {
                CONFIDENCE_BARE_IDENTIFIER
            } else {
                // Each word beyond the identifier makes a definition less likely.
                (CONFIDENCE_BARE_IDENTIFIER - 0.04 * (words.len() - 1) as f32)
                    .max(CONFIDENCE_IDENTIFIER_MIN)
            };
            return c(Intent::FindDefinition, confidence, Rule::Identifier);
        }
        // Rule 6.
        if UNDERSTAND_WORDS.contains(&first.as_str())
            || contains_phrase(&lower, "what does")
            || words.iter().any(|w| {
                matches!(
                    w.to_lowercase().trim_matches(|c: char| !c.is_alphabetic()),
                    "explain" | "architecture"
                )
            })
        {
            return c(Intent::UnderstandCode, CONFIDENCE_UNDERSTAND, Rule::UnderstandWords);
        }
        // Rule 7.
        c(Intent::UnderstandCode, CONFIDENCE_FALLBACK, Rule::Fallback)
    }
}

/// Whether the text holds a double-quoted (or backquoted) string.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::query_text::named_identifiers;

    fn check(query: &str, intent: Intent, confidence: f32) {
        let got = IntentClassifier::new().classify(query);
        assert_eq!((got.intent, got.confidence), (intent, confidence), "{query:?} -> {got:?}");
    }

    #[test]
    fn definition_questions_ask_for_one_definition() {
        let c = |q: &str| IntentClassifier::new().classify(q);
        for q in [
            "where is parseConfig defined",
            "Where is Router defined?",
            "where's config.load declared",
            "where parse_config is defined",
            "definition of Http::Request",
        ] {
            let got = c(q);
            assert_eq!(got.intent, Intent::FindDefinition, "{q}");
            assert_eq!(got.rule, Rule::DefinitionQuestion, "{q}");
            assert!(got.confidence >= crate::DIRECT_THRESHOLD, "{q}");
        }
        for q in ["where is the config defined", "how are routes defined", "definition"] {
            assert_ne!(c(q).rule, Rule::DefinitionQuestion, "{q}");
        }
    }

    #[test]
    fn bare_names_and_names_in_questions_are_told_apart() {
        let c = |q: &str| IntentClassifier::new().classify(q);
        assert!(c("Router").is_bare_name());
        assert!(!c("Router").names_in_question());
        assert!(c("how parseConfig reads the defaults").names_in_question());
        assert!(!c("how parseConfig reads the defaults").is_bare_name());
        assert!(!c("how are routes registered").is_bare_name());
        assert!(!c("fn parse_config").is_bare_name());
    }

    #[test]
    fn identifiers_named_in_questions() {
        assert_eq!(
            named_identifiers(
                "how IntoResponse converts values for parse_config, and Rack::Response"
            ),
            vec!["IntoResponse", "parse_config", "Rack::Response"]
        );
        assert!(named_identifiers("How does the router work?").is_empty());
        // A capitalized word names a symbol when it stands alone, not when
        // it opens a sentence.
        assert_eq!(named_identifiers("Router"), vec!["Router"]);
        assert!(named_identifiers("Routing requests to handlers").is_empty());
    }

    #[test]
    fn rule_1_definition_keywords() {
        for q in [
            "def parse_config",
            "class Cart",
            "func Checkout",
            "fn main",
            "import os",
            "struct Item",
            "interface Repo",
            "type Handler",
        ] {
            check(q, Intent::FindDefinition, 0.95);
        }
        // A keyword alone names nothing; it is not a definition query.
        check("class", Intent::UnderstandCode, 0.40);
        // A keyword opening a description keeps the seed's rule but is mixed,
        // so it is fused rather than sent to one modality.
        let c =
            IntentClassifier::new().classify("class utility methods for reflection and packages");
        assert_eq!((c.intent, c.mixed), (Intent::FindDefinition, true));
        assert!(!IntentClassifier::new().classify("class Cart").mixed);
        assert!(
            !IntentClassifier::new()
                .classify("type Handler interface with ServeHTTP and more")
                .mixed
        );
    }

    #[test]
    fn rule_2_references() {
        for q in [
            "who calls parse_config",
            "callers of Cart.add",
            "usages of TAX_RATE",
            "uses of validate",
            "references to Item",
        ] {
            check(q, Intent::FindReferences, 0.90);
        }
    }

    #[test]
    fn rule_3_impact() {
        for q in [
            "impact of changing total_with_tax",
            "blast radius of pricing.py",
            "what depends on cart",
            "what breaks if I change apply_discount",
        ] {
            check(q, Intent::ImpactAnalysis, 0.90);
        }
    }

    #[test]
    fn rule_4_quoted_strings_and_error_tokens() {
        check("\"connection refused\"", Intent::ExactMatch, 0.90);
        check("find \"invalid cart item\" message", Intent::ExactMatch, 0.90);
        for q in [
            "ECONNREFUSED",
            "ENOENT when opening config",
            "ValueError",
            "NullPointerException in checkout",
            "Traceback (most recent call last):",
            "thread main panicked at index out of bounds",
            "E_FAIL",
        ] {
            check(q, Intent::ExactMatch, 0.85);
        }
    }

    #[test]
    fn rule_5_identifiers() {
        check("parseConfig", Intent::FindDefinition, 0.80);
        check("parse_config", Intent::FindDefinition, 0.80);
        check("Router", Intent::FindDefinition, 0.80);
        check("Rack::Response", Intent::FindDefinition, 0.80);
        check("how parseConfig reads defaults", Intent::FindDefinition, 0.68);
        check(
            "the total_with_tax helper and how it rounds numbers in checkout",
            Intent::FindDefinition,
            0.60,
        );
    }

    #[test]
    fn descriptions_of_error_handling_are_not_error_tokens() {
        check(
            "exception cause chain traversal and stack trace utilities",
            Intent::UnderstandCode,
            0.40,
        );
    }

    #[test]
    fn rule_6_understanding() {
        for q in [
            "how does authentication work",
            "why is the cache flushed twice",
            "explain the retry loop",
            "architecture of the indexer",
            "what does the scheduler do",
        ] {
            check(q, Intent::UnderstandCode, 0.75);
        }
    }

    #[test]
    fn rule_7_fallback_and_ambiguous_queries() {
        for q in [
            "authentication",
            "session cookies and tokens",
            "config",
            "retry backoff jitter",
            "the thing with the widgets",
        ] {
            check(q, Intent::UnderstandCode, 0.40);
        }
    }

    #[test]
    fn find_similar() {
        check("code similar to apply_discount", Intent::FindSimilar, 0.80);
        check("functions like this one", Intent::FindSimilar, 0.80);
        check("fn(x) => x * 2", Intent::FindSimilar, 0.80);
        check("for (int i = 0; i < n; i++) { sum += a[i]; }", Intent::FindSimilar, 0.80);
    }

    #[test]
    fn mixed_questions_are_flagged() {
        let c = IntentClassifier::new();
        assert!(c.classify("who calls parse_config and what breaks if I change it").mixed);
        assert!(!c.classify("who calls parse_config").mixed);
        assert!(!c.classify("how does auth work").mixed);
    }

    #[test]
    fn rules_are_ordered() {
        // A definition keyword wins over an error token and an identifier.
        check("class ValueError", Intent::FindDefinition, 0.95);
        // References win over an identifier.
        check("who calls parseConfig", Intent::FindReferences, 0.90);
        // A quoted string wins over an identifier.
        check("\"parse_config\"", Intent::ExactMatch, 0.90);
    }
}
