//! Integration tests of the structural modality on fixture projects
//! (`tests/fixtures/<language>/`), one per supported language.

// Definition search: each fixture's symbols are found first, at their line.
mod definitions;
