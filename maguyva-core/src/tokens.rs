//! Code-aware tokens: identifiers split at camelCase, PascalCase, snake_case
//! and digit boundaries, lowercased; a compound identifier is also kept whole
//! (its sub-words joined), so `parseConfig`, `ParseConfig` and `parse_config`
//! share the token `parseconfig` and also match `parse config`.
//!
//! The text and semantic modalities tokenize documents and queries with the
//! same function, which is why it lives in core.

/// Sub-words shorter than this are dropped: single letters (`i`, `x`, `T`)
/// carry no meaning and bloat postings.
pub const MIN_TOKEN_LEN: usize = 2;

/// Tokens longer than this are dropped: they are hashes, base64 blobs or
/// minified code, never something a person types.
pub const MAX_TOKEN_LEN: usize = 64;

/// Calls `f` for every token of `text`, in order. For a compound identifier
/// the sub-words come first, then the whole identifier (sub-words joined).
pub fn for_each_token(text: &str, mut f: impl FnMut(&str)) {
    let mut buf = String::new();
    let mut whole = String::new();
    for word in words(text) {
        let mut parts = 0;
        whole.clear();
        for part in split_identifier(word) {
            parts += 1;
            whole.push_str(part);
            emit(part, &mut buf, &mut f);
        }
        if parts > 1 {
            emit(&whole, &mut buf, &mut f);
        }
    }
}

/// The number of tokens [`for_each_token`] gives for `text`, counted
/// without making them.
pub fn count_tokens(text: &str) -> usize {
    let mut n = 0;
    for word in words(text) {
        let mut parts = 0;
        for part in split_identifier(word) {
            parts += 1;
            n += usize::from(token_length_fits(part));
        }
        // The whole identifier: its parts joined, so its length is theirs.
        if parts > 1 {
            let whole: usize = split_identifier(word).map(char_len).sum();
            n += usize::from((MIN_TOKEN_LEN..=MAX_TOKEN_LEN).contains(&whole));
        }
    }
    n
}

fn char_len(part: &str) -> usize {
    if part.is_ascii() { part.len() } else { part.chars().count() }
}

fn token_length_fits(part: &str) -> bool {
    (MIN_TOKEN_LEN..=MAX_TOKEN_LEN).contains(&char_len(part))
}

/// English function words: they say how a question is phrased, not what it
/// is about.
const FUNCTION_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "how",
    "i", "in", "into", "is", "it", "its", "of", "on", "or", "that", "the", "their", "them", "then",
    "there", "these", "this", "to", "was", "what", "when", "where", "which", "who", "why", "will",
    "with",
];

/// Whether a lowercase word is an English function word (`the`, `how`).
pub fn is_function_word(word: &str) -> bool {
    FUNCTION_WORDS.contains(&word)
}

/// Whether a lowercase word says what a question is about: two letters or
/// more, at least one alphabetic, and not a function word.
pub fn is_content_word(word: &str) -> bool {
    word.chars().count() >= 2 && word.chars().any(char::is_alphabetic) && !is_function_word(word)
}

/// The content words of a question, lowercased, in order, without repeats:
/// its identifiers split into sub-words, function words and single letters
/// dropped.
pub fn content_words(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in words(text) {
        for sub in split_identifier(word) {
            let w = sub.to_lowercase();
            if is_content_word(&w) && !out.contains(&w) {
                out.push(w);
            }
        }
    }
    out
}

/// The tokens of `text`, collected.
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_token(text, |t| out.push(t.to_string()));
    out
}

fn emit(part: &str, buf: &mut String, f: &mut impl FnMut(&str)) {
    if !token_length_fits(part) {
        return;
    }
    buf.clear();
    if part.is_ascii() {
        buf.push_str(part);
        buf.make_ascii_lowercase();
    } else {
        buf.extend(part.chars().flat_map(char::to_lowercase));
    }
    f(buf);
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn is_ascii_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Maximal runs of letters, digits and underscores.
pub fn words(text: &str) -> Words<'_> {
    Words { text, pos: 0 }
}

/// Iterator over the words of a text; see [`words`].
#[derive(Debug, Clone)]
pub struct Words<'a> {
    text: &'a str,
    pos: usize,
}

impl Words<'_> {
    /// Whether the character at byte `pos` belongs to a word, and its length.
    fn step(&self, pos: usize) -> (bool, usize) {
        let b = self.text.as_bytes()[pos];
        if b < 0x80 {
            return (is_ascii_word_byte(b), 1);
        }
        match self.text[pos..].chars().next() {
            Some(c) => (is_word_char(c), c.len_utf8()),
            None => (false, 1),
        }
    }
}

impl<'a> Iterator for Words<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let len = self.text.len();
        while self.pos < len {
            let (word, n) = self.step(self.pos);
            if word {
                break;
            }
            self.pos += n;
        }
        if self.pos >= len {
            return None;
        }
        let start = self.pos;
        while self.pos < len {
            let (word, n) = self.step(self.pos);
            if !word {
                break;
            }
            self.pos += n;
        }
        Some(&self.text[start..self.pos])
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Lower,
    Upper,
    Digit,
    Other,
}

fn class(c: char) -> Class {
    if c.is_ascii() {
        return match c {
            'a'..='z' => Class::Lower,
            'A'..='Z' => Class::Upper,
            '0'..='9' => Class::Digit,
            _ => Class::Other,
        };
    }
    if c.is_uppercase() {
        Class::Upper
    } else if c.is_numeric() {
        Class::Digit
    } else if c.is_alphabetic() {
        Class::Lower
    } else {
        Class::Other
    }
}

/// Splits one identifier into its sub-words, keeping their case:
/// `HTTPServerError2` gives `HTTP`, `Server`, `Error`, `2`; `parse_config`
/// gives `parse`, `config`.
pub fn split_identifier(ident: &str) -> SubWords<'_> {
    SubWords { rest: ident, ascii: ident.is_ascii() }
}

/// Iterator over the sub-words of an identifier; see [`split_identifier`].
#[derive(Debug, Clone)]
pub struct SubWords<'a> {
    rest: &'a str,
    ascii: bool,
}

fn boundary(prev: Class, cl: Class, next: Option<Class>) -> bool {
    match (prev, cl) {
        (_, Class::Other) => true,
        (Class::Lower, Class::Upper) => true,
        // The last capital of an acronym starts the next word: HTTPServer.
        (Class::Upper, Class::Upper) => next == Some(Class::Lower),
        (Class::Digit, Class::Lower | Class::Upper)
        | (Class::Lower | Class::Upper, Class::Digit) => true,
        _ => false,
    }
}

impl<'a> SubWords<'a> {
    fn next_ascii(&mut self) -> Option<&'a str> {
        let b = self.rest.as_bytes();
        let cls = |i: usize| class(char::from(b[i]));
        let mut i = 0;
        while i < b.len() && cls(i) == Class::Other {
            i += 1;
        }
        if i == b.len() {
            self.rest = "";
            return None;
        }
        let start = i;
        let mut prev = cls(i);
        i += 1;
        while i < b.len() {
            let cl = cls(i);
            let next = (i + 1 < b.len()).then(|| cls(i + 1));
            if boundary(prev, cl, next) {
                break;
            }
            prev = cl;
            i += 1;
        }
        let word = &self.rest[start..i];
        self.rest = &self.rest[i..];
        Some(word)
    }
}

impl<'a> Iterator for SubWords<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.ascii {
            return self.next_ascii();
        }
        let trimmed = self.rest.trim_start_matches(|c: char| class(c) == Class::Other);
        if trimmed.is_empty() {
            self.rest = trimmed;
            return None;
        }
        let mut chars = trimmed.char_indices().peekable();
        let mut prev = chars.next().map_or(Class::Other, |(_, c)| class(c));
        let mut end = trimmed.len();
        while let Some((pos, c)) = chars.next() {
            let cl = class(c);
            if boundary(prev, cl, chars.peek().map(|&(_, n)| class(n))) {
                end = pos;
                break;
            }
            prev = cl;
        }
        let (word, rest) = trimmed.split_at(end);
        self.rest = rest;
        Some(word)
    }
}

/// A name's lowercase sub-words joined: the key that makes naming
/// conventions meet (`parse_config`, `parseConfig` and `ParseConfig` all
/// become `parseconfig`). Symbol tables and the graph both look names up by it.
pub fn normalize_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for part in split_identifier(name) {
        out.extend(part.chars().flat_map(char::to_lowercase));
    }
    out
}

/// Whether `normalize_name(name)` is `normalized`, found without building
/// it: for comparing many names against one key.
pub fn normalizes_to(name: &str, normalized: &str) -> bool {
    if name.is_ascii() {
        // An ASCII name's sub-words are its letters and digits, in order:
        // comparing them lowercased needs no splitting.
        let mut want = normalized.bytes();
        let same = name
            .bytes()
            .filter(u8::is_ascii_alphanumeric)
            .all(|c| want.next() == Some(c.to_ascii_lowercase()));
        return same && want.next().is_none();
    }
    let mut want = normalized.chars();
    let same = split_identifier(name)
        .flat_map(|part| part.chars().flat_map(char::to_lowercase))
        .all(|c| want.next() == Some(c));
    same && want.next().is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_words_of_a_question() {
        assert_eq!(
            content_words("how does the RetryPolicy decide to retry a request?"),
            vec!["retry", "policy", "decide", "request"]
        );
    }

    fn split(s: &str) -> Vec<&str> {
        split_identifier(s).collect()
    }

    #[test]
    fn identifier_boundaries() {
        assert_eq!(split("parseConfig"), vec!["parse", "Config"]);
        assert_eq!(split("ParseConfig"), vec!["Parse", "Config"]);
        assert_eq!(split("parse_config"), vec!["parse", "config"]);
        assert_eq!(split("HTTPServerError2"), vec!["HTTP", "Server", "Error", "2"]);
        assert_eq!(split("__init__"), vec!["init"]);
        assert_eq!(split("utf8Decode"), vec!["utf", "8", "Decode"]);
        assert_eq!(split("XMLHttpRequest"), vec!["XML", "Http", "Request"]);
        assert_eq!(split("ECONNREFUSED"), vec!["ECONNREFUSED"]);
    }

    #[test]
    fn tokens_are_lowercased_with_whole_identifiers() {
        assert_eq!(
            tokens("let cfg = parseConfig(path);"),
            vec!["let", "cfg", "parse", "config", "parseconfig", "path"]
        );
        assert_eq!(tokens("a + b_c"), vec!["bc"]);
        assert_eq!(tokens("parse_config ParseConfig"), tokens("parseConfig parseConfig"));
        assert_eq!(tokens("Größe_Maß"), vec!["größe", "maß", "größemaß"]);
    }

    proptest::proptest! {
        #[test]
        fn ascii_fast_path_agrees_with_the_general_path(ident in "[a-zA-Z0-9_]{0,24}") {
            let fast: Vec<&str> = split_identifier(&ident).collect();
            let general: Vec<&str> = SubWords { rest: &ident, ascii: false }.collect();
            proptest::prop_assert_eq!(fast, general);
        }

        /// Names with non-ASCII letters, and ASCII names with punctuation
        /// (the fast path).
        #[test]
        fn normalizes_to_agrees_with_normalize_name(
            name in "[a-zA-Z0-9_İé]{0,16}|[a-zA-Z0-9_$.:#-]{0,16}",
            other in "[a-zA-Z0-9_İé]{0,16}|[a-zA-Z0-9_$.:#-]{0,16}",
        ) {
            let key = normalize_name(&other);
            proptest::prop_assert_eq!(normalizes_to(&name, &key), normalize_name(&name) == key);
            proptest::prop_assert!(normalizes_to(&name, &normalize_name(&name)));
        }

        #[test]
        fn counting_tokens_equals_making_them(text in "[a-zA-Z0-9_ .éİ—(]{0,80}") {
            proptest::prop_assert_eq!(count_tokens(&text), tokens(&text).len());
        }

        #[test]
        fn words_match_a_char_split(text in "[a-zA-Z0-9_ .é—(]{0,40}") {
            let expected: Vec<&str> = text.split(|c: char| !is_word_char(c)).filter(|w| !w.is_empty()).collect();
            proptest::prop_assert_eq!(words(&text).collect::<Vec<_>>(), expected);
        }
    }

    #[test]
    fn overlong_tokens_are_dropped() {
        let blob = "A".repeat(MAX_TOKEN_LEN + 1);
        assert!(tokens(&blob).is_empty());
    }
}
