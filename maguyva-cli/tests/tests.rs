//! End-to-end tests: they run the real `maguyva` binary on small fixture
//! repositories written for the purpose (`tests/fixtures/<language>/`).

// Helpers: temporary copies of fixtures and running the binary.
mod util;

// Searching the fixtures: literals, keywords, regexes, output formats.
mod search;

// Intent classification, presets, the direct and fused paths, --explain.
mod fusion;

// Building, refreshing and reusing indexes.
mod index;

// Callers, callees and impact over the dependency graph.
mod graph;

// References, impact and definitions per import system.
mod dependencies;

// Bad input: empty, binary, unreadable, huge or non-UTF-8 files, symlink
// loops, malformed queries, damaged indexes, concurrent runs.
mod bad_input;

// Evaluation on a benchmark of the fixtures, named rankings, and tuning.
mod eval;

// A modality registered besides the built-in four (`maguyva-paths`) in
// search, explain, ablation, tuning and verify.
mod modalities;

// Bug reports: read from a file or standard input, the report route, its
// size limit, in several languages.
mod reports;

// The MCP server, driven by a real MCP client over stdio.
mod mcp;

// Help, man page and completions made from the argument definitions.
mod cli;

// Honest answers: every result shows evidence, and nonsense finds nothing.
mod honest;

// The history modality (`maguyva-history`): past commits like a query, in a
// git work tree, for search and the report route.
mod history;
