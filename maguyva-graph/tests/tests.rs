//! Integration tests of the graph modality on a small hand-built corpus.

// Resolution, callers, impact and related code.
mod graph;
