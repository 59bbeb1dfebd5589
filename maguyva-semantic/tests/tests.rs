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
