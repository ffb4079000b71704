//! What a votes file says: the arms ranked by Bradley–Terry strength with bootstrap intervals
//! (battles resampled), the win-rate matrix, the position bias, "no choice" per arm, latency
//! against preference, the ranking per language, and, at replayed cases, how often the
//! preferred suggestion is also the one the reference scores higher.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::fit::{Win, bradley_terry};
use super::vote::Vote;
use crate::report::bootstrap::{Bootstrap, mean, percentile_sorted};
use crossfile_engine::seeded::SplitMix64;

/// The whole reading of a votes file (`bench arena --json`, which reads back as itself).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Standings {
    pub battles: usize,
    /// Battles with a choice.
    pub decided: usize,
    /// Strongest first: an arm that never lost first, one that never won last.
    pub arms: Vec<ArmStanding>,
    /// The share of choices that took the suggestion shown first (0.5: no position bias).
    pub first_share: Share,
    pub win_matrix: WinMatrix,
    /// At replayed cases, over the decided battles whose two suggestions score differently.
    pub agreement: Agreement,
    pub latency: LatencyPreference,
    pub languages: Vec<LanguageStanding>,
    pub bootstrap: Bootstrap,
    pub warnings: Vec<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ArmStanding {
    pub arm: String,
    /// The maximum-likelihood log-strength (natural log), mean 0 over the arms that have one.
    pub strength: Option<f64>,
    pub ci: Option<[f64; 2]>,
    pub wins: usize,
    pub losses: usize,
    pub battles: usize,
    /// The share of this arm's battles that ended with no choice.
    pub no_choice: Option<f64>,
}

/// A proportion with its bootstrap interval, over `n` observations.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Share {
    pub value: Option<f64>,
    pub ci: Option<[f64; 2]>,
    pub n: usize,
}

/// `rate[i][j]`: the share of decided battles between arms `i` and `j` that `i` won (`None`
/// where they never met); `decided[i][j]`: how many there were.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WinMatrix {
    pub arms: Vec<String>,
    pub rate: Vec<Vec<Option<f64>>>,
    pub decided: Vec<Vec<usize>>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Agreement {
    /// The chosen suggestion has the higher edit similarity.
    pub es: Share,
    /// The chosen suggestion is the exact match (and the other is not).
    pub em: Share,
    /// At an executed case: the chosen suggestion passes its tests (and the other does not).
    #[serde(rename = "pass@1")]
    pub pass_at_1: Share,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LatencyPreference {
    /// Over decided battles with different latencies: the chosen suggestion was the faster one.
    pub chosen_faster: Share,
    pub chosen_mean_ms: Option<f64>,
    pub other_mean_ms: Option<f64>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LanguageStanding {
    pub language: String,
    pub battles: usize,
    pub decided: usize,
    /// Each arm's strength fitted on this language's battles alone.
    pub strengths: BTreeMap<String, Option<f64>>,
}

impl Standings {
    /// The win matrix's indices in the ranking's order (the order a table of it is read in).
    pub fn matrix_order(&self) -> Vec<usize> {
        let m = &self.win_matrix;
        self.arms
            .iter()
            .filter_map(|a| m.arms.iter().position(|n| *n == a.arm))
            .collect()
    }
}

/// Reads `votes` into [`Standings`], intervals drawn as `bootstrap` says.
pub fn standings(votes: &[Vote], bootstrap: Bootstrap) -> Standings {
    let names = arm_names(votes);
    let index = |arm: &str| names.iter().position(|n| n == arm).unwrap_or(0);
    let pairs: Vec<[usize; 2]> = votes
        .iter()
        .map(|v| [index(&v.arms[0]), index(&v.arms[1])])
        .collect();
    let decided_of = |which: &mut dyn Iterator<Item = usize>| -> Vec<Win> {
        which
            .filter_map(|i| {
                let (w, l) = votes[i].winner_loser()?;
                Some((pairs[i][w], pairs[i][l]))
            })
            .collect()
    };
    let all = decided_of(&mut (0..votes.len()));
    let strengths = bradley_terry(names.len(), &all);
    let intervals = strength_intervals(names.len(), votes.len(), &bootstrap, |sample| {
        decided_of(&mut sample.iter().copied())
    });

    let mut warnings = Vec::new();
    let mut arms: Vec<ArmStanding> = (0..names.len())
        .map(|a| {
            let wins = all.iter().filter(|d| d.0 == a).count();
            let losses = all.iter().filter(|d| d.1 == a).count();
            let battles = pairs.iter().filter(|p| p.contains(&a)).count();
            let undecided = (0..votes.len())
                .filter(|&i| pairs[i].contains(&a) && votes[i].choice.is_none())
                .count();
            if strengths[a].is_none() {
                warnings.push(no_estimate_reason(&names[a], wins, losses, &strengths));
            }
            ArmStanding {
                arm: names[a].clone(),
                strength: strengths[a],
                ci: intervals[a],
                wins,
                losses,
                battles,
                no_choice: (battles > 0).then(|| undecided as f64 / battles as f64),
            }
        })
        .collect();
    arms.sort_by(|a, b| rank_key(b).total_cmp(&rank_key(a)));

    let decided_votes: Vec<&Vote> = votes.iter().filter(|v| v.choice.is_some()).collect();
    let first: Vec<f64> = decided_votes
        .iter()
        .map(|v| f64::from(u8::from(v.choice == Some(v.first))))
        .collect();
    Standings {
        battles: votes.len(),
        decided: all.len(),
        arms,
        first_share: share(&first, &bootstrap),
        win_matrix: win_matrix(&names, &all),
        agreement: agreement(&decided_votes, &bootstrap),
        latency: latency(&decided_votes, &bootstrap),
        languages: languages(votes, &names, &pairs),
        bootstrap,
        warnings,
    }
}

/// Where an arm ranks: by strength; an arm that never lost above every estimate, one that never
/// won below all, and one without an estimate for another reason (no decided battle, arms not
/// connected) below the estimates.
fn rank_key(arm: &ArmStanding) -> f64 {
    match (arm.strength, arm.wins, arm.losses) {
        (Some(s), _, _) => s,
        (None, w, 0) if w > 0 => f64::INFINITY,
        (None, 0, l) if l > 0 => f64::NEG_INFINITY,
        (None, _, _) => f64::MIN,
    }
}

/// The arms in the order they first appear.
fn arm_names(votes: &[Vote]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for arm in votes.iter().flat_map(|v| v.arms.iter()) {
        if !names.contains(arm) {
            names.push(arm.clone());
        }
    }
    names
}

fn no_estimate_reason(arm: &str, wins: usize, losses: usize, all: &[Option<f64>]) -> String {
    let why = match (wins, losses) {
        (0, 0) => "no battle of it was decided".to_string(),
        (_, 0) => format!("it never lost ({wins} wins)"),
        (0, _) => format!("it never won ({losses} losses)"),
        _ if all.iter().all(Option::is_none) => {
            "the votes do not connect the arms by wins both ways".to_string()
        }
        _ => "it never won or never lost against the arms that have one".to_string(),
    };
    format!("arm {arm:?} has no Bradley–Terry strength: {why}")
}

/// Each arm's percentile interval of its strength over `bootstrap.resamples` resamples of the
/// `n` battles (`decided` turns a resample's battle indices into its decided battles); `None`
/// when fewer than half of the resamples give the arm an estimate.
fn strength_intervals(
    arms: usize,
    n: usize,
    bootstrap: &Bootstrap,
    decided: impl Fn(&[usize]) -> Vec<Win>,
) -> Vec<Option<[f64; 2]>> {
    if n == 0 || bootstrap.resamples == 0 {
        return vec![None; arms];
    }
    let mut rng = SplitMix64(bootstrap.seed);
    let mut draws: Vec<Vec<f64>> = vec![Vec::new(); arms];
    let mut sample = vec![0usize; n];
    for _ in 0..bootstrap.resamples {
        sample.iter_mut().for_each(|s| *s = rng.below(n));
        for (a, s) in bradley_terry(arms, &decided(&sample))
            .into_iter()
            .enumerate()
        {
            if let Some(s) = s {
                draws[a].push(s);
            }
        }
    }
    let alpha = ((1.0 - bootstrap.confidence) / 2.0).clamp(0.0, 0.5);
    draws
        .into_iter()
        .map(|mut d| {
            if d.len() * 2 < bootstrap.resamples {
                return None;
            }
            d.sort_by(f64::total_cmp);
            Some([
                percentile_sorted(&d, alpha * 100.0)?,
                percentile_sorted(&d, (1.0 - alpha) * 100.0)?,
            ])
        })
        .collect()
}

/// The mean of 0/1 `values` with its bootstrap interval.
fn share(values: &[f64], bootstrap: &Bootstrap) -> Share {
    Share {
        value: mean(values),
        ci: bootstrap.mean_interval(values).map(|i| [i.low, i.high]),
        n: values.len(),
    }
}

fn win_matrix(names: &[String], decided: &[Win]) -> WinMatrix {
    let n = names.len();
    let mut wins = vec![vec![0usize; n]; n];
    for &(w, l) in decided {
        wins[w][l] += 1;
    }
    let met = |i: usize, j: usize| wins[i][j] + wins[j][i];
    WinMatrix {
        arms: names.to_vec(),
        rate: (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| (met(i, j) > 0).then(|| wins[i][j] as f64 / met(i, j) as f64))
                    .collect()
            })
            .collect(),
        decided: (0..n)
            .map(|i| (0..n).map(|j| met(i, j)).collect())
            .collect(),
    }
}

fn agreement(decided: &[&Vote], bootstrap: &Bootstrap) -> Agreement {
    let agrees = |metric: &str| -> Vec<f64> {
        decided
            .iter()
            .filter_map(|v| {
                let (w, l) = v.winner_loser()?;
                let m = v.metrics.as_ref()?;
                let (chosen, other) = (*m[w].get(metric)?, *m[l].get(metric)?);
                (chosen != other).then(|| f64::from(u8::from(chosen > other)))
            })
            .collect()
    };
    Agreement {
        es: share(&agrees("es"), bootstrap),
        em: share(&agrees("em"), bootstrap),
        pass_at_1: share(&agrees("pass@1"), bootstrap),
    }
}

fn latency(decided: &[&Vote], bootstrap: &Bootstrap) -> LatencyPreference {
    let chosen_other: Vec<(f64, f64)> = decided
        .iter()
        .filter_map(|v| {
            let (w, l) = v.winner_loser()?;
            Some((v.latency_ms[w], v.latency_ms[l]))
        })
        .collect();
    let faster: Vec<f64> = chosen_other
        .iter()
        .filter(|(c, o)| c != o)
        .map(|(c, o)| f64::from(u8::from(c < o)))
        .collect();
    let chosen: Vec<f64> = chosen_other.iter().map(|p| p.0).collect();
    let other: Vec<f64> = chosen_other.iter().map(|p| p.1).collect();
    LatencyPreference {
        chosen_faster: share(&faster, bootstrap),
        chosen_mean_ms: mean(&chosen),
        other_mean_ms: mean(&other),
    }
}

fn languages(votes: &[Vote], names: &[String], pairs: &[[usize; 2]]) -> Vec<LanguageStanding> {
    let mut by: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, v) in votes.iter().enumerate() {
        let language = v.language.clone().unwrap_or_else(|| "unknown".into());
        by.entry(language).or_default().push(i);
    }
    by.into_iter()
        .map(|(language, battles)| {
            let decided: Vec<Win> = battles
                .iter()
                .filter_map(|&i| {
                    let (w, l) = votes[i].winner_loser()?;
                    Some((pairs[i][w], pairs[i][l]))
                })
                .collect();
            let fitted = bradley_terry(names.len(), &decided);
            let played = |a: usize| battles.iter().any(|&i| pairs[i].contains(&a));
            LanguageStanding {
                language,
                battles: battles.len(),
                decided: decided.len(),
                strengths: (0..names.len())
                    .filter(|&a| played(a))
                    .map(|a| (names[a].clone(), fitted[a]))
                    .collect(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::vote::tests::battle;
    use super::*;

    fn quick() -> Bootstrap {
        Bootstrap {
            resamples: 400,
            ..Bootstrap::default()
        }
    }

    #[test]
    fn the_arm_chosen_more_often_ranks_first_with_an_interval_around_it() {
        let mut votes = Vec::new();
        for i in 0..60u8 {
            // bm25 wins 40 of 60 against none, shown first half the time; 10 dismissed.
            let first = i % 2;
            let choice = match i % 6 {
                0..=3 => Some(0),
                4 => Some(1),
                _ => None,
            };
            votes.push(battle("bm25", "none", first, choice));
        }
        let s = standings(&votes, quick());
        assert_eq!((s.battles, s.decided), (60, 50));
        assert_eq!(s.arms[0].arm, "bm25");
        assert_eq!((s.arms[0].wins, s.arms[0].losses), (40, 10));
        let strength = s.arms[0].strength.expect("strength");
        // Two arms: s = ±ln(40/10)/2.
        assert!((strength - 4f64.ln() / 2.0).abs() < 1e-9, "{strength}");
        let [lo, hi] = s.arms[0].ci.expect("interval");
        assert!(lo < strength && strength < hi && lo > 0.0, "{lo} {hi}");
        assert_eq!(s.arms[0].no_choice, Some(10.0 / 60.0));
        assert_eq!(s.win_matrix.rate[0][1], Some(0.8));
        assert_eq!(s.win_matrix.decided[1][0], 50);
        // Choices split between first and second shown by the alternating order.
        let first = s.first_share.value.expect("first share");
        assert!((0.3..0.7).contains(&first), "{first}");
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    }

    #[test]
    fn agreement_counts_only_battles_whose_metrics_differ() {
        let with = |choice, es: [f64; 2]| {
            let mut v = battle("bm25", "none", 0, Some(choice));
            v.metrics = Some(es.map(|e| BTreeMap::from([("es".into(), e), ("em".into(), 0.0)])));
            v
        };
        let votes = [
            with(0, [90.0, 40.0]),
            with(0, [30.0, 60.0]),
            with(1, [20.0, 70.0]),
            with(1, [50.0, 50.0]),
        ];
        let s = standings(&votes, quick());
        assert_eq!(s.agreement.es.n, 3);
        assert!((s.agreement.es.value.expect("es") - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(s.agreement.em.n, 0, "EM never differs");
        assert_eq!(s.agreement.pass_at_1.n, 0, "no executed case");
    }

    #[test]
    fn at_executed_cases_agreement_is_choosing_the_body_that_passes() {
        let with = |choice, passed: [f64; 2]| {
            let mut v = battle("bm25", "none", 0, Some(choice));
            v.metrics = Some(passed.map(|p| BTreeMap::from([("pass@1".into(), p)])));
            v
        };
        let votes = [
            with(0, [1.0, 0.0]),
            with(1, [1.0, 0.0]),
            with(1, [0.0, 1.0]),
            with(0, [0.0, 0.0]),
        ];
        let s = standings(&votes, quick());
        assert_eq!(s.agreement.pass_at_1.n, 3, "both failing tells nothing");
        assert!((s.agreement.pass_at_1.value.expect("pass") - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(s.agreement.es.n, 0);
        let json = serde_json::to_value(&s).expect("json");
        assert_eq!(json["agreement"]["pass@1"]["n"], 3, "{json}");
    }

    #[test]
    fn a_never_losing_arm_is_named_in_a_warning_with_its_record() {
        let votes = [
            battle("oracle", "none", 0, Some(0)),
            battle("oracle", "bm25", 1, Some(0)),
            battle("bm25", "none", 0, Some(0)),
            battle("none", "bm25", 0, Some(0)),
        ];
        let s = standings(&votes, quick());
        let oracle = s.arms.iter().find(|a| a.arm == "oracle").expect("oracle");
        assert_eq!((oracle.strength, oracle.wins, oracle.battles), (None, 2, 2));
        assert!(
            s.warnings
                .iter()
                .any(|w| w.contains("\"oracle\"") && w.contains("never lost")),
            "{:?}",
            s.warnings
        );
        assert_eq!(s.arms[0].arm, "oracle", "undefeated ranks first");
    }
}
