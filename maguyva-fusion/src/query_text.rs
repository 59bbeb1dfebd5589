//! The rules that read a query's text, in one place: the shapes of names
//! (`parseConfig`, `parse_config`, `Rack::Response`), the names a query
//! gives, and its quoted strings. The classifier routes by them, and the
//! engine finds the definitions a query names by them.
//!
//! Two rules read quotes, on purpose differently: a quoted span anywhere
//! (`"..."` or `` `...` ``) makes a query an exact-match question for the
//! classifier ([`has_quoted_span`]); only a query that is one double-quoted
//! string as a whole is searched as a literal ([`whole_quoted`]), the rest
//! of a query around a quoted span being words to rank by.

/// A letter, digit or `_`.
pub(crate) fn is_identifier_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `parseConfig`, `ParseConfig`, `HTTPServer`: letters with an inner capital.
pub(crate) fn is_camel(w: &str) -> bool {
    let mut chars = w.chars();
    let Some(first) = chars.next() else { return false };
    first.is_alphabetic()
        && w.chars().all(|c| c.is_alphanumeric())
        && w.chars().skip(1).any(char::is_uppercase)
        && w.chars().any(char::is_lowercase)
}

/// `parse_config`, `__init__`, `MAX_SIZE`: letters joined by underscores.
pub(crate) fn is_snake(w: &str) -> bool {
    w.contains('_')
        && w.chars().all(is_identifier_char)
        && w.chars().any(char::is_alphabetic)
        && w.trim_matches('_').contains(|c: char| c.is_alphabetic())
}

/// `Router`, `Status`: one capitalized word, an identifier when it stands alone.
pub(crate) fn is_pascal_word(w: &str) -> bool {
    w.chars().next().is_some_and(char::is_uppercase)
        && w.chars().all(char::is_alphanumeric)
        && w.chars().any(char::is_lowercase)
}

/// A query word without the punctuation around it, keeping what a
/// qualified name holds (`Rack::Response`, `a.b.C`, `Foo#bar`).
pub(crate) fn name_token(w: &str) -> &str {
    w.trim_matches(|c: char| !(is_identifier_char(c) || c == ':' || c == '.' || c == '#'))
}

/// `a.b.C`, `Rack::Response`, `Foo#bar`: a qualified name.
pub(crate) fn is_qualified(w: &str) -> bool {
    let parts: Vec<&str> = w.split(['.', ':', '#']).filter(|p| !p.is_empty()).collect();
    parts.len() >= 2
        && (w.contains("::") || w.contains('#') || w.contains('.'))
        && parts.iter().all(|p| {
            p.chars().all(is_identifier_char)
                && p.chars().next().is_some_and(|c| !c.is_ascii_digit())
        })
        && parts.iter().any(|p| is_camel(p) || is_snake(p) || is_pascal_word(p))
}

/// The identifiers a query names (`IntoResponse`, `parse_config`,
/// `Rack::Response`), as written: words shaped like code, capitalized
/// words after the first, and a capitalized word standing alone (`Router`).
pub fn named_identifiers(query: &str) -> Vec<&str> {
    let single = query.split_whitespace().nth(1).is_none();
    query
        .split_whitespace()
        .enumerate()
        .map(|(i, w)| (i, name_token(w)))
        .filter(|&(i, w)| {
            !w.is_empty()
                && (is_camel(w)
                    || is_snake(w)
                    || is_qualified(w)
                    || ((i > 0 || single) && is_pascal_word(w)))
        })
        .map(|(_, w)| w)
        .collect()
}

/// Whether the text holds a quoted span: `"..."` or `` `...` `` with
/// something inside.
pub fn has_quoted_span(text: &str) -> bool {
    for q in ['"', '`'] {
        if let Some(a) = text.find(q)
            && let Some(b) = text[a + 1..].find(q)
            && b > 0
        {
            return true;
        }
    }
    false
}

/// The inside of `"..."` when the whole (trimmed) text is one quoted string.
pub fn whole_quoted(text: &str) -> Option<&str> {
    let t = text.trim();
    let inner = t.strip_prefix('"')?.strip_suffix('"')?;
    (!inner.is_empty() && !inner.contains('"')).then_some(inner)
}

/// The last part of a qualified name: `Builder` of `Rack::Builder`.
pub fn last_segment(ident: &str) -> &str {
    ident.rsplit([':', '.', '#']).find(|s| !s.is_empty()).unwrap_or(ident)
}

/// Whether a word is written like an identifier (`parse`, `Rack::Builder`,
/// `$el`), qualifiers allowed.
pub fn is_identifier_like(w: &str) -> bool {
    w.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '$' | ':' | '.' | '#'))
        && w.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
}

/// The name of a query that is one bare identifier, by its last segment.
pub fn bare_name(text: &str) -> Option<&str> {
    let t = text.trim();
    (!t.contains(char::is_whitespace) && is_identifier_like(t)).then(|| last_segment(t))
}

/// Words of definition questions that are not the name asked about.
pub const DEFINITION_QUESTION_WORDS: &[&str] = &[
    "where",
    "is",
    "are",
    "the",
    "a",
    "an",
    "of",
    "defined",
    "declared",
    "definition",
    "def",
    "defn",
    "fn",
    "fun",
    "func",
    "function",
    "method",
    "class",
    "struct",
    "interface",
    "trait",
    "enum",
    "type",
    "typedef",
    "typealias",
    "module",
    "const",
    "constant",
    "let",
    "var",
    "val",
    "macro",
    "protocol",
    "object",
    "record",
    "find",
    "show",
    "implemented",
    "located",
    "lives",
];

/// The one name a definition question asks about ("fn spawn", "where is
/// session defined"); None when it names none or several.
pub fn definition_name(text: &str) -> Option<&str> {
    let mut names = text
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| matches!(c, '?' | '!' | ',' | '`' | '"' | '\'' | '(' | ')'))
        })
        .filter(|w| {
            !w.is_empty() && !DEFINITION_QUESTION_WORDS.contains(&w.to_lowercase().as_str())
        });
    let name = names.next()?;
    (names.next().is_none() && is_identifier_like(name)).then(|| last_segment(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_definition_questions() {
        assert_eq!(definition_name("fn spawn"), Some("spawn"));
        assert_eq!(definition_name("where is session defined?"), Some("session"));
        assert_eq!(definition_name("class Rack::Builder"), Some("Builder"));
        assert_eq!(definition_name("where is the config parser"), None);
        assert_eq!(bare_name("  TryReadyError "), Some("TryReadyError"));
        assert_eq!(bare_name("two words"), None);
        assert_eq!(bare_name("\"ECONNREFUSED\""), None);
    }

    #[test]
    fn quotes_route_and_quotes_search() {
        // A quoted span anywhere routes to exact match; only a whole quoted
        // query is a literal.
        for (text, span, whole) in [
            ("\"ECONNREFUSED\"", true, Some("ECONNREFUSED")),
            ("say \"hi\" there", true, None),
            ("the `retry` loop", true, None),
            ("no quotes", false, None),
            ("\"a\"b\"", true, None),
        ] {
            assert_eq!((has_quoted_span(text), whole_quoted(text)), (span, whole), "{text}");
        }
    }
}
