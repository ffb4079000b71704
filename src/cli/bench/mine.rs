//! `crossfile bench mine ROOT --out CASES.jsonl`: mine CrossCodeEval-style line-completion cases
//! from a workspace and write them as CrossCodeEval jsonl.
//!
//! The workspace is indexed (or its index brought up to date) first; the cases come from
//! [`crossfile_bench::mine`]. `metadata.repository` is ROOT's folder name, so a replay given
//! ROOT's parent folder as its repositories directory finds the workspace. Fewer qualifying
//! cursors than `--n` is not an error: all of them are written and stderr says so; none at all
//! (a single-file workspace) writes an empty file, says why on stderr and exits 0.
//!
//! CrossCodeEval's quality filters are on by default (flags change or turn off each); stderr
//! says how many candidate cursors each dropped and how many cases the leak audit flagged.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use clap::Args;
use serde_json::json;

use crossfile_bench::mine::lines::{
    CCEVAL_MAX_REFERENCE_TOKENS, CCEVAL_MIN_REFERENCE_TOKENS, DEFAULT_MIN_LEAK_CHARS,
    DEFAULT_MIN_PROMPT_LINES, Filters, MineParams, Mined, mine,
};
use crossfile_engine::config::Settings;
use crossfile_engine::index::Index;

use super::super::args::IndexFlags;
use super::super::progress::index_bar;

#[derive(Debug, Args)]
pub struct BenchMineArgs {
    /// The workspace root; its folder name becomes each case's `metadata.repository`.
    pub root: PathBuf,
    /// Where to write the cases, one CrossCodeEval JSON record per line (replaced if it exists).
    #[arg(long, value_name = "CASES.jsonl")]
    pub out: PathBuf,
    /// How many cases at most.
    #[arg(long, default_value_t = 100)]
    pub n: usize,
    /// The seed of every random choice: the same ROOT, options and seed give the same file.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Fewest whole lines above the cursor's line (crossfile's 10; 0 turns it off).
    #[arg(long, default_value_t = DEFAULT_MIN_PROMPT_LINES)]
    pub min_prompt_lines: usize,
    /// Fewest tokens of the reference (CrossCodeEval's 3): word runs and other characters.
    #[arg(long, default_value_t = CCEVAL_MIN_REFERENCE_TOKENS)]
    pub min_reference_tokens: usize,
    /// Most tokens of the reference (CrossCodeEval's 30).
    #[arg(long, default_value_t = CCEVAL_MAX_REFERENCE_TOKENS)]
    pub max_reference_tokens: usize,
    /// Keep cursors whose reference (trimmed) is another cursor's of the same file.
    #[arg(long)]
    pub allow_duplicate_references: bool,
    /// Audit references of at least this many characters (trimmed) for leaks.
    #[arg(long, default_value_t = DEFAULT_MIN_LEAK_CHARS)]
    pub min_leak_chars: usize,
    /// Drop cases whose reference occurs verbatim in another indexed file (kept, with
    /// `metadata.leak`, otherwise).
    #[arg(long)]
    pub drop_leaks: bool,
    #[command(flatten)]
    pub index: IndexFlags,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &BenchMineArgs) -> anyhow::Result<()> {
    if args.min_reference_tokens > args.max_reference_tokens {
        anyhow::bail!(
            "--min-reference-tokens {} is over --max-reference-tokens {}",
            args.min_reference_tokens,
            args.max_reference_tokens
        );
    }
    let filters = Filters {
        min_prompt_lines: args.min_prompt_lines,
        min_reference_tokens: args.min_reference_tokens,
        max_reference_tokens: args.max_reference_tokens,
        allow_duplicate_references: args.allow_duplicate_references,
        min_leak_chars: args.min_leak_chars,
        drop_leaks: args.drop_leaks,
    };
    let started = Instant::now();
    let settings = Settings::load_with(&args.root, args.index.options())?;
    let (index, _) = Index::open_or_build(&args.root, &settings.index, &index_bar())
        .with_context(|| format!("indexing {}", args.root.display()))?;
    let index_s = started.elapsed().as_secs_f64();
    let snapshot = index.snapshot();
    let repository = index
        .root()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .context("the workspace root has no folder name")?;
    let mined = mine(
        &snapshot,
        &MineParams {
            n: args.n,
            seed: args.seed,
            repository: repository.clone(),
            filters: filters.clone(),
        },
    );
    write_cases(&args.out, &mined.cases)?;
    let seconds = started.elapsed().as_secs_f64();

    let root = index.root().display();
    note(&filter_line(&mined, &filters))?;
    if mined.cases.is_empty() && mined.exhausted && mined.candidates == 0 {
        warn(&format!(
            "no qualifying cursors in {root}: no line of its {} usable files uses an identifier \
             that another file of the workspace defines or that it imports from the workspace \
             (a single-file workspace has none); wrote an empty {}",
            mined.files,
            args.out.display()
        ))?;
    } else if mined.cases.is_empty() && mined.exhausted {
        warn(&format!(
            "no qualifying cursors in {root}: the filters dropped all {} candidate cursors; \
             wrote an empty {}",
            mined.candidates,
            args.out.display()
        ))?;
    } else if mined.exhausted {
        warn(&format!(
            "only {} qualifying cursors in {root} (asked for {}); wrote all of them",
            mined.cases.len(),
            args.n
        ))?;
    }
    if args.json {
        let languages: serde_json::Map<String, serde_json::Value> = mined
            .per_language
            .iter()
            .map(|(family, n)| ((*family).to_owned(), json!(n)))
            .collect();
        return super::super::print_json(&json!({
            "root": index.root(),
            "repository": repository,
            "out": args.out,
            "requested": args.n,
            "seed": args.seed,
            "cases": mined.cases.len(),
            "exhausted": mined.exhausted,
            "languages": languages,
            "files": mined.files,
            "files_scanned": mined.files_scanned,
            "filters": {
                "min_prompt_lines": filters.min_prompt_lines,
                "min_reference_tokens": filters.min_reference_tokens,
                "max_reference_tokens": filters.max_reference_tokens,
                "allow_duplicate_references": filters.allow_duplicate_references,
                "min_leak_chars": filters.min_leak_chars,
                "drop_leaks": filters.drop_leaks,
            },
            "candidates": mined.candidates,
            "dropped": {
                "short_prompt": mined.dropped.short_prompt,
                "few_reference_tokens": mined.dropped.few_reference_tokens,
                "many_reference_tokens": mined.dropped.many_reference_tokens,
                "duplicate_reference": mined.dropped.duplicate_reference,
                "leak": mined.dropped.leak,
            },
            "leaks": mined.leaks,
            "index_seconds": index_s,
            "seconds": seconds,
        }));
    }
    let languages: Vec<String> = mined
        .per_language
        .iter()
        .map(|(family, n)| format!("{family} {n}"))
        .collect();
    super::super::print_line(&format!(
        "{} cases ({}) from {} of {} files of {repository}, {} flagged as leaks, in {seconds:.2} s \
         -> {}",
        mined.cases.len(),
        languages.join(", "),
        mined.files_scanned,
        mined.files,
        mined.leaks,
        args.out.display()
    ))
}

/// What the filters did, for stderr: the candidates, each filter's drops, the leaks flagged.
fn filter_line(mined: &Mined, filters: &Filters) -> String {
    let d = &mined.dropped;
    let mut parts = vec![
        format!(
            "{} under {} prompt lines",
            d.short_prompt, filters.min_prompt_lines
        ),
        format!(
            "{} under {} reference tokens",
            d.few_reference_tokens, filters.min_reference_tokens
        ),
        format!(
            "{} over {} reference tokens",
            d.many_reference_tokens, filters.max_reference_tokens
        ),
        if filters.allow_duplicate_references {
            "duplicate references allowed".to_owned()
        } else {
            format!("{} duplicate references", d.duplicate_reference)
        },
    ];
    if filters.drop_leaks {
        parts.push(format!("{} leaked cases", d.leak));
    }
    let mut line = format!(
        "filters: {} candidate cursors in the {} files parsed; dropped {}",
        mined.candidates,
        mined.files_scanned,
        parts.join(", ")
    );
    if !filters.drop_leaks {
        line.push_str(&format!(
            "; {} of {} cases flagged as leaks (reference of {}+ characters verbatim in another \
             file: metadata.leak)",
            mined.leaks,
            mined.cases.len(),
            filters.min_leak_chars
        ));
    }
    line
}

/// Writes the records, one JSON line each, to a temporary file beside `out`, then renames it,
/// so `out` is never half-written.
pub(super) fn write_cases(out: &Path, cases: &[impl serde::Serialize]) -> anyhow::Result<()> {
    let dir = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("creating a file in {}", dir.display()))?;
    {
        let mut w = std::io::BufWriter::new(tmp.as_file_mut());
        for case in cases {
            serde_json::to_writer(&mut w, case)?;
            w.write_all(b"\n")?;
        }
        w.flush()
            .with_context(|| format!("writing {}", out.display()))?;
    }
    tmp.persist(out)
        .with_context(|| format!("writing {}", out.display()))?;
    Ok(())
}

fn note(message: &str) -> anyhow::Result<()> {
    let mut stderr = std::io::stderr().lock();
    writeln!(stderr, "{message}")?;
    Ok(())
}

fn warn(message: &str) -> anyhow::Result<()> {
    let mut stderr = std::io::stderr().lock();
    writeln!(stderr, "warning: {message}")?;
    Ok(())
}
