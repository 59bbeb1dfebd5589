//! Integration tests of the semantic modality.
