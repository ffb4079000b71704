// Generated from crates/server/src/lsp/ext.rs (documented in docs/lsp-extensions.md) by
// scripts/protocol-ts: do not edit; change the Rust types and run it again.

/** Each `workspace/executeCommand` command of the server: its argument and its answer. */
export interface Commands {
  'crossfile.replayCase': { params: ReplayCaseParams; result: ReplayCaseResult };
  'crossfile.nextCase': { params: JsonValue | null; result: ReplayCaseResult };
  'crossfile.previousCase': { params: JsonValue | null; result: ReplayCaseResult };
  'crossfile.score': { params: ScoreParams; result: ScoreResult };
  'crossfile.compare': { params: CompareParams; result: CompareResult };
  'crossfile.context': { params: ContextParams; result: ContextResult | null };
  'crossfile.listCases': { params: ListCasesParams; result: Array<CaseRow> };
  'crossfile.retrievers': { params: JsonValue | null; result: Array<RetrieverInfo> };
  'crossfile.status': { params: JsonValue | null; result: StatusResult };
  'crossfile.arenaVote': { params: ArenaVoteParams; result: ArenaVoteResult };
  'crossfile.arenaReveal': { params: JsonValue | null; result: ArenaRevealResult };
}

export type CommandName = keyof Commands;

/** Sends a command to the server: its argument and its answer typed by its name. */
export type Execute = <K extends CommandName>(command: K, argument?: Commands[K]['params']) => Promise<Commands[K]['result']>;

/**
 * A decided battle with its arms revealed, in the order shown: `arms[0]` made suggestion 1.
 */
export type ArenaRevealResult = {
  /**
   * The battle's id (as its items' command named it).
   */
  battle: number;
  /**
   * The votes file the vote was written to.
   */
  votes: string;
  arms: [string, string];
  /**
   * 1 or 2; null: no choice.
   */
  picked: number | null;
  texts: [string, string];
  latencyMs: [number, number];
  /**
   * At a replayed case: its id and each suggestion's metrics.
   */
  caseId: string | null;
  metrics: [{ [key in string]: number }, { [key in string]: number }] | null;
  path: string;
  /**
   * 1-based.
   */
  line: number;
  col: number;
};

/**
 * The arena of the folders that have it on.
 */
export type ArenaStatus = {
  /**
   * Each arm's spec, as votes name it.
   */
  arms: Array<string>;
  votes: string;
  /**
   * The seed of the pair draws (the settings' or the session's).
   */
  seed: number;
  /**
   * Battles shown, votes written, arms failed and battles not shown for a blank suggestion,
   * in this session.
   */
  battles: number;
  recorded: number;
  failed: number;
  blank: number;
};

/**
 * `crossfile.arenaVote`'s arguments.
 */
export type ArenaVoteParams = {
  /**
   * The battle's id, from its items' command.
   */
  battle: number;
  /**
   * 1 or 2: the suggestion shown first or second was accepted; null: none was (dismissed).
   */
  pick?: number | null;
};

/**
 * `crossfile.arenaVote`'s answer.
 */
export type ArenaVoteResult = {
  /**
   * False when the battle was no longer pending (voted, or superseded as no choice).
   */
  recorded: boolean;
  /**
   * The votes file.
   */
  votes: string;
};

/**
 * The backend completions go to.
 */
export type BackendStatus = {
  /**
   * As `backend.kind` spells it (`embedded`, `none` or an HTTP kind).
   */
  kind: string;
  /**
   * An HTTP backend's endpoint, where the workspace's code is sent.
   */
  endpoint: string | null;
  /**
   * An HTTP backend's model name.
   */
  model: string | null;
};

export type CaseRef = number | string;

/**
 * One case of a cases file, for a picker.
 */
export type CaseRow = {
  id: string;
  /**
   * 0-based.
   */
  index: number;
  language: string;
  repository: string;
  path: string;
  /**
   * 1-based.
   */
  line: number;
  /**
   * EvoCodeBench: `function` or `method`.
   */
  kind?: string;
  /**
   * History: the line's category.
   */
  category?: string;
};

/**
 * A retrieved chunk. Context a case provides has no lines and no URI.
 */
export type ChunkInfo = {
  /**
   * Relative to the workspace folder.
   */
  path: string;
  uri: string | null;
  /**
   * 1-based, inclusive.
   */
  startLine: number | null;
  endLine: number | null;
  score: number;
  /**
   * `crossfile.compare` only: where the chunk comes from relative to the cursor's file
   * (`same_file`, `same_dir`, `imported`, `elsewhere`).
   */
  origin?: string;
  /**
   * The source that gave it, as a spec, when a `mix:` retriever composed the context.
   */
  source?: string;
  /**
   * `crossfile.context` only.
   */
  text?: string;
};

/**
 * One retriever's column: its completion, or the error it met.
 */
export type CompareColumn = {
  retriever: string;
  upperBound: boolean;
} & (MadeColumn | { error: string, });

/**
 * `crossfile.compare`'s arguments.
 */
export type CompareParams = {
  uri: string;
  position: Position;
  retrievers: Array<string>;
  /**
   * The client's token for progress reports (the tests at an EvoCodeBench case's cursor).
   */
  workDoneToken?: number | string;
};

/**
 * `crossfile.compare`'s answer.
 */
export type CompareResult = {
  uri: string;
  position: Position;
  /**
   * The replayed case whose cursor it is.
   */
  caseId: string | null;
  /**
   * The case's reference: the text removed, or an EvoCodeBench case's body.
   */
  reference: string | null;
  results: Array<CompareColumn>;
};

/**
 * `crossfile.context`'s arguments.
 */
export type ContextParams = {
  uri: string;
};

/**
 * `crossfile.context`'s answer: the last completion in a document.
 */
export type ContextResult = {
  uri: string;
  /**
   * Where it was shown.
   */
  position: Position;
  /**
   * Where the completion it came from was asked (`position` but for typing along it).
   */
  askedAt: Position;
  caseId: string | null;
  retriever: string;
  upperBound: boolean;
  rawSuggestion: string;
  prompt: string;
  /**
   * A catalogue name, a GGUF file name, or an HTTP backend and its model.
   */
  model: string;
  /**
   * Which completion of the server it is (typing along it keeps the number).
   */
  serial: number;
  generation: GenerationInfo;
  timingsMs: TimingsMs;
  chunks: Array<ChunkInfo>;
  /**
   * `{crossfile, left, right, total}`: each part of the prompt tokenized alone, and the whole.
   */
  promptTokens: PromptTokens;
  suggestion: string;
  latencyMs: number;
};

/**
 * A run of a diff: `delete` is only in the reference, `insert` only in the suggestion.
 */
export type DiffRun = {
  /**
   * `equal`, `delete` or `insert`.
   */
  op: string;
  text: string;
};

/**
 * A workspace folder: its index and its trust.
 */
export type FolderStatus = {
  name: string;
  root: string;
  /**
   * `building`, `ready` or `failed`.
   */
  index: string;
  /**
   * Files and chunks the index holds, when it is ready.
   */
  files: number | null;
  chunks: number | null;
  /**
   * Why building the index failed.
   */
  error: string | null;
  /**
   * Whether its `crossfile.toml` may choose endpoints, model files and the cache directory.
   */
  trusted: boolean;
};

/**
 * What the backend reported of the generation.
 */
export type GenerationInfo = {
  promptTokens: number | null;
  /**
   * Prompt tokens a kept KV cache held already.
   */
  reusedTokens: number | null;
  generatedTokens: number | null;
  /**
   * Cut at `lsp.max_generate_ms`.
   */
  outOfTime: boolean;
  /**
   * The model's text before post-processing.
   */
  text: string;
  /**
   * Answered from the last answer's layout while the new prompt was read.
   */
  fromFallback: boolean;
};

export type JsonValue = number | string | boolean | Array<JsonValue> | {
  [key in string]: JsonValue;
} | null;

/**
 * `crossfile.listCases`'s arguments.
 */
export type ListCasesParams = {
  /**
   * The cases file (CrossCodeEval, RepoEval, history or EvoCodeBench jsonl).
   */
  cases: string;
  /**
   * `cceval`, `repoeval`, `history` or `evocodebench`; told from the first record when absent.
   */
  format?: string | null;
};

/**
 * A column's completion and, at a replayed case, how it compares with the reference.
 */
export type MadeColumn = {
  /**
   * At a replayed case: the share of the reference's distinct identifiers that the chunks
   * hold, 0..1; absent without chunks or when the reference has no identifier.
   */
  overlap?: number;
  /**
   * At a text case: the runs that turn the reference into the suggestion.
   */
  diff?: Array<DiffRun>;
  /**
   * At a text case: the suggestion's metrics.
   */
  metrics?: Metrics;
  /**
   * At an EvoCodeBench case: the body tested and how its tests ended.
   */
  body?: string;
  outcome?: TestOutcome;
  chunks: Array<ChunkInfo>;
  /**
   * `{crossfile, left, right, total}`: each part of the prompt tokenized alone, and the whole.
   */
  promptTokens: PromptTokens;
  suggestion: string;
  latencyMs: number;
};

/**
 * A case's metrics, by the benchmark's own names (`em`, `es`, `id_em`, `pass@1`…), or why they
 * could not be computed.
 */
export type Metrics = {
  [key in string]: number;
} | {
  error: string;
};

/**
 * The model: its label, where its file comes from, and whether it is there and loaded.
 */
export type ModelStatus = {
  /**
   * As the status line shows it: a catalogue name, a GGUF file name, or an HTTP backend and
   * its model.
   */
  label: string;
  /**
   * `catalogue` (fetched into the cache on first use) or `path` (`model.path`).
   */
  source: string;
  /**
   * The catalogue's name (`model.name`), when it is the source.
   */
  name: string | null;
  /**
   * The GGUF file: `model.path`, or where the catalogue's model is cached.
   */
  file: string;
  /**
   * Whether the file exists (the server fetches a catalogue model when it loads it: at the
   * start, and when the model settings change).
   */
  present: boolean;
  /**
   * Whether the server has loaded it.
   */
  loaded: boolean;
  /**
   * While it is being fetched: what is being done.
   */
  downloading: string | null;
};

/**
 * LSP's own `Position`, which `lsp-types` gives no TypeScript form.
 */
export type Position = {
  line: number;
  character: number;
};

/**
 * Token counts of each part of a built prompt, with the model's tokenizer.
 */
export type PromptTokens = {
  /**
   * The cross-file block as kept, tokenized alone.
   */
  crossfile: number;
  /**
   * The left context as kept, tokenized alone.
   */
  left: number;
  /**
   * The right context as kept, tokenized alone (0 for `Plain`).
   */
  right: number;
  /**
   * The whole prompt text, special tokens included, tokenized as one string.
   */
  total: number;
};

/**
 * `crossfile.replayCase`'s arguments.
 */
export type ReplayCaseParams = {
  /**
   * The cases file (CrossCodeEval, RepoEval, history or EvoCodeBench jsonl).
   */
  cases: string;
  /**
   * The folder holding each case's repository as `<repos>/<repository>` (for history cases,
   * the parent commit's tree, which lacks the case's file).
   */
  repos: string;
  /**
   * `cceval`, `repoeval`, `history` or `evocodebench`; told from the first record when absent.
   */
  format?: string | null;
  /**
   * EvoCodeBench: what the model is shown (`baseline`, `local_completion`, the default, or
   * `local_infilling`).
   */
  setting?: string | null;
  /**
   * EvoCodeBench: the folder of the repositories' environments (default: the cache's, where
   * `bench setup-env` makes them).
   */
  envs?: string | null;
  /**
   * EvoCodeBench: tokens generated for a body (default: the benchmark's 500), as `bench run
   * --max-new-tokens`.
   */
  maxNewTokens?: number | null;
  /**
   * A case id, or a 0-based index into the file's cases.
   */
  case: CaseRef;
  /**
   * Replay in the repository itself instead of a copy (the opt-in): the file's bytes are
   * saved first and put back before the next case, at shutdown, or at the next start.
   */
  inPlace?: boolean;
};

/**
 * A case opened for replay: the file to show, its text and the cursor.
 */
export type ReplayCaseResult = {
  uri: string;
  /**
   * The file's text as the case shows it (line breaks as `\n`).
   */
  text: string;
  /**
   * The case's cursor.
   */
  position: Position;
  case: ReplayedCaseInfo;
};

/**
 * What the client shows of the case open now.
 */
export type ReplayedCaseInfo = {
  id: string;
  /**
   * 0-based, in the cases file's usable cases.
   */
  index: number;
  /**
   * The file's usable cases.
   */
  count: number;
  casesFile: string;
  /**
   * `cceval`, `repoeval`, `history` or `evocodebench`.
   */
  benchmark: string;
  language: string;
  repository: string;
  path: string;
  /**
   * 1-based line of the cursor.
   */
  line: number;
  /**
   * `line` or `function`.
   */
  target: string;
  /**
   * 1-based line of the case's record in the cases file.
   */
  recordLine: number;
  /**
   * CrossCodeEval, RepoEval and history: the benchmark's own task id.
   */
  taskId?: string;
  /**
   * History: the line's category (`committed`, `inproject`, `infile`, `common`,
   * `non_informative` or `random`).
   */
  category?: string;
  /**
   * History: the identifiers of the line that decided its category (possibly none).
   */
  identifiers?: Array<string>;
  /**
   * EvoCodeBench: `function` or `method`.
   */
  kind?: string;
  /**
   * EvoCodeBench: what the model is shown.
   */
  setting?: string;
  /**
   * EvoCodeBench: the tests that decide the case.
   */
  tests?: Array<string>;
};

/**
 * A retriever spec form (`crossfile.retrievers`).
 */
export type RetrieverInfo = {
  /**
   * The spec, or its pattern for a composite form (`mmr:<spec>[:<lambda in 0..1>]`).
   */
  spec: string;
  summary: string;
  /**
   * `nothing`, `dense-endpoint`, `case-context` (a replayed benchmark case's shipped context)
   * or `parts` (the retrievers it combines).
   */
  needs: string;
  /**
   * Whether the settings of the first folder provide what it needs.
   */
  available: boolean;
  /**
   * It sees the reference: its scores are an upper bound.
   */
  upperBound: boolean;
  /**
   * A pattern over other specs.
   */
  composite: boolean;
  /**
   * The retriever completions use now (`retrieve.retriever`).
   */
  default: boolean;
};

/**
 * `crossfile.score`'s arguments: the case and either the text to score or the buffer holding it.
 */
export type ScoreParams = {
  caseId: string;
  /**
   * The text to score.
   */
  suggestion?: string | null;
  /**
   * The open buffer of the case's file: what it holds between the case's left context and its
   * right context is scored.
   */
  uri?: string | null;
  /**
   * The client's token for progress reports (the tests of an EvoCodeBench case).
   */
  workDoneToken?: number | string;
};

/**
 * `crossfile.score`'s answer.
 */
export type ScoreResult = {
  caseId: string;
  /**
   * `cceval`, `repoeval`, `history` or `evocodebench`.
   */
  benchmark: string;
  metrics: Metrics;
  scored: Scored;
  /**
   * The text scored (an EvoCodeBench case: the body tested).
   */
  prediction: string;
  reference: string;
  /**
   * An EvoCodeBench case: how its tests ended on the body.
   */
  outcome?: TestOutcome;
};

/**
 * What was scored: the model's raw output behind the server's own suggestion, or the text given.
 */
export type Scored = "raw" | "given";

/**
 * `crossfile.status`'s answer.
 */
export type StatusResult = {
  /**
   * The server's version.
   */
  version: string;
  model: ModelStatus;
  backend: BackendStatus;
  /**
   * Where indexes, vectors and fetched models are kept.
   */
  cacheDir: string;
  /**
   * The user's config file, and whether it exists.
   */
  userConfig: string | null;
  userConfigExists: boolean;
  /**
   * The retriever completions use.
   */
  retriever: string;
  folders: Array<FolderStatus>;
  /**
   * The arena, when a folder has it on (`arena.enabled` and two arms or more).
   */
  arena: ArenaStatus | null;
};

/**
 * How a case's tests ended on one body.
 */
export type TestOutcome = {
  /**
   * `pass`, `fail`, `timeout` or `error`.
   */
  status: string;
  passed: boolean;
  tests: Array<TestRunInfo>;
  /**
   * The first test that did not pass.
   */
  firstFailure: string | null;
  /**
   * Why the tests could not run.
   */
  message: string | null;
  secs: number;
  /**
   * Recall@1 of the body's dependencies, when the case lists them.
   */
  recall: number | null;
};

/**
 * One test run.
 */
export type TestRunInfo = {
  id: string;
  status: string;
  exitCode: number | null;
  secs: number;
  /**
   * The tail of its output.
   */
  output: string;
};

/**
 * Where the time went, in milliseconds.
 */
export type TimingsMs = {
  retrieve: number;
  prompt: number;
  generate: number;
  postprocess: number;
  firstToken: number | null;
};
