// The types mirror src/lsp/ext.rs, documented in docs/lsp-extensions.md; every value here comes from the server.

export interface LspPosition {
  line: number;
  character: number;
}

export interface CaseRow {
  id: string;
  index: number;
  language: string;
  repository: string;
  path: string;
  line: number;
  /** A case mined from history: its line's category. */
  category?: string;
}

export interface ReplayedCase {
  id: string;
  index: number;
  count: number;
  benchmark: string;
  language: string;
  path: string;
  line: number;
  target: string;
  /** A case mined from history: its line's category (`inproject`, `committed`, …). */
  category?: string;
  /** A case mined from history: the line's identifiers that decided its category. */
  identifiers?: string[];
}

export interface ReplayAnswer {
  uri: string;
  text: string;
  position: LspPosition;
  case: ReplayedCase;
}

export type Metrics = Record<string, number | string | null | { error: string }>;

/** One test run on a body (EvoCodeBench). */
export interface TestRun {
  id: string;
  status: 'pass' | 'fail' | 'error' | 'timeout';
  exitCode: number | null;
  secs: number;
  output: string;
}

/** A body's tests: how they ended, each test run, the first that did not pass. */
export interface Outcome {
  status: 'pass' | 'fail' | 'error' | 'timeout';
  passed: boolean;
  tests: TestRun[];
  firstFailure: string | null;
  message: string | null;
  secs: number;
  recall: number | null;
}

export interface ScoreAnswer {
  caseId: string;
  benchmark: string;
  metrics: Metrics;
  scored: 'raw' | 'given';
  prediction: string;
  reference: string;
  /** An EvoCodeBench case's: its tests run on the body. */
  outcome?: Outcome;
}

export interface Chunk {
  path: string;
  uri: string | null;
  startLine: number | null;
  endLine: number | null;
  score: number;
  /** Compare only: where the chunk comes from relative to the cursor's file. */
  origin?: 'same_file' | 'same_dir' | 'imported' | 'elsewhere';
  /** The source that gave it, when a `mix:` retriever composed the context. */
  source?: string;
  text?: string;
}

export interface PromptTokens {
  crossfile: number;
  left: number;
  right: number;
  total: number;
}

export interface DiffRun {
  op: 'equal' | 'delete' | 'insert';
  text: string;
}

export interface CompletionInfo {
  retriever: string;
  upperBound: boolean;
  chunks?: Chunk[];
  promptTokens?: PromptTokens;
  suggestion?: string;
  latencyMs?: number;
  error?: string;
}

export interface CompareResult extends CompletionInfo {
  /** At a replayed case: the share (0–1) of the reference's identifiers the chunks hold. */
  overlap?: number;
  diff?: DiffRun[];
  metrics?: Metrics;
  /** At an EvoCodeBench case's cursor: the body tested and how its tests ended. */
  body?: string;
  outcome?: Outcome;
}

export interface CompareAnswer {
  uri: string;
  position: LspPosition;
  caseId: string | null;
  reference: string | null;
  results: CompareResult[];
}

export interface ContextAnswer extends CompletionInfo {
  uri: string;
  position: LspPosition;
  caseId: string | null;
  rawSuggestion: string;
  prompt: string;
  /** Which model answered: a catalogue name, a GGUF file name, or an HTTP backend and model. */
  model: string;
  timingsMs: Record<string, number | null>;
}

/** A retriever spec form (`crossfile.retrievers`); a composite form's `spec` is a pattern. */
export interface RetrieverInfo {
  spec: string;
  summary: string;
  /** What it needs beyond an index: an embeddings endpoint, a replayed case's shipped context, its parts. */
  needs: 'nothing' | 'dense-endpoint' | 'case-context' | 'parts';
  /** Whether the first folder's settings provide what it needs. */
  available: boolean;
  /** It sees the reference: its scores are an upper bound. */
  upperBound: boolean;
  /** A pattern over other specs (`mmr:<spec>[:<lambda in 0..1>]`, `hybrid:<spec>+<spec>[+<spec>...]`). */
  composite: boolean;
  /** The retriever completions use. */
  default: boolean;
}

/** The model: its label, where its file comes from, whether it is there and loaded. */
export interface ModelStatus {
  /** As the status bar shows it: a catalogue name, a GGUF file name, or an HTTP backend and its model. */
  label: string;
  /** `catalogue`: fetched into the cache on first use; `path`: `model.path`. */
  source: 'catalogue' | 'path';
  name: string | null;
  file: string;
  present: boolean;
  loaded: boolean;
  /** While it is being fetched: what is being done. */
  downloading: string | null;
}

export interface BackendStatus {
  kind: string;
  /** An HTTP backend's endpoint: where the workspace's code is sent. */
  endpoint: string | null;
  model: string | null;
}

export interface FolderStatus {
  name: string;
  root: string;
  index: 'building' | 'ready' | 'failed';
  /** When the index is ready. */
  files: number | null;
  chunks: number | null;
  /** When building the index failed. */
  error: string | null;
  /** Whether its crossfile.toml may choose endpoints, model files and the cache directory. */
  trusted: boolean;
}

/** `crossfile.status`: what the server resolved from every settings layer, for the first folder. */
export interface StatusAnswer {
  version: string;
  model: ModelStatus;
  backend: BackendStatus;
  cacheDir: string;
  userConfig: string | null;
  userConfigExists: boolean;
  retriever: string;
  folders: FolderStatus[];
  /** Battles and votes (issue 34); null when no folder has the arena on (absent from older servers). */
  arena?: ArenaStatus | null;
}

/** `crossfile.status`'s `arena`: present when a folder has the arena on. */
/** The arena, present only when a folder has it on. */
export interface ArenaStatus {
  /** Each arm as its spec string. */
  arms: string[];
  /** The votes file. */
  votes: string;
  /** The seed of the pair draws (the settings' or the session's; below 2^53). */
  seed: number;
  /** Battles shown, votes written, battles that failed (an arm failed), and left out (a blank suggestion). */
  battles: number;
  recorded: number;
  failed: number;
  blank: number;
}

/** `crossfile.arenaVote`'s answer; `recorded: false` when the battle was no longer pending. */
export interface ArenaVoteAnswer {
  recorded: boolean;
  votes: string;
}

/** `crossfile.arenaReveal`: the session's last decided battle, its arms revealed, in shown order. */
export interface ArenaReveal {
  battle: number;
  /** `arms[0]` made suggestion 1, `arms[1]` suggestion 2. */
  arms: string[];
  /** 1 or 2: the suggestion accepted; null: no choice. */
  picked: 1 | 2 | null;
  texts: string[];
  latencyMs: number[];
  caseId: string | null;
  metrics: Metrics[] | null;
  /** Where the battle was: the file (relative to its workspace folder), the 1-based line and column. */
  path: string;
  line: number;
  col: number;
  /** The votes file. */
  votes: string;
}
