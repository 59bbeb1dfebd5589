//! Shared inputs for the criterion benchmarks in `benches/`: a synthetic,
//! deterministic corpus, so that numbers compare across machines and runs
//! without any download.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

/// A fixed-seed xorshift generator: the benchmarks' inputs must be the
/// same on every run and machine, and need no statistical quality.
#[derive(Debug, Clone)]
pub struct XorShift(u64);

impl XorShift {
    /// A generator from a seed; the lowest bit is set, as xorshift must not
    /// start at 0 (so seeds 2k and 2k + 1 give the same numbers).
    pub fn new(seed: u64) -> XorShift {
        XorShift(seed | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// `files` source files of about `lines` lines each, generated from a fixed
/// seed: identifiers, comments and string literals with a realistic spread of
/// rare and common words.
pub fn synthetic_corpus(files: usize, lines: usize) -> Vec<(String, String)> {
    const WORDS: [&str; 40] = [
        "parse", "config", "request", "handler", "buffer", "token", "index", "search", "client",
        "server", "stream", "reader", "writer", "cache", "entry", "value", "error", "result",
        "option", "context", "session", "router", "match", "path", "header", "body", "encode",
        "decode", "retry", "timeout", "socket", "connect", "resolve", "format", "channel",
        "worker", "queue", "lock", "commit", "flush",
    ];
    let mut rng = XorShift::new(0x9E37_79B9_7F4A_7C15);
    let mut next = move || rng.next_u64();
    (0..files)
        .map(|f| {
            let mut text = String::new();
            for l in 0..lines {
                let a = WORDS[(next() % 40) as usize];
                let b = WORDS[(next() % 40) as usize];
                let c = WORDS[(next() % 40) as usize];
                match l % 4 {
                    0 => text.push_str(&format!("fn {a}_{b}(x: {}) -> {} {{\n", cap(c), cap(a))),
                    1 => text.push_str(&format!("    // {a} the {b} before the {c}\n")),
                    2 => text.push_str(&format!(
                        "    let {a}{} = \"{b} {c} {}\";\n",
                        cap(b),
                        next() % 1000
                    )),
                    _ => text.push_str("}\n"),
                }
            }
            (format!("src/{}/{}_{f}.rs", WORDS[f % 40], WORDS[(f / 40) % 40]), text)
        })
        .collect()
}

fn cap(w: &str) -> String {
    let mut c = w.chars();
    c.next().map(|f| f.to_ascii_uppercase().to_string() + c.as_str()).unwrap_or_default()
}

/// `n` packed binary codes of `words` 64-bit words, clustered like the
/// codes of real embeddings: each is one of `n / 50` random centres with
/// about 15% of its bits flipped. From a fixed seed.
pub fn clustered_codes(n: usize, words: usize, seed: u64) -> Vec<u64> {
    let mut rng = XorShift::new(seed);
    let mut next = move || rng.next_u64();
    let centres: Vec<u64> = (0..(n / 50).max(1) * words).map(|_| next()).collect();
    let mut out = Vec::with_capacity(n * words);
    for _ in 0..n {
        let c = (next() as usize) % (centres.len() / words);
        for w in 0..words {
            // Three draws ANDed: each bit is set with probability 1/8; a
            // fourth halves it again to about 6%; two such masks flip ~12%.
            let flip = (next() & next() & next() & next()) | (next() & next() & next() & next());
            out.push(centres[c * words + w] ^ flip);
        }
    }
    out
}
