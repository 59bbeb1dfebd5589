//! Intent classification and weighted Reciprocal Rank Fusion. Filled in by the
//! fusion work.
#![deny(missing_docs)]
