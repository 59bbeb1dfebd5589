//! Parsing one file and extracting its definitions with the language's query.

use crate::error::{Error, Result};
use crate::grammar::grammar;
use crate::occurrence::{Import, NameWalk, Occurrence, expand_import_groups, import_path};
use crate::symbol::{Symbol, SymbolKind};
use crate::table::doc_summary;
use maguyva_core::{FileId, ImportKind, Language, LineSpan};
use std::cell::RefCell;
use std::ops::ControlFlow;
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use streaming_iterator::StreamingIterator;
use tree_sitter::{Node, Parser, Query, QueryCursor, QueryMatch};

/// A parse that takes longer than this is abandoned and the file keeps line
/// windows; only pathological inputs come near it.
pub const PARSE_BUDGET: Duration = Duration::from_secs(2);

/// Doc comments longer than this many lines are cut.
const MAX_DOC_LINES: usize = 30;

/// Signatures are cut at this many characters.
const MAX_SIGNATURE_CHARS: usize = 240;

/// The extraction query of a language, as shipped in `queries/`.
pub fn query_source(language: Language) -> &'static str {
    match language {
        Language::Bash => include_str!("../queries/bash.scm"),
        Language::C => include_str!("../queries/c.scm"),
        Language::Cpp => include_str!("../queries/cpp.scm"),
        Language::CSharp => include_str!("../queries/csharp.scm"),
        Language::Elixir => include_str!("../queries/elixir.scm"),
        Language::Go => include_str!("../queries/go.scm"),
        Language::Haskell => include_str!("../queries/haskell.scm"),
        Language::Java => include_str!("../queries/java.scm"),
        Language::JavaScript => include_str!("../queries/javascript.scm"),
        Language::Kotlin => include_str!("../queries/kotlin.scm"),
        Language::Lua => include_str!("../queries/lua.scm"),
        Language::Php => include_str!("../queries/php.scm"),
        Language::Python => include_str!("../queries/python.scm"),
        Language::Ruby => include_str!("../queries/ruby.scm"),
        Language::Rust => include_str!("../queries/rust.scm"),
        Language::Scala => include_str!("../queries/scala.scm"),
        Language::Swift => include_str!("../queries/swift.scm"),
        Language::TypeScript | Language::Tsx => include_str!("../queries/typescript.scm"),
        Language::Zig => include_str!("../queries/zig.scm"),
    }
}

/// The separator of qualified names in a language.
pub fn separator(language: Language) -> &'static str {
    match language {
        Language::Rust | Language::Cpp | Language::Ruby | Language::Php => "::",
        _ => ".",
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Definition(SymbolKind),
    Scope,
    Name,
    Declarator,
    Container,
    Doc,
    Import(ImportKind),
    ImportName,
    Other,
}

struct CompiledQuery {
    query: Query,
    roles: Vec<Role>,
    /// By node kind id: whether a pattern starts at a node of that kind.
    /// `None` when some pattern has no single root kind (a wildcard, a
    /// sibling sequence): the query then walks the whole tree itself.
    roots: Option<Vec<bool>>,
}

fn compile(language: Language) -> std::result::Result<CompiledQuery, String> {
    let grammar =
        grammar(language).ok_or_else(|| format!("the {language} grammar is not in this build"))?;
    let query = Query::new(&grammar, query_source(language)).map_err(|e| e.to_string())?;
    let roles = query
        .capture_names()
        .iter()
        .map(|name| match *name {
            "scope" => Role::Scope,
            "name" => Role::Name,
            "declarator" => Role::Declarator,
            "container" => Role::Container,
            "doc" => Role::Doc,
            "import" => Role::Import(ImportKind::Module),
            "import.relative" => Role::Import(ImportKind::Relative),
            "import.module" => Role::Import(ImportKind::ModDecl),
            "import.name" => Role::ImportName,
            other => other
                .strip_prefix("definition.")
                .and_then(SymbolKind::from_capture)
                .map_or(Role::Other, Role::Definition),
        })
        .collect();
    let roots = (0..query.pattern_count())
        .map(|i| query_source(language).get(query.start_byte_for_pattern(i)..).and_then(root_kinds))
        .collect::<Option<Vec<Vec<&str>>>>()
        .and_then(|kinds| {
            let mut roots = vec![false; grammar.node_kind_count()];
            for kind in kinds.iter().flatten() {
                let id = grammar.id_for_node_kind(kind, true) as usize;
                *roots.get_mut(id).filter(|_| id != 0)? = true;
            }
            Some(roots)
        });
    Ok(CompiledQuery { query, roles, roots })
}

/// The node kinds a pattern can start at, read from its source: `(kind ...)`
/// or an alternation, `([(a) (b)] ...)` or `[(a ...) (b ...)]`. `None` for
/// any other shape, which then falls back to the whole-tree query walk.
fn root_kinds(pattern: &str) -> Option<Vec<&str>> {
    let t = pattern.trim_start();
    let alternation =
        t.strip_prefix('[').or_else(|| t.strip_prefix('(')?.trim_start().strip_prefix('['));
    match alternation {
        Some(branches) => branch_kinds(branches),
        None => node_kind(t).map(|(kind, _)| vec![kind]),
    }
}

/// `(kind ...`: the kind, and the text after it.
fn node_kind(t: &str) -> Option<(&str, &str)> {
    let t = t.trim_start().strip_prefix('(')?.trim_start();
    let end = t.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))?;
    (end > 0 && &t[..end] != "_").then(|| (&t[..end], &t[end..]))
}

/// The kind of each branch of an alternation, from after its `[` to `]`.
fn branch_kinds(mut t: &str) -> Option<Vec<&str>> {
    let mut kinds = Vec::new();
    loop {
        t = t.trim_start();
        if t.starts_with(']') {
            return (!kinds.is_empty()).then_some(kinds);
        }
        let (kind, mut rest) = node_kind(t)?;
        kinds.push(kind);
        // Past the branch's closing parenthesis.
        let mut depth = 1usize;
        while depth > 0 {
            let i = rest.find(['(', ')'])?;
            depth = if rest.as_bytes()[i] == b'(' { depth + 1 } else { depth - 1 };
            rest = &rest[i + 1..];
        }
        t = rest;
    }
}

fn compiled(language: Language) -> Result<&'static CompiledQuery> {
    // Compiling a query against a large grammar takes tens of milliseconds,
    // so each language's is compiled on first use only.
    type Slot = OnceLock<std::result::Result<CompiledQuery, String>>;
    static QUERIES: [Slot; Language::ALL.len()] = [const { OnceLock::new() }; Language::ALL.len()];
    let i = Language::ALL.iter().position(|&l| l == language).unwrap_or(0);
    match QUERIES[i].get_or_init(|| compile(language)) {
        Ok(q) => Ok(q),
        Err(e) => Err(Error::Query { language, message: e.clone() }),
    }
}

/// Compiles the queries of `languages` ahead of parsing, in parallel: the
/// first file of a language otherwise compiles its query (up to 50 ms for
/// the largest grammars) while other threads wait for it.
pub fn prepare(languages: &[Language]) {
    use rayon::prelude::*;
    languages.par_iter().for_each(|&l| {
        // A query that does not compile is reported by the parse that needs it.
        let _ = compiled(l);
    });
}

/// Compiles the queries of `languages` one after another on the calling
/// thread, not on the thread pool: for a thread of its own that compiles
/// queries ahead of need while the pool does other work.
pub fn prepare_serially(languages: &[Language]) {
    for &l in languages {
        // A query that does not compile is reported by the parse that needs it.
        let _ = compiled(l);
    }
}

/// Checks that every language's query compiles against its grammar (every
/// language whose grammar is in this build).
pub fn check_queries() -> Result<()> {
    for language in Language::ALL.into_iter().filter(|&l| grammar(l).is_some()) {
        compiled(language)?;
    }
    Ok(())
}

/// A definition or scope of one file, before symbols are numbered.
#[derive(Debug, Clone)]
struct Node0 {
    kind: Option<SymbolKind>,
    start_byte: usize,
    end_byte: usize,
    lines: LineSpan,
    name_line: u32,
    full_name: String,
    container: Option<String>,
    doc: Option<String>,
    pattern: usize,
}

/// A span of a file's syntax outline: a definition or a scope, for chunking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OutlineItem {
    /// The definition, extended upward over its doc comment.
    pub lines: LineSpan,
    /// The line of its name (the signature line).
    pub header: u32,
}

/// The definitions and outline of one file.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FileOutline {
    /// Definitions in source order; `container` indexes this list.
    pub symbols: Vec<Symbol>,
    /// Definitions and scopes in source order, for syntax-aware fragments.
    pub items: Vec<OutlineItem>,
    /// What the file imports.
    pub imports: Vec<Import>,
    /// The names the file uses, by enclosing definition.
    pub occurrences: Vec<Occurrence>,
    /// Why the file has no outline (a parse that failed or ran out of time).
    pub failure: Option<String>,
}

thread_local! {
    static PARSER: RefCell<Parser> = RefCell::new(Parser::new());
}

/// Parses `text` as `language` and extracts its definitions.
pub fn outline(language: Language, text: &str, file: FileId) -> FileOutline {
    match try_outline(language, text, file) {
        Ok(o) => o,
        Err(e) => FileOutline { failure: Some(e.to_string()), ..FileOutline::default() },
    }
}

fn try_outline(language: Language, text: &str, file: FileId) -> Result<FileOutline> {
    outline_with(compiled(language)?, language, text, file)
}

fn outline_with(
    compiled: &CompiledQuery,
    language: Language,
    text: &str,
    file: FileId,
) -> Result<FileOutline> {
    // A byte-order mark is not code; blank it without moving any offset.
    let mut source: std::borrow::Cow<str> = match text.strip_prefix('\u{FEFF}') {
        Some(rest) => format!("   {rest}").into(),
        None => text.into(),
    };
    // Items inside item-level macro invocations (`cfg_rt! { ... }`), in
    // place: offsets and lines do not move.
    if language == Language::Rust
        && let Some(unwrapped) = crate::rewrite::unwrap_item_macros(&source)
    {
        source = unwrapped.into();
    }
    // Kotlin 2 `when` guards, which the grammar does not know.
    if language == Language::Kotlin
        && let Some(blanked) = crate::rewrite::blank_kotlin_guards(&source)
    {
        source = blanked.into();
    }
    let bytes = source.as_bytes();
    let tree = PARSER.with(|p| {
        let mut parser = p.borrow_mut();
        let grammar = grammar(language)
            .ok_or_else(|| Error::Parse(format!("the {language} grammar is not in this build")))?;
        parser.set_language(&grammar).map_err(|e| Error::Parse(e.to_string()))?;
        let deadline = Instant::now() + PARSE_BUDGET;
        let mut progress = |_: &tree_sitter::ParseState| {
            if Instant::now() > deadline {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        };
        let options = tree_sitter::ParseOptions::new().progress_callback(&mut progress);
        let tree = parser.parse_with_options(
            &mut |i, _| bytes.get(i..).unwrap_or(&[]),
            None,
            Some(options),
        );
        parser.reset();
        tree.ok_or_else(|| Error::Parse(format!("parsing took longer than {PARSE_BUDGET:?}")))
    })?;

    let (mut nodes, imports, names) = walk(language, compiled, tree.root_node(), &source);
    nodes.sort_by(|a, b| {
        a.start_byte
            .cmp(&b.start_byte)
            .then(b.end_byte.cmp(&a.end_byte))
            .then(a.pattern.cmp(&b.pattern))
    });
    // The same node matched by several patterns: the first pattern wins.
    nodes.dedup_by(|b, a| {
        a.start_byte == b.start_byte && a.end_byte == b.end_byte && a.full_name == b.full_name
    });
    let mut outline = build(language, merge_clauses(nodes), text, file);
    outline.occurrences = names.finish(&outline.symbols);
    outline.imports = imports;
    Ok(outline)
}

/// Walks the tree once: the names it uses are collected on the way, and
/// where a node is of a kind some pattern starts at, the query runs on that
/// node alone. Running the query cursor over the whole tree as well would
/// walk every node twice; this way the query only looks at candidates.
fn walk<'s>(
    language: Language,
    compiled: &CompiledQuery,
    root: Node,
    source: &'s str,
) -> (Vec<Node0>, Vec<Import>, NameWalk<'s>) {
    let mut names = NameWalk::new(language, source);
    let mut nodes = Vec::new();
    let mut imports = Vec::new();
    let mut query = QueryCursor::new();
    match &compiled.roots {
        Some(_) => {
            query.set_max_start_depth(Some(0));
        }
        None => {
            let mut matches = query.matches(&compiled.query, root, source.as_bytes());
            while let Some(m) = matches.next() {
                take_match(compiled, m, source, &mut nodes, &mut imports);
            }
        }
    }
    let roots = compiled.roots.as_deref().unwrap_or(&[]);
    let mut cursor = root.walk();
    let mut descend = true;
    loop {
        let node = cursor.node();
        if descend {
            if roots.get(node.kind_id() as usize).copied().unwrap_or(false) {
                let mut matches = query.matches(&compiled.query, node, source.as_bytes());
                while let Some(m) = matches.next() {
                    take_match(compiled, m, source, &mut nodes, &mut imports);
                }
            }
            names.visit(node);
        }
        if descend && cursor.goto_first_child() {
            names.enter(node);
            continue;
        }
        if cursor.goto_next_sibling() {
            descend = true;
            continue;
        }
        if !cursor.goto_parent() {
            break;
        }
        names.leave();
        descend = false;
    }
    (nodes, imports, names)
}

/// Records one match of the query: a definition or scope, or an import.
fn take_match(
    compiled: &CompiledQuery,
    m: &QueryMatch,
    source: &str,
    out: &mut Vec<Node0>,
    imports: &mut Vec<Import>,
) {
    let mut import: Option<(Node, ImportKind)> = None;
    let mut import_name = None;
    let mut def: Option<(Option<SymbolKind>, Node)> = None;
    let mut name: Option<Node> = None;
    let mut container = None;
    let mut doc = None;
    for c in m.captures() {
        match compiled.roles.get(c.index as usize).copied().unwrap_or(Role::Other) {
            Role::Definition(k) => def = Some((Some(k), c.node)),
            Role::Scope => def = Some((None, c.node)),
            Role::Name => name = Some(c.node),
            Role::Declarator => name = declared_function(c.node),
            Role::Container => container = source.get(c.node.byte_range()).map(str::to_string),
            Role::Doc => doc = source.get(c.node.byte_range()).map(clean_docstring),
            Role::Import(kind) => import = Some((c.node, kind)),
            Role::ImportName => import_name = source.get(c.node.byte_range()).map(str::to_string),
            Role::Other => {}
        }
    }
    if let Some((node, kind)) = import {
        let Some(raw) = source.get(node.byte_range()) else { return };
        for one in expand_import_groups(raw) {
            if let Some((path, kind)) = import_path(&one, kind) {
                imports.push(Import {
                    path,
                    name: import_name.clone(),
                    kind,
                    line: node.start_position().row as u32 + 1,
                });
            }
        }
        return;
    }
    let (Some((kind, node)), Some(name)) = (def, name) else { return };
    if node.kind() == "export_specifier" && !exports_from_elsewhere(node) {
        return;
    }
    let name = name_node(name);
    let Some(full_name) = source.get(name.byte_range()).map(clean_name) else { return };
    if full_name.is_empty() {
        return;
    }
    out.push(Node0 {
        kind,
        start_byte: node.start_byte(),
        end_byte: node.end_byte(),
        lines: LineSpan::new(
            node.start_position().row as u32 + 1,
            node.end_position().row as u32 + 1,
        ),
        name_line: name.start_position().row as u32 + 1,
        full_name,
        container,
        doc,
        pattern: m.pattern_index,
    });
}

/// Whether an `export_specifier` is in a statement that re-exports from
/// another module (`export { x } from "m"`), not one naming local items.
fn exports_from_elsewhere(specifier: Node) -> bool {
    specifier
        .parent()
        .and_then(|clause| clause.parent())
        .is_some_and(|statement| statement.child_by_field_name("source").is_some())
}

/// The node that holds a definition's name. Queries capture the head of a
/// definition cheaply (a wildcard compiles far faster than a list of node
/// kinds); a call head (`def f(x)`) or a guard (`def f(x) when ...`) holds
/// its name further down.
fn name_node(mut node: Node) -> Node {
    for _ in 0..4 {
        let next = match node.kind() {
            "call" => node.child_by_field_name("target"),
            "binary_operator" => node.child_by_field_name("left"),
            _ => None,
        };
        match next {
            Some(n) => node = n,
            None => break,
        }
    }
    node
}

/// The name a C++ function definition's declarator declares: `f` in
/// `f()`, `*f()` and `&f()`; `None` for any other declarator. One query
/// pattern capturing the declarator and this walk compile in half the time
/// of a pattern per shape (tens of milliseconds, paid by every process that
/// parses C++).
fn declared_function(declarator: Node) -> Option<Node> {
    let function = match declarator.kind() {
        "function_declarator" => declarator,
        "pointer_declarator" => declarator
            .child_by_field_name("declarator")
            .filter(|d| d.kind() == "function_declarator")?,
        "reference_declarator" => {
            let mut cursor = declarator.walk();
            let mut children = declarator.named_children(&mut cursor);
            children.find(|d| d.kind() == "function_declarator")?
        }
        _ => return None,
    };
    function.child_by_field_name("declarator").filter(Node::is_named)
}

/// A name's text without generic arguments or whitespace: `Matrix<T>` is
/// `Matrix`, `Monad[F]` is `Monad`, `&'a Foo` is `Foo`.
fn clean_name(raw: &str) -> String {
    let t = raw.trim().trim_start_matches(['&', '*']).trim_start_matches("mut ").trim();
    let t = match t.find(['<', '[', '(']) {
        Some(i) if i > 0 => &t[..i],
        _ => t,
    };
    t.split_whitespace().collect::<Vec<_>>().join("")
}

/// Joins consecutive definitions of one callable into one: a Haskell type
/// signature and its equations, the clauses of an Elixir function.
fn merge_clauses(nodes: Vec<Node0>) -> Vec<Node0> {
    let mut out: Vec<Node0> = Vec::with_capacity(nodes.len());
    for n in nodes {
        if let Some(prev) = out.last_mut()
            && n.kind.is_some_and(SymbolKind::is_callable)
            && prev.kind == n.kind
            && prev.full_name == n.full_name
            && n.start_byte >= prev.end_byte
            && n.lines.start() <= prev.lines.end() + 2
        {
            prev.end_byte = n.end_byte;
            prev.lines = LineSpan::new(prev.lines.start(), n.lines.end());
            continue;
        }
        out.push(n);
    }
    out
}

/// Splits `Ecto.Changeset` or `Foo::bar` into the last segment and the whole.
fn last_segment(full: &str) -> &str {
    let after_colons = full.rsplit("::").next().unwrap_or(full);
    let is_path = full.contains('.')
        && full
            .split('.')
            .all(|s| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_'));
    if is_path { after_colons.rsplit('.').next().unwrap_or(after_colons) } else { after_colons }
}

fn build(language: Language, nodes: Vec<Node0>, text: &str, file: FileId) -> FileOutline {
    let sep = separator(language);
    let lines: Vec<&str> = text.lines().collect();
    let mut symbols: Vec<Symbol> = Vec::new();
    // Symbols whose innermost container is a scope (an impl, an extension),
    // with the scope's name: linked to the type of that name afterwards.
    let mut in_scope: Vec<(usize, String)> = Vec::new();
    let mut items = Vec::with_capacity(nodes.len());
    // Open nodes: (end byte, qualified name, symbol index if a symbol, kind).
    let mut stack: Vec<(usize, String, Option<u32>, Option<SymbolKind>)> = Vec::new();
    for n in nodes {
        while stack.last().is_some_and(|top| top.0 <= n.start_byte) {
            stack.pop();
        }
        let parent = stack.last();
        let prefix = match (&n.container, parent) {
            (Some(c), _) => Some(c.clone()),
            (None, Some(p)) => Some(p.1.clone()),
            (None, None) => None,
        };
        let qualified = match prefix {
            Some(p) if !p.is_empty() => format!("{p}{sep}{}", n.full_name),
            _ => n.full_name.clone(),
        };
        let doc_start = doc_start_line(&lines, n.lines.start());
        // A re-export is one line among imports, not a unit of code.
        if n.kind != Some(SymbolKind::Reexport) {
            items.push(OutlineItem {
                lines: LineSpan::new(doc_start, n.lines.end()),
                header: n.name_line,
            });
        }
        let mut symbol_index = None;
        if let Some(mut kind) = n.kind {
            let in_type = n.container.is_some() && language == Language::Go
                || parent.is_some_and(|p| p.3.is_none_or(SymbolKind::is_type));
            if kind == SymbolKind::Function && in_type {
                kind = SymbolKind::Method;
            }
            let signature = lines
                .get(n.name_line as usize - 1)
                .map(|l| l.trim().chars().take(MAX_SIGNATURE_CHARS).collect())
                .unwrap_or_default();
            // Only the summary is used, so only the summary is kept (and
            // cached with the outline).
            let doc =
                n.doc.clone().unwrap_or_else(|| comment_block(&lines, doc_start, n.lines.start()));
            let doc = match doc_summary(&doc).len() {
                end if end < doc.len() => doc[..end].to_string(),
                _ => doc,
            };
            if let Some(p) = parent.filter(|p| p.3.is_none()) {
                in_scope.push((symbols.len(), last_segment(&p.1).to_string()));
            }
            symbol_index = Some(symbols.len() as u32);
            symbols.push(Symbol {
                name: last_segment(&n.full_name).to_string(),
                qualified_name: qualified.clone(),
                kind,
                file,
                lines: n.lines,
                name_line: n.name_line,
                signature,
                doc,
                container: stack.iter().rev().find_map(|s| s.2),
            });
        }
        // A re-export holds nothing: the names of one grouped `pub use`
        // share its span and must not nest in each other.
        if n.kind != Some(SymbolKind::Reexport) {
            stack.push((n.end_byte, qualified, symbol_index, n.kind));
        }
    }
    for (i, scope) in in_scope {
        if symbols[i].container.is_none() {
            symbols[i].container =
                symbols.iter().position(|s| s.kind.is_type() && s.name == scope).map(|p| p as u32);
        }
    }
    FileOutline { symbols, items, imports: Vec::new(), occurrences: Vec::new(), failure: None }
}

fn is_comment(line: &str) -> bool {
    let t = line.trim_start();
    ["///", "//", "#", "--", "/*", "*", ";;", "%", "(*"].iter().any(|p| t.starts_with(p))
        && !t.starts_with("#[")
        && !t.starts_with("#include")
        && !t.starts_with("#define")
}

fn is_annotation(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("#[")
        || (t.starts_with('@') && !t.starts_with("@doc") && !t.starts_with("@moduledoc"))
        || t.starts_with("[") && t.ends_with(']')
}

/// The first line of the comment block (and attributes) right above `start`.
fn doc_start_line(lines: &[&str], start: u32) -> u32 {
    let mut first = start;
    let mut i = start as usize - 1; // 0-based index of the definition's first line
    let mut taken = 0;
    while i > 0 && taken < MAX_DOC_LINES {
        let line = lines.get(i - 1).copied().unwrap_or("");
        let t = line.trim_start();
        if is_comment(line) || is_annotation(line) || t.starts_with("@doc") {
            first = i as u32;
            i -= 1;
            taken += 1;
        } else {
            break;
        }
    }
    first
}

/// The comment lines in `from..start`, markers removed.
fn comment_block(lines: &[&str], from: u32, start: u32) -> String {
    let mut out = Vec::new();
    for l in (from..start).filter_map(|n| lines.get(n as usize - 1)) {
        if is_annotation(l) {
            continue;
        }
        let t = l
            .trim()
            .trim_start_matches(['/', '*', '#', '-', ';', '%', '(', '!'])
            .trim_end_matches("*/")
            .trim();
        let t = t.strip_prefix("@doc").map(str::trim).unwrap_or(t).trim_matches('"').trim();
        if !t.is_empty() {
            out.push(t);
        }
    }
    out.join(" ")
}

fn clean_docstring(raw: &str) -> String {
    let t = raw.trim().trim_start_matches(['r', 'u', 'b', 'R', 'U', 'B']);
    let t = t.trim_matches('"').trim_matches('\'');
    t.split_whitespace().take(200).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(language: Language, text: &str) -> Vec<(String, SymbolKind, String)> {
        let o = outline(language, text, FileId(0));
        assert!(o.failure.is_none(), "{:?}", o.failure);
        o.symbols.into_iter().map(|s| (s.name, s.kind, s.qualified_name)).collect()
    }

    #[test]
    fn every_query_compiles() {
        check_queries().unwrap();
    }

    #[test]
    fn pattern_roots() {
        assert_eq!(root_kinds("(class name: (_) @name) @definition.class"), Some(vec!["class"]));
        assert_eq!(
            root_kinds("([(require_expression) (include_expression)]\n  (string) @import)"),
            Some(vec!["require_expression", "include_expression"])
        );
        assert_eq!(
            root_kinds("[(call (x)) (method_call (y (z)))] @a"),
            Some(vec!["call", "method_call"])
        );
        assert_eq!(root_kinds("(_ name: (identifier) @name)"), None);
        assert_eq!(root_kinds("((comment) @doc . (function_item))"), None);
        assert_eq!(root_kinds("\"fn\" @keyword"), None);
        // Every shipped query takes the single walk.
        for language in Language::ALL {
            assert!(compiled(language).unwrap().roots.is_some(), "{language:?}");
        }
    }

    #[test]
    fn the_single_walk_finds_what_the_whole_tree_query_finds() {
        // Every fixture, outlined with the query run node by node during the
        // names' walk and with the query's own walk over the whole tree.
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut checked = 0;
        for dir in std::fs::read_dir(root).unwrap() {
            let mut stack = vec![dir.unwrap().path()];
            while let Some(path) = stack.pop() {
                if path.is_dir() {
                    stack.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                let Some(language) = Language::detect(&name, &text) else { continue };
                let whole_tree = CompiledQuery { roots: None, ..compile(language).unwrap() };
                let a = outline_with(compiled(language).unwrap(), language, &text, FileId(0));
                let b = outline_with(&whole_tree, language, &text, FileId(0));
                let (a, b) = (a.unwrap(), b.unwrap());
                assert!(!a.symbols.is_empty(), "{}", path.display());
                assert_eq!(
                    format!("{:?}", a.symbols),
                    format!("{:?}", b.symbols),
                    "{}",
                    path.display()
                );
                assert_eq!(a.items, b.items);
                assert_eq!(a.imports, b.imports, "{}", path.display());
                assert_eq!(a.occurrences, b.occurrences);
                checked += 1;
            }
        }
        assert!(checked >= 20, "{checked} fixture files");
    }

    #[test]
    fn cpp_functions_are_named_through_their_declarators() {
        let src = "int plain() { return 0; }\nchar *pointer() { return 0; }\nint &reference() { return x; }\nWidget &Widget::operator=(const Widget &o) { return *this; }\nint x = plain();\n";
        let o = outline(Language::Cpp, src, FileId(0));
        let got: Vec<(&str, SymbolKind, u32)> =
            o.symbols.iter().map(|s| (s.name.as_str(), s.kind, s.lines.start())).collect();
        assert_eq!(
            got,
            vec![
                ("plain", SymbolKind::Function, 1),
                ("pointer", SymbolKind::Function, 2),
                ("reference", SymbolKind::Function, 3),
                ("operator=", SymbolKind::Function, 4),
            ]
        );
    }

    #[test]
    fn python_methods_docs_and_constants() {
        let src = "TAX = 1\n\nclass Cart:\n    \"\"\"Holds items.\"\"\"\n    def add(self):\n        pass\n\n# Helper.\ndef helper():\n    pass\n";
        let o = outline(Language::Python, src, FileId(3));
        let got: Vec<(&str, SymbolKind, &str)> = o
            .symbols
            .iter()
            .map(|s| (s.name.as_str(), s.kind, s.qualified_name.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("TAX", SymbolKind::Constant, "TAX"),
                ("Cart", SymbolKind::Class, "Cart"),
                ("add", SymbolKind::Method, "Cart.add"),
                ("helper", SymbolKind::Function, "helper"),
            ]
        );
        assert_eq!(o.symbols[1].doc, "Holds items.");
        assert_eq!(o.symbols[3].doc, "Helper.");
        assert_eq!(o.symbols[3].signature, "def helper():");
        assert_eq!(o.symbols[2].container, Some(1));
        assert_eq!(o.symbols[2].lines, LineSpan::new(5, 6));
        assert_eq!(o.items[3].lines, LineSpan::new(8, 10), "the outline item takes the comment");
    }

    #[test]
    fn rust_impl_scopes_qualify_methods() {
        let src = "pub struct Cart;\nimpl Cart {\n    pub fn add(&mut self) {}\n}\nmod inner {\n    fn f() {}\n}\n";
        assert_eq!(
            names(Language::Rust, src),
            vec![
                ("Cart".into(), SymbolKind::Struct, "Cart".into()),
                ("add".into(), SymbolKind::Method, "Cart::add".into()),
                ("inner".into(), SymbolKind::Module, "inner".into()),
                ("f".into(), SymbolKind::Function, "inner::f".into()),
            ]
        );
    }

    #[test]
    fn dotted_and_scoped_names_keep_their_last_segment() {
        let ex =
            names(Language::Elixir, "defmodule Ecto.Changeset do\n  def cast(a), do: a\nend\n");
        assert_eq!(ex[0], ("Changeset".into(), SymbolKind::Module, "Ecto.Changeset".into()));
        assert_eq!(ex[1], ("cast".into(), SymbolKind::Function, "Ecto.Changeset.cast".into()));
        let rb = names(
            Language::Ruby,
            "module Rack\n  class Utils::Inner\n    def x; end\n  end\nend\n",
        );
        assert_eq!(rb[1], ("Inner".into(), SymbolKind::Class, "Rack::Utils::Inner".into()));
        assert_eq!(rb[2], ("x".into(), SymbolKind::Method, "Rack::Utils::Inner::x".into()));
    }

    #[test]
    fn go_receivers_name_the_container() {
        let src = "package shop\n\ntype Cart struct{}\n\nfunc (c *Cart) Add() {}\n";
        let got = names(Language::Go, src);
        assert_eq!(got[1], ("Add".into(), SymbolKind::Method, "Cart.Add".into()));
    }

    #[test]
    fn clauses_of_one_function_merge() {
        let hs = outline(
            Language::Haskell,
            "module M where\nf :: Int -> Int\nf 0 = 1\nf n = n\ng = 2\n",
            FileId(0),
        );
        let got: Vec<(&str, LineSpan)> =
            hs.symbols.iter().map(|s| (s.name.as_str(), s.lines)).collect();
        assert_eq!(got, vec![("f", LineSpan::new(2, 4)), ("g", LineSpan::new(5, 5))]);
        let ex = outline(
            Language::Elixir,
            "defmodule M do\n  def h(0), do: 1\n  def h(n), do: n\nend\n",
            FileId(0),
        );
        assert_eq!(ex.symbols.len(), 2);
        assert_eq!(ex.symbols[1].lines, LineSpan::new(2, 3));
    }

    #[test]
    fn reexports_are_recorded() {
        let got = names(
            Language::Rust,
            "pub use core::response::{IntoResponse, Parts as P};\nuse std::fmt;\n",
        );
        let kinds: Vec<(&str, SymbolKind)> = got.iter().map(|(n, k, _)| (n.as_str(), *k)).collect();
        assert_eq!(
            kinds,
            vec![("IntoResponse", SymbolKind::Reexport), ("P", SymbolKind::Reexport)]
        );
        // The names of one grouped `pub use` do not nest in each other.
        assert_eq!(got[1].2, "P");
        // Items inside an item-level macro invocation are definitions.
        let got = names(
            Language::Rust,
            "cfg_rt! {\n    pub struct JoinHandle;\n\n    pub fn spawn() {}\n}\n",
        );
        let found: Vec<&str> = got.iter().map(|(n, _, _)| n.as_str()).collect();
        assert_eq!(found, vec!["JoinHandle", "spawn"]);
        // A Kotlin 2 `when` guard does not hide the file's classes.
        let got = names(
            Language::Kotlin,
            "class A {\n    fun f(e: Any) = when (e) {\n        is String if e.isEmpty() -> 1\n        else -> 2\n    }\n}\n\nclass B\n",
        );
        let found: Vec<&str> = got.iter().map(|(n, _, _)| n.as_str()).collect();
        assert_eq!(found, vec!["A", "f", "B"]);
        let ts = names(
            Language::TypeScript,
            "export { createRouter, type AnyRouter } from './router';\n",
        );
        assert_eq!(ts.len(), 2);
        assert!(ts.iter().all(|(_, k, _)| *k == SymbolKind::Reexport));
        // Exporting local names defines nothing; an alias from elsewhere does.
        let js = names(
            Language::JavaScript,
            "const a = 1;\nexport { a, a as b };\nexport { c as d } from './c';\n",
        );
        let found: Vec<(&str, SymbolKind)> = js.iter().map(|(n, k, _)| (n.as_str(), *k)).collect();
        assert_eq!(found, vec![("a", SymbolKind::Constant), ("d", SymbolKind::Reexport)]);
        // A long list (generated index files have hundreds) yields each name.
        let list: Vec<String> = (0..400).map(|i| format!("Name{i}")).collect();
        let long = names(
            Language::TypeScript,
            &format!("export type {{ {} }} from './types';\n", list.join(", ")),
        );
        assert_eq!(long.len(), 400);
    }

    #[test]
    fn a_byte_order_mark_does_not_break_parsing() {
        let got = names(Language::CSharp, "\u{FEFF}namespace A\n{\n    class B {}\n}\n");
        assert_eq!(got[1], ("B".into(), SymbolKind::Class, "A.B".into()));
    }
}
