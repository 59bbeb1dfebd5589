//! What a file refers to: its imports, and every identifier it uses (calls
//! apart), each attached to the innermost definition it occurs in. One
//! generic walk over the syntax tree, driven by tables of node kinds, serves
//! all languages; the graph modality resolves the names to definitions.

use crate::symbol::Symbol;
pub use maguyva_core::{Import, Occurrence};
use maguyva_core::{ImportKind, Language};

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;
use tree_sitter::Node;

/// Nodes that call something; their callee is found by these fields.
const CALL_KINDS: &[&str] = &[
    "call",
    "call_expression",
    "method_invocation",
    "invocation_expression",
    "function_call",
    "function_call_expression",
    "member_call_expression",
    "scoped_call_expression",
    "nullsafe_member_call_expression",
    "new_expression",
    "object_creation_expression",
    "macro_invocation",
    "command",
    "apply",
    "instance_creation_expression",
    "constructor_invocation",
];
const CALLEE_FIELDS: &[&str] =
    &["function", "method", "name", "target", "constructor", "macro", "type"];

/// Leaves that name something.
const IDENTIFIER_KINDS: &[&str] = &[
    "identifier",
    "type_identifier",
    "field_identifier",
    "property_identifier",
    "simple_identifier",
    "constant",
    "name",
    "variable",
    "constructor",
    "namespace_identifier",
    "alias",
    "private_property_identifier",
    "shorthand_property_identifier",
    "package_identifier",
];

/// Names that never refer to a definition of the project.
const IGNORED: &[&str] = &[
    "self",
    "this",
    "super",
    "Self",
    "cls",
    "true",
    "false",
    "nil",
    "null",
    "None",
    "True",
    "False",
    "undefined",
    "it",
    "new",
    "def",
    "defp",
    "defmodule",
    "defmacro",
    "do",
    "end",
];

/// Most occurrences kept per file, so that a generated file cannot blow up
/// the index.
const MAX_PER_FILE: usize = 20_000;

/// Most paths one grouped import expands to.
const MAX_GROUP_PATHS: usize = 256;

/// The paths a grouped import names, each on its own: `crate::a::{B,
/// c::{D, E as F}, self}` is `crate::a::B`, `crate::a::c::D`,
/// `crate::a::c::E` and `crate::a` (Rust); `a.b.{C, D => E}` (Scala) and
/// `A\B\{C, D}` (PHP) likewise. Text without a group is returned as is.
pub fn expand_import_groups(raw: &str) -> Vec<String> {
    let mut out = Vec::new();
    expand_into(raw.trim().trim_end_matches(';').trim(), &mut out);
    out
}

fn expand_into(text: &str, out: &mut Vec<String>) {
    if out.len() >= MAX_GROUP_PATHS {
        return;
    }
    let group =
        ["::{", ".{", "\\{"].iter().filter_map(|sep| text.find(sep).map(|i| (i, *sep))).min();
    let Some((at, sep)) = group else {
        out.push(text.to_string());
        return;
    };
    let head = &text[..at];
    let joiner = &sep[..sep.len() - 1];
    let open = at + sep.len();
    let mut depth = 1usize;
    let mut end = text.len();
    for (i, c) in text[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    end = open + i;
                    break;
                }
            }
            _ => {}
        }
    }
    let body = &text[open..end];
    let mut items = Vec::new();
    let (mut level, mut start) = (0usize, 0usize);
    for (i, c) in body.char_indices() {
        match c {
            '{' => level += 1,
            '}' => level = level.saturating_sub(1),
            ',' if level == 0 => {
                items.push(&body[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&body[start..]);
    for item in items {
        let item = item.trim();
        let item = item.split(" as ").next().unwrap_or(item);
        let item = item.split("=>").next().unwrap_or(item).trim();
        match item {
            "" => {}
            "self" | "*" | "_" | "given" => out.push(head.to_string()),
            _ => expand_into(&format!("{head}{joiner}{item}"), out),
        }
    }
}

/// Cleans a captured import text into a path.
pub fn import_path(raw: &str, capture: ImportKind) -> Option<(String, ImportKind)> {
    let mut t = raw.trim();
    let mut kind = capture;
    if t.starts_with('<') && t.ends_with('>') {
        return Some((t[1..t.len() - 1].trim().to_string(), ImportKind::System));
    }
    if let Some(inner) = t.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        t = inner;
        if capture == ImportKind::Module && raw.trim().starts_with('"') && t.ends_with(".h")
            || t.ends_with(".hpp")
        {
            kind = ImportKind::Relative;
        }
    }
    t = t.trim_matches(|c| c == '\'' || c == '"' || c == '`').trim();
    for keyword in ["import ", "static ", "using ", "global ", "use ", "require ", "include "] {
        if let Some(rest) = t.strip_prefix(keyword) {
            t = rest.trim();
        }
    }
    let t = t.trim_end_matches(';').trim();
    // Item lists and wildcards name items, not modules.
    let t = t.split("::{").next().unwrap_or(t);
    let t = t.split(".{").next().unwrap_or(t);
    let t = t.trim_end_matches("::*").trim_end_matches(".*").trim_end_matches("._");
    let t = t.split(" as ").next().unwrap_or(t).split_whitespace().next().unwrap_or("");
    if t.is_empty() {
        return None;
    }
    Some((t.to_string(), kind))
}

/// The node kinds and fields of the tables above, as one grammar numbers
/// them: the walk then tests a node with two array lookups, not strings.
#[derive(Debug)]
struct KindTable {
    call: Vec<bool>,
    identifier: Vec<bool>,
    word: Vec<bool>,
    token_tree: Vec<bool>,
    callee_fields: Vec<u16>,
}

impl KindTable {
    fn new(language: Language) -> KindTable {
        let Some(grammar) = crate::grammar::grammar(language) else {
            return KindTable {
                call: Vec::new(),
                identifier: Vec::new(),
                word: Vec::new(),
                token_tree: Vec::new(),
                callee_fields: Vec::new(),
            };
        };
        let n = grammar.node_kind_count();
        let mut t = KindTable {
            call: vec![false; n],
            identifier: vec![false; n],
            word: vec![false; n],
            token_tree: vec![false; n],
            callee_fields: Vec::new(),
        };
        for id in 0..n as u16 {
            let Some(kind) = grammar.node_kind_for_id(id) else { continue };
            let i = id as usize;
            t.call[i] = CALL_KINDS.contains(&kind);
            t.identifier[i] = IDENTIFIER_KINDS.contains(&kind);
            t.word[i] = kind == "word";
            t.token_tree[i] = kind == "token_tree";
        }
        t.callee_fields = CALLEE_FIELDS
            .iter()
            .filter_map(|f| grammar.field_id_for_name(f))
            .map(|f| f.get())
            .collect();
        t
    }

    fn of(language: Language) -> &'static KindTable {
        static TABLES: [OnceLock<KindTable>; Language::ALL.len()] =
            [const { OnceLock::new() }; Language::ALL.len()];
        let i = Language::ALL.iter().position(|&l| l == language).unwrap_or(0);
        TABLES[i].get_or_init(|| KindTable::new(language))
    }

    fn is(&self, table: &[bool], node: Node) -> bool {
        table.get(node.kind_id() as usize).copied().unwrap_or(false)
    }

    fn callee<'a>(&self, call: Node<'a>) -> Option<Node<'a>> {
        self.callee_fields
            .iter()
            .find_map(|&f| {
                std::num::NonZeroU16::new(f).and_then(|f| call.child_by_field_id(f.get()))
            })
            .or_else(|| call.named_child(0))
    }

    /// The name a call calls: the last identifier of its callee.
    fn callee_name<'a>(&self, call: Node<'a>) -> Option<Node<'a>> {
        let mut callee = self.callee(call)?;
        // A callee that is itself a call (curried application) calls its own callee.
        for _ in 0..8 {
            if self.is(&self.call, callee) {
                callee = self.callee(callee)?;
            } else {
                break;
            }
        }
        self.rightmost_name(callee)
    }

    fn rightmost_name<'a>(&self, node: Node<'a>) -> Option<Node<'a>> {
        let count = node.named_child_count();
        if count == 0 {
            return (self.is(&self.identifier, node) || self.is(&self.word, node)).then_some(node);
        }
        (0..count as u32)
            .rev()
            .find_map(|i| node.named_child(i).and_then(|c| self.rightmost_name(c)))
    }
}

fn clean(name: &str) -> Option<&str> {
    let n = name.rsplit('.').next().unwrap_or(name).trim_start_matches(['$', '@', ':']);
    let ok = n.chars().count() >= 2
        && n.chars().any(char::is_alphabetic)
        && n.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '?' || c == '!' || c == '-')
        && !IGNORED.contains(&n);
    ok.then_some(n)
}

/// A use of a name, before it is attached to a definition.
#[derive(Debug, Clone, Copy)]
struct Use<'s> {
    /// The name, cleaned, borrowed from the source.
    name: &'s str,
    /// The line of the name, and of the node that holds it (a call's
    /// callee may sit lines below the call).
    leaf_line: u32,
    node_line: u32,
    call: bool,
}

/// Collects the names a file uses while its syntax tree is walked once, in
/// document order (the walk is shared with the definitions' query).
pub(crate) struct NameWalk<'s> {
    kinds: &'static KindTable,
    source: &'s str,
    uses: Vec<Use<'s>>,
    callee_leaves: HashSet<usize>,
    /// Whether each node on the path from the root is a macro token tree;
    /// asking a node for its parent walks down from the root, so the walk
    /// keeps what it needs itself.
    in_token_tree: Vec<bool>,
}

impl<'s> NameWalk<'s> {
    /// A walk over a tree of `language` parsed from `source`.
    pub(crate) fn new(language: Language, source: &'s str) -> NameWalk<'s> {
        NameWalk {
            kinds: KindTable::of(language),
            source,
            uses: Vec::new(),
            callee_leaves: HashSet::new(),
            in_token_tree: Vec::new(),
        }
    }

    /// Visits a node, before its children.
    pub(crate) fn visit(&mut self, node: Node) {
        let kinds = self.kinds;
        let mut found: Option<(Node, bool)> = None;
        if kinds.is(&kinds.call, node) {
            if let Some(leaf) = kinds.callee_name(node) {
                self.callee_leaves.insert(leaf.start_byte());
                found = Some((leaf, true));
            }
        } else if kinds.is(&kinds.identifier, node)
            && node.named_child_count() == 0
            && !self.callee_leaves.contains(&node.start_byte())
        {
            // Inside a macro's unparsed token tree, `name(...)` is a call.
            let call = self.in_token_tree.last().copied().unwrap_or(false)
                && node.next_sibling().is_some_and(|n| {
                    kinds.is(&kinds.token_tree, n)
                        && self.source.as_bytes().get(n.start_byte()) == Some(&b'(')
                });
            found = Some((node, call));
        }
        if let Some((leaf, call)) = found
            && let Some(name) = self.source.get(leaf.byte_range()).and_then(clean)
        {
            self.uses.push(Use {
                name,
                leaf_line: leaf.start_position().row as u32 + 1,
                node_line: node.start_position().row as u32 + 1,
                call,
            });
        }
    }

    /// The walk goes down into `node`'s children.
    pub(crate) fn enter(&mut self, node: Node) {
        self.in_token_tree.push(self.kinds.is(&self.kinds.token_tree, node));
    }

    /// The walk comes back up from a node's children.
    pub(crate) fn leave(&mut self) {
        self.in_token_tree.pop();
    }

    /// Every use of a name, attached to its innermost definition among
    /// `symbols`; the names of the definitions themselves do not count.
    pub(crate) fn finish(self, symbols: &[Symbol]) -> Vec<Occurrence> {
        let defined: HashSet<(u32, &str)> =
            symbols.iter().map(|s| (s.name_line, s.name.as_str())).collect();
        // Definitions by start line, to find the innermost one around a line.
        let mut order: Vec<u32> = (0..symbols.len() as u32).collect();
        order.sort_by_key(|&i| {
            (symbols[i as usize].lines.start(), std::cmp::Reverse(symbols[i as usize].lines.end()))
        });
        let mut next_symbol = 0;
        let mut open: Vec<u32> = Vec::new();
        let mut out: Vec<Occurrence> = Vec::new();
        // Names borrowed from the source, so that lookups never allocate.
        let mut index: HashMap<(Option<u32>, &str, bool), usize> = HashMap::new();
        for u in self.uses {
            let name = u.name;
            if defined.contains(&(u.leaf_line, name)) || out.len() >= MAX_PER_FILE {
                continue;
            }
            while let Some(&i) = order.get(next_symbol) {
                if symbols[i as usize].lines.start() > u.leaf_line.max(u.node_line) {
                    break;
                }
                open.push(i);
                next_symbol += 1;
            }
            open.retain(|&i| symbols[i as usize].lines.contains(u.leaf_line));
            let enclosing = open.last().copied();
            match index.get(&(enclosing, name, u.call)) {
                Some(&k) => out[k].count += 1,
                None => {
                    index.insert((enclosing, name, u.call), out.len());
                    out.push(Occurrence {
                        name: name.to_string(),
                        line: u.leaf_line,
                        call: u.call,
                        enclosing,
                        count: 1,
                    });
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouped_imports_expand() {
        assert_eq!(
            expand_import_groups("crate::a::{B, c::{D, E as F}, self};"),
            vec!["crate::a::B", "crate::a::c::D", "crate::a::c::E", "crate::a"]
        );
        assert_eq!(
            expand_import_groups("std::thread::{self, JoinHandle}"),
            vec!["std::thread", "std::thread::JoinHandle"]
        );
        assert_eq!(expand_import_groups("a.b.{C, D => E}"), vec!["a.b.C", "a.b.D"]);
        assert_eq!(expand_import_groups("A\\B\\{C, D}"), vec!["A\\B\\C", "A\\B\\D"]);
        assert_eq!(expand_import_groups("os.path"), vec!["os.path"]);
        assert_eq!(expand_import_groups("a::{b, c"), vec!["a::b", "a::c"]);
    }

    #[test]
    fn import_paths_are_cleaned() {
        let m = ImportKind::Module;
        assert_eq!(import_path("\"./x\"", m), Some(("./x".into(), m)));
        assert_eq!(import_path("<stdio.h>", m), Some(("stdio.h".into(), ImportKind::System)));
        assert_eq!(import_path("\"cart.h\"", m), Some(("cart.h".into(), ImportKind::Relative)));
        assert_eq!(import_path("super::cart::{Cart, Item}", m), Some(("super::cart".into(), m)));
        assert_eq!(import_path("import cats.data._", m), Some(("cats.data".into(), m)));
        assert_eq!(import_path("static com.acme.Util.*", m), Some(("com.acme.Util".into(), m)));
        assert_eq!(
            import_path("crate::pricing::total_with_tax", m),
            Some(("crate::pricing::total_with_tax".into(), m))
        );
        assert_eq!(import_path("  ", m), None);
    }
}
