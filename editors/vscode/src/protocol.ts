// The shapes of the server's `crossfile.*` command answers (docs/lsp-extensions.md; the server's src/lsp/ext.rs). Types only:
// every value here comes from the server.

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
