//! Source rewrites before parsing, for syntax the grammars do not know.
//! Every byte keeps its offset and every line its number, so spans found in
//! the rewritten text are spans of the original.
//!
//! - Rust items written inside a macro invocation (`cfg_rt! { pub fn
//!   spawn() {} }`, `cfg_if! { ... }`) are one opaque token tree to the
//!   parser. Where such an invocation sits alone at item level and its body
//!   starts with an item, its `name! {` and closing `}` are blanked, so the
//!   items inside are parsed as the items they are.
//! - Kotlin 2 guard conditions in `when` branches (`is Foo if ready ->`)
//!   are not in the Kotlin grammar, and one of them makes the parser lose
//!   every class of the file. The guard (` if ready`) is blanked: the
//!   branch keeps its pattern, and the names in the guard are lost.

use maguyva_core::{Language, Region, lex};

/// Words an item can start with.
const ITEM_STARTS: &[&str] = &[
    "pub",
    "fn",
    "struct",
    "enum",
    "trait",
    "impl",
    "mod",
    "use",
    "type",
    "const",
    "static",
    "async",
    "unsafe",
    "extern",
    "#[",
    "#!",
    "///",
    "//!",
    "macro_rules!",
];

/// The name of a macro invocation opening on this line (`cfg_rt! {`,
/// `pub(crate) my_macro!{`), when that is all the line holds.
fn opening(line: &str) -> Option<&str> {
    let t = line.trim();
    let body = t.strip_suffix('{')?.trim_end();
    let name = body.strip_suffix('!')?.trim_end();
    let ok = !name.is_empty()
        && name != "macro_rules"
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':');
    ok.then_some(name)
}

/// The text with item-level macro invocations unwrapped, or None when it
/// has none.
pub(crate) fn unwrap_item_macros(text: &str) -> Option<String> {
    if !text.contains("! {") && !text.contains("!{") {
        return None;
    }
    let lexed = lex(Language::Rust, text);
    let mut bytes = text.as_bytes().to_vec();
    let mut changed = false;
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let starts: Vec<usize> = lines
        .iter()
        .scan(0usize, |at, l| {
            let s = *at;
            *at += l.len();
            Some(s)
        })
        .collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let start = starts[i];
        let indent = line.len() - line.trim_start().len();
        if lexed.region_at(start + indent) != Region::Code || opening(line).is_none() {
            i += 1;
            continue;
        }
        // The first line of the body must start an item.
        let body_starts_item =
            lines[i + 1..].iter().map(|l| l.trim()).find(|l| !l.is_empty()).is_some_and(|l| {
                ITEM_STARTS.iter().any(|k| l.starts_with(k)) || opening(l).is_some()
            });
        let Some(open) = line.rfind('{').map(|o| start + o) else {
            i += 1;
            continue;
        };
        if !body_starts_item {
            i += 1;
            continue;
        }
        // The matching brace, counting only braces in code.
        let mut depth = 0usize;
        let mut close = None;
        for (at, b) in text.bytes().enumerate().skip(open) {
            if b != b'{' && b != b'}' || lexed.region_at(at) != Region::Code {
                continue;
            }
            if b == b'{' {
                depth += 1;
            } else {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    close = Some(at);
                    break;
                }
            }
        }
        let Some(close) = close else { break };
        // Blank `name! {` and the closing brace (with a `;` after it).
        for b in &mut bytes[start + indent..=open] {
            *b = b' ';
        }
        bytes[close] = b' ';
        if bytes.get(close + 1) == Some(&b';') {
            bytes[close + 1] = b' ';
        }
        changed = true;
        // Nested invocations inside are handled as the scan goes on.
        i += 1;
    }
    if !changed {
        return None;
    }
    String::from_utf8(bytes).ok()
}

/// The text with Kotlin `when` guard conditions blanked, or None when it
/// has none. A guard is ` if ...` after an `is`/`!is` pattern at the start
/// of a line, up to the branch's `->` (on a later line too, when the
/// guard's parentheses span lines), all in code; newlines are kept.
pub(crate) fn blank_kotlin_guards(text: &str) -> Option<String> {
    if !text.contains(" if ") {
        return None;
    }
    let lexed = lex(Language::Kotlin, text);
    let b = text.as_bytes();
    let mut bytes = b.to_vec();
    let mut changed = false;
    let mut start = 0usize;
    for line in text.split_inclusive('\n') {
        let t = line.trim_start();
        let at = start + (line.len() - t.len());
        start += line.len();
        if !(t.starts_with("is ") || t.starts_with("!is ")) {
            continue;
        }
        let Some(guard) = t.find(" if ").map(|g| at + g) else { continue };
        if lexed.region_at(guard + 1) != Region::Code {
            continue;
        }
        // The branch's arrow: the first `->` in code at parenthesis depth 0.
        let mut depth = 0i32;
        let mut arrow = None;
        let mut j = guard;
        while j + 1 < b.len() && j < guard + 4096 {
            if lexed.region_at(j) == Region::Code {
                match b[j] {
                    b'(' | b'[' => depth += 1,
                    b')' | b']' => depth -= 1,
                    b'{' | b'}' if depth == 0 => break,
                    b'-' if depth == 0 && b[j + 1] == b'>' => {
                        arrow = Some(j);
                        break;
                    }
                    _ => {}
                }
            }
            j += 1;
        }
        let Some(arrow) = arrow else { continue };
        for x in &mut bytes[guard..arrow] {
            if *x != b'\n' {
                *x = b' ';
            }
        }
        changed = true;
    }
    if !changed {
        return None;
    }
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_inside_item_macros_are_unwrapped_in_place() {
        let src = "cfg_rt! {\n    /// Spawns.\n    pub fn spawn() {\n        let s = \"}\";\n    }\n}\n\nfn after() {}\n";
        let out = unwrap_item_macros(src).unwrap();
        assert_eq!(out.len(), src.len());
        assert_eq!(out.lines().count(), src.lines().count());
        assert!(!out.contains("cfg_rt!"));
        assert!(out.contains("    pub fn spawn() {\n        let s = \"}\";\n    }\n"));
        assert!(out.contains("fn after() {}"));
        // The closing brace of the macro is gone, the function's is not.
        assert_eq!(out.matches('}').count(), src.matches('}').count() - 1);
    }

    #[test]
    fn other_macros_stay() {
        assert_eq!(unwrap_item_macros("macro_rules! m {\n    () => {};\n}\n"), None);
        assert_eq!(unwrap_item_macros("fn f() {\n    vec! {\n        1\n    };\n}\n"), None);
        assert_eq!(unwrap_item_macros("fn f() {}\n"), None);
        // An invocation never closed is left alone.
        assert_eq!(unwrap_item_macros("cfg_rt! {\n    pub fn spawn() {}\n"), None);
    }

    #[test]
    fn kotlin_guards_are_blanked_in_place() {
        let src =
            "when (e) {\n    is Op<*> if e.json -> 1\n    !is Lit if ok() -> 2\n    else -> 3\n}\n";
        let out = blank_kotlin_guards(src).unwrap();
        assert_eq!(out.len(), src.len());
        let expected =
            src.replace(" if e.json ", &" ".repeat(11)).replace(" if ok() ", &" ".repeat(9));
        assert_eq!(out, expected);
        // A guard whose parentheses span lines.
        let src = "when (e) {\n    is A if (\n        e.ok\n    ) ->\n        1\n}\n";
        let out = blank_kotlin_guards(src).unwrap();
        assert_eq!(out, "when (e) {\n    is A     \n            \n      ->\n        1\n}\n");
        // Not a guard: an `if` after the arrow, or in a string.
        assert_eq!(blank_kotlin_guards("when (x) {\n    is A -> if (b) 1 else 2\n}\n"), None);
        assert_eq!(blank_kotlin_guards("val s = \"is a if b -> c\"\n"), None);
    }

    #[test]
    fn nested_invocations_unwrap_too() {
        let src = "cfg_a! {\n    cfg_b! {\n        pub struct JoinHandle;\n    }\n}\n";
        let out = unwrap_item_macros(src).unwrap();
        assert_eq!(out.trim(), "pub struct JoinHandle;");
    }
}
