//! The semantic modality: pluggable embedders, packed binary vectors and
//! Hamming search. Filled in by the semantic-modality work.
#![deny(missing_docs)]
