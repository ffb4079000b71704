//! `crossfile bench arena VOTES.jsonl [--json]`: the arms of a votes file ranked by
//! Bradley–Terry strength, with intervals, the win-rate matrix and position bias.

use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use crossfile::arena::standings::{Share, Standings};
use crossfile::arena::{standings, vote};
use crossfile::report::bootstrap::Bootstrap;

#[derive(Debug, Args)]
pub struct BenchArenaArgs {
    /// The votes file (JSON lines, as the editors append them; docs/arena.md).
    pub votes: PathBuf,
    /// Bootstrap resamples of the battles for each interval.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub resamples: usize,
    /// The bootstrap's seed.
    #[arg(long, value_name = "S", default_value_t = crossfile::report::bootstrap::BOOTSTRAP_SEED)]
    pub seed: u64,
    /// Print one JSON document instead of Markdown.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &BenchArenaArgs) -> anyhow::Result<()> {
    let read = vote::read(&args.votes)?;
    for warning in &read.skipped {
        tracing::warn!("{warning}");
    }
    anyhow::ensure!(
        !read.votes.is_empty(),
        "{}: no votes to rank{}",
        args.votes.display(),
        if read.skipped.is_empty() {
            ""
        } else {
            " (every line was skipped)"
        }
    );
    let bootstrap = Bootstrap {
        resamples: args.resamples,
        seed: args.seed,
        ..Bootstrap::default()
    };
    let standings = standings(&read.votes, bootstrap);
    for warning in &standings.warnings {
        tracing::warn!("{warning}");
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
    // In the ranking's order.
    let m = &s.win_matrix;
    let order: Vec<usize> = s
        .arms
        .iter()
        .filter_map(|a| m.arms.iter().position(|n| *n == a.arm))
        .collect();
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
