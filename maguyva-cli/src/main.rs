//! `maguyva`: index a repository and search it in plain words.

#![forbid(unsafe_code)]

use anyhow::{Context, Result, anyhow, bail};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand, ValueEnum};
use maguyva_cli::engine::{
    self, BuildOptions, EmbedderChoice, IndexSettings, RankingConfig, SearchRequest,
    build_index_with, default_index_dir, open_fresh,
};
use maguyva_cli::eval::{self, EvalOptions};
use maguyva_cli::output::{self, Highlighter, Style};
use maguyva_cli::progress::BarProgress;
use maguyva_core::{IndexDir, MatchMode, Modality};
use maguyva_fusion::{Intent, Preset};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "maguyva",
    version,
    about = "Code search that reads the question: one query, four retrievers, fused."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Index a folder (a full rebuild).
    #[command(after_help = "Example:\n  maguyva index ~/src/app --max-file-size 4M")]
    Index(IndexArgs),
    /// Search a folder, indexing it first when needed.
    #[command(after_help = "Example:\n  maguyva search \"where is the retry policy\" -k 5")]
    Search(SearchArgs),
    /// Measure ranking quality on a benchmark of labelled queries.
    #[command(
        after_help = "Example:\n  maguyva eval --bench bench/ --checkouts ~/checkouts --index-root /tmp/idx"
    )]
    Eval(EvalArgs),
    /// List the definitions found in a folder.
    #[command(after_help = "Example:\n  maguyva symbols --name parse_config --json")]
    Symbols(SymbolsArgs),
    /// Show where a function, type or constant is called or mentioned.
    #[command(after_help = "Example:\n  maguyva callers parse_config")]
    Callers(CallersArgs),
    /// Show what depends, transitively, on a definition or a file.
    #[command(after_help = "Example:\n  maguyva impact src/config.rs --depth 2")]
    Impact(ImpactArgs),
    /// Serve the tools of this folder's index to a coding agent (Model
    /// Context Protocol over stdin and stdout).
    #[command(after_help = "Example:\n  maguyva mcp --print-config claude-code")]
    Mcp(McpArgs),
    /// Print a man page or a shell's completions, made from these very
    /// arguments.
    #[command(
        after_help = "Example:\n  maguyva generate complete-bash > /etc/bash_completion.d/maguyva"
    )]
    Generate {
        /// What to print.
        #[arg(value_enum)]
        what: Generated,
        /// With `man`: write the page of every command (maguyva.1,
        /// maguyva-search.1 ...) into this folder instead of printing the
        /// top one.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
}

/// Values from a closed set, which completions offer: the names `T` parses.
fn closed<T>(names: impl IntoIterator<Item = &'static str>) -> impl TypedValueParser<Value = T>
where
    T: std::str::FromStr + Clone + Send + Sync + 'static,
    T::Err: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    PossibleValuesParser::new(names).try_map(|name| name.parse::<T>())
}

fn presets() -> impl TypedValueParser<Value = Preset> {
    closed(Preset::ALL.map(Preset::as_str))
}

fn intents() -> impl TypedValueParser<Value = Intent> {
    closed(Intent::ALL.map(Intent::as_str))
}

fn modalities() -> impl TypedValueParser<Value = Modality> {
    closed(engine::modalities().into_iter().map(Modality::as_str))
}

/// What `maguyva generate` prints.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Generated {
    /// A man page (roff), for `man -l` or a man folder.
    Man,
    /// Completions for bash.
    CompleteBash,
    /// Completions for zsh.
    CompleteZsh,
    /// Completions for fish.
    CompleteFish,
    /// Completions for PowerShell.
    CompletePowershell,
    /// Completions for elvish.
    CompleteElvish,
}

/// The folder a command works on: a positional `PATH` or `--path`; by
/// default the nearest folder, from here up, that has an index, else here.
#[derive(Args, Debug, Clone)]
struct Folder {
    /// The folder [default: the nearest folder from here up with an index, else .]
    #[arg(value_name = "PATH")]
    folder: Option<PathBuf>,
    /// The folder, as an option (the same as PATH).
    #[arg(long = "path", short = 'p', value_name = "PATH", conflicts_with = "folder")]
    path: Option<PathBuf>,
}

impl Folder {
    /// The root to index or search.
    fn root(&self, opts: &IndexOpts) -> PathBuf {
        if let Some(given) = self.folder.as_ref().or(self.path.as_ref()) {
            return given.clone();
        }
        let here = PathBuf::from(".");
        match opts.index_dir {
            // An index named explicitly is for the folder the command runs in.
            Some(_) => here,
            None => engine::find_indexed_root(&here).unwrap_or(here),
        }
    }
}

#[derive(Args, Debug, Clone)]
struct IndexOpts {
    /// Where the index lives [default: PATH/.maguyva].
    #[arg(long, value_name = "DIR")]
    index_dir: Option<PathBuf>,
    /// Skip files larger than this (bytes, or with K, M or G) [default: the
    /// index's, else 1M].
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    max_file_size: Option<u64>,
    /// The semantic embedder: builtin or joined (the model learned from the
    /// repository joined with the built-in code model), corpus (the first
    /// alone), code (the second alone), voyage or voyage:DIMENSIONS (needs
    /// VOYAGE_API_KEY; 256, 512, 1024 or 2048 bits), or a model2vec model
    /// folder [default: the index's, else voyage when VOYAGE_API_KEY is set,
    /// else builtin].
    #[arg(long, value_name = "EMBEDDER", value_parser = EmbedderChoice::parse)]
    embedder: Option<EmbedderChoice>,
    /// A model2vec-format model folder (model.safetensors, tokenizer.json,
    /// config.json) as the embedder; the same as --embedder DIR.
    #[arg(long, value_name = "DIR", conflicts_with = "embedder", value_parser = EmbedderChoice::model_dir)]
    model: Option<EmbedderChoice>,
}

impl IndexOpts {
    /// The settings to build with: those given here, else those the index
    /// in `dir` was built with, else the defaults.
    fn settings(&self, dir: &IndexDir) -> IndexSettings {
        let mut s = IndexSettings::recorded(dir).unwrap_or_default();
        if let Some(n) = self.max_file_size {
            s.max_file_size = n;
        }
        if let Some(e) = self.embedder.as_ref().or(self.model.as_ref()) {
            s.embedder = e.clone();
        }
        s
    }

    fn dir(&self, root: &Path) -> IndexDir {
        IndexDir::new(self.index_dir.clone().unwrap_or_else(|| default_index_dir(root)))
    }
}

#[derive(Args, Debug)]
struct IndexArgs {
    #[command(flatten)]
    folder: Folder,
    #[command(flatten)]
    opts: IndexOpts,
    /// Print the build report as JSON.
    #[arg(long)]
    json: bool,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
    /// Check the existing index instead of building one: every section of
    /// every file against its checksum, then every modality decoded.
    #[arg(long, conflicts_with = "refresh")]
    verify: bool,
    /// Take from the current index what did not change (the parse of every
    /// unchanged file, the embedding model) instead of building from scratch.
    #[arg(long)]
    refresh: bool,
}

#[derive(Args, Debug)]
struct SearchArgs {
    /// What to look for, in plain words; a "double-quoted" query is an exact string;
    /// `-` reads it from standard input.
    #[arg(required_unless_present = "query_file")]
    query: Option<String>,
    /// Read the query from this file (`-`: standard input): a whole bug report, up to
    /// 65,536 characters.
    #[arg(long, value_name = "FILE", conflicts_with = "query")]
    query_file: Option<PathBuf>,
    /// Answer the query as a bug report: the files to change, each with what ties it
    /// to the report. A long report is answered so without it.
    #[arg(long, conflicts_with_all = ["literal", "regex", "intent", "modality"])]
    report: bool,
    #[command(flatten)]
    folder: Folder,
    /// Number of results (one per file); at least 1.
    #[arg(short = 'k', long = "limit", default_value_t = engine::search::DEFAULT_LIMIT, value_parser = result_count)]
    limit: usize,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
    /// Search for the query as an exact string.
    #[arg(long, conflicts_with = "regex")]
    literal: bool,
    /// Search for the query as a regular expression.
    #[arg(long)]
    regex: bool,
    /// Ignore letter case (with --literal, --regex or a quoted query).
    #[arg(short = 'i', long)]
    ignore_case: bool,
    /// Use the index as it is: never build or refresh it.
    #[arg(long)]
    no_refresh: bool,
    /// How much work to do: quick (semantic only), default, thorough (all four).
    #[arg(long, default_value = "default", value_parser = presets())]
    preset: Preset,
    /// Show the intent, the weights, and each result's per-modality ranks,
    /// contributions and boost.
    #[arg(long)]
    explain: bool,
    /// Use this intent instead of the classifier's.
    #[arg(long, value_name = "INTENT", value_parser = intents())]
    intent: Option<Intent>,
    /// Run only these modalities (comma-separated: semantic, text, structural, graph);
    /// several are fused.
    #[arg(long, value_delimiter = ',', value_name = "MODALITY", value_parser = modalities())]
    modality: Vec<Modality>,
    /// The ranking: `default` (learned), `seed` (the hand-set
    /// numbers), or a JSON file laid over the default (doc/ranking.md).
    #[arg(long, value_name = "NAME|FILE", default_value = "default")]
    ranking: String,
    /// Keep only the results that fit in this many tokens, best first
    /// (estimated: one per 3 bytes of a result's location and snippet).
    #[arg(long, value_name = "N", value_parser = token_budget)]
    max_tokens: Option<usize>,
    /// Show each result's best lines within this many tokens (estimated as
    /// for --max-tokens); 0 shows each file's whole best fragment.
    #[arg(long, value_name = "N", default_value_t = maguyva_cli::engine::budget::DEFAULT_SNIPPET_TOKENS)]
    snippet_tokens: usize,
    /// Show up to N units of each file: after the fragment the file ranked
    /// by, its other fragments that hold at least half of the query's words.
    #[arg(long, value_name = "N", default_value_t = maguyva_cli::engine::units::DEFAULT_PER_FILE, value_parser = clap::value_parser!(u16).range(1..).map(usize::from))]
    per_file: usize,
    /// When to colour output.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    color: ColorChoice,
    #[command(flatten)]
    opts: IndexOpts,
}

#[derive(Args, Debug)]
struct EvalArgs {
    /// A benchmark folder (repos.json and annotations/); repeatable: each is
    /// reported on its own, and `--tune` fits them together.
    #[arg(long, value_name = "DIR", required = true)]
    bench: Vec<PathBuf>,
    /// The folder holding one checkout per repository name.
    #[arg(long, value_name = "DIR")]
    checkouts: PathBuf,
    /// Where to write the indexes [default: CHECKOUTS/.maguyva-index].
    #[arg(long, value_name = "DIR")]
    index_root: Option<PathBuf>,
    /// Only these repositories (repeatable).
    #[arg(long = "repo", value_name = "NAME")]
    repos: Vec<String>,
    /// Reuse up-to-date indexes instead of rebuilding them.
    #[arg(long)]
    reuse: bool,
    /// Run only these modalities (comma-separated); several are fused.
    #[arg(long, value_delimiter = ',', value_name = "MODALITY", value_parser = modalities())]
    modality: Vec<Modality>,
    /// The preset to evaluate.
    #[arg(long, default_value = "default", value_parser = presets())]
    preset: Preset,
    /// Also run the ablations over the same indexes: each modality removed
    /// in turn, each alone, and every preset.
    #[arg(long, conflicts_with = "modality")]
    ablate: bool,
    /// The semantic embedder: builtin (joined), corpus, code, voyage, or a
    /// model2vec folder.
    /// Repeatable: with several, each is evaluated with the semantic
    /// modality alone and with the preset, each in an index of its own, and
    /// their figures are set side by side.
    #[arg(long, value_name = "EMBEDDER", value_parser = EmbedderChoice::parse)]
    embedder: Vec<EmbedderChoice>,
    /// Build HNSW graphs from this many vectors up (0: always), and report
    /// their recall against the exact scan.
    #[arg(long, value_name = "N")]
    hnsw_threshold: Option<usize>,
    /// The ranking to evaluate: `default`, `seed`, or a JSON file laid over
    /// the default (doc/ranking.md).
    #[arg(long, value_name = "NAME|FILE", default_value = "default")]
    ranking: String,
    /// Learn the ranking from the benchmarks (training data) by coordinate
    /// ascent on NDCG@10, cross-validated by repository, and write it to
    /// `--out`.
    #[arg(long, requires = "out", conflicts_with_all = ["ablate", "modality"])]
    tune: bool,
    /// Where `--tune` writes the learned ranking (JSON over the seed).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// With --tune: keep the parameters of `--ranking` and fit only the
    /// reranker over its fused candidates.
    #[arg(long, requires = "tune")]
    rerank_only: bool,
    /// With --tune: grow this many regression trees (LambdaMART, depth 4)
    /// on the reranker's linear score; 0, the default, fits the linear
    /// score alone (doc/ranking.md says why).
    #[arg(long, default_value_t = 0, value_name = "N", requires = "tune")]
    rerank_trees: usize,
    /// The weight of each `--bench` in `--tune`'s objective, in order
    /// (repeatable; 1 for those not given).
    #[arg(long = "bench-weight", value_name = "W")]
    bench_weights: Vec<f64>,
    /// Folds of repositories for `--tune`'s cross-validation.
    #[arg(long, default_value_t = 5, value_name = "N")]
    folds: usize,
    /// A file of queries no repository can answer, one per line, run on
    /// every repository: the report gives the share that got no result
    #[arg(long, value_name = "FILE")]
    nonsense: Option<PathBuf>,
    /// A benchmark that `--tune` reports on but never fits (validation).
    #[arg(long, value_name = "DIR", requires = "validation_checkouts")]
    validation: Option<PathBuf>,
    /// The checkouts of the validation benchmark.
    #[arg(long, value_name = "DIR")]
    validation_checkouts: Option<PathBuf>,
    /// Also measure what answers cost an agent in tokens (cl100k_base): recall
    /// of the labels within 500 to 8,000 tokens of results read in order,
    /// and the tokens read up to the first labelled file (doc/evaluation.md).
    #[arg(long, conflicts_with_all = ["tune", "ablate"])]
    tokens: bool,
    /// With --tokens: also ask each query under this budget, and report how
    /// often the packed answer holds a labelled file.
    #[arg(long, value_name = "N", requires = "tokens", value_parser = token_budget)]
    max_tokens: Option<usize>,
    /// With --tokens: a peer's answers to score the same way, as JSON lines
    /// of {repo, query, results: [{path, start_line, end_line}]} with paths
    /// relative to the searched folder.
    #[arg(long, value_name = "FILE", requires = "tokens")]
    peer_answers: Option<PathBuf>,
    /// With --tokens: each result's snippet budget, as `search` takes it (0:
    /// whole fragments).
    #[arg(long, value_name = "N", requires = "tokens", default_value_t = maguyva_cli::engine::budget::DEFAULT_SNIPPET_TOKENS)]
    snippet_tokens: usize,
    /// With --tokens: units shown per file, as `search` takes it.
    #[arg(long, value_name = "N", requires = "tokens", default_value_t = maguyva_cli::engine::units::DEFAULT_PER_FILE, value_parser = clap::value_parser!(u16).range(1..).map(usize::from))]
    per_file: usize,
    /// Print the full report, with every query, as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct SymbolsArgs {
    #[command(flatten)]
    folder: Folder,
    /// Only definitions of this name (exact, or with naming conventions folded).
    #[arg(long)]
    name: Option<String>,
    /// Print JSON (one array).
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    opts: IndexOpts,
}

#[derive(Args, Debug)]
struct CallersArgs {
    /// The name (`parse_config`, `Cart.checkout`, `Rack::Response`).
    name: String,
    #[command(flatten)]
    folder: Folder,
    /// At most this many call sites and files.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..))]
    limit: u32,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    opts: IndexOpts,
}

#[derive(Args, Debug)]
struct ImpactArgs {
    /// A definition's name, a file's or folder's path, or a module as
    /// importers spell it (`aiohttp.payload`, `net/http`, `Acme.Billing`).
    target: String,
    #[command(flatten)]
    folder: Folder,
    /// At most this many dependent definitions and files.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..))]
    limit: u32,
    /// How many hops of dependents to follow.
    #[arg(long, default_value_t = 3)]
    depth: u32,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    opts: IndexOpts,
}

#[derive(Args, Debug)]
struct McpArgs {
    #[command(flatten)]
    folder: Folder,
    /// Print what registers this server with a coding agent, instead of
    /// serving.
    #[arg(long, value_name = "CLIENT")]
    print_config: Option<maguyva_cli::mcp_config::Client>,
    #[command(flatten)]
    opts: IndexOpts,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// Parses `4096`, `512K`, `1M`, `2G` (powers of 1024).
fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim().to_ascii_uppercase();
    let t = t.strip_suffix("IB").or_else(|| t.strip_suffix('B')).unwrap_or(&t);
    let (digits, mult) = match t.chars().last() {
        Some('K') => (&t[..t.len() - 1], 1u64 << 10),
        Some('M') => (&t[..t.len() - 1], 1 << 20),
        Some('G') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    let n: u64 =
        digits.trim().parse().map_err(|_| format!("{s:?} is not a size like 4096, 512K or 1M"))?;
    n.checked_mul(mult).filter(|&v| v > 0).ok_or_else(|| format!("{s:?} is not a usable size"))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    remove_unfinished_work_on_interrupt();
    match run(cli) {
        Ok(code) => code,
        Err(err) => {
            if is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            let _ = writeln!(std::io::stderr(), "maguyva: error: {err:#}");
            ExitCode::from(2)
        }
    }
}

/// Ctrl-C, or a signal to end, while an index is being written: the
/// unfinished generation is removed before the process ends (as the shell
/// expects, with status 128 + the signal), so that nothing of it is left
/// in the index folder; the current generation is untouched.
fn remove_unfinished_work_on_interrupt() {
    #[cfg(unix)]
    {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
            return;
        };
        let _ = std::thread::Builder::new().name("signals".into()).spawn(move || {
            if let Some(signal) = signals.forever().next() {
                maguyva_core::remove_unfinished_generations();
                std::process::exit(128 + signal);
            }
        });
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Index(args) => index(args),
        Command::Search(args) => search(args),
        Command::Eval(args) => evaluate(args),
        Command::Symbols(args) => symbols(args),
        Command::Callers(args) => callers(args),
        Command::Impact(args) => impact(args),
        Command::Mcp(args) => mcp(args),
        Command::Generate { what, out } => generate(what, out.as_deref()),
    }
}

fn generate(what: Generated, folder: Option<&Path>) -> Result<ExitCode> {
    use clap::CommandFactory;
    use clap_complete::Shell;
    let mut command = Cli::command();
    let mut out = Vec::new();
    if let Some(folder) = folder {
        if what != Generated::Man {
            anyhow::bail!("--out writes man pages; completions are printed");
        }
        std::fs::create_dir_all(folder)
            .with_context(|| format!("creating {}", folder.display()))?;
        clap_mangen::generate_to(command, folder)
            .with_context(|| format!("writing man pages into {}", folder.display()))?;
        return Ok(ExitCode::SUCCESS);
    }
    let shell = match what {
        Generated::Man => {
            clap_mangen::Man::new(command.clone()).render(&mut out)?;
            None
        }
        Generated::CompleteBash => Some(Shell::Bash),
        Generated::CompleteZsh => Some(Shell::Zsh),
        Generated::CompleteFish => Some(Shell::Fish),
        Generated::CompletePowershell => Some(Shell::PowerShell),
        Generated::CompleteElvish => Some(Shell::Elvish),
    };
    if let Some(shell) = shell {
        clap_complete::generate(shell, &mut command, "maguyva", &mut out);
    }
    std::io::stdout().write_all(&out)?;
    Ok(ExitCode::SUCCESS)
}

fn mcp(args: McpArgs) -> Result<ExitCode> {
    let root = args.folder.root(&args.opts);
    if let Some(client) = args.print_config {
        return print_mcp_config(client, &root, &args.opts);
    }
    let dir = args.opts.dir(&root);
    let settings = args.opts.settings(&dir);
    let server = maguyva_cli::mcp::McpServer::open(&root, dir, settings)
        .with_context(|| format!("opening the index of {}", root.display()))?;
    maguyva_cli::mcp::serve(server)?;
    Ok(ExitCode::SUCCESS)
}

/// Prints the registration of `maguyva mcp` for `client`, with absolute
/// paths, since agents start servers from folders of their own.
fn print_mcp_config(
    client: maguyva_cli::mcp_config::Client,
    root: &Path,
    opts: &IndexOpts,
) -> Result<ExitCode> {
    let root = maguyva_core::canonical_root(root)
        .with_context(|| format!("the folder to serve, {}", root.display()))?;
    let program = std::env::current_exe().context("finding the maguyva program")?;
    let mut server_args = vec!["mcp".to_string(), "--path".into(), root.display().to_string()];
    if let Some(dir) = &opts.index_dir {
        let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.clone());
        server_args.extend(["--index-dir".into(), dir.display().to_string()]);
    }
    let config = client.config(&program.display().to_string(), &server_args);
    eprintln!("maguyva: {}", config.location);
    std::io::stdout().write_all(config.snippet.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// A number of results: a whole number of at least one.
fn result_count(s: &str) -> std::result::Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("0 results asks for nothing; give at least 1".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("`{s}` is not a number of results")),
    }
}

/// A token budget: a whole number of at least one.
fn token_budget(s: &str) -> std::result::Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("a budget of 0 tokens leaves room for nothing; give at least 1".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("`{s}` is not a number of tokens")),
    }
}

fn print(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

fn note(text: &str) {
    let _ = writeln!(std::io::stderr(), "maguyva: {text}");
}

fn index(args: IndexArgs) -> Result<ExitCode> {
    let root = args.folder.root(&args.opts);
    let dir = args.opts.dir(&root);
    if args.verify {
        let report = engine::verify(&dir, &args.opts.settings(&dir))
            .with_context(|| format!("verifying the index in {}", dir.path().display()))?;
        if args.json {
            print(&format!("{}\n", serde_json::to_string_pretty(&report)?))?;
        } else {
            print(&output::render_verify(&report))?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let progress = BarProgress::new(!args.quiet && !args.json);
    let options = if args.refresh { BuildOptions::REFRESH } else { BuildOptions::FULL };
    let (_, report) = build_index_with(&root, &dir, &args.opts.settings(&dir), options, &progress)
        .map_err(|e| with_index_dir_hint(e, &dir))
        .with_context(|| format!("indexing {}", root.display()))?;
    progress.finish();
    if args.json {
        print(&format!("{}\n", serde_json::to_string_pretty(&report)?))?;
    } else {
        print(&output::render_build(&report))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn search(args: SearchArgs) -> Result<ExitCode> {
    let root = args.folder.root(&args.opts);
    let dir = args.opts.dir(&root);
    let mode = if args.literal {
        MatchMode::Literal
    } else if args.regex {
        MatchMode::Regex
    } else {
        MatchMode::Keyword
    };
    let text = match (&args.query, &args.query_file) {
        (_, Some(file)) => read_query(Some(file))?,
        (Some(q), None) if q == "-" => read_query(None)?,
        (Some(q), None) => q.clone(),
        (None, None) => bail!("give a query, or --query-file FILE"),
    };
    let request = SearchRequest {
        text,
        limit: args.limit,
        mode,
        case_insensitive: args.ignore_case,
        ranking: RankingConfig::named(&args.ranking)?,
        modalities: (!args.modality.is_empty()).then(|| args.modality.clone()),
        intent: args.intent,
        preset: args.preset,
        explain: args.explain,
        max_tokens: args.max_tokens,
        snippet_tokens: (args.snippet_tokens > 0).then_some(args.snippet_tokens),
        per_file: args.per_file,
        as_report: args.report,
    };
    // Validate before any indexing work, so a bad query fails fast.
    let query = request.query()?;
    let response = if args.no_refresh {
        let index = engine::Index::open(&dir, &args.opts.settings(&dir))
            .with_context(|| format!("opening the index in {}", dir.path().display()))?;
        index.search(&request)?
    } else {
        answered(&root, &args.opts, args.json, |index, as_is| match as_is {
            true => index.search_as_indexed(&request),
            false => index.search(&request),
        })?
    };
    note_changed(&response.changed);
    if let Some(b) = response.budget.filter(|b| b.left_out + b.cut > 0) {
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        let mut parts = Vec::new();
        if b.cut > 0 {
            parts.push(format!("{} result{} cut to {} lines", b.cut, plural(b.cut), "their best"));
        }
        if b.left_out > 0 {
            parts.push(format!("{} result{} left out", b.left_out, plural(b.left_out)));
        }
        note(&format!("{} to stay within {} tokens", parts.join(" and "), b.max_tokens));
    }
    if args.json {
        print(&format!("{}\n", serde_json::to_string_pretty(&response)?))?;
    } else {
        let color = match args.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
            }
        };
        let hl = Highlighter::new(query.text(), query.mode(), query.is_case_insensitive());
        note(&output::render_plan(&response));
        print(&output::render_search(&response, &hl, Style::new(color)))?;
    }
    Ok(if response.results.is_empty() { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// A query read from `file` (standard input when None or `-`): UTF-8 text
/// of at most [`maguyva_core::MAX_QUERY_CHARS`] characters.
fn read_query(file: Option<&Path>) -> Result<String> {
    use std::io::Read;
    let stdin = file.is_none_or(|f| f == Path::new("-"));
    let source = match file {
        Some(f) if !stdin => f.display().to_string(),
        _ => "standard input".to_string(),
    };
    let reader: Box<dyn Read> = match file {
        Some(f) if !stdin => Box::new(
            std::fs::File::open(f).with_context(|| format!("reading the query from {source}"))?,
        ),
        _ => Box::new(std::io::stdin()),
    };
    // A character takes at most 4 bytes: reading one more than that many
    // tells an overlong query without reading a huge file whole.
    let most = maguyva_core::MAX_QUERY_CHARS as u64 * 4 + 1;
    let mut bytes = Vec::new();
    reader
        .take(most)
        .read_to_end(&mut bytes)
        .with_context(|| format!("reading the query from {source}"))?;
    let limit = maguyva_core::MAX_QUERY_CHARS;
    if bytes.len() as u64 >= most {
        bail!("the query in {source} is over {limit} characters long; the limit is {limit}");
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        anyhow!("the query in {source} is not UTF-8 text (an invalid byte at offset {at})")
    })?;
    let chars = text.chars().count();
    if chars > limit {
        bail!("the query in {source} is {chars} characters long; the limit is {limit}");
    }
    Ok(text)
}

fn evaluate(args: EvalArgs) -> Result<ExitCode> {
    let index_root =
        args.index_root.clone().unwrap_or_else(|| args.checkouts.join(".maguyva-index"));
    let settings = {
        let mut s = IndexSettings::default();
        if let Some(e) = args.embedder.first() {
            s.embedder = e.clone();
        }
        if let Some(n) = args.hnsw_threshold {
            s.hnsw_threshold = n;
        }
        s
    };
    if args.embedder.len() > 1 {
        return compare_embedders(args, index_root, settings);
    }
    if args.tune {
        return tune(args, index_root, settings);
    }
    let ranking = RankingConfig::named(&args.ranking)?;
    let variants = if args.ablate {
        eval::Variant::ablations(args.preset, &ranking.profiles)
    } else {
        vec![eval::Variant::preset(
            args.preset,
            (!args.modality.is_empty()).then(|| args.modality.clone()),
        )]
    };
    let nonsense = match &args.nonsense {
        Some(path) => std::fs::read_to_string(path)
            .with_context(|| format!("reading {}", path.display()))?
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect(),
        None => Vec::new(),
    };
    let mut reports = Vec::new();
    for bench in &args.bench {
        let opts = EvalOptions {
            index_root: index_root.clone(),
            bench: bench.clone(),
            checkouts: args.checkouts.clone(),
            repos: args.repos.clone(),
            reuse: args.reuse,
            hnsw_recall: args.hnsw_threshold.is_some(),
            settings: settings.clone(),
            ranking: ranking.clone(),
            variants: variants.clone(),
            nonsense: nonsense.clone(),
            tokens: args.tokens.then(|| eval::TokenOptions {
                max_tokens: args.max_tokens,
                peer_answers: args.peer_answers.clone(),
                snippet_tokens: (args.snippet_tokens > 0).then_some(args.snippet_tokens),
                per_file: args.per_file,
            }),
        };
        let report = eval::run(&opts, &mut |line| note(line))?;
        if !args.json {
            if args.bench.len() > 1 {
                print(&format!("== {}\n", bench.display()))?;
            }
            print(&eval::render(&report))?;
        }
        reports.push(report);
    }
    if args.json {
        print_reports(&reports)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The reports of `eval --json`: one benchmark's alone, several as a list.
fn print_reports<T: serde::Serialize>(reports: &[T]) -> Result<()> {
    let json = match reports {
        [one] => serde_json::to_string_pretty(one)?,
        many => serde_json::to_string_pretty(many)?,
    };
    print(&format!("{json}\n"))
}

/// `eval` with several embedders: each is run with the semantic modality
/// alone and with the preset, in an index folder of its own under
/// `index_root`, and the figures are printed side by side.
fn compare_embedders(
    args: EvalArgs,
    index_root: PathBuf,
    settings: IndexSettings,
) -> Result<ExitCode> {
    if args.tune || args.ablate || !args.modality.is_empty() {
        anyhow::bail!(
            "several --embedder compare the semantic modality alone and the preset; \
             leave out --tune, --ablate and --modality"
        );
    }
    let ranking = RankingConfig::named(&args.ranking)?;
    let mut all = Vec::new();
    for bench in &args.bench {
        let mut compared = Vec::new();
        for embedder in &args.embedder {
            let name = embedder.spec();
            let folder: String =
                name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
            let run = |modalities: Option<Vec<Modality>>, reuse: bool| {
                let opts = EvalOptions {
                    index_root: index_root.join(&folder),
                    bench: bench.clone(),
                    checkouts: args.checkouts.clone(),
                    repos: args.repos.clone(),
                    reuse,
                    hnsw_recall: args.hnsw_threshold.is_some(),
                    settings: IndexSettings { embedder: embedder.clone(), ..settings.clone() },
                    ranking: ranking.clone(),
                    variants: vec![eval::Variant::preset(args.preset, modalities)],
                    nonsense: Vec::new(),
                    tokens: None,
                };
                note(&format!("embedder {name}"));
                eval::run(&opts, &mut |line| note(line))
            };
            let preset = run(None, args.reuse)?;
            // The index just built (or reused) serves the second run.
            let semantic = run(Some(vec![Modality::SEMANTIC]), true)?;
            compared.push(eval::EmbedderReport { embedder: name, semantic, preset });
        }
        if !args.json {
            if args.bench.len() > 1 {
                print(&format!("== {}\n", bench.display()))?;
            }
            print(&eval::render_embedders(&compared, args.preset.as_str()))?;
        }
        all.push(compared);
    }
    if args.json {
        print_reports(&all)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn tune(args: EvalArgs, index_root: PathBuf, settings: IndexSettings) -> Result<ExitCode> {
    let out = args.out.context("--tune needs --out FILE")?;
    let validation = match (&args.validation, &args.validation_checkouts) {
        (Some(bench), Some(checkouts)) => {
            let root = index_root.join("validation");
            Some((bench.clone(), checkouts.clone(), root))
        }
        _ => None,
    };
    let opts = eval::tune::TuneOptions {
        benches: args.bench,
        weights: args.bench_weights,
        checkouts: args.checkouts,
        index_root,
        validation,
        settings,
        reuse: args.reuse,
        folds: args.folds,
        start: if args.rerank_only { Some(RankingConfig::named(&args.ranking)?) } else { None },
        rerank_trees: args.rerank_trees,
    };
    let report = eval::tune::run(&opts, &mut |line| note(line))?;
    std::fs::write(&out, format!("{}\n", serde_json::to_string_pretty(&report.learned)?))
        .with_context(|| format!("writing {}", out.display()))?;
    if args.json {
        print(&format!("{}\n", serde_json::to_string_pretty(&report)?))?;
    } else {
        print(&eval::tune::render(&report))?;
        print(&format!("written to {}\n", out.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The fresh index of a folder, with a progress bar unless JSON is printed,
/// and whether it must answer as it is (it could not be refreshed).
fn fresh_index(path: &Path, opts: &IndexOpts, json: bool) -> Result<(engine::Index, bool)> {
    let dir = opts.dir(path);
    // A folder with no file in it (a wrong path, most often) is not given
    // an index.
    if matches!(dir.current(), Ok(None)) {
        let mut walker = maguyva_core::CorpusBuilder::new();
        walker.exclude(dir.path());
        let scan = walker.scan(path).with_context(|| format!("indexing {}", path.display()))?;
        if scan.files.is_empty() {
            anyhow::bail!(
                "nothing to search: {} holds no file to index (hidden and ignored files are \
                 left out); give the folder of a repository",
                path.display()
            );
        }
    }
    let progress = BarProgress::new(!json);
    let (index, refresh) = open_fresh(path, &dir, &opts.settings(&dir), &progress)
        .map_err(|e| with_index_dir_hint(e, &dir))
        .with_context(|| format!("indexing {}", path.display()))?;
    progress.finish();
    if let Some(text) = refresh.note() {
        note(&text);
    }
    if index.manifest.files.is_empty() {
        let skipped = &index.manifest.skipped;
        let why = match skipped.is_empty() {
            true => String::new(),
            false => format!(" ({} left out: {})", skipped.len(), output::skip_reasons(skipped)),
        };
        note(&format!(
            "{} holds no file that can be indexed{why}; nothing to search",
            path.display()
        ));
    }
    let as_is =
        matches!(refresh, engine::Refresh::ReadOnly { .. } | engine::Refresh::UsedWhileLocked);
    Ok((index, as_is))
}

/// `e`, with a hint when it is the index folder that cannot be written:
/// `--index-dir` keeps the index elsewhere (a read-only checkout, a folder
/// of someone else's).
fn with_index_dir_hint(e: maguyva_core::Error, dir: &IndexDir) -> anyhow::Error {
    let in_index = match &e {
        maguyva_core::Error::Io { path, .. } => path.starts_with(dir.path()),
        _ => false,
    };
    match in_index {
        true => anyhow::Error::new(e).context(format!(
            "the index folder {} cannot be written; give --index-dir DIR to keep the index in \
             a folder that can be",
            dir.path().display()
        )),
        false => e.into(),
    }
}

/// `answer` from the fresh index of `root` (told whether the index must
/// answer as it is, not refreshed). An answer that finds damage in a part
/// of the index it read for the first time rebuilds the index from
/// scratch; one that finds a file changed behind the index's back (after
/// the staleness check, or with the same size and time) refreshes it,
/// reading every file. Either way it says so and answers again from the
/// new index, so that no damage makes every later command fail.
fn answered<T>(
    root: &Path,
    opts: &IndexOpts,
    json: bool,
    answer: impl Fn(&engine::Index, bool) -> maguyva_core::Result<T>,
) -> Result<T> {
    let (index, as_is) = fresh_index(root, opts, json)?;
    let e = match answer(&index, as_is) {
        Ok(answer) => return Ok(answer),
        Err(e) => e,
    };
    let options = match &e {
        maguyva_core::Error::Changed { .. } if !as_is => BuildOptions::REREAD,
        maguyva_core::Error::Corrupt { .. } | maguyva_core::Error::IncompatibleFormat { .. } => {
            BuildOptions::FULL
        }
        _ => return Err(e.into()),
    };
    let what = if options == BuildOptions::FULL { "rebuilt" } else { "refreshed" };
    note(&format!("index {what}: {}", maguyva_core::error_chain(&e)));
    drop(index);
    let dir = opts.dir(root);
    let progress = BarProgress::new(!json);
    let (index, _) = build_index_with(root, &dir, &opts.settings(&dir), options, &progress)
        .with_context(|| format!("indexing {}", root.display()))?;
    progress.finish();
    Ok(answer(&index, false)?)
}

/// Says on stderr which changed files an answer left out.
fn note_changed(changed: &[String]) {
    if !changed.is_empty() {
        note(&format!("left out, changed since indexed: {}", changed.join(", ")));
    }
}

fn callers(args: CallersArgs) -> Result<ExitCode> {
    let root = args.folder.root(&args.opts);
    let report = answered(&root, &args.opts, args.json, |index, as_is| match as_is {
        true => index.callers_as_indexed(&args.name, args.limit as usize),
        false => index.callers(&args.name, args.limit as usize),
    })?;
    note_changed(&report.changed);
    if report.targets.is_empty() {
        note(&format!("no definition named {:?}", args.name));
    }
    if args.json {
        print(&format!("{}\n", serde_json::to_string_pretty(&report)?))?;
    } else {
        print(&output::render_callers(&report))?;
    }
    Ok(if report.callers.is_empty() && report.files.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn impact(args: ImpactArgs) -> Result<ExitCode> {
    let root = args.folder.root(&args.opts);
    let report = answered(&root, &args.opts, args.json, |index, as_is| match as_is {
        true => index.impact_as_indexed(&args.target, args.depth, args.limit as usize),
        false => index.impact(&args.target, args.depth, args.limit as usize),
    })?;
    note_changed(&report.changed);
    if report.targets.is_empty() {
        note(&format!("no definition, file or module named {:?}", args.target));
    }
    if args.json {
        print(&format!("{}\n", serde_json::to_string_pretty(&report)?))?;
    } else {
        print(&output::render_impact(&report))?;
    }
    Ok(if report.dependents.is_empty() && report.files.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn symbols(args: SymbolsArgs) -> Result<ExitCode> {
    let root = args.folder.root(&args.opts);
    let wanted = args.name.as_deref().map(maguyva_ast::normalize);
    let listed: Vec<output::SymbolRow> = answered(&root, &args.opts, args.json, |index, _| {
        let table = index.symbols()?;
        Ok(table
            .iter()
            .filter(|(_, s)| wanted.as_ref().is_none_or(|w| maguyva_ast::normalize(s.name) == *w))
            .filter_map(|(id, s)| {
                let path = index.manifest.files.get(s.file.index())?.path.clone();
                output::SymbolRow::new(path, table, id)
            })
            .collect())
    })?;
    if listed.is_empty() {
        note(&match &args.name {
            Some(name) => format!("no definition named {name:?}"),
            None => "no definitions found".to_string(),
        });
    }
    if args.json {
        print(&format!("{}\n", serde_json::to_string_pretty(&listed)?))?;
    } else {
        print(&output::render_symbols(&listed))?;
    }
    Ok(if listed.is_empty() { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("512K"), Ok(512 << 10));
        assert_eq!(parse_size("1M"), Ok(1 << 20));
        assert_eq!(parse_size("1MiB"), Ok(1 << 20));
        assert_eq!(parse_size("2g"), Ok(2 << 30));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("0").is_err());
    }
}
