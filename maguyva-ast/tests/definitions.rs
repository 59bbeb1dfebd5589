use maguyva_ast::{StructuralRetriever, SymbolTable, outline};
use maguyva_core::{
    Analyzer, CorpusBuilder, FileId, FragmentTable, Language, OutlineSpan, Query, Retriever,
    SyntaxChunker,
};
use std::path::Path;
use std::sync::Arc;

/// (fixture folder, language, [(query, file, text on the definition line)]).
type Case = (&'static str, Language, &'static [(&'static str, &'static str, &'static str)]);

const CASES: &[Case] = &[
    (
        "bash",
        Language::Bash,
        &[
            ("upload_release", "deploy.sh", "upload_release() {"),
            ("restart_service", "deploy.sh", "function restart_service"),
            ("function rollback_release", "deploy.sh", "rollback_release() {"),
            ("load environment", "env.bash", "load_environment() {"),
        ],
    ),
    (
        "c",
        Language::C,
        &[
            ("queue_push", "queue.c", "int queue_push(queue_t *q, int value)\n{"),
            ("struct ring_queue", "queue.h", "struct ring_queue {"),
            ("queue_t", "queue.h", "typedef struct ring_queue queue_t;"),
            ("QUEUE_CAPACITY", "queue.h", "#define QUEUE_CAPACITY"),
            ("queue_describe", "queue.c", "static char *queue_describe"),
            ("queue_state", "queue.c", "enum queue_state"),
        ],
    ),
    (
        "cpp",
        Language::Cpp,
        &[
            ("Matrix", "matrix.h", "class Matrix {"),
            ("linalg::Matrix", "matrix.h", "class Matrix {"),
            ("gaussian_solve", "solver.cc", "std::vector<Scalar> gaussian_solve"),
            ("LuDecomposition::factor", "solver.cc", "void LuDecomposition::factor"),
            ("struct Shape", "matrix.h", "struct Shape {"),
            ("Scalar", "matrix.h", "using Scalar = double;"),
        ],
    ),
    (
        "csharp",
        Language::CSharp,
        &[
            ("Ledger", "Ledger.cs", "public class Ledger"),
            ("Post", "Ledger.cs", "public void Post(Entry entry)"),
            ("Accounting.Ledger.Post", "Ledger.cs", "public void Post(Entry entry)"),
            ("IAuditor", "Ledger.cs", "public interface IAuditor"),
            ("Entry", "Entry.cs", "public record Entry"),
            ("struct Money", "Entry.cs", "public struct Money"),
        ],
    ),
    (
        "elixir",
        Language::Elixir,
        &[
            ("Billing", "billing.ex", "defmodule Shop.Billing do"),
            ("create_invoice", "billing.ex", "def create_invoice(order) do"),
            ("Shop.Billing.order_total", "billing.ex", "defp order_total(order)"),
            ("with_retry", "billing.ex", "defmacro with_retry"),
            ("refund", "refunds.ex", "def refund(invoice, reason)"),
            ("Payable", "refunds.ex", "defprotocol Shop.Payable do"),
        ],
    ),
    (
        "go",
        Language::Go,
        &[
            ("Router", "router.go", "type Router struct {"),
            ("Router.Handle", "router.go", "func (r *Router) Handle"),
            ("interface Middleware", "router.go", "type Middleware interface {"),
            ("NewServer", "server.go", "func NewServer() *Router {"),
            ("DefaultPort", "router.go", "const DefaultPort = 8080"),
            ("HandlerName", "server.go", "type HandlerName = string"),
        ],
    ),
    (
        "haskell",
        Language::Haskell,
        &[
            ("Parser", "Parser.hs", "newtype Parser a"),
            ("runParser", "Parser.hs", "runParser :: Parser a"),
            ("satisfy", "Parser.hs", "satisfy :: (Char -> Bool)"),
            ("JsonValue", "Json.hs", "data JsonValue"),
            ("class ToJson", "Json.hs", "class ToJson a where"),
            ("Field", "Json.hs", "type Field"),
        ],
    ),
    (
        "java",
        Language::Java,
        &[
            (
                "PaymentGateway",
                "src/com/acme/payments/PaymentGateway.java",
                "public class PaymentGateway {",
            ),
            ("charge", "src/com/acme/payments/PaymentGateway.java", "public String charge("),
            ("MAX_RETRIES", "src/com/acme/payments/PaymentGateway.java", "MAX_RETRIES = 3"),
            (
                "Refundable",
                "src/com/acme/payments/Refundable.java",
                "public interface Refundable {",
            ),
            ("enum Currency", "src/com/acme/payments/Refundable.java", "enum Currency"),
        ],
    ),
    (
        "javascript",
        Language::JavaScript,
        &[
            ("LruCache", "cache.js", "class LruCache {"),
            ("LruCache.get", "cache.js", "  get(key) {"),
            ("createCache", "cache.js", "function createCache(limit) {"),
            ("evictOldest", "cache.js", "const evictOldest"),
            ("recordHit", "metrics.js", "exports.recordHit"),
            ("DEFAULT_INTERVAL", "metrics.js", "const DEFAULT_INTERVAL"),
        ],
    ),
    (
        "kotlin",
        Language::Kotlin,
        &[
            ("Inventory", "Inventory.kt", "class Inventory("),
            ("reserve", "Inventory.kt", "fun reserve(code: String"),
            ("interface StockSource", "Inventory.kt", "interface StockSource {"),
            ("Warehouse", "Inventory.kt", "object Warehouse {"),
            ("Product", "Product.kt", "data class Product("),
            ("formatProduct", "Product.kt", "fun formatProduct("),
            ("Category", "Product.kt", "enum class Category"),
        ],
    ),
    (
        "lua",
        Language::Lua,
        &[
            ("load", "config.lua", "function M.load(path)"),
            ("reload", "config.lua", "function M:reload()"),
            ("merge_tables", "config.lua", "local function merge_tables"),
            ("defaults", "config.lua", "M.defaults = function()"),
            ("write_log", "log.lua", "function write_log(line)"),
        ],
    ),
    (
        "php",
        Language::Php,
        &[
            ("Mailer", "Mailer.php", "class Mailer implements Transport"),
            ("send", "Mailer.php", "public function send(Message $message)"),
            ("interface Transport", "Mailer.php", "interface Transport {}"),
            ("format_address", "helpers.php", "function format_address("),
            ("Queueable", "helpers.php", "trait Queueable {}"),
            ("Priority", "helpers.php", "enum Priority"),
        ],
    ),
    (
        "python",
        Language::Python,
        &[
            ("Tokenizer", "tokenizer.py", "class Tokenizer:"),
            ("next_token", "tokenizer.py", "def next_token(self):"),
            ("Tokenizer.next_token", "tokenizer.py", "def next_token(self):"),
            ("def tokenize", "tokenizer.py", "def tokenize(text):"),
            ("MAX_TOKEN", "tokenizer.py", "MAX_TOKEN = 256"),
            ("read source", "reader.py", "def read_source(path):"),
        ],
    ),
    (
        "ruby",
        Language::Ruby,
        &[
            ("Session", "session.rb", "class Session"),
            ("Auth::Session", "session.rb", "class Session"),
            ("expired?", "session.rb", "def expired?(now)"),
            ("restore", "session.rb", "def self.restore(token)"),
            ("Tokens", "tokens.rb", "module Tokens"),
            ("sign", "tokens.rb", "def self.sign(payload)"),
        ],
    ),
    (
        "rust",
        Language::Rust,
        &[
            ("KvStore", "lib.rs", "pub struct KvStore {"),
            ("KvStore::put", "lib.rs", "pub fn put(&mut self"),
            ("trait Persist", "lib.rs", "pub trait Persist {"),
            ("Command", "lib.rs", "pub enum Command {"),
            ("MAX_KEY_LEN", "lib.rs", "pub const MAX_KEY_LEN"),
            ("kv_log", "lib.rs", "macro_rules! kv_log"),
            ("append record", "wal.rs", "pub fn append_record("),
            ("Lsn", "wal.rs", "pub type Lsn = u64;"),
        ],
    ),
    (
        "scala",
        Language::Scala,
        &[
            ("Stage", "Pipeline.scala", "trait Stage[A, B] {"),
            ("Pipeline", "Pipeline.scala", "final case class Pipeline[A]"),
            ("execute", "Pipeline.scala", "def execute(input: A): A"),
            ("Pipeline.empty", "Pipeline.scala", "def empty[A]"),
            ("CsvSource", "Sources.scala", "class CsvSource(path: String) {"),
            ("readLines", "Sources.scala", "def readLines()"),
        ],
    ),
    (
        "swift",
        Language::Swift,
        &[
            ("Downloader", "Downloader.swift", "final class Downloader {"),
            ("download", "Downloader.swift", "func download(from url: URL)"),
            ("DownloadDelegate", "Downloader.swift", "protocol DownloadDelegate {"),
            ("struct DownloadTask", "Downloader.swift", "struct DownloadTask {"),
            ("DownloadError", "Errors.swift", "enum DownloadError: Error {"),
            ("cancelAll", "Errors.swift", "func cancelAll() {}"),
            ("CompletionHandler", "Errors.swift", "typealias CompletionHandler"),
        ],
    ),
    (
        "typescript",
        Language::TypeScript,
        &[
            ("Job", "queue.ts", "export interface Job {"),
            ("JobQueue", "queue.ts", "export class JobQueue {"),
            ("JobQueue.enqueue", "queue.ts", "enqueue(job: Job): void {"),
            ("JobState", "queue.ts", "export type JobState"),
            ("createQueue", "queue.ts", "export function createQueue()"),
            ("drainQueue", "queue.ts", "export const drainQueue"),
            ("Scheduling", "index.ts", "namespace Scheduling {"),
        ],
    ),
    (
        "tsx",
        Language::Tsx,
        &[
            ("Button", "Button.tsx", "export function Button("),
            ("ButtonProps", "Button.tsx", "export interface ButtonProps {"),
            ("IconButton", "Button.tsx", "export const IconButton"),
            ("FormController", "Form.tsx", "export class FormController {"),
            ("submit", "Form.tsx", "submit(): void {}"),
        ],
    ),
    (
        "zig",
        Language::Zig,
        &[
            ("BumpAllocator", "allocator.zig", "pub const BumpAllocator = struct {"),
            ("alloc", "allocator.zig", "pub fn alloc(self: *BumpAllocator"),
            ("Mode", "allocator.zig", "pub const Mode = enum"),
            ("resetAll", "allocator.zig", "pub fn resetAll("),
            ("max_alloc", "limits.zig", "pub const max_alloc"),
        ],
    ),
];

struct Fixture {
    paths: Vec<String>,
    texts: Vec<String>,
    retriever: StructuralRetriever,
    symbols: usize,
}

fn load(dir: &str, language: Language) -> Fixture {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(dir);
    let corpus = CorpusBuilder::new().build(&root).expect("fixture walks");
    let mut outlines = Vec::new();
    for (i, f) in corpus.files.iter().enumerate() {
        assert_eq!(f.language, Some(language), "{dir}: {} detected as {:?}", f.path, f.language);
        let o = outline(language, &f.text, FileId(i as u32));
        assert!(o.failure.is_none(), "{dir}/{}: {:?}", f.path, o.failure);
        outlines.push(o);
    }
    let chunker = SyntaxChunker::default();
    let spans = corpus
        .files
        .iter()
        .zip(&outlines)
        .map(|(f, o)| {
            let spans: Vec<OutlineSpan> =
                o.items.iter().map(|i| OutlineSpan { lines: i.lines, header: i.header }).collect();
            chunker.chunk(&f.text, &spans)
        })
        .collect();
    let fragments = Arc::new(FragmentTable::from_spans(spans));
    let table = SymbolTable::build(&outlines, Analyzer::default()).expect("symbol table");
    let symbols = table.len();
    let paths: Vec<String> = corpus.files.iter().map(|f| f.path.clone()).collect();
    let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
    let retriever = StructuralRetriever::new(Arc::new(table), fragments, &refs);
    Fixture { paths, texts: corpus.files.into_iter().map(|f| f.text).collect(), retriever, symbols }
}

/// The 1-based line on which `marker` starts in `text`.
fn line_of(text: &str, marker: &str) -> u32 {
    let at = text.find(marker).unwrap_or_else(|| panic!("marker {marker:?} not in fixture"));
    text[..at].matches('\n').count() as u32 + 1
}

#[test]
fn every_language_finds_each_definition_first() {
    let mut failures = Vec::new();
    for (dir, language, cases) in CASES {
        let fx = load(dir, *language);
        assert!(fx.symbols >= cases.len(), "{dir}: only {} symbols", fx.symbols);
        for (query, file, marker) in *cases {
            let hits = fx.retriever.search(&Query::new(*query).expect("query"), 5).expect("search");
            let Some(top) = hits.first() else {
                failures.push(format!("{dir}: {query:?} found nothing"));
                continue;
            };
            let path = &fx.paths[top.file.index()];
            let file_index = fx
                .paths
                .iter()
                .position(|p| p == file)
                .unwrap_or_else(|| panic!("{dir}: no file {file}"));
            let line = line_of(&fx.texts[file_index], marker);
            if path != file || !top.lines.contains(line) {
                failures.push(format!(
                    "{dir}: {query:?} -> {path}:{} (wanted {file}:{line})",
                    top.lines
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn all_twenty_languages_have_a_fixture() {
    let mut covered: Vec<Language> = CASES.iter().map(|c| c.1).collect();
    covered.sort();
    covered.dedup();
    assert_eq!(covered, Language::ALL.to_vec());
}
