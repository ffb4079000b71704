// A replayed case as the status bar states it: its place in the file and, for a case mined from
// history, its line's category; its scores as its benchmark states them: each metric in the
// benchmark's own scale (CrossCodeEval's edit similarity 0–100, and history cases', scored as its
// lines; RepoEval's 0–1; EvoCodeBench's pass@1 and recall@1), labelled with the benchmark's name,
// so two scales never sit side by side unlabelled. No vscode import, so it can be unit-tested.

import type { Metrics } from './protocol';

/** How a benchmark (`crossfile.score`'s `benchmark`) is named, and the metric the status bar shows. */
const BENCHMARKS: Record<string, { name: string; headline: string }> = {
  cceval: { name: 'CrossCodeEval', headline: 'es' },
  repoeval: { name: 'RepoEval', headline: 'es' },
  history: { name: 'History', headline: 'es' },
  evocodebench: { name: 'EvoCodeBench', headline: 'pass@1' },
};

/** Metric names as the benchmarks' papers print them. */
const LABELS: Record<string, string> = { es: 'ES', em: 'EM', chrf: 'chrF', id_em: 'ID EM', id_f1: 'ID F1' };

/** The metrics whose scale is 0–100 (percentages); every other metric is 0–1 or a count. */
const PERCENT: Record<string, Set<string>> = {
  cceval: new Set(['es', 'em', 'chrf', 'id_em', 'id_f1']),
  history: new Set(['es', 'em', 'chrf', 'id_em', 'id_f1']),
  repoeval: new Set(['chrf']),
};

/** The status bar's place of a replayed case, `case 3/70`, and its category when it has one: `case 3/70 · inproject`. */
export function caseLabel(index: number, count: number, category?: string): string {
  const place = `case ${index + 1}/${count}`;
  return category ? `${place} · ${category}` : place;
}

export function benchmarkName(benchmark: string): string {
  return BENCHMARKS[benchmark]?.name ?? benchmark;
}

export function metricLabel(key: string): string {
  return LABELS[key] ?? key;
}

/**
 * One metric's value in its benchmark's scale: 0–100 with one decimal (`71.4`), 0–1 with three
 * (`0.714`), whole numbers as they are; `–` for no value.
 */
export function formatMetric(benchmark: string, key: string, value: number | null | undefined): string {
  if (typeof value !== 'number') return '–';
  if (Number.isInteger(value)) return String(value);
  const digits = PERCENT[benchmark]?.has(key) ? 1 : 3;
  return String(Number(value.toFixed(digits)));
}

/** A case's scores by metric, or why it has none. */
export function scoresOf(metrics: Metrics): Record<string, number> | { error: string } {
  const error = (metrics as { error?: unknown }).error;
  return typeof error === 'string' ? { error } : (metrics as Record<string, number>);
}

/** Every metric, `ES 71.4 · EM 0 · …`, or why there are none. */
export function metricsLine(benchmark: string, metrics: Metrics): string {
  const scores = scoresOf(metrics);
  if (typeof scores.error === 'string') return `not scored: ${scores.error}`;
  return Object.entries(scores)
    .map(([k, v]) => `${metricLabel(k)} ${formatMetric(benchmark, k, v as number)}`)
    .join(' · ');
}

/** The status bar's part: the benchmark and its headline metric, `CrossCodeEval ES 71.4`, `RepoEval ES 0.714`. */
export function headline(benchmark: string, metrics: Metrics): string | undefined {
  const key = BENCHMARKS[benchmark]?.headline ?? 'es';
  const value = (scoresOf(metrics) as Record<string, unknown>)[key];
  if (typeof value !== 'number') return undefined;
  return `${benchmarkName(benchmark)} ${metricLabel(key)} ${formatMetric(benchmark, key, value)}`;
}
