//! Links the `maguyva` binary as a position-dependent executable.
//!
//! Why: a PIE build carries about 37,000 relative relocations (the
//! tree-sitter grammars' tables are full of pointers), which the loader
//! applies on every start, copying each touched page. A search is a short
//! process, so that was a quarter of a whole-process literal search
//! (8 ms of which 2 went to relocation on commons-lang); without PIE the
//! pages are mapped from the file as they are.
fn main() {
    // Other platforms' linkers spell it differently, or not at all.
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if os == "linux" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
