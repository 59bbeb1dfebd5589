//! `maguyva mcp`: the engine as a Model Context Protocol server over stdio.
//! The index is opened once and kept warm. A file watcher sees the tree
//! change; after a short quiet spell the index is refreshed in the
//! background, parsing only what changed, while calls go on answering from
//! the last good index (and say that a refresh is under way). Where no
//! watcher can be had, each call checks the indexed files first instead.

use crate::engine::{
    self, BuildOptions, Index, IndexSettings, SearchRequest, SearchResponse, SearchResult,
    build_index_with, open_fresh,
};
use maguyva_core::{IgnoreRules, IndexDir, MatchMode, Modality, NoProgress};
use maguyva_fusion::{Intent, Preset};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ErrorData, ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// Reads every modality of a newly opened index, so that answers never
/// wait on a first read nor depend on the index folder staying in place; a
/// modality that cannot be read is said in the log, and every query that
/// needs it says so too.
fn warm(index: &Index) {
    if let Err(e) = index.warm() {
        eprintln!("maguyva: {}", error_text(&e));
    }
}

/// What an agent is told of the server when it connects.
const INSTRUCTIONS: &str = "Code search over one repository. Use `locate` with a whole bug report or issue to find the files to change; \
`search` for any question in plain words (how something works, where something is handled); `find_definition` when you \
know a name and want where it is defined; `find_references` for every place that calls or \
mentions a name; `impact` before changing something, to see what depends on it; \
`find_similar` with a piece of code to find code like it; `read` to expand a result into the \
lines around it. Give `max_tokens` to keep an answer within your context.";

/// Results a tool returns unless told otherwise.
const DEFAULT_K: usize = 10;

/// Tokens a `search` answer takes at most unless told otherwise: ten
/// results cut to their best lines fit well within it.
const DEFAULT_SEARCH_TOKENS: usize = 2_000;

/// The most pieces of one file `search` shows.
const MAX_PER_FILE: usize = 10;

/// Lines `read` returns when no end is given.
const DEFAULT_READ_LINES: u32 = 200;

/// How long the tree must stay quiet after a change before the index is
/// refreshed: an editor's save, a formatter or a checkout writes several
/// files in a burst, and one refresh should take them all.
const QUIET: Duration = Duration::from_millis(100);

/// How long after a failed refresh it is tried again; each failure after
/// doubles the wait, up to [`RETRY_MOST`].
const RETRY_FIRST: Duration = Duration::from_secs(1);
const RETRY_MOST: Duration = Duration::from_secs(60);

/// The server: one repository, its index, and its settings.
#[derive(Clone)]
pub struct McpServer {
    state: Arc<State>,
    tool_router: ToolRouter<McpServer>,
}

/// What every call and the watcher's thread share.
struct State {
    root: PathBuf,
    dir: IndexDir,
    settings: IndexSettings,
    index: Mutex<Arc<Index>>,
    /// A refresh is under way; calls answer from the index before it.
    refreshing: AtomicBool,
    /// Held by the one refresh under way, so that a second waits for it
    /// instead of repeating its work.
    refresh_lock: Mutex<()>,
    /// The watcher, while it runs; without one, calls check the tree.
    watcher: Mutex<Option<notify::RecommendedWatcher>>,
    /// Why the last refresh failed, while no refresh has succeeded since:
    /// the index answers as it was, every answer says so, and the
    /// refresh is tried again.
    failure: Mutex<Option<String>>,
}

/// `search`'s arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct SearchParams {
    /// The question or text to look for, in plain words; a "double-quoted" query is an exact
    /// string.
    pub query: String,
    /// How many results, and how many tokens they may take.
    #[serde(flatten)]
    pub size: AnswerSize,
    /// How much work to do: quick (meaning only), default, thorough (all four retrievers).
    pub preset: Option<String>,
    /// Force the intent instead of classifying the query: find_definition, find_references,
    /// understand_code, find_similar, impact_analysis or exact_match.
    pub intent: Option<String>,
    /// Run only these retrievers (semantic, text, structural, graph); several are fused.
    pub modalities: Option<Vec<String>>,
    /// Show up to this many pieces of each file: after the one it ranked by, its other
    /// fragments holding at least half of the question's words. Default 1.
    pub per_file: Option<usize>,
}

/// `locate`'s arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct LocateParams {
    /// The bug report or issue, whole: title, description, traceback, code that fails,
    /// expected and actual output (up to 65,536 characters).
    pub report: String,
    /// How many files, and how many tokens they may take.
    #[serde(flatten)]
    pub size: AnswerSize,
}

/// How large an answer may be: arguments every searching tool takes.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct AnswerSize {
    /// How many results (one per file). Default 10.
    pub k: Option<usize>,
    /// Keep only the results that fit in this many tokens, best first.
    pub max_tokens: Option<usize>,
}

/// Arguments naming one identifier.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct NameParams {
    /// The name of a function, type, constant or module, as written in the code.
    pub name: String,
    /// How many results, and how many tokens they may take.
    #[serde(flatten)]
    pub size: AnswerSize,
}

/// `impact`'s arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ImpactParams {
    /// A definition's name, a file path, a folder or a module.
    pub target: String,
    /// How many steps of dependents to follow. Default 3.
    pub depth: Option<u32>,
    /// How many results, and how many tokens they may take.
    #[serde(flatten)]
    pub size: AnswerSize,
}

/// `find_similar`'s arguments: a piece of code, or a span of a file.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct SimilarParams {
    /// The code to find code like.
    pub code: Option<String>,
    /// Or a file (relative to the repository) whose lines to use.
    pub path: Option<String>,
    /// The span's first line (1-based). Default 1.
    pub start_line: Option<u32>,
    /// The span's last line (inclusive). Default: 50 lines on.
    pub end_line: Option<u32>,
    /// How many results, and how many tokens they may take.
    #[serde(flatten)]
    pub size: AnswerSize,
}

/// `read`'s arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ReadParams {
    /// A file, relative to the repository.
    pub path: String,
    /// The first line (1-based). Default 1.
    pub start_line: Option<u32>,
    /// The last line (inclusive). Default: 200 lines on.
    pub end_line: Option<u32>,
}

/// A search tool's structured answer: the engine's response, whether a
/// refresh was under way when it was given, and whether the index could
/// not be refreshed (`stale`, with the reason).
#[derive(Serialize)]
struct Answer<'a> {
    #[serde(flatten)]
    response: &'a SearchResponse,
    refreshing: bool,
    stale: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stale_reason: Option<String>,
}

/// What `read` returns.
#[derive(Debug, Serialize)]
struct ReadAnswer {
    path: String,
    start_line: u32,
    end_line: u32,
    total_lines: u32,
    text: String,
}

/// What `index_status` returns.
#[derive(Debug, Serialize)]
struct Status {
    root: String,
    index: String,
    files: usize,
    fragments: usize,
    skipped: usize,
    built_unix_ms: u64,
    current: bool,
    refreshing: bool,
    stale: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stale_reason: Option<String>,
    watching: bool,
}

impl McpServer {
    /// A server for the repository at `root`, its index in `dir`, opened
    /// (or built) now, and kept fresh by a watcher of the tree.
    pub fn open(
        root: &Path,
        dir: IndexDir,
        settings: IndexSettings,
    ) -> maguyva_core::Result<McpServer> {
        let root = maguyva_core::canonical_root(root)?;
        let (index, _) = open_fresh(&root, &dir, &settings, &NoProgress)?;
        warm(&index);
        let state = Arc::new(State {
            root,
            dir,
            settings,
            index: Mutex::new(Arc::new(index)),
            refreshing: AtomicBool::new(false),
            refresh_lock: Mutex::new(()),
            watcher: Mutex::new(None),
            failure: Mutex::new(None),
        });
        if let Err(e) = watch(&state) {
            eprintln!("maguyva: no file watcher ({e}); each call checks the files first");
        }
        Ok(McpServer { state, tool_router: McpServer::tool_router() })
    }

    /// The index to answer from: the current one, or, without a watcher,
    /// the index refreshed first when the tree changed (the current one
    /// when that refresh fails: the failure is kept, and said).
    fn current(&self) -> Arc<Index> {
        let s = &self.state;
        let index = s.index();
        if s.is_watching()
            || engine::is_current(&s.root, &index, &s.settings, &s.dir).unwrap_or(false)
        {
            return index;
        }
        s.refresh().unwrap_or(index)
    }

    /// Runs `request`, and says whether the answer is from an index a
    /// refresh is about to replace. With a watcher, a file found changed
    /// behind the index's back is left out of the answer while the
    /// watcher's refresh runs (started now if the watcher has not seen the
    /// change yet); without one the index is refreshed first. An index
    /// that could not be refreshed answers without the files that changed.
    fn answer(&self, request: &SearchRequest) -> Result<(SearchResponse, bool), String> {
        let index = self.current();
        let failed = self.state.failure().is_some();
        if self.state.is_watching() || failed {
            let response = index.search_as_indexed(request).map_err(|e| error_text(&e))?;
            let stale = !response.changed.is_empty();
            if stale && self.state.is_watching() {
                let state = Arc::clone(&self.state);
                std::thread::spawn(move || state.reread_unless_running());
            }
            return Ok((response, stale || self.state.refreshing.load(Ordering::Relaxed)));
        }
        match index.search(request) {
            Err(maguyva_core::Error::Changed { .. }) => match self.state.reread() {
                Ok(fresh) => Ok((fresh.search(request).map_err(|e| error_text(&e))?, false)),
                Err(_) => {
                    Ok((index.search_as_indexed(request).map_err(|e| error_text(&e))?, false))
                }
            },
            other => other.map(|r| (r, false)).map_err(|e| error_text(&e)),
        }
    }

    fn respond(&self, request: SearchRequest) -> Result<CallToolResult, ErrorData> {
        Ok(match self.answer(&request) {
            Ok((response, refreshing)) => {
                let mut text = render(&response);
                if refreshing {
                    text.push_str("(the index is being refreshed; this answer is from before)\n");
                }
                let stale_reason = self.state.failure();
                if let Some(why) = &stale_reason {
                    let _ = writeln!(
                        text,
                        "(stale: the index could not be refreshed ({why}); this answer is from \
                         the index as it was, without the files changed since; retrying)"
                    );
                }
                let answer = Answer {
                    response: &response,
                    refreshing,
                    stale: stale_reason.is_some(),
                    stale_reason,
                };
                structured(&answer, text)
            }
            Err(e) => CallToolResult::error(vec![ContentBlock::text(e)]),
        })
    }
}

/// An error with its causes, whole.
fn error_text(e: &maguyva_core::Error) -> String {
    maguyva_core::error_chain(e)
}

impl State {
    fn index(&self) -> Arc<Index> {
        match self.index.lock() {
            Ok(slot) => Arc::clone(&slot),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    fn is_watching(&self) -> bool {
        self.watcher.lock().is_ok_and(|w| w.is_some())
    }

    /// Why the last refresh failed, if none has succeeded since.
    fn failure(&self) -> Option<String> {
        self.failure.lock().map_or_else(|p| p.into_inner().clone(), |f| f.clone())
    }

    fn set_failure(&self, failure: Option<String>) {
        match self.failure.lock() {
            Ok(mut slot) => *slot = failure,
            Err(poisoned) => *poisoned.into_inner() = failure,
        }
    }

    /// Refreshes the index when the tree no longer matches it, and returns
    /// the index to answer from. A refresh under way is waited for, and
    /// its index used if it is current.
    fn refresh(&self) -> Result<Arc<Index>, String> {
        let only = self.refresh_lock.lock().unwrap_or_else(|p| p.into_inner());
        self.refresh_holding(only, false)
    }

    /// Refreshes the index after a read found a file other than the index
    /// recorded: when sizes and times show no change, every file is read.
    fn reread(&self) -> Result<Arc<Index>, String> {
        let only = self.refresh_lock.lock().unwrap_or_else(|p| p.into_inner());
        self.refresh_holding(only, true)
    }

    /// [`State::refresh`], or [`State::reread`] when `found_changed`,
    /// holding the refresh lock.
    fn refresh_holding(
        &self,
        _only: MutexGuard<'_, ()>,
        found_changed: bool,
    ) -> Result<Arc<Index>, String> {
        let current = self.index();
        let seen_current =
            engine::is_current(&self.root, &current, &self.settings, &self.dir).unwrap_or(false);
        if seen_current && !found_changed {
            // The tree is back to what the index holds: nothing is stale.
            self.set_failure(None);
            return Ok(current);
        }
        self.refreshing.store(true, Ordering::Relaxed);
        // A change that sizes and times show is refreshed as usual; one they
        // hide, only by reading every file.
        let fresh = match seen_current {
            true => {
                let (root, dir, settings) = (&self.root, &self.dir, &self.settings);
                build_index_with(root, dir, settings, BuildOptions::REREAD, &NoProgress)
                    .map(|(index, _)| index)
            }
            false => open_fresh(&self.root, &self.dir, &self.settings, &NoProgress)
                .map(|(index, _)| index),
        };
        let index = match fresh {
            Ok(index) => {
                warm(&index);
                Arc::new(index)
            }
            Err(e) => {
                let why = error_text(&e);
                eprintln!(
                    "maguyva: the index could not be refreshed: {why}; answering from the \
                     index as it was until a refresh succeeds"
                );
                self.set_failure(Some(why.clone()));
                self.refreshing.store(false, Ordering::Relaxed);
                return Err(format!("refreshing the index: {why}"));
            }
        };
        if self.failure().is_some() {
            eprintln!("maguyva: the index is refreshed again");
            self.set_failure(None);
        }
        if let Ok(mut slot) = self.index.lock() {
            *slot = Arc::clone(&index);
        }
        self.refreshing.store(false, Ordering::Relaxed);
        Ok(index)
    }

    /// [`State::reread`] in the background, unless a refresh is already
    /// under way (the watcher refreshes again after the changes it hears).
    fn reread_unless_running(&self) {
        if let Ok(only) = self.refresh_lock.try_lock() {
            // A failure is kept and said by every answer, and logged whole.
            let _ = self.refresh_holding(only, true);
        }
    }
}

/// Starts the watcher of `state`'s tree and the thread that refreshes the
/// index after each burst of changes.
fn watch(state: &Arc<State>) -> notify::Result<()> {
    use notify::Watcher;
    let (tx, rx) = channel();
    let mut watcher = notify::recommended_watcher(tx)?;
    watcher.watch(&state.root, notify::RecursiveMode::Recursive)?;
    if let Ok(mut slot) = state.watcher.lock() {
        *slot = Some(watcher);
    }
    let index_dir =
        state.dir.path().canonicalize().unwrap_or_else(|_| state.dir.path().to_path_buf());
    let mut tree = WatchedTree { rules: IgnoreRules::new(&state.root), index_dir };
    // The thread holds the state weakly: it ends with the server.
    let weak = Arc::downgrade(state);
    std::thread::Builder::new().name("maguyva-watch".into()).spawn(move || {
        // Bursts that touch only what is not indexed (the index folder, the
        // refreshes' own writes, hidden and ignored files) are let pass.
        // After a failed refresh, it is tried again after a wait that
        // doubles up to a minute, whether or not the tree changes again.
        let mut retry: Option<Duration> = None;
        while let Some(relevant) = next_burst(&rx, &mut tree, retry) {
            let Some(state) = weak.upgrade() else { return };
            if relevant || retry.is_some() {
                retry = match state.refresh() {
                    Ok(_) => None,
                    Err(_) => Some(retry.map_or(RETRY_FIRST, |r| (r * 2).min(RETRY_MOST))),
                };
            }
        }
    })?;
    Ok(())
}

/// What the watcher knows of the tree: which changes can touch the index.
struct WatchedTree {
    rules: IgnoreRules,
    index_dir: PathBuf,
}

impl WatchedTree {
    /// Whether an event may change what is indexed: a write, creation,
    /// removal or rename of a path the walk indexes, or of a file of ignore
    /// rules. Reads are not changes (the server's own reads raise them).
    fn is_relevant(&mut self, event: &notify::Result<notify::Event>) -> bool {
        use notify::EventKind;
        use notify::event::{MetadataKind, ModifyKind};
        let Ok(event) = event else { return true };
        let changes = match event.kind {
            EventKind::Access(_) => false,
            EventKind::Modify(ModifyKind::Metadata(m)) => !matches!(m, MetadataKind::AccessTime),
            _ => true,
        };
        if !changes {
            return false;
        }
        let mut relevant = false;
        for path in event.paths.iter().filter(|p| !p.starts_with(&self.index_dir)) {
            relevant |= self.rules.is_relevant(path);
        }
        relevant
    }
}

/// Waits for a burst of events and its quiet end; `Some(true)` when it
/// touched the indexed tree, `None` when the watcher is gone. With
/// `retry`, waits that long at most: `Some(false)` when nothing came.
fn next_burst(
    rx: &Receiver<notify::Result<notify::Event>>,
    tree: &mut WatchedTree,
    retry: Option<Duration>,
) -> Option<bool> {
    let first = match retry {
        None => rx.recv().ok()?,
        Some(wait) => match rx.recv_timeout(wait) {
            Ok(event) => event,
            Err(RecvTimeoutError::Timeout) => return Some(false),
            Err(RecvTimeoutError::Disconnected) => return None,
        },
    };
    let mut relevant = tree.is_relevant(&first);
    loop {
        match rx.recv_timeout(QUIET) {
            Ok(event) => relevant |= tree.is_relevant(&event),
            Err(RecvTimeoutError::Timeout) => return Some(relevant),
            Err(RecvTimeoutError::Disconnected) => return None,
        }
    }
}

/// A request for `text` of the size asked.
fn request(text: &str, size: &AnswerSize) -> SearchRequest {
    let mut r = SearchRequest::new(text);
    r.limit = size.k.unwrap_or(DEFAULT_K).max(1);
    r.max_tokens = size.max_tokens.map(|n| n.max(1));
    r
}

/// A tool result carrying `value` as structured content and `text` for
/// clients that show text.
fn structured(value: &impl Serialize, text: String) -> CallToolResult {
    match serde_json::to_value(value) {
        Ok(v) => {
            // Not `CallToolResult::structured`, which would also render the
            // value as JSON text only for it to be replaced.
            let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
            result.structured_content = Some(v);
            result
        }
        Err(e) => CallToolResult::error(vec![ContentBlock::text(e.to_string())]),
    }
}

fn tool_error(message: impl Into<String>) -> Result<CallToolResult, ErrorData> {
    Ok(CallToolResult::error(vec![ContentBlock::text(message.into())]))
}

/// The compact text of an answer: one `path:start-end (score)` line per
/// result, then its snippet.
fn render(response: &SearchResponse) -> String {
    let mut out = String::new();
    if response.results.is_empty() {
        out.push_str("nothing found\n");
    }
    for r in &response.results {
        let _ = writeln!(out, "{}:{}-{} ({:.3})", r.path, r.start_line, r.end_line, r.score);
        if !r.ties.is_empty() {
            let ties: Vec<String> = r.ties.iter().map(engine::Tie::to_string).collect();
            let _ = writeln!(out, "  tied by: {}", ties.join("; "));
        }
        write_snippet(&mut out, r);
    }
    if !response.changed.is_empty() {
        let _ = writeln!(out, "(changed since indexed, left out: {})", response.changed.join(", "));
    }
    if let Some(b) = response.budget.filter(|b| b.left_out + b.cut > 0) {
        let _ = writeln!(
            out,
            "({} cut to their best lines and {} left out to stay within {} tokens)",
            b.cut, b.left_out, b.max_tokens
        );
    }
    out
}

fn write_snippet(out: &mut String, r: &SearchResult) {
    for line in r.snippet.lines() {
        let _ = writeln!(out, "  {line}");
    }
}

#[tool_router(router = tool_router)]
impl McpServer {
    /// Search the repository in plain words.
    #[tool(description = "Search the repository for code that answers a question in plain words \
        (\"how are sessions signed\", \"where is the retry policy\"), a name, or a \"quoted\" \
        exact string. Returns each matching file's best lines (about a dozen: the definition \
        asked, or the lines with the question's words), best first, with path, lines, score \
        and the rank each retriever gave it, within 2,000 tokens unless `max_tokens` says \
        otherwise.")]
    async fn search(
        &self,
        Parameters(p): Parameters<SearchParams>,
    ) -> Result<CallToolResult, ErrorData> {
        let mut r = request(&p.query, &p.size);
        r.max_tokens = Some(p.size.max_tokens.unwrap_or(DEFAULT_SEARCH_TOKENS).max(1));
        r.per_file = p.per_file.unwrap_or(1).clamp(1, MAX_PER_FILE);
        if let Some(preset) = &p.preset {
            match preset.parse::<Preset>() {
                Ok(preset) => r.preset = preset,
                Err(e) => return tool_error(e.to_string()),
            }
        }
        if let Some(intent) = &p.intent {
            match intent.parse::<Intent>() {
                Ok(intent) => r.intent = Some(intent),
                Err(e) => return tool_error(e.to_string()),
            }
        }
        if let Some(names) = p.modalities.filter(|m| !m.is_empty()) {
            match names.iter().map(|m| m.parse::<Modality>()).collect::<Result<Vec<_>, _>>() {
                Ok(m) => r.modalities = Some(m),
                Err(e) => return tool_error(e.to_string()),
            }
        }
        self.respond(r)
    }

    /// The files to change for a bug report.
    #[tool(description = "Given a bug report or issue (title, description, traceback, failing \
        code, expected and actual output), find the files to change, most likely first. Each \
        result is shown through the line that ties it to the report (a traceback frame, a file \
        or module the report names, a definition of a name it gives, or its words) and lists \
        those ties. Pass the report whole; give `max_tokens` to bound the answer.")]
    async fn locate(
        &self,
        Parameters(p): Parameters<LocateParams>,
    ) -> Result<CallToolResult, ErrorData> {
        let mut r = request(&p.report, &p.size);
        r.as_report = true;
        self.respond(r)
    }

    /// Where a name is defined.
    #[tool(description = "Find where a function, type, constant or module is defined, given its \
        name as written in the code (\"parseConfig\", \"Cart::total\"). The definition comes \
        first.")]
    async fn find_definition(
        &self,
        Parameters(p): Parameters<NameParams>,
    ) -> Result<CallToolResult, ErrorData> {
        let mut r = request(&p.name, &p.size);
        r.intent = Some(Intent::FindDefinition);
        self.respond(r)
    }

    /// Every place that calls or mentions a name.
    #[tool(description = "Find every file that calls, uses or mentions a name (\"who calls \
        parseConfig\"), surest first, each shown at the line that refers to it.")]
    async fn find_references(
        &self,
        Parameters(p): Parameters<NameParams>,
    ) -> Result<CallToolResult, ErrorData> {
        let mut r = request(&format!("who calls {}", p.name), &p.size);
        r.intent = Some(Intent::FindReferences);
        self.respond(r)
    }

    /// What depends on a definition, file, folder or module.
    #[tool(description = "Before changing something, find what depends on it: the files that \
        import, call or use a definition, file, folder or module, transitively, nearest first.")]
    async fn impact(
        &self,
        Parameters(p): Parameters<ImpactParams>,
    ) -> Result<CallToolResult, ErrorData> {
        let mut r = request(&format!("what breaks if I change {}", p.target), &p.size);
        r.intent = Some(Intent::ImpactAnalysis);
        if let Some(depth) = p.depth {
            r.ranking.graph.impact_depth = depth.clamp(1, 16);
        }
        self.respond(r)
    }

    /// Code like a given piece of code.
    #[tool(description = "Find code similar to a piece of code (give `code`), or to a span of a \
        file in the repository (give `path` and lines).")]
    async fn find_similar(
        &self,
        Parameters(p): Parameters<SimilarParams>,
    ) -> Result<CallToolResult, ErrorData> {
        let code = match (&p.code, &p.path) {
            (Some(code), _) if !code.trim().is_empty() => code.clone(),
            (_, Some(path)) => {
                let start = p.start_line.unwrap_or(1).max(1);
                let end = p.end_line.unwrap_or(start + 49).max(start);
                match read_lines(&self.state.root, path, start, end) {
                    Ok(read) => read.text,
                    Err(e) => return tool_error(e),
                }
            }
            _ => return tool_error("give `code`, or `path` with the lines to compare"),
        };
        let mut r = request(&code, &p.size);
        r.intent = Some(Intent::FindSimilar);
        r.mode = MatchMode::Keyword;
        self.respond(r)
    }

    /// Lines of a file.
    #[tool(description = "Read lines of a file in the repository, to expand a search result into \
        its surroundings. Lines are numbered from 1; at most 200 by default.")]
    async fn read(
        &self,
        Parameters(p): Parameters<ReadParams>,
    ) -> Result<CallToolResult, ErrorData> {
        let start = p.start_line.unwrap_or(1).max(1);
        let end = p.end_line.unwrap_or(start + DEFAULT_READ_LINES - 1).max(start);
        match read_lines(&self.state.root, &p.path, start, end) {
            Ok(read) => {
                let mut text = String::new();
                for (i, line) in read.text.lines().enumerate() {
                    let _ = writeln!(text, "{:>6}  {line}", read.start_line as usize + i);
                }
                Ok(structured(&read, text))
            }
            Err(e) => tool_error(e),
        }
    }

    /// The index: what it holds and whether it is current.
    #[tool(description = "Describe the index: the repository, how many files and fragments it \
        holds, when it was built, and whether it matches the files as they are now.")]
    async fn index_status(&self) -> Result<CallToolResult, ErrorData> {
        let s = &self.state;
        let index = s.index();
        let current = engine::is_current(&s.root, &index, &s.settings, &s.dir);
        let m = &index.manifest;
        let stale_reason = s.failure();
        let status = Status {
            root: m.root.display().to_string(),
            index: s.dir.path().display().to_string(),
            files: m.files.len(),
            fragments: m.fragments,
            skipped: m.skipped.len(),
            built_unix_ms: m.created_unix_ms,
            current: current.unwrap_or(false),
            refreshing: s.refreshing.load(Ordering::Relaxed),
            stale: stale_reason.is_some(),
            stale_reason,
            watching: s.is_watching(),
        };
        let state = match (&status.stale_reason, status.current, status.refreshing) {
            (Some(why), _, _) => format!("stale: the last refresh failed ({why}); retrying"),
            (None, true, _) => "current".to_string(),
            (None, false, true) => "out of date, being refreshed".to_string(),
            (None, false, false) if status.watching => "out of date, a refresh is due".to_string(),
            (None, false, false) => "out of date; the next call refreshes it".to_string(),
        };
        let text = format!(
            "{}: {} files, {} fragments, {state}\n",
            status.root, status.files, status.fragments
        );
        Ok(structured(&status, text))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("maguyva", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }
}

/// Lines `start..=end` of the file at `rel` under `root`, refusing any path
/// that leads outside it.
fn read_lines(root: &Path, rel: &str, start: u32, end: u32) -> Result<ReadAnswer, String> {
    let root = root.canonicalize().map_err(|e| format!("{}: {e}", root.display()))?;
    let path = root.join(rel).canonicalize().map_err(|e| format!("{rel}: {e}"))?;
    if !path.starts_with(&root) {
        return Err(format!("{rel} is outside the repository"));
    }
    let bytes = std::fs::read(&path).map_err(|e| format!("{rel}: {e}"))?;
    if maguyva_core::is_binary(&bytes) {
        return Err(format!("{rel} is a binary file"));
    }
    let text = String::from_utf8_lossy(&bytes);
    let total = text.lines().count() as u32;
    if start > total.max(1) {
        return Err(format!("{rel} has {total} lines; line {start} is past its end"));
    }
    let end = end.min(total);
    let lines: Vec<&str> =
        text.lines().skip(start as usize - 1).take((end + 1 - start) as usize).collect();
    Ok(ReadAnswer {
        path: rel.to_string(),
        start_line: start,
        end_line: end,
        total_lines: total,
        text: lines.join("\n"),
    })
}

/// Serves MCP over stdin and stdout until the client disconnects.
pub fn serve(server: McpServer) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(serve_on(
        server,
        tokio::io::BufReader::new(tokio::io::stdin()),
        tokio::io::stdout(),
    ))
}

/// Serves MCP over `input` and `output`, one JSON-RPC message a line, until
/// the client disconnects: what [`serve`] does over stdin and stdout, on
/// any stream (a test's, a fuzzer's).
pub async fn serve_on<R, W>(server: McpServer, input: R, output: W) -> anyhow::Result<()>
where
    R: tokio::io::AsyncBufRead + Send + Unpin + 'static,
    W: tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let service = server.serve(crate::mcp_transport::transport(input, output)).await?;
    service.waiting().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use notify::event::{AccessKind, CreateKind, DataChange, ModifyKind};
    use notify::{Event, EventKind};

    fn event(kind: EventKind, path: PathBuf) -> notify::Result<Event> {
        Ok(Event::new(kind).add_path(path))
    }

    #[test]
    fn only_changes_to_indexed_files_and_rules_are_relevant() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(root.join(".gitignore"), "build/\n*.tmp\n")
            .unwrap_or_else(|e| panic!("{e}"));
        let mut tree = WatchedTree { rules: IgnoreRules::new(&root), index_dir: root.join("idx") };
        let write = EventKind::Modify(ModifyKind::Data(DataChange::Content));
        let create = EventKind::Create(CreateKind::File);
        assert!(tree.is_relevant(&event(write, root.join("src/lib.rs"))));
        assert!(tree.is_relevant(&event(create, root.join("new.py"))));
        assert!(!tree.is_relevant(&event(write, root.join("build/out.o"))));
        assert!(!tree.is_relevant(&event(create, root.join("editor.tmp"))));
        assert!(!tree.is_relevant(&event(write, root.join(".git/index"))));
        assert!(!tree.is_relevant(&event(write, root.join("idx/generation/manifest"))));
        let read = EventKind::Access(AccessKind::Read);
        assert!(!tree.is_relevant(&event(read, root.join("src/lib.rs"))));
        // A change to the rules may bring files in or out.
        assert!(tree.is_relevant(&event(write, root.join(".gitignore"))));
        // An error from the watcher may hide any change.
        assert!(tree.is_relevant(&Err(notify::Error::generic("overflow"))));
    }
}
