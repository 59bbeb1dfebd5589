//! Code-aware tokens: identifiers split at camelCase, PascalCase, snake_case
//! and digit boundaries, lowercased; a compound identifier is also kept whole,
//! so `parseConfig` matches both `parse config` and `parseconfig`.
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
/// the sub-words come first, then the whole identifier.
pub fn for_each_token(text: &str, mut f: impl FnMut(&str)) {
    let mut buf = String::new();
    for word in words(text) {
        let mut parts = 0;
        for part in split_identifier(word) {
            parts += 1;
            emit(part, &mut buf, &mut f);
        }
        if parts > 1 {
            emit(word, &mut buf, &mut f);
        }
    }
}

/// The tokens of `text`, collected.
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_token(text, |t| out.push(t.to_string()));
    out
}

fn emit(part: &str, buf: &mut String, f: &mut impl FnMut(&str)) {
    let n = part.chars().count();
    if !(MIN_TOKEN_LEN..=MAX_TOKEN_LEN).contains(&n) {
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

/// Maximal runs of letters, digits and underscores.
pub fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !is_word_char(c)).filter(|w| !w.is_empty())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Lower,
    Upper,
    Digit,
    Other,
}

fn class(c: char) -> Class {
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
pub fn split_identifier(ident: &str) -> impl Iterator<Item = &str> {
    let mut cuts = Vec::new();
    let chars: Vec<(usize, char)> = ident.char_indices().collect();
    let mut start: Option<usize> = None;
    for (i, &(pos, c)) in chars.iter().enumerate() {
        let cl = class(c);
        if cl == Class::Other {
            if let Some(s) = start.take() {
                cuts.push((s, pos));
            }
            continue;
        }
        let Some(s) = start else {
            start = Some(pos);
            continue;
        };
        let prev = class(chars[i - 1].1);
        let next = chars.get(i + 1).map(|&(_, n)| class(n));
        let boundary = match (prev, cl) {
            (Class::Lower, Class::Upper) => true,
            // The last capital of an acronym starts the next word: HTTPServer.
            (Class::Upper, Class::Upper) => next == Some(Class::Lower),
            (Class::Digit, Class::Lower | Class::Upper)
            | (Class::Lower | Class::Upper, Class::Digit) => true,
            _ => false,
        };
        if boundary {
            cuts.push((s, pos));
            start = Some(pos);
        }
    }
    if let Some(s) = start {
        cuts.push((s, ident.len()));
    }
    cuts.into_iter().map(move |(a, b)| &ident[a..b])
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(tokens("a + b_c"), vec!["b_c"]);
        assert_eq!(tokens("Größe_Maß"), vec!["größe", "maß", "größe_maß"]);
    }

    #[test]
    fn overlong_tokens_are_dropped() {
        let blob = "A".repeat(MAX_TOKEN_LEN + 1);
        assert!(tokens(&blob).is_empty());
    }
}
