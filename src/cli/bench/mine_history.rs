//! `crossfile bench mine-history REPO --out CASES.jsonl --repos-dir DIR`: line cases mined from a
//! git repository's history ([`crossfile_bench::mine::history`]), written as `--format history`
//! records; each case's context, its commit's parent tree, is written once under
//! `DIR/<repository>` (kept when already there), so `bench run --format history --repos DIR`
//! replays them.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use clap::Args;
use serde_json::json;

use crossfile_bench::bench::cases::history::Category;
use crossfile_bench::mine::history::{HistoryParams, mine_history};
use crossfile_engine::choice::Choice;
use crossfile_engine::config::{Options, Settings};

#[derive(Debug, Args)]
pub struct BenchMineHistoryArgs {
    /// The git repository (its work tree or its `.git` folder); HEAD's history is read.
    pub repo: PathBuf,
    /// Where to write the cases, one JSON record per line (replaced if it exists).
    #[arg(long, value_name = "CASES.jsonl")]
    pub out: PathBuf,
    /// Where each parent commit's tree is written, as `DIR/<repo>-<parent id's first 12>`.
    #[arg(long, value_name = "DIR")]
    pub repos_dir: PathBuf,
    /// Completion files drawn from the files the history adds.
    #[arg(long, default_value_t = 20)]
    pub files: usize,
    /// Target lines drawn per file, in turn from each category present.
    #[arg(long, default_value_t = 10)]
    pub lines_per_file: usize,
    /// The seed of every random choice: the same repository, options and seed give the same file.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Only commits made on or after this day (YYYY-MM-DD, UTC).
    #[arg(long, value_name = "YYYY-MM-DD")]
    pub since: Option<String>,
    /// Read at most this many commits (newest first; merges not counted).
    #[arg(long)]
    pub max_commits: Option<usize>,
    /// Fewest lines of a completion file (Long Code Arena's 200).
    #[arg(long, default_value_t = 200)]
    pub min_lines: usize,
    /// Most lines of a completion file (Long Code Arena's 2,000).
    #[arg(long, default_value_t = 2000)]
    pub max_lines: usize,
    /// Leave out an added file when at least this share of its lines (trimmed, blank ones not
    /// counted) is in one file of the parent that its commit deletes or changes, or that has
    /// its name or its folder: a move or copy, whose lines the context already holds.
    #[arg(long, default_value_t = 0.9, value_name = "SHARE")]
    pub copy_similarity: f64,
    /// Keep moved and copied files as cases.
    #[arg(long)]
    pub keep_copies: bool,
    /// Only these languages (python, java, typescript, csharp); repeat or separate by commas.
    #[arg(long = "language", value_delimiter = ',')]
    pub languages: Vec<String>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &BenchMineHistoryArgs) -> anyhow::Result<()> {
    const FAMILIES: [&str; 4] = ["python", "java", "typescript", "csharp"];
    if let Some(bad) = args
        .languages
        .iter()
        .find(|l| !FAMILIES.contains(&l.as_str()))
    {
        anyhow::bail!("--language {bad:?}: one of {}", FAMILIES.join(", "));
    }
    if args.min_lines > args.max_lines {
        anyhow::bail!(
            "--min-lines {} is over --max-lines {}",
            args.min_lines,
            args.max_lines
        );
    }
    if !(args.copy_similarity > 0.0 && args.copy_similarity <= 1.0) {
        anyhow::bail!(
            "--copy-similarity {}: a share above 0 and at most 1",
            args.copy_similarity
        );
    }
    let since = args.since.as_deref().map(parse_day).transpose()?;
    let started = Instant::now();
    let settings = Settings::load_without_workspace(Options::default())?;
    let params = HistoryParams {
        files: args.files,
        lines_per_file: args.lines_per_file,
        seed: args.seed,
        since,
        max_commits: args.max_commits,
        min_lines: args.min_lines,
        max_lines: args.max_lines,
        languages: args.languages.clone(),
        max_file_bytes: settings.index.workspace.max_file_bytes,
        copy_similarity: (!args.keep_copies).then_some(args.copy_similarity),
    };
    let progress = |message: &str| {
        let _ = writeln!(std::io::stderr().lock(), "mine-history: {message}");
    };
    let mined = mine_history(&args.repo, &args.repos_dir, &params, &progress)
        .with_context(|| format!("mining {}", args.repo.display()))?;
    super::mine::write_cases(&args.out, &mined.records)?;
    if mined.missing_objects > 0 {
        progress(&format!(
            "warning: {} file(s) of the context trees are missing from the repository (a partial \
             clone?) and were left out",
            mined.missing_objects
        ));
    }
    let seconds = started.elapsed().as_secs_f64();
    let mut categories: Vec<(Category, usize)> = Category::all().iter().map(|&c| (c, 0)).collect();
    for record in &mined.records {
        if let Some(slot) = categories
            .iter_mut()
            .find(|(c, _)| *c == record.metadata.category)
        {
            slot.1 += 1;
        }
    }
    let files: std::collections::BTreeSet<(&str, &str)> = mined
        .records
        .iter()
        .map(|r| (r.metadata.commit.as_str(), r.metadata.path.as_str()))
        .collect();
    if args.json {
        let by_category: serde_json::Map<String, serde_json::Value> = categories
            .iter()
            .map(|(c, n)| (c.name().to_string(), json!(n)))
            .collect();
        return super::super::print_json(&json!({
            "repo": args.repo,
            "out": args.out,
            "repos_dir": args.repos_dir,
            "seed": args.seed,
            "commits": mined.commits,
            "candidates": mined.candidates,
            "skipped": mined.skipped,
            "files": files.len(),
            "cases": mined.records.len(),
            "categories": by_category,
            "folders": mined.folders,
            "trees_written": mined.trees_written,
            "missing_objects": mined.missing_objects,
            "seconds": seconds,
        }));
    }
    let shares: Vec<String> = categories
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(c, n)| format!("{c} {n}"))
        .collect();
    super::super::print_line(&format!(
        "{} cases ({}) from {} files of {} qualifying, {} commits read, in {seconds:.2} s -> {}",
        mined.records.len(),
        shares.join(", "),
        files.len(),
        mined.candidates,
        mined.commits,
        args.out.display()
    ))
}

/// Midnight UTC of `day` (YYYY-MM-DD), in seconds since the Unix epoch.
fn parse_day(day: &str) -> anyhow::Result<i64> {
    let bad = || anyhow::anyhow!("--since {day:?}: a day as YYYY-MM-DD");
    let parts: Vec<&str> = day.split('-').collect();
    let [y, m, d] = parts[..] else {
        return Err(bad());
    };
    let year: i32 = y.parse().map_err(|_| bad())?;
    let month: u8 = m.parse().map_err(|_| bad())?;
    let month = time::Month::try_from(month).map_err(|_| bad())?;
    let date = time::Date::from_calendar_date(year, month, d.parse().map_err(|_| bad())?)
        .map_err(|_| bad())?;
    Ok(date.midnight().assume_utc().unix_timestamp())
}
