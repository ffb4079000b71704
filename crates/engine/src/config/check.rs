//! Range checks of one layer of options: every bad value, by dotted key. A named choice is
//! checked where it is parsed, by its type (`crate::choice`).

use super::Problem;
use super::options::Options;

/// Every out-of-range value of `options`.
pub fn problems(options: &Options) -> Vec<Problem> {
    let mut out = Problems(Vec::new());
    if let Some(w) = &options.workspace
        && w.max_file_bytes == Some(0)
    {
        out.bad("workspace.max_file_bytes", "must be at least 1".into());
    }
    if let Some(i) = &options.index {
        out.range("index.fixed_lines", i.fixed_lines, 1, 10_000);
        out.range("index.sliding_lines", i.sliding_lines, 1, 10_000);
        out.range("index.sliding_stride", i.sliding_stride, 1, 10_000);
        out.range("index.syntax_max_lines", i.syntax_max_lines, 1, 10_000);
    }
    if let Some(r) = &options.retrieve {
        out.range("retrieve.top_k", r.top_k.map(|k| k as u64), 1, 1000);
        out.range("retrieve.query_lines", r.query_lines, 1, 10_000);
        out.range(
            "retrieve.jaccard_query_lines",
            r.jaccard_query_lines,
            1,
            10_000,
        );
        if let Some(k) = r.rrf_k
            && !(k.is_finite() && k >= 0.0)
        {
            out.bad(
                "retrieve.rrf_k",
                format!("{k} must be a finite number >= 0"),
            );
        }
        if let Some(d) = &r.dense {
            out.url("retrieve.dense.endpoint", d.endpoint.as_deref());
            out.env_name("retrieve.dense.api_key_env", d.api_key_env.as_deref());
            out.range("retrieve.dense.timeout_ms", d.timeout_ms, 1, 3_600_000);
        }
    }
    if let Some(m) = &options.model {
        if let Some(name) = &m.name
            && crate::model::catalogue::by_name(name).is_none()
        {
            out.bad(
                "model.name",
                format!(
                    "`{name}` is not a model of the catalogue ({}; `crossfile model list`)",
                    crate::model::catalogue::names()
                ),
            );
        }
        out.range("model.n_ctx", m.n_ctx, 128, 1 << 20);
        out.range("model.threads", m.threads, 1, 1024);
        out.range("model.kv_slots", m.kv_slots, 1, 16);
        out.range("model.kv_shift_min_span", m.kv_shift_min_span, 0, 1 << 20);
    }
    if let Some(b) = &options.backend {
        out.url("backend.endpoint", b.endpoint.as_deref());
        out.env_name("backend.api_key_env", b.api_key_env.as_deref());
        out.range("backend.timeout_ms", b.timeout_ms, 1, 3_600_000);
        out.range("backend.retries", b.retries, 0, 10);
        out.range(
            "backend.cache_entries",
            b.cache_entries.map(|n| n as u64),
            0,
            1_000_000,
        );
    }
    if let Some(p) = &options.prompt {
        out.range("prompt.crossfile_tokens", p.crossfile_tokens, 0, 1 << 20);
        out.range("prompt.max_new_tokens", p.max_new_tokens, 1, 1 << 16);
    }
    if let Some(l) = &options.lsp {
        out.range("lsp.debounce_ms", l.debounce_ms, 0, 10_000);
        out.range("lsp.max_generate_ms", l.max_generate_ms, 0, 600_000);
        out.range(
            "lsp.right_context_lines",
            l.right_context_lines.map(u64::from),
            0,
            1_000_000,
        );
        out.range(
            "lsp.max_suggestion_chars",
            l.max_suggestion_chars.map(|n| n as u64),
            1,
            1_000_000,
        );
    }
    if let Some(a) = &options.arena {
        out.range("arena.seed", a.seed, 0, super::arena::MAX_SEED);
    }
    out.0
}

struct Problems(Vec<Problem>);

impl Problems {
    fn bad(&mut self, key: &str, message: String) {
        self.0.push(Problem {
            key: key.into(),
            message,
        });
    }

    fn range<T: Into<u64> + Copy>(&mut self, key: &str, value: Option<T>, lo: u64, hi: u64) {
        if let Some(v) = value.map(Into::into)
            && !(lo..=hi).contains(&v)
        {
            self.bad(key, format!("{v} is out of range {lo}..={hi}"));
        }
    }

    fn url(&mut self, key: &str, value: Option<&str>) {
        if let Some(v) = value
            && !(v.starts_with("http://") || v.starts_with("https://"))
        {
            self.bad(key, format!("`{v}` is not an http:// or https:// URL"));
        }
    }

    /// An environment variable's name: secrets live in the environment, never in config files.
    fn env_name(&mut self, key: &str, value: Option<&str>) {
        if let Some(v) = value
            && (v.is_empty() || !v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        {
            self.bad(
                key,
                "must be the name of an environment variable (letters, digits, `_`), not a key"
                    .into(),
            );
        }
    }
}
