//! Rust items written inside a macro invocation (`cfg_rt! { pub fn
//! spawn() {} }`, `cfg_if! { ... }`) are one opaque token tree to the
//! parser. Where such an invocation sits alone at item level and its body
//! starts with an item, its `name! {` and closing `}` are blanked before
//! parsing, so the items inside are parsed as the items they are. Every
//! byte keeps its offset and every line its number.

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
    fn nested_invocations_unwrap_too() {
        let src = "cfg_a! {\n    cfg_b! {\n        pub struct JoinHandle;\n    }\n}\n";
        let out = unwrap_item_macros(src).unwrap();
        assert_eq!(out.trim(), "pub struct JoinHandle;");
    }
}
