//! `crossfile bench arena VOTES.jsonl [--html OUT] [--json]`: the arms of a votes file ranked by
//! Bradley–Terry strength, with intervals, the win-rate matrix and position bias; and `bench
//! arena simulate`, which replays cases with the arms (as `bench run`) and casts a reference
//! voter's votes on them.

use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Subcommand};

use crossfile_bench::arena::simulate::{Voter, simulate};
use crossfile_bench::arena::standings::{Share, Standings};
use crossfile_bench::arena::{Vote, standings, vote};
use crossfile_bench::bench::ReplayFormat;
use crossfile_bench::report::bootstrap::Bootstrap;

use super::super::args::{IndexFlags, ModelFlags, choice, replay_format};
use super::executed::HarnessArgs;
use super::run::{BenchRunArgs, ExecRunArgs};

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct BenchArenaArgs {
    #[command(subcommand)]
    pub command: Option<ArenaCommand>,
    /// The votes file (JSON lines, as the editors append them; docs/arena.md).
    #[arg(required = true)]
    pub votes: Option<PathBuf>,
    #[command(flatten)]
    pub read: ReadFlags,
}

#[derive(Debug, Subcommand)]
pub enum ArenaCommand {
    /// Replay cases with each arm (as `bench run`, into a resumable run file) and cast votes with
    /// a reference voter that prefers the higher ES (or EM); ties are no choice. Prints the
    /// ranking of the votes.
    Simulate(Box<SimulateArgs>),
}

/// How votes are read into standings.
#[derive(Debug, Args)]
pub struct ReadFlags {
    /// Bootstrap resamples of the battles for each interval.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub resamples: usize,
    /// The bootstrap's seed.
    #[arg(long, value_name = "S", default_value_t = crossfile_bench::report::bootstrap::BOOTSTRAP_SEED)]
    pub seed: u64,
    /// Print one JSON document instead of Markdown.
    #[arg(long)]
    pub json: bool,
    /// Also write the standings as one self-contained HTML page (charts, nothing fetched).
    #[arg(long, value_name = "OUT.html")]
    pub html: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// The cases' format: completion cases (cceval, repoeval, history).
    #[arg(long, value_name = "FORMAT", value_parser = replay_format())]
    pub format: ReplayFormat,
    /// The cases file (jsonl).
    #[arg(long, value_name = "FILE")]
    pub cases: PathBuf,
    /// The folder holding each case's repository as DIR/<repository>.
    #[arg(long, value_name = "DIR")]
    pub repos: PathBuf,
    /// Two or more arms: retriever specs, comma-separated.
    #[arg(long, value_name = "SPEC,SPEC[,…]")]
    pub arms: String,
    /// What the reference voter prefers: es (the higher edit similarity) or em.
    #[arg(long, value_name = "es|em", value_parser = choice::<Voter>())]
    pub voter: Voter,
    /// Battles to cast.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub battles: usize,
    /// The seed that draws each battle's case, pair and order.
    #[arg(long = "battle-seed", value_name = "S", default_value_t = 0)]
    pub battle_seed: u64,
    /// The votes file to write (replaced).
    #[arg(long, value_name = "VOTES.jsonl")]
    pub out: PathBuf,
    /// The run file the arms' replays go to (resumed when it exists; default: beside --out,
    /// VOTES.run.jsonl).
    #[arg(long, value_name = "RUN.jsonl")]
    pub run: Option<PathBuf>,
    /// Run only the first N cases of the file.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Tokens to generate.
    #[arg(long, value_name = "N")]
    pub max_new_tokens: Option<u32>,
    #[command(flatten)]
    pub model: ModelFlags,
    #[command(flatten)]
    pub index: IndexFlags,
    #[command(flatten)]
    pub read: ReadFlags,
}

pub fn run(args: &BenchArenaArgs) -> anyhow::Result<()> {
    if let Some(ArenaCommand::Simulate(simulate)) = &args.command {
        return run_simulate(simulate);
    }
    let path = args.votes.as_ref().context("the votes file is required")?;
    if let Some(out) = &args.read.html {
        crossfile_bench::bench::outputs::refuse_overwriting_inputs(out, &[path])?;
    }
    let read = vote::read(path)?;
    for warning in &read.skipped {
        tracing::warn!("{warning}");
    }
    let skipped = if read.skipped.is_empty() {
        ""
    } else {
        " (every line was skipped)"
    };
    anyhow::ensure!(
        !read.votes.is_empty(),
        "{}: no votes to rank{skipped}",
        path.display()
    );
    print_standings(&read.votes, &args.read, path)
}

/// `bench arena simulate`: the arms replayed as `bench run` replays retrievers, then votes.
fn run_simulate(args: &SimulateArgs) -> anyhow::Result<()> {
    let arms: Vec<String> = args.arms.split(',').map(|a| a.trim().to_string()).collect();
    let run_path = args.run.clone().unwrap_or_else(|| {
        let stem = args.out.file_stem().unwrap_or_default().to_string_lossy();
        args.out.with_file_name(format!("{stem}.run.jsonl"))
    });
    let format = match args.format {
        ReplayFormat::Execution => {
            anyhow::bail!(
                "the arena simulates completion cases (cceval, repoeval, history), not evocodebench"
            )
        }
        format => format,
    };
    let run_args = BenchRunArgs {
        format,
        cases: args.cases.clone(),
        repos: args.repos.clone(),
        retriever: arms.join(","),
        model: args.model.clone(),
        out: run_path.clone(),
        jobs: None,
        limit: args.limit,
        shard: None,
        top_k: None,
        max_new_tokens: args.max_new_tokens,
        index: args.index.clone(),
        retry_errors: false,
        // Unused by line and function cases (`bench run`'s defaults).
        exec: ExecRunArgs {
            setting: None,
            samples: 1,
            temperature: None,
            top_p: 1.0,
            seed: 0,
            k: vec![1],
            limits: HarnessArgs {
                test_timeout: 20.0,
                memory_gb: 5.0,
            },
        },
        json: false,
        summary_on_stderr: true,
    };
    crossfile_bench::bench::outputs::refuse_overwriting_inputs(
        &args.out,
        &[&args.cases, &run_path],
    )?;
    if let Some(html) = &args.read.html {
        crossfile_bench::bench::outputs::refuse_overwriting_inputs(
            html,
            &[&args.cases, &run_path, &args.out],
        )?;
    }
    super::run::run_cmd(&run_args)?;
    let run = super::report::read_checked(&run_path)?;
    let (votes, cases) = simulate(
        &run.records,
        &arms,
        args.voter,
        args.battles,
        args.battle_seed,
    )?;
    write_votes(&args.out, &votes)?;
    tracing::info!(
        "{} votes over {cases} cases written to {}",
        votes.len(),
        args.out.display()
    );
    print_standings(&votes, &args.read, &args.out)
}

/// Replaces the file at `path` with `votes`, one line each.
fn write_votes(path: &std::path::Path, votes: &[Vote]) -> anyhow::Result<()> {
    let mut text = String::new();
    for vote in votes {
        text.push_str(&serde_json::to_string(vote)?);
        text.push('\n');
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let mut file = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot write beside {}", path.display()))?;
    file.write_all(text.as_bytes())?;
    file.persist(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// Ranks `votes` and prints the standings (`--json` or Markdown).
fn print_standings(
    votes: &[Vote],
    args: &ReadFlags,
    source: &std::path::Path,
) -> anyhow::Result<()> {
    let bootstrap = Bootstrap {
        resamples: args.resamples,
        seed: args.seed,
        ..Bootstrap::default()
    };
    let standings = standings(votes, bootstrap);
    for warning in &standings.warnings {
        tracing::warn!("{warning}");
    }
    if let Some(out) = &args.html {
        let page =
            crossfile_bench::arena::html::render_html(&standings, &source.display().to_string());
        std::fs::write(out, page).with_context(|| format!("writing {}", out.display()))?;
        tracing::info!("wrote {}", out.display());
    }
    if args.json {
        return super::super::print_json(&serde_json::to_value(&standings)?);
    }
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(markdown(&standings).as_bytes())
        .context("writing the standings")?;
    Ok(stdout.flush()?)
}

/// The standings as Markdown: the ranking, position bias, the win-rate matrix, agreement with
/// the reference metrics, latency and the ranking per language.
fn markdown(s: &Standings) -> String {
    let mut out = String::new();
    let pct = |x: f64| format!("{:.0}%", x * 100.0);
    let _ = writeln!(out, "{} battles, {} decided\n", s.battles, s.decided);
    let _ = writeln!(
        out,
        "| arm | strength | 95% interval | wins | losses | battles | no choice |\n|---|---:|---|---:|---:|---:|---:|"
    );
    for arm in &s.arms {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} |",
            arm.arm,
            arm.strength.map_or("—".into(), |x| format!("{x:+.3}")),
            arm.ci
                .map_or("—".into(), |[lo, hi]| format!("[{lo:+.3}, {hi:+.3}]")),
            arm.wins,
            arm.losses,
            arm.battles,
            arm.no_choice.map_or("—".into(), pct)
        );
    }
    let share = |label: &str, share: &Share| match share.value {
        None => format!("{label}: no battle tells\n"),
        Some(v) => format!(
            "{label}: {}{} of {} decided battles\n",
            pct(v),
            share.ci.map_or(String::new(), |[lo, hi]| format!(
                " [{}, {}]",
                pct(lo),
                pct(hi)
            )),
            share.n
        ),
    };
    out.push('\n');
    out.push_str(&share(
        "Position bias, the suggestion shown first chosen",
        &s.first_share,
    ));
    out.push_str("\nWin rate of the row's arm against the column's (decided battles):\n\n");
    let m = &s.win_matrix;
    let order = s.matrix_order();
    let names: Vec<&str> = order.iter().map(|&i| m.arms[i].as_str()).collect();
    let _ = writeln!(out, "| | {} |", names.join(" | "));
    let _ = writeln!(out, "|---|{}", "---:|".repeat(order.len()));
    for &i in &order {
        let arm = &m.arms[i];
        let cells: Vec<String> = order
            .iter()
            .map(|&j| match m.rate[i][j] {
                Some(r) => format!("{} ({})", pct(r), m.decided[i][j]),
                None => "—".into(),
            })
            .collect();
        let _ = writeln!(out, "| {arm} | {} |", cells.join(" | "));
    }
    out.push('\n');
    out.push_str(&share(
        "At replayed cases, the choice had the higher ES",
        &s.agreement.es,
    ));
    out.push_str(&share(
        "At replayed cases, the choice was the exact match",
        &s.agreement.em,
    ));
    if s.agreement.pass_at_1.n > 0 {
        out.push_str(&share(
            "At executed cases, the choice passed its tests and the other did not",
            &s.agreement.pass_at_1,
        ));
    }
    out.push_str(&share(
        "The choice was the faster suggestion",
        &s.latency.chosen_faster,
    ));
    if s.languages.len() > 1 {
        out.push_str("\nStrength by language:\n\n");
        for language in &s.languages {
            let arms: Vec<String> = language
                .strengths
                .iter()
                .map(|(arm, s)| format!("{arm} {}", s.map_or("—".into(), |x| format!("{x:+.3}"))))
                .collect();
            let _ = writeln!(
                out,
                "- {} ({} battles, {} decided): {}",
                language.language,
                language.battles,
                language.decided,
                arms.join(", ")
            );
        }
    }
    out
}
