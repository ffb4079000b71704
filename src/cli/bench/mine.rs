//! `crossfile bench mine ROOT --out CASES.jsonl`: mine CrossCodeEval-style line-completion cases
//! from a workspace and write them as CrossCodeEval jsonl.
//!
//! The workspace is indexed (or its index brought up to date) first; the cases come from
//! [`crossfile::mine`]. `metadata.repository` is ROOT's folder name, so a replay given
//! ROOT's parent folder as its repositories directory finds the workspace. Fewer qualifying
//! cursors than `--n` is not an error: all of them are written and stderr says so; none at all
//! (a single-file workspace) writes an empty file, says why on stderr and exits 0.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use clap::Args;
use serde_json::json;

use crossfile::config::Settings;
use crossfile::index::Index;
use crossfile::mine::lines::{MineParams, mine};

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
    /// The seed of every random choice: the same ROOT, N and seed give the same file.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[command(flatten)]
    pub index: IndexFlags,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &BenchMineArgs) -> anyhow::Result<()> {
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
        },
    );
    write_cases(&args.out, &mined.cases)?;
    let seconds = started.elapsed().as_secs_f64();

    let root = index.root().display();
    if mined.cases.is_empty() && mined.exhausted {
        warn(&format!(
            "no qualifying cursors in {root}: no line of its {} usable files uses an identifier \
             that another file of the workspace defines or that it imports from the workspace \
             (a single-file workspace has none); wrote an empty {}",
            mined.files,
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
        "{} cases ({}) from {} of {} files of {repository} in {seconds:.2} s -> {}",
        mined.cases.len(),
        languages.join(", "),
        mined.files_scanned,
        mined.files,
        args.out.display()
    ))
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

fn warn(message: &str) -> anyhow::Result<()> {
    let mut stderr = std::io::stderr().lock();
    writeln!(stderr, "warning: {message}")?;
    Ok(())
}
