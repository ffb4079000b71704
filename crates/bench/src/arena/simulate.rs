//! Votes cast by a reference voter at replayed cases, so the path from battle to ranking runs
//! unattended: each battle draws a case and a pair of arms (uniformly, seeded), shows them in a
//! random order, and the voter takes the suggestion with the higher metric (a tie is no choice).
//! The suggestions are a run file's: `bench run` made them with the arms as its retrievers.

use std::collections::{BTreeMap, HashMap};

use super::vote::{VOTES_VERSION, Vote, now};
use crate::bench::runfile::RunRecord;
use crossfile_engine::choice::Choice;
use crossfile_engine::seeded::SplitMix64;

crossfile_engine::choice! {
    /// What the reference voter prefers: the higher edit similarity or the exact match (the
    /// metric of that name).
    pub enum Voter {
        Es,
        Em,
    }
}

/// Why votes could not be cast.
#[derive(Debug, thiserror::Error)]
pub enum SimulateError {
    #[error("an arena needs at least two different arms, got {0:?}")]
    TooFewArms(Vec<String>),
    #[error("no case has a scored record of every arm ({arms}); was the run made with them?")]
    NoCase { arms: String },
}

/// `battles` votes over the cases of `records` that every arm of `arms` scored, drawn with
/// `seed`. Also returns how many cases were drawn from.
pub fn simulate(
    records: &[RunRecord],
    arms: &[String],
    voter: Voter,
    battles: usize,
    seed: u64,
) -> Result<(Vec<Vote>, usize), SimulateError> {
    let mut distinct = arms.to_vec();
    distinct.sort();
    distinct.dedup();
    if distinct.len() < 2 || distinct.len() != arms.len() {
        return Err(SimulateError::TooFewArms(arms.to_vec()));
    }
    let mut by_case: BTreeMap<&str, HashMap<&str, &RunRecord>> = BTreeMap::new();
    for record in records.iter().filter(|r| r.error.is_none()) {
        by_case
            .entry(&record.case_id)
            .or_default()
            .insert(&record.retriever, record);
    }
    let cases: Vec<Vec<&RunRecord>> = by_case
        .into_values()
        .filter_map(|of| {
            arms.iter()
                .map(|arm| of.get(arm.as_str()).copied())
                .collect()
        })
        .collect();
    if cases.is_empty() {
        return Err(SimulateError::NoCase {
            arms: arms.join(", "),
        });
    }
    let mut rng = SplitMix64(seed);
    let time = now();
    let votes = (0..battles)
        .map(|_| {
            let case = &cases[rng.below(cases.len())];
            let a = rng.below(arms.len());
            let b = (a + 1 + rng.below(arms.len() - 1)) % arms.len();
            let first = (rng.next_u64() & 1) as u8;
            battle(case[a], case[b], first, voter, &time)
        })
        .collect();
    Ok((votes, cases.len()))
}

/// The battle between two records of one case, as the reference voter decides it.
fn battle(a: &RunRecord, b: &RunRecord, first: u8, voter: Voter, time: &str) -> Vote {
    let score = |r: &RunRecord| r.metrics.get(voter.name()).copied().unwrap_or(0.0);
    let choice = match score(a).total_cmp(&score(b)) {
        std::cmp::Ordering::Greater => Some(0),
        std::cmp::Ordering::Less => Some(1),
        std::cmp::Ordering::Equal => None,
    };
    let hash = |r: &RunRecord| {
        let settings = serde_json::to_string(&r.settings).unwrap_or_default();
        blake3::hash(format!("{}\n{settings}", r.retriever).as_bytes()).to_hex()[..16].to_string()
    };
    Vote {
        version: VOTES_VERSION,
        time: time.to_string(),
        workspace: a.repository.clone(),
        path: a.path.clone(),
        line: u64::from(a.line) + 1,
        col: u64::from(a.col) + 1,
        language: Some(a.language.clone()),
        arms: [a.retriever.clone(), b.retriever.clone()],
        first,
        choice,
        texts: [a.suggestion.clone(), b.suggestion.clone()],
        latency_ms: [a.timings_ms.total, b.timings_ms.total],
        choice_ms: None,
        settings_hash: [hash(a), hash(b)],
        case_id: Some(a.case_id.clone()),
        metrics: Some([a.metrics.clone(), b.metrics.clone()]),
        draw: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arena::standings;
    use crate::bench::testdata::{errored, record};
    use crate::report::bootstrap::Bootstrap;

    fn arms(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_voter_takes_the_higher_metric_and_a_tie_is_no_choice() {
        // Case c0: oracle 1.0 > bm25 0.5 > none 0.5 (a tie with bm25); c1 has an error for none.
        let records = [
            record("c0", "none", 0.5),
            record("c0", "bm25", 0.5),
            record("c0", "oracle", 1.0),
            errored("c1", "none"),
            record("c1", "bm25", 0.2),
            record("c1", "oracle", 0.9),
        ];
        let (votes, cases) = simulate(
            &records,
            &arms(&["none", "bm25", "oracle"]),
            Voter::Es,
            300,
            7,
        )
        .expect("votes");
        assert_eq!(cases, 1, "c1 lacks a scored `none`");
        assert_eq!(votes.len(), 300);
        for vote in &votes {
            let [a, b] = &vote.arms;
            assert_ne!(a, b);
            let expected = match (a.as_str(), b.as_str()) {
                ("oracle", _) => Some(0),
                (_, "oracle") => Some(1),
                _ => None,
            };
            assert_eq!(vote.choice, expected, "{a} vs {b}");
            assert_eq!(vote.case_id.as_deref(), Some("c0"));
        }
        // Every pair and both orders come up, the first shown about half the time.
        let firsts = votes.iter().filter(|v| v.first == 0).count();
        assert!((120..180).contains(&firsts), "{firsts}");
        let same = simulate(
            &records,
            &arms(&["none", "bm25", "oracle"]),
            Voter::Es,
            300,
            7,
        )
        .expect("votes")
        .0;
        assert_eq!(
            same.iter().map(|v| (&v.arms, v.first)).collect::<Vec<_>>(),
            votes.iter().map(|v| (&v.arms, v.first)).collect::<Vec<_>>(),
            "the same seed draws the same battles"
        );
    }

    #[test]
    fn simulated_votes_rank_arms_by_their_scores() {
        let mut records = Vec::new();
        for case in 0..40 {
            let id = format!("c{case}");
            // bm25 beats none on 3 cases in 4, oracle beats both on all but one in 5.
            records.push(record(&id, "none", if case % 4 == 0 { 0.6 } else { 0.2 }));
            records.push(record(&id, "bm25", 0.4));
            records.push(record(&id, "oracle", if case % 5 == 0 { 0.1 } else { 0.9 }));
        }
        let (votes, _) = simulate(
            &records,
            &arms(&["none", "bm25", "oracle"]),
            Voter::Es,
            600,
            1,
        )
        .expect("votes");
        let s = standings(
            &votes,
            Bootstrap {
                resamples: 0,
                ..Bootstrap::default()
            },
        );
        let ranked: Vec<&str> = s.arms.iter().map(|a| a.arm.as_str()).collect();
        assert_eq!(ranked, ["oracle", "bm25", "none"]);
        assert!(simulate(&records, &arms(&["bm25", "bm25"]), Voter::Em, 1, 1).is_err());
        assert!(simulate(&records, &arms(&["bm25", "none", "bm25"]), Voter::Em, 1, 1).is_err());
        assert!(simulate(&records, &arms(&["bm25", "dense"]), Voter::Em, 1, 1).is_err());
    }
}
