//! Prints the named nodes of a file's syntax tree, with field names, line
//! numbers and leaf text: the view needed to write `queries/<language>.scm`.
//!
//!     cargo run -p maguyva-ast --example syntax_tree -- rust src/lib.rs

use maguyva_core::Language;
use std::error::Error;
use tree_sitter::{Parser, TreeCursor};

fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(lang), Some(path)) = (args.next(), args.next()) else {
        return Err(
            "usage: syntax_tree LANGUAGE FILE (LANGUAGE as in queries/, e.g. rust, tsx)".into()
        );
    };
    let language = Language::ALL
        .into_iter()
        .find(|l| l.name() == lang)
        .ok_or_else(|| format!("unknown language {lang:?}"))?;
    let text = std::fs::read_to_string(&path)?;
    let mut parser = Parser::new();
    let grammar = maguyva_ast::grammar(language)
        .ok_or_else(|| format!("this build has no {lang} grammar"))?;
    parser.set_language(&grammar)?;
    let tree = parser.parse(&text, None).ok_or("the parser gave no tree")?;
    print_node(&mut tree.walk(), &text, 0);
    Ok(())
}

fn print_node(cursor: &mut TreeCursor, text: &str, depth: usize) {
    let node = cursor.node();
    if node.is_named() {
        let field = cursor.field_name().map(|f| format!("{f}: ")).unwrap_or_default();
        let leaf = if node.child_count() == 0 {
            let t: String = text.get(node.byte_range()).unwrap_or("").chars().take(40).collect();
            format!(" {:?}", t)
        } else {
            String::new()
        };
        println!(
            "{}{field}{} [{}]{leaf}",
            "  ".repeat(depth),
            node.kind(),
            node.start_position().row + 1
        );
    }
    if cursor.goto_first_child() {
        loop {
            print_node(cursor, text, depth + 1);
            if !cursor.goto_next_sibling() {
                break;
            }
        }
        cursor.goto_parent();
    }
}
