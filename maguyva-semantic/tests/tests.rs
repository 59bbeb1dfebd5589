//! Integration tests of the semantic modality.

// The Voyage AI client against a local HTTP server that checks each request.
#[cfg(feature = "voyage")]
mod voyage;

// model2vec-format models written by the test, and the vector index.
#[cfg(feature = "model2vec")]
mod models;

// The corpus model joined with the built-in code model.
#[cfg(feature = "builtin-model")]
mod joined;

/// `n` one-line functions on four topics (sockets, charts, parsing,
/// caches): document `i` is on topic `i % 4`.
#[cfg(any(feature = "model2vec", feature = "builtin-model"))]
fn topic_corpus(n: usize) -> Vec<String> {
    let topics = [
        ["socket", "connect", "host", "port", "timeout"],
        ["chart", "axis", "render", "pixel", "legend"],
        ["parse", "token", "grammar", "syntax", "lexer"],
        ["cache", "evict", "entry", "expire", "memory"],
    ];
    (0..n)
        .map(|i| {
            let t = &topics[i % 4];
            format!(
                "fn {}_{i}() {{ {} {} {} }}",
                t[i % 5],
                t[(i + 1) % 5],
                t[(i + 2) % 5],
                t[(i + 3) % 5]
            )
        })
        .collect()
}
