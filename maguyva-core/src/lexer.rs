//! A comment-and-string lexer: for one file, where its comments and string
//! literals are, so a query can tell whether an identifier occurs in code, in
//! a comment or in a string.
//!
//! [`lex`] is one forward byte scan that knows each language's comment
//! markers and string delimiters and nothing else (no parsing). Every
//! delimiter is ASCII, so every span boundary is a char boundary. An
//! unterminated comment or multi-line string ends at the end of the text, an
//! unterminated single-line string at its newline. The parts of a string
//! that are code are left out of its span: `${…}` in JavaScript and
//! TypeScript template literals, `$(…)`, `${…}` and `` `…` `` in Bash double
//! quotes, `#{…}` in Ruby and Elixir double-quoted strings and heredocs.
//! Kotlin, Scala, Swift, C# and Python interpolations stay string.
//!
//! [`word_occurrences`] finds an identifier as a whole word and tags each
//! occurrence with its [`Region`]; it lexes the file only when the word
//! occurs in it.

use crate::Language;

/// Where a byte of source text sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Region {
    /// Outside every comment and string literal.
    Code,
    /// Inside a comment, its markers included.
    Comment,
    /// Inside a string or character literal, its delimiters included.
    String,
}

/// Comment and string-literal spans of one file, sorted, non-overlapping,
/// byte offsets `[start, end)`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lexed {
    comments: Vec<(usize, usize)>,
    strings: Vec<(usize, usize)>,
}

impl Lexed {
    /// The comment spans, sorted and non-overlapping.
    pub fn comments(&self) -> &[(usize, usize)] {
        &self.comments
    }

    /// The string- and character-literal spans, sorted and non-overlapping.
    pub fn strings(&self) -> &[(usize, usize)] {
        &self.strings
    }

    /// Region of the byte at `offset` (binary search); past the end of the
    /// text it is [`Region::Code`].
    pub fn region_at(&self, offset: usize) -> Region {
        if covers(&self.comments, offset) {
            Region::Comment
        } else if covers(&self.strings, offset) {
            Region::String
        } else {
            Region::Code
        }
    }
}

/// Whether one of the sorted, non-overlapping `spans` contains `offset`.
fn covers(spans: &[(usize, usize)], offset: usize) -> bool {
    let after = spans.partition_point(|&(start, _)| start <= offset);
    after > 0 && spans[after - 1].1 > offset
}

/// Lexes `text` as `language`: the spans of its comments and string literals.
pub fn lex(language: Language, text: &str) -> Lexed {
    let mut lexer = Lexer {
        lang: language,
        b: text.as_bytes(),
        i: 0,
        last: 0,
        no_regex_before: 0,
        frames: Vec::new(),
        out: Lexed::default(),
    };
    lexer.run();
    lexer.out
}

/// Byte offsets of every whole-word occurrence of `word` in `text` (no
/// identifier character — alphanumeric, `_`, and `$` — directly before or
/// after), each with its region. Empty `word` gives nothing.
///
/// In Bash and PHP `$` is a sigil, not an identifier character, so `$foo` is
/// an occurrence of `foo` there. Occurrences may overlap when `word` itself
/// starts or ends with a non-identifier character.
///
/// ```
/// use maguyva_core::{Language, Region, word_occurrences};
/// let text = "let foo = 1; // foo\nlet s = \"foo\"; foobar";
/// let found: Vec<Region> =
///     word_occurrences(Language::Rust, text, "foo").into_iter().map(|(_, r)| r).collect();
/// assert_eq!(found, [Region::Code, Region::Comment, Region::String]);
/// ```
pub fn word_occurrences(language: Language, text: &str, word: &str) -> Vec<(usize, Region)> {
    let sigil = matches!(language, Language::Bash | Language::Php);
    let found: Vec<usize> = whole_words(text, word, !sigil).collect();
    if found.is_empty() {
        return Vec::new();
    }
    let lexed = lex(language, text);
    found.into_iter().map(|at| (at, lexed.region_at(at))).collect()
}

/// Byte offsets of every occurrence of `word` in `text` with no identifier
/// character (alphanumeric, `_`, and `$` when `dollar_is_identifier`)
/// directly before or after it. Empty `word` gives nothing.
pub fn whole_words<'a>(
    text: &'a str,
    word: &'a str,
    dollar_is_identifier: bool,
) -> impl Iterator<Item = usize> + 'a {
    let is_ident =
        move |c: char| c.is_alphanumeric() || c == '_' || (c == '$' && dollar_is_identifier);
    let step = word.chars().next().map_or(0, char::len_utf8);
    // A vectorised search: `str::find` is several times slower on the long
    // texts the references and definitions of a common name scan.
    let finder = memchr::memmem::Finder::new(word.as_bytes());
    let mut from = 0;
    std::iter::from_fn(move || {
        if step == 0 {
            return None;
        }
        while let Some(rel) = text.as_bytes().get(from..).and_then(|rest| finder.find(rest)) {
            let at = from + rel;
            from = at + step;
            let before = text.get(..at).and_then(|head| head.chars().next_back());
            let after = text.get(at + word.len()..).and_then(|tail| tail.chars().next());
            if !before.is_some_and(is_ident) && !after.is_some_and(is_ident) {
                return Some(at);
            }
        }
        None
    })
}

/// Keywords after which a JavaScript `/` starts a regular expression.
const JS_REGEX_KEYWORDS: [&[u8]; 14] = [
    b"return",
    b"typeof",
    b"instanceof",
    b"in",
    b"of",
    b"new",
    b"delete",
    b"void",
    b"throw",
    b"case",
    b"do",
    b"else",
    b"yield",
    b"await",
];

/// How a string with code interpolations goes on after one of them.
#[derive(Debug, Clone, Copy)]
struct Interp {
    /// The closing quote byte.
    quote: u8,
    /// Closed by three quotes (heredoc) rather than one.
    triple: bool,
    style: Style,
}

/// Which interpolations a string has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    /// JavaScript template literal: `${…}`.
    Template,
    /// Bash double quotes: `$(…)`, `${…}`, `` `…` ``.
    Bash,
    /// Ruby and Elixir: `#{…}`.
    Hash,
}

/// The bracket that ends an interpolation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Closer {
    Brace,
    Paren,
    Backtick,
}

/// An open interpolation: code until its closer at depth zero, then the
/// string resumes.
#[derive(Debug)]
struct Frame {
    closer: Closer,
    depth: usize,
    resume: Interp,
}

struct Lexer<'a> {
    lang: Language,
    b: &'a [u8],
    /// The next byte to scan, in code.
    i: usize,
    /// The last non-blank code byte (`b'a'` after a word, `b'"'` after a
    /// literal, 0 at the start): whether a JavaScript `/` divides or starts a
    /// regular expression.
    last: u8,
    /// A regular-expression scan failed up to here: a `/` before it starts
    /// none (keeps lines full of `/` linear).
    no_regex_before: usize,
    frames: Vec<Frame>,
    out: Lexed,
}

impl Lexer<'_> {
    fn run(&mut self) {
        while let Some(&c) = self.b.get(self.i) {
            if self.frame_bracket(c) {
                continue;
            }
            if is_ident_byte(c) {
                self.word();
                continue;
            }
            if !self.punct(c) {
                if !c.is_ascii_whitespace() {
                    self.last = c;
                }
                self.i += 1;
            }
        }
    }

    /// The byte at `j`, or 0 past the end.
    fn at(&self, j: usize) -> u8 {
        self.b.get(j).copied().unwrap_or(0)
    }

    fn triple_at(&self, j: usize, q: u8) -> bool {
        self.at(j) == q && self.at(j + 1) == q && self.at(j + 2) == q
    }

    fn push_comment(&mut self, start: usize, end: usize) {
        push_span(&mut self.out.comments, start, end);
        self.i = end;
    }

    fn push_string(&mut self, start: usize, end: usize) {
        push_span(&mut self.out.strings, start, end);
        self.i = end;
        self.last = b'"';
    }

    /// Tracks the brackets of the innermost interpolation; at its closer the
    /// string resumes.
    fn frame_bracket(&mut self, c: u8) -> bool {
        let Some(frame) = self.frames.last_mut() else {
            return false;
        };
        let (open, close) = match frame.closer {
            Closer::Brace => (Some(b'{'), b'}'),
            Closer::Paren => (Some(b'('), b')'),
            Closer::Backtick => (None, b'`'),
        };
        if c == close {
            self.i += 1;
            if frame.depth > 0 {
                frame.depth -= 1;
                self.last = c;
            } else {
                let resume = frame.resume;
                self.frames.pop();
                self.interp(self.i, self.i, resume);
            }
            true
        } else if open == Some(c) {
            frame.depth += 1;
            self.i += 1;
            self.last = c;
            true
        } else {
            false
        }
    }

    /// An identifier or number, and the string prefixes that need one
    /// (Rust `r#"`, `b"`, `b'`; C++ `R"(`).
    fn word(&mut self) {
        let b = self.b;
        let start = self.i;
        let number = self.at(start).is_ascii_digit();
        let mut j = start + 1;
        while let Some(&c) = b.get(j) {
            let inner_quote = c == b'\''
                && match self.lang {
                    // `foldl'`, `x'`.
                    Language::Haskell => true,
                    // Digit separators: `1'000'000`.
                    Language::C | Language::Cpp => number && self.at(j + 1).is_ascii_alphanumeric(),
                    _ => false,
                };
            if is_ident_byte(c) || inner_quote {
                j += 1;
            } else {
                break;
            }
        }
        let word = &b[start..j];
        let next = self.at(j);
        self.i = j;
        self.last = b'a';
        match self.lang {
            Language::Rust => match (word, next) {
                (b"r" | b"br" | b"cr", b'"' | b'#') => self.rust_raw(start, j),
                (b"b" | b"c", b'"') => self.quoted(start, j + 1, b'"', true, true),
                (b"b", b'\'') => {
                    self.char_literal(start, j);
                }
                _ => {}
            },
            Language::Cpp
                if next == b'"' && matches!(word, b"R" | b"u8R" | b"uR" | b"UR" | b"LR") =>
            {
                self.cpp_raw(start, j + 1)
            }
            Language::JavaScript | Language::TypeScript | Language::Tsx
                if JS_REGEX_KEYWORDS.contains(&word) =>
            {
                self.last = b'=';
            }
            _ => {}
        }
    }

    /// Comments and literals starting at the punctuation byte `c` at
    /// `self.i`; false when `c` is plain code: Python, Ruby, Elixir and
    /// Bash here, the other languages in [`Self::punct_of_others`].
    fn punct(&mut self, c: u8) -> bool {
        let i = self.i;
        let next = self.at(i + 1);
        let lang = self.lang;
        match lang {
            Language::Python => match c {
                b'#' => self.line_comment(i),
                b'"' | b'\'' if self.triple_at(i, c) => self.triple(i, i + 3, c, true, false),
                b'"' | b'\'' => self.quoted(i, i + 1, c, true, false),
                _ => return false,
            },
            Language::Ruby => match c {
                b'#' => self.line_comment(i),
                b'=' if self.ruby_begin(i) => {}
                b'"' => {
                    self.interp(i, i + 1, Interp { quote: c, triple: false, style: Style::Hash })
                }
                b'\'' => self.quoted(i, i + 1, c, true, true),
                // Globals such as `$'` and `$"`.
                b'$' if next.is_ascii_punctuation() => self.i = i + 2,
                _ => return false,
            },
            Language::Elixir => match c {
                b'#' => self.line_comment(i),
                b'"' | b'\'' => {
                    let triple = self.triple_at(i, c);
                    let from = if triple { i + 3 } else { i + 1 };
                    self.interp(i, from, Interp { quote: c, triple, style: Style::Hash });
                }
                b'?' => return self.elixir_char(i),
                _ => return false,
            },
            Language::Bash => match c {
                b'#' if i == 0
                    || matches!(self.at(i - 1), b';' | b'(' | b'|' | b'&')
                    || self.at(i - 1).is_ascii_whitespace() =>
                {
                    self.line_comment(i)
                }
                b'\\' => self.i = (i + 2).min(self.b.len()),
                b'"' => {
                    self.interp(i, i + 1, Interp { quote: c, triple: false, style: Style::Bash })
                }
                b'\'' => self.quoted(i, i + 1, c, false, true),
                // ANSI-C quoting: `$'\n'`.
                b'$' if next == b'\'' => self.quoted(i, i + 2, b'\'', true, true),
                _ => return false,
            },
            _ => return self.punct_of_others(c),
        }
        true
    }

    /// [`Self::punct`] for the languages other than Python, Ruby, Elixir
    /// and Bash.
    fn punct_of_others(&mut self, c: u8) -> bool {
        let i = self.i;
        let next = self.at(i + 1);
        match self.lang {
            Language::JavaScript | Language::TypeScript | Language::Tsx => match c {
                b'/' if matches!(next, b'/' | b'*') => self.slash_comment(i, false),
                b'/' => return self.js_regex(i),
                b'"' | b'\'' => self.quoted(i, i + 1, c, true, false),
                b'`' => self.interp(
                    i,
                    i + 1,
                    Interp { quote: c, triple: false, style: Style::Template },
                ),
                // A hashbang line.
                b'#' if i == 0 && next == b'!' => self.line_comment(i),
                _ => return false,
            },
            Language::Go => match c {
                b'/' if matches!(next, b'/' | b'*') => self.slash_comment(i, false),
                b'"' => self.quoted(i, i + 1, c, true, false),
                b'`' => self.quoted(i, i + 1, c, false, true),
                b'\'' => return self.char_literal(i, i),
                _ => return false,
            },
            Language::C | Language::Cpp => match c {
                b'/' if matches!(next, b'/' | b'*') => self.slash_comment(i, false),
                b'"' => self.quoted(i, i + 1, c, true, false),
                b'\'' => return self.char_literal(i, i),
                _ => return false,
            },
            Language::Java => match c {
                b'/' if matches!(next, b'/' | b'*') => self.slash_comment(i, false),
                b'"' if self.triple_at(i, c) => self.triple(i, i + 3, c, true, false),
                b'"' => self.quoted(i, i + 1, c, true, false),
                b'\'' => return self.char_literal(i, i),
                _ => return false,
            },
            Language::Kotlin | Language::Scala => match c {
                b'/' if matches!(next, b'/' | b'*') => self.slash_comment(i, true),
                b'"' if self.triple_at(i, c) => self.triple(i, i + 3, c, false, true),
                b'"' => self.quoted(i, i + 1, c, true, false),
                b'\'' => return self.char_literal(i, i),
                _ => return false,
            },
            Language::Swift => match c {
                b'/' if matches!(next, b'/' | b'*') => self.slash_comment(i, true),
                b'#' => self.swift_raw(i),
                b'"' if self.triple_at(i, c) => self.triple(i, i + 3, c, true, false),
                b'"' => self.quoted(i, i + 1, c, true, false),
                _ => return false,
            },
            Language::CSharp => match c {
                b'/' if matches!(next, b'/' | b'*') => self.slash_comment(i, false),
                b'"' => self.csharp_quote(i, i),
                b'@' if next == b'"' => self.verbatim(i, i + 2),
                b'@' if next == b'$' && self.at(i + 2) == b'"' => self.verbatim(i, i + 3),
                b'$' => {
                    let mut p = i;
                    while self.at(p) == b'$' {
                        p += 1;
                    }
                    match self.at(p) {
                        b'@' if self.at(p + 1) == b'"' => self.verbatim(i, p + 2),
                        b'"' => self.csharp_quote(i, p),
                        _ => self.i = p,
                    }
                }
                b'\'' => return self.char_literal(i, i),
                _ => return false,
            },
            Language::Rust => match c {
                b'/' if matches!(next, b'/' | b'*') => self.slash_comment(i, true),
                b'"' => self.quoted(i, i + 1, c, true, true),
                // A lifetime or label when no char literal follows.
                b'\'' => return self.char_literal(i, i),
                _ => return false,
            },
            Language::Php => match c {
                b'/' if next == b'/' => self.php_line_comment(i),
                b'/' if next == b'*' => self.slash_comment(i, false),
                // `#[…]` is an attribute.
                b'#' if next != b'[' => self.php_line_comment(i),
                b'"' | b'\'' => self.quoted(i, i + 1, c, true, true),
                _ => return false,
            },
            Language::Lua => match c {
                b'-' if next == b'-' => match self.long_bracket(i + 2) {
                    Some((level, from)) => {
                        let end = self.long_close(from, level);
                        self.push_comment(i, end);
                    }
                    None => self.line_comment(i),
                },
                b'[' => match self.long_bracket(i) {
                    Some((level, from)) => {
                        let end = self.long_close(from, level);
                        self.push_string(i, end);
                    }
                    None => return false,
                },
                b'"' | b'\'' => self.quoted(i, i + 1, c, true, false),
                _ => return false,
            },
            Language::Haskell => match c {
                b'-' if next == b'-' => self.haskell_dashes(i),
                b'{' if next == b'-' => self.block_comment(i, *b"{-", *b"-}", true),
                b'"' => self.quoted(i, i + 1, c, true, false),
                b'\'' => return self.char_literal(i, i),
                _ => return false,
            },
            Language::Zig => match c {
                b'/' if next == b'/' => self.line_comment(i),
                // A line of a multi-line string.
                b'\\' if next == b'\\' => {
                    let end = self.line_end(i);
                    self.push_string(i, end);
                }
                b'"' => self.quoted(i, i + 1, c, true, false),
                b'\'' => return self.char_literal(i, i),
                _ => return false,
            },
            _ => return false,
        }
        true
    }

    /// The offset of the next newline at or after `from`, or the end.
    fn line_end(&self, from: usize) -> usize {
        self.b
            .get(from..)
            .and_then(|rest| rest.iter().position(|&c| c == b'\n'))
            .map_or(self.b.len(), |k| from + k)
    }

    /// Where `needle` next starts at or after `from`.
    fn find_seq(&self, from: usize, needle: &[u8]) -> Option<usize> {
        let (&first, rest) = needle.split_first()?;
        let hay = self.b.get(from..)?;
        let mut k = 0;
        while let Some(off) = hay.get(k..)?.iter().position(|&c| c == first) {
            let p = k + off;
            if hay.get(p + 1..).is_some_and(|tail| tail.starts_with(rest)) {
                return Some(from + p);
            }
            k = p + 1;
        }
        None
    }

    /// The end of a literal closed by `close`, searched from `from`; the end
    /// of the text when unterminated.
    fn close_of(&self, from: usize, close: &[u8]) -> usize {
        self.find_seq(from, close).map_or(self.b.len(), |p| p + close.len())
    }

    fn line_comment(&mut self, start: usize) {
        let end = self.line_end(start);
        self.push_comment(start, end);
    }

    /// `//` (to the newline) or `/* … */`, nested or not.
    fn slash_comment(&mut self, start: usize, nested: bool) {
        if self.at(start + 1) == b'/' {
            self.line_comment(start);
        } else {
            self.block_comment(start, *b"/*", *b"*/", nested);
        }
    }

    fn block_comment(&mut self, start: usize, open: [u8; 2], close: [u8; 2], nested: bool) {
        let mut depth = 1usize;
        let mut j = start + 2;
        let end = loop {
            let Some(&c) = self.b.get(j) else {
                break self.b.len();
            };
            if c == close[0] && self.at(j + 1) == close[1] {
                j += 2;
                depth -= 1;
                if depth == 0 {
                    break j;
                }
            } else if nested && c == open[0] && self.at(j + 1) == open[1] {
                j += 2;
                depth += 1;
            } else {
                j += 1;
            }
        };
        self.push_comment(start, end);
    }

    /// A string from `start` whose body begins at `from`, closed by `quote`;
    /// with `escapes` a backslash escapes the next byte; without `multiline`
    /// an unterminated string ends at its newline.
    fn quoted(&mut self, start: usize, from: usize, quote: u8, escapes: bool, multiline: bool) {
        let b = self.b;
        let mut j = from;
        let end = loop {
            let Some(&c) = b.get(j) else {
                break b.len();
            };
            if c == quote {
                break j + 1;
            } else if c == b'\\' && escapes {
                j += 2;
            } else if c == b'\n' && !multiline {
                break j;
            } else {
                j += 1;
            }
        };
        self.push_string(start, end);
    }

    /// A string closed by three `q`; `greedy` also takes the quotes that
    /// follow (Kotlin and Scala: `"""a""""` holds `a"`).
    fn triple(&mut self, start: usize, from: usize, q: u8, escapes: bool, greedy: bool) {
        let b = self.b;
        let mut j = from;
        let end = loop {
            let Some(&c) = b.get(j) else {
                break b.len();
            };
            if c == b'\\' && escapes {
                j += 2;
            } else if self.triple_at(j, q) {
                let mut end = j + 3;
                while greedy && self.at(end) == q {
                    end += 1;
                }
                break end;
            } else {
                j += 1;
            }
        };
        self.push_string(start, end);
    }

    /// A string with code interpolations, from `start` (its opening quote or
    /// the end of an interpolation) with its body from `from`. Pushes the
    /// string part; at an interpolation opens a frame and returns to code.
    fn interp(&mut self, start: usize, from: usize, s: Interp) {
        let b = self.b;
        let mut j = from;
        while let Some(&c) = b.get(j) {
            let next = self.at(j + 1);
            let opened = match c {
                b'\\' => {
                    j += 2;
                    continue;
                }
                _ if c == s.quote => {
                    if !s.triple {
                        self.push_string(start, j + 1);
                        return;
                    }
                    if self.triple_at(j, c) {
                        self.push_string(start, j + 3);
                        return;
                    }
                    None
                }
                b'$' if next == b'{' && s.style != Style::Hash => Some((Closer::Brace, 2)),
                b'$' if next == b'(' && s.style == Style::Bash => Some((Closer::Paren, 2)),
                b'`' if s.style == Style::Bash => Some((Closer::Backtick, 1)),
                b'#' if next == b'{' && s.style == Style::Hash => Some((Closer::Brace, 2)),
                _ => None,
            };
            if let Some((closer, len)) = opened {
                self.push_string(start, j);
                self.frames.push(Frame { closer, depth: 0, resume: s });
                self.i = j + len;
                self.last = b'{';
                return;
            }
            j += 1;
        }
        self.push_string(start, b.len());
    }

    /// A character literal at quote `q` (its prefix from `start`): one char
    /// or one escape, then the closing quote. Anything else (a Rust lifetime,
    /// a Haskell or Scala quoted name, a stray apostrophe) is code.
    fn char_literal(&mut self, start: usize, q: usize) -> bool {
        let b = self.b;
        let end = match self.at(q + 1) {
            b'\\' => {
                // `'\n'`, `'\''`, `'\x7f'`, `'\u{1F600}'`, `'\NUL'`.
                let from = q + 3;
                let window = b.get(from..(from + 12).min(b.len()));
                match window.and_then(|w| w.iter().position(|&c| c == b'\'' || c == b'\n')) {
                    Some(k) if b[from + k] == b'\'' => from + k + 1,
                    _ => return false,
                }
            }
            0 | b'\'' | b'\n' | b'\r' => return false,
            c => {
                let close = q + 1 + utf8_len(c);
                if self.at(close) != b'\'' {
                    return false;
                }
                close + 1
            }
        };
        self.push_string(start, end);
        true
    }

    /// Rust `r"…"`, `r#"…"#`, `br##"…"##`, `cr"…"`, the prefix from `start`,
    /// its hashes from `j`; a raw identifier (`r#type`) stays code.
    fn rust_raw(&mut self, start: usize, j: usize) {
        let mut q = j;
        while self.at(q) == b'#' {
            q += 1;
        }
        if self.at(q) != b'"' {
            return;
        }
        let mut close = vec![b'#'; q - j + 1];
        close[0] = b'"';
        let end = self.close_of(q + 1, &close);
        self.push_string(start, end);
    }

    /// C++ `R"delim(…)delim"` with the prefix from `start`, the delimiter
    /// from `from`; an invalid delimiter makes it an ordinary string.
    fn cpp_raw(&mut self, start: usize, from: usize) {
        let b = self.b;
        let limit = (from + 17).min(b.len());
        let open = b.get(from..limit).and_then(|window| {
            window.iter().position(|&c| {
                c == b'(' || matches!(c, b')' | b'\\' | b'"' | b' ') || c.is_ascii_control()
            })
        });
        match open {
            Some(k) if b[from + k] == b'(' => {
                let mut close = Vec::with_capacity(k + 2);
                close.push(b')');
                close.extend_from_slice(&b[from..from + k]);
                close.push(b'"');
                let end = self.close_of(from + k + 1, &close);
                self.push_string(start, end);
            }
            _ => self.quoted(start, from, b'"', true, false),
        }
    }

    /// C# `"…"` or raw `"""…"""` (any run of three or more quotes), quotes
    /// from `q`, prefix (`$`, `$$`) from `start`.
    fn csharp_quote(&mut self, start: usize, q: usize) {
        let mut run = q;
        while self.at(run) == b'"' {
            run += 1;
        }
        let n = run - q;
        if n >= 3 {
            let end = self.close_of(run, &vec![b'"'; n]);
            self.push_string(start, end);
        } else {
            self.quoted(start, q + 1, b'"', true, false);
        }
    }

    /// C# verbatim `@"…"` from `start`, its body from `from`: `""` is a quote,
    /// newlines are allowed.
    fn verbatim(&mut self, start: usize, from: usize) {
        let mut j = from;
        let end = loop {
            match self.b.get(j) {
                None => break self.b.len(),
                Some(b'"') if self.at(j + 1) == b'"' => j += 2,
                Some(b'"') => break j + 1,
                Some(_) => j += 1,
            }
        };
        self.push_string(start, end);
    }

    /// Swift extended delimiters `#"…"#`, `##"""…"""##`; other `#`s
    /// (`#if`, `#selector`) are code.
    fn swift_raw(&mut self, start: usize) {
        let mut q = start;
        while self.at(q) == b'#' {
            q += 1;
        }
        if self.at(q) != b'"' {
            self.i = q;
            return;
        }
        let quotes = if self.triple_at(q, b'"') { 3 } else { 1 };
        let mut close = vec![b'#'; quotes + q - start];
        close[..quotes].fill(b'"');
        let end = self.close_of(q + quotes, &close);
        self.push_string(start, end);
    }

    /// Ruby `=begin` … `=end` at line starts.
    fn ruby_begin(&mut self, i: usize) -> bool {
        let at_line_start = i == 0 || self.at(i - 1) == b'\n';
        let marked = self.b.get(i..).is_some_and(|rest| rest.starts_with(b"=begin"));
        if !at_line_start || !marked || !matches!(self.at(i + 6), 0 | b' ' | b'\t' | b'\r' | b'\n')
        {
            return false;
        }
        let end = self.find_seq(i + 6, b"\n=end").map_or(self.b.len(), |p| self.line_end(p + 1));
        self.push_comment(i, end);
        true
    }

    /// Elixir `?x`, `?\n`: a char literal, so `?#` starts no comment; `?`
    /// ending a name (`valid?`) is code.
    fn elixir_char(&mut self, i: usize) -> bool {
        if i > 0 && is_ident_byte(self.at(i - 1)) {
            return false;
        }
        let end = match self.at(i + 1) {
            0 | b'\n' | b'\r' => return false,
            b'\\' => i + 2 + utf8_len(self.at(i + 2)),
            c => i + 1 + utf8_len(c),
        };
        self.push_string(i, end.min(self.b.len()));
        true
    }

    /// PHP `//` and `#` comments end at the newline or before `?>`.
    fn php_line_comment(&mut self, start: usize) {
        let mut j = start;
        let end = loop {
            match self.b.get(j) {
                None => break self.b.len(),
                Some(b'\n') => break j,
                Some(b'?') if self.at(j + 1) == b'>' => break j,
                Some(_) => j += 1,
            }
        };
        self.push_comment(start, end);
    }

    /// A Lua long bracket `[[` or `[==[` at `p`: its level and where its body
    /// begins.
    fn long_bracket(&self, p: usize) -> Option<(usize, usize)> {
        if self.at(p) != b'[' {
            return None;
        }
        let mut k = p + 1;
        while self.at(k) == b'=' {
            k += 1;
        }
        (self.at(k) == b'[').then_some((k - p - 1, k + 1))
    }

    /// The end of a Lua long bracket of `level`, its body from `from`.
    fn long_close(&self, from: usize, level: usize) -> usize {
        let mut close = vec![b'='; level + 2];
        close[0] = b']';
        close[level + 1] = b']';
        self.close_of(from, &close)
    }

    /// Haskell dashes: a line comment unless they belong to an operator
    /// (`-->`, `|--`).
    fn haskell_dashes(&mut self, i: usize) {
        let mut k = i;
        while self.at(k) == b'-' {
            k += 1;
        }
        let before = if i > 0 { self.at(i - 1) } else { 0 };
        if is_haskell_symbol(before) || is_haskell_symbol(self.at(k)) {
            self.i = k;
            self.last = b'-';
        } else {
            self.line_comment(i);
        }
    }

    /// A JavaScript regular-expression literal at the `/` at `i`, when the
    /// byte before it cannot end an operand; false (a division) otherwise.
    fn js_regex(&mut self, i: usize) -> bool {
        const BEFORE: &[u8] = b"\0(,=:[!&|?{;+-*%~^";
        if i < self.no_regex_before || !BEFORE.contains(&self.last) {
            return false;
        }
        let mut j = i + 1;
        let mut class = false;
        loop {
            match self.b.get(j) {
                None | Some(b'\n') | Some(b'\r') => {
                    self.no_regex_before = j;
                    return false;
                }
                Some(b'\\') => j += 2,
                Some(b'[') => {
                    class = true;
                    j += 1;
                }
                Some(b']') => {
                    class = false;
                    j += 1;
                }
                Some(b'/') if !class => break,
                Some(_) => j += 1,
            }
        }
        let mut end = j + 1;
        while self.at(end).is_ascii_alphabetic() {
            end += 1;
        }
        self.push_string(i, end);
        true
    }
}

/// Appends `[start, end)` to sorted `spans`, merging it into an adjacent
/// last span; empty spans are dropped.
fn push_span(spans: &mut Vec<(usize, usize)>, start: usize, end: usize) {
    if start >= end {
        return;
    }
    match spans.last_mut() {
        Some(last) if last.1 == start => last.1 = end,
        _ => spans.push((start, end)),
    }
}

/// A byte of an identifier or number, for the scan: ASCII alphanumerics,
/// `_`, and every byte of a non-ASCII char.
fn is_ident_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80
}

/// The length of the UTF-8 sequence starting with `lead` (1 for ASCII and
/// for a byte that starts none).
fn utf8_len(lead: u8) -> usize {
    match lead {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

fn is_haskell_symbol(c: u8) -> bool {
    b"!#$%&*+./<=>?@\\^|~:".contains(&c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const CODE: Region = Region::Code;
    const COMMENT: Region = Region::Comment;
    const STRING: Region = Region::String;

    /// The regions of the whole-word occurrences of `word`, in order.
    fn regions(language: Language, text: &str, word: &str) -> Vec<Region> {
        word_occurrences(language, text, word).into_iter().map(|(_, region)| region).collect()
    }

    #[track_caller]
    fn check(language: Language, text: &str, expected: &[Region]) {
        assert_eq!(regions(language, text, "name"), expected, "{language}: {text:?}");
    }

    #[test]
    fn python() {
        let text = "name = 1  # name here\n\
                    s = \"name\" + 'name' + f\"x{name}\"\n\
                    doc = \"\"\"\nname \" ' \\\"\"\" still \"\" open\n\"\"\" + name\n\
                    t = '''name''' + \"it's \\\" name\"\n\
                    name";
        check(
            Language::Python,
            text,
            &[CODE, COMMENT, STRING, STRING, STRING, STRING, CODE, STRING, STRING, CODE],
        );
        // An escaped quote does not close `"""`; `'''` closes at its first
        // three quotes.
        let lexed = lex(Language::Python, "'''a''' b");
        assert_eq!(lexed.strings(), &[(0, 7)]);
    }

    #[test]
    fn ruby() {
        let text = "name = 1 # name\n=begin\nname\n=end name\nputs \"name #{name + \"x\"} name\", 'name'\nx.name";
        check(
            Language::Ruby,
            text,
            &[CODE, COMMENT, COMMENT, COMMENT, STRING, CODE, STRING, STRING, CODE],
        );
        // `=begin` counts only at a line start.
        check(Language::Ruby, "a =begin name\nname", &[CODE, CODE]);
        // `$"` is a global variable, not a string.
        check(Language::Ruby, "$\" << name", &[CODE]);
    }

    #[test]
    fn elixir() {
        let text = "name = ?# # name\n\"\"\"\nname #{name}\n\"\"\"\nx = \"name\" <> 'name' <> ?\" <> name\ndef valid?(name)";
        check(Language::Elixir, text, &[CODE, COMMENT, STRING, CODE, STRING, STRING, CODE, CODE]);
    }

    #[test]
    fn bash() {
        let text = "name=1 # name\n\
                    echo a#name \"name $(name \"name\") ${name} `name`\" 'name $(name)'\n\
                    PS1=\"$(clock_prompt) name\" # $(name)";
        check(
            Language::Bash,
            text,
            &[
                CODE, COMMENT, CODE, STRING, CODE, STRING, CODE, CODE, STRING, STRING, STRING,
                COMMENT,
            ],
        );
        // Nested parentheses inside `$( … )` and quotes spanning lines.
        check(Language::Bash, "x=\"$( (name) ) name\nname\" name", &[CODE, STRING, STRING, CODE]);
        // `$'…'` has escapes; `\"` in code starts no string.
        check(Language::Bash, "echo $'a\\' name' \\\" name", &[STRING, CODE]);
    }

    #[test]
    fn bash_and_php_dollar_is_a_sigil() {
        check(Language::Bash, "echo $name ${name} \"$name\"", &[CODE, CODE, STRING]);
        check(Language::Php, "$name = $this->name;", &[CODE, CODE]);
        check(Language::Rust, "$name name$ name", &[CODE]);
        check(Language::JavaScript, "let $name = name$ + name;", &[CODE]);
    }

    #[test]
    fn javascript_family() {
        let text = "const name = `name ${name + `${name}` + {a: 1}.a} name\nname`; // name\n\
                    /* name */ let re = /name[/]/g, d = a / name / 2; s = 'name' + \"name\";\n\
                    if (x) return /name/.test(y)";
        let expected = [
            CODE, STRING, CODE, CODE, STRING, STRING, COMMENT, COMMENT, STRING, CODE, STRING,
            STRING, STRING,
        ];
        for language in [Language::JavaScript, Language::TypeScript, Language::Tsx] {
            check(language, text, &expected);
        }
        // Unterminated template interpolation and a lone regex-looking slash.
        check(Language::JavaScript, "x = `a ${ name", &[CODE]);
        check(Language::JavaScript, "x = /name\nname", &[CODE, CODE]);
        check(Language::JavaScript, "#!/usr/bin/env node name\nname", &[COMMENT, CODE]);
    }

    #[test]
    fn go() {
        let text =
            "var name = `name\nname` // name\n/* name */ r := '\\''; s := \"name\\\"name\" + name";
        check(Language::Go, text, &[CODE, STRING, STRING, COMMENT, COMMENT, STRING, STRING, CODE]);
    }

    #[test]
    fn java() {
        let text = "String name = \"\"\"\n  name \"\" \\\"\"\" name\"\"\" + \"name\"; // name\n/* name */ char c = '\"'; name";
        check(Language::Java, text, &[CODE, STRING, STRING, STRING, COMMENT, COMMENT, CODE]);
    }

    #[test]
    fn kotlin_and_scala() {
        let text = "val name = \"\"\"name \\\"\"\"\" /* a /* name */ name */ // name\nval s = \"name ${name}\"; val c = '\\''; name";
        for language in [Language::Kotlin, Language::Scala] {
            check(language, text, &[CODE, STRING, COMMENT, COMMENT, COMMENT, STRING, STRING, CODE]);
        }
        // Scala's quoted names are code.
        check(Language::Scala, "'name + name", &[CODE, CODE]);
    }

    #[test]
    fn swift() {
        let text = "let name = #\"name \"\\(name)\"# + \"\"\"\nname\n\"\"\" /* /* name */ name */ // name\n#if name\nname";
        check(
            Language::Swift,
            text,
            &[CODE, STRING, STRING, STRING, COMMENT, COMMENT, COMMENT, CODE, CODE],
        );
    }

    #[test]
    fn csharp() {
        let text = "var name = @\"name \"\" name\nname\" + $@\"{name}\" + \"\"\"\"name \"\"\" \"\"\"\" + $\"name\"; // name\n\
                    /* name */ char c = '\\''; var @name = @$\"name\"; name";
        check(
            Language::CSharp,
            text,
            &[
                CODE, STRING, STRING, STRING, STRING, STRING, STRING, COMMENT, COMMENT, CODE,
                STRING, CODE,
            ],
        );
    }

    #[test]
    fn c_and_cpp() {
        let text = "int name = 'n'; // name\n/* name /* */ name; char *s = \"name\\\"\" \"name\"; char q = '\"'; name";
        for language in [Language::C, Language::Cpp] {
            check(language, text, &[CODE, COMMENT, COMMENT, CODE, STRING, STRING, CODE]);
        }
        let raw = "auto name = R\"x(name )\" name)x\"; int n = 1'000'000 + name; auto w = u8R\"(name)\"; 'name'";
        check(Language::Cpp, raw, &[CODE, STRING, STRING, CODE, STRING, CODE]);
    }

    #[test]
    fn rust() {
        let text = "struct S<'a> { name: &'a str }\n\
                    fn f<'b>(x: &'b str) -> char { 'n' } // name\n\
                    /* a /* name */ name */ let s = r#\"name \"name\"#; let b = b\"name\";\n\
                    let c = '\\''; let d = b'\"'; let t = \"name\nname\"; 'outer: loop { name }\n\
                    let e = '\\u{1F600}'; let r#name = br##\"name\"#\"##; let u = 'é'; name";
        check(
            Language::Rust,
            text,
            &[
                CODE, COMMENT, COMMENT, COMMENT, STRING, STRING, STRING, STRING, STRING, CODE,
                CODE, STRING, CODE,
            ],
        );
        assert_eq!(lex(Language::Rust, "&'a T").strings(), &[] as &[(usize, usize)]);
    }

    #[test]
    fn php() {
        let text = "$name = 1; # name\n#[Attr] function name() {} // name ?> name\n/* name */ \"name $name\" 'name'";
        check(
            Language::Php,
            text,
            &[CODE, COMMENT, CODE, COMMENT, CODE, COMMENT, STRING, STRING, STRING],
        );
    }

    #[test]
    fn lua() {
        let text = "local name = [[name]] -- name\n--[==[ name ]] name\n]==] s = [=[ name ]=] .. \"name\" .. t[name]\n--[ name\nname";
        check(
            Language::Lua,
            text,
            &[CODE, STRING, COMMENT, COMMENT, COMMENT, STRING, STRING, CODE, COMMENT, CODE],
        );
    }

    #[test]
    fn haskell() {
        let text = "a --> name -- name\n{- a {- name -} name -} c = 'n' : foldl' name \"name\" |-- name\n--| name\n-- | name\nx = 'name";
        check(
            Language::Haskell,
            text,
            &[CODE, COMMENT, COMMENT, COMMENT, CODE, STRING, CODE, CODE, COMMENT, CODE],
        );
    }

    #[test]
    fn zig() {
        let text = "const name = \\\\name \" ' \n    \\\\ name\n; // name\nconst c = '\\''; const s = \"name\"; name";
        check(Language::Zig, text, &[CODE, STRING, STRING, COMMENT, STRING, CODE]);
    }

    #[test]
    fn spans_and_region_at() {
        let lexed = lex(Language::C, "a /* b */ \"c\"");
        assert_eq!(lexed.comments(), &[(2, 9)]);
        assert_eq!(lexed.strings(), &[(10, 13)]);
        assert_eq!(lexed.region_at(0), CODE);
        assert_eq!(lexed.region_at(2), COMMENT);
        assert_eq!(lexed.region_at(8), COMMENT);
        assert_eq!(lexed.region_at(9), CODE);
        assert_eq!(lexed.region_at(10), STRING);
        assert_eq!(lexed.region_at(12), STRING);
        assert_eq!(lexed.region_at(13), CODE);
        assert_eq!(lexed.region_at(1000), CODE);
        assert_eq!(Lexed::default().region_at(0), CODE);
        // Adjacent literals merge into one span.
        assert_eq!(lex(Language::Python, "'a''b'").strings(), &[(0, 6)]);
    }

    #[test]
    fn unterminated_literals_end_at_newline_or_end() {
        // Single-line strings end at the newline.
        for language in [
            Language::Python,
            Language::JavaScript,
            Language::C,
            Language::Go,
            Language::Java,
            Language::Kotlin,
            Language::CSharp,
            Language::Lua,
            Language::Haskell,
            Language::Zig,
            Language::Swift,
        ] {
            check(language, "x = \"name\nname", &[STRING, CODE]);
        }
        // Multi-line strings and block comments run to the end.
        for language in
            [Language::Rust, Language::Ruby, Language::Php, Language::Bash, Language::Elixir]
        {
            check(language, "x = \"name\nname", &[STRING, STRING]);
        }
        check(Language::Rust, "/* /* */ name", &[COMMENT]);
        check(Language::C, "/* name", &[COMMENT]);
        check(Language::Python, "'''name", &[STRING]);
        check(Language::Rust, "r##\"name\"#", &[STRING]);
        check(Language::Lua, "--[[ name", &[COMMENT]);
        check(Language::Haskell, "{- {- -} name", &[COMMENT]);
        check(Language::Cpp, "R\"ab(name)ab", &[STRING]);
        check(Language::Bash, "echo \"$(name", &[CODE]);
        check(Language::CSharp, "@\"name\"\"", &[STRING]);
        for language in Language::ALL {
            for text in
                ["\"", "'", "`", "/*", "\\", "$(", "${", "#{", "r#", "R\"", "[[", "{-", "--[=["]
            {
                let _ = lex(language, text);
            }
        }
    }

    #[test]
    fn multibyte_text_around_occurrences() {
        let text = "é name ü // naïve name\nλ = \"日本 name 語\"; 'é'; name😀 ænameé name";
        let found = word_occurrences(Language::Rust, text, "name");
        let offsets: Vec<usize> = text.match_indices("name").map(|(at, _)| at).collect();
        assert_eq!(
            found.iter().map(|&(at, _)| at).collect::<Vec<_>>(),
            [offsets[0], offsets[1], offsets[2], offsets[3], offsets[5]]
        );
        assert_eq!(
            found.iter().map(|&(_, region)| region).collect::<Vec<_>>(),
            [CODE, COMMENT, STRING, CODE, CODE]
        );
        // A multi-byte word.
        check(Language::Python, "", &[]);
        assert_eq!(regions(Language::Python, "größe # größe\ngrößer", "größe"), [CODE, COMMENT]);
    }

    #[test]
    fn whole_words_only() {
        let text = "foo foobar _foo foo2 $foo foo$ éfoo fooé foo_ 2foo (foo) foo";
        assert_eq!(
            word_occurrences(Language::Rust, text, "foo")
                .iter()
                .map(|&(at, _)| at)
                .collect::<Vec<_>>(),
            [0, text.find("(foo)").map_or(0, |at| at + 1), text.len() - 3]
        );
        assert_eq!(regions(Language::Bash, "$foo foo$ ${foo}", "foo"), [CODE, CODE, CODE]);
        assert!(word_occurrences(Language::Rust, "foo", "").is_empty());
        assert!(word_occurrences(Language::Rust, "", "foo").is_empty());
        assert!(word_occurrences(Language::Rust, "bar", "foo").is_empty());
        // Occurrences of a word with a non-identifier edge may overlap.
        assert_eq!(
            word_occurrences(Language::Rust, "a a a", "a a")
                .iter()
                .map(|&(at, _)| at)
                .collect::<Vec<_>>(),
            [0, 2]
        );
    }

    /// Text rich in the delimiters every language cares about.
    fn delimiter_soup() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<String>(),
            r#"[a-z0-9 \n\t"'`#/*{}()\[\]=$@?\\:;|&<>!~+.rRbu-]{0,80}"#,
            r##"([a-z]|é|日|😀|\$\(|\$\{|#\{|\$@"|"""|'''|r#"|"#|R"x\(|\)x"|\[==\[|\]==\]|--|/\*|\*/|\{-|-\}|=begin\n|\n=end|\\\\| |\n|"|'|`|/|\}|\)){0,40}"##,
        ]
    }

    fn well_formed(text: &str, spans: &[(usize, usize)]) -> bool {
        spans.iter().all(|&(start, end)| {
            start < end
                && end <= text.len()
                && text.is_char_boundary(start)
                && text.is_char_boundary(end)
        }) && spans.windows(2).all(|pair| pair[0].1 <= pair[1].0)
    }

    proptest! {
        #[test]
        fn never_panics_and_spans_are_well_formed(text in delimiter_soup(), word in "[a-z$]{0,2}|é|name") {
            for language in Language::ALL {
                let lexed = lex(language, &text);
                prop_assert!(well_formed(&text, lexed.comments()), "{language}: {:?}", lexed);
                prop_assert!(well_formed(&text, lexed.strings()), "{language}: {:?}", lexed);
                let mut all = [lexed.comments(), lexed.strings()].concat();
                all.sort_unstable();
                prop_assert!(well_formed(&text, &all), "{language}: comments and strings overlap: {:?}", lexed);
                for (at, region) in word_occurrences(language, &text, &word) {
                    prop_assert!(text.is_char_boundary(at) && text[at..].starts_with(word.as_str()));
                    prop_assert_eq!(region, lexed.region_at(at));
                }
            }
        }
    }
}
