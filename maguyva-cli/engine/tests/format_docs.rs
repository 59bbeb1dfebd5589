//! Each index file's format document states the version the code writes:
//! a format change that forgets its document fails here.

use maguyva_core::store::FormatVersion;

/// The documents, by the kind their header names, with the constant of the
/// code that writes that kind.
fn documented() -> Vec<(&'static str, &'static str, FormatVersion)> {
    vec![
        (
            "manifest.md",
            include_str!("../../../doc/format/manifest.md"),
            maguyva_core::MANIFEST_FORMAT,
        ),
        (
            "content-and-fragments.md",
            include_str!("../../../doc/format/content-and-fragments.md"),
            maguyva_engine::FRAGMENTS_FORMAT,
        ),
        (
            "outlines.md",
            include_str!("../../../doc/format/outlines.md"),
            maguyva_engine::OUTLINES_FORMAT,
        ),
        ("text.md", include_str!("../../../doc/format/text.md"), maguyva_trigram::TEXT_FORMAT),
        ("symbols.md", include_str!("../../../doc/format/symbols.md"), maguyva_ast::SYMBOLS_FORMAT),
        ("graph.md", include_str!("../../../doc/format/graph.md"), maguyva_graph::GRAPH_FORMAT),
        (
            "semantic.md",
            include_str!("../../../doc/format/semantic.md"),
            maguyva_semantic::SEMANTIC_FORMAT,
        ),
    ]
}

#[test]
fn each_format_document_states_the_version_the_code_writes() {
    for (name, text, format) in documented() {
        let kind = String::from_utf8_lossy(&format.kind).into_owned();
        let header = format!("Kind `{kind}`. Version {}.", format.current);
        assert!(text.contains(&header), "doc/format/{name} should say \"{header}\"");
        // Its changelog reaches the current version too.
        let entry = format!("v{}", format.current);
        let listed = text.match_indices(&entry).any(|(at, _)| {
            text[at + entry.len()..].starts_with(char::is_whitespace)
                && text[..at].ends_with(char::is_whitespace)
        });
        assert!(listed, "doc/format/{name}'s changelog lacks {entry}");
    }
}
