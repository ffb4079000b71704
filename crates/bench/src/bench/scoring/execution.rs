//! Scoring generated function bodies by running their repositories' tests: every sample of
//! every case through the [`Harness`], `jobs` at a time, then Pass@k with the unbiased estimator
//! (EvoCodeBench's `pass_k.py`) and Recall@k of the dependencies ([`super::recall`]), over
//! all cases and by dependency kind.
//!
//! A sample the harness could not run (no environment, a cancelled test) is an `error`: it is
//! reported and left out of `n`, never counted a failure; a case none of whose samples ran is left
//! out of the averages.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};

use super::envs::EnvStore;
use super::recall::{KINDS, SampleRecall, best_of_first, reference, sample_recalls};
use crate::bench::cases::evocodebench::{Completion, ExecCase};
use crate::harness::{Harness, Outcome, Status, Trial};
use crossfile_engine::metrics::pass_at_k;

/// One case's samples and what their tests gave.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CaseOutcomes {
    pub namespace: String,
    /// Samples whose tests ran (not `error`).
    pub n: u64,
    /// Samples that passed.
    pub c: u64,
    /// Each sample's outcome, in the order the samples were given.
    pub outcomes: Vec<Status>,
    /// The first failing test of the first sample that did not pass.
    pub first_failure: Option<String>,
    /// The groups the case is also scored in: its kinds of dependency (`standalone` for none),
    /// or CoderEval's runnable level.
    pub groups: Vec<String>,
    /// Each sample's dependency recall (`None`: the case has no dependency).
    pub recall: Option<Vec<SampleRecall>>,
    /// Each sample's whole outcome (tests, output tails, errors); not in the JSON.
    #[serde(skip)]
    pub details: Vec<Outcome>,
}

/// Pass@k over the cases and each case's outcomes: `bench score --json`'s document for an
/// execution-based format, which reads back as itself.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ExecScore {
    /// Cases with at least one sample that ran.
    pub cases: usize,
    /// Pass@k for each k asked, over the cases with at least k samples that ran.
    pub pass_at_k: BTreeMap<String, f64>,
    /// Recall@k for each k asked, over the cases with dependencies and at least k samples.
    pub recall_at_k: BTreeMap<String, f64>,
    /// The same apart: `standalone` cases and the cases with each kind of dependency (Recall@k
    /// over that kind's dependencies only).
    pub by_dependency: BTreeMap<String, GroupScore>,
    pub per_case: Vec<CaseOutcomes>,
}

/// Pass@k and Recall@k of a group of cases (no Recall@k where the group has no dependencies to
/// recall).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GroupScore {
    pub cases: usize,
    pub pass_at_k: BTreeMap<String, f64>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub recall_at_k: BTreeMap<String, f64>,
}

/// The completions matched to cases: each case with its samples (in file order), the
/// namespaces of completions that name no case, the cases with no completion.
pub struct Matched<'a> {
    pub samples: Vec<(&'a ExecCase, Vec<&'a str>)>,
    pub unknown: Vec<String>,
    pub unpredicted: Vec<String>,
}

/// Groups `completions` by case, in the cases' order.
pub fn match_completions<'a>(cases: &'a [ExecCase], completions: &'a [Completion]) -> Matched<'a> {
    let known: HashSet<&str> = cases.iter().map(|c| c.namespace.as_str()).collect();
    let mut by_namespace: HashMap<&str, Vec<&str>> = HashMap::new();
    let mut unknown = Vec::new();
    for completion in completions {
        if known.contains(completion.namespace.as_str()) {
            by_namespace
                .entry(completion.namespace.as_str())
                .or_default()
                .push(completion.completion.as_str());
        } else if !unknown.contains(&completion.namespace) {
            unknown.push(completion.namespace.clone());
        }
    }
    let mut samples = Vec::new();
    let mut unpredicted = Vec::new();
    for case in cases {
        match by_namespace.remove(case.namespace.as_str()) {
            Some(bodies) => samples.push((case, bodies)),
            None => unpredicted.push(case.namespace.clone()),
        }
    }
    Matched {
        samples,
        unknown,
        unpredicted,
    }
}

/// Where the tests run and how.
pub struct ExecContext<'a> {
    pub repos: &'a Path,
    pub envs: &'a EnvStore,
    pub harness: &'a Harness,
    /// Samples tested at once.
    pub jobs: usize,
    pub cancel: &'a AtomicBool,
}

/// Runs every sample's tests, `jobs` at a time; `done` is called after each with the number
/// finished and the total.
pub fn run_samples(
    context: &ExecContext,
    samples: &[(&ExecCase, Vec<&str>)],
    done: &(dyn Fn(usize, usize) + Sync),
) -> Vec<CaseOutcomes> {
    let work: Vec<(usize, usize)> = samples
        .iter()
        .enumerate()
        .flat_map(|(case, (_, bodies))| (0..bodies.len()).map(move |sample| (case, sample)))
        .collect();
    let results: Mutex<HashMap<(usize, usize), Outcome>> = Mutex::new(HashMap::new());
    let next = AtomicUsize::new(0);
    let finished = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..context.jobs.max(1).min(work.len().max(1)) {
            scope.spawn(|| {
                while let Some(&(case, sample)) = work.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let (exec_case, bodies) = &samples[case];
                    let outcome = test_body(context, exec_case, bodies[sample], &|_, _| {});
                    if let Ok(mut results) = results.lock() {
                        results.insert((case, sample), outcome);
                    }
                    done(finished.fetch_add(1, Ordering::Relaxed) + 1, work.len());
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_default();
    samples
        .iter()
        .enumerate()
        .map(|(case, (exec_case, bodies))| {
            let details: Vec<Outcome> = (0..bodies.len())
                .map(|sample| {
                    results
                        .remove(&(case, sample))
                        .unwrap_or_else(|| Outcome::error("the sample was not run"))
                })
                .collect();
            let mut outcomes = case_outcomes(&exec_case.namespace, details);
            outcomes.groups = dependency_kinds(exec_case);
            outcomes.recall = sample_recalls(exec_case, context.repos, bodies);
            outcomes
        })
        .collect()
}

/// The kinds of dependency `case` has, or `standalone`.
fn dependency_kinds(case: &ExecCase) -> Vec<String> {
    let kinds: Vec<String> = KINDS
        .iter()
        .filter(|kind| !reference(case, Some(kind)).is_empty())
        .map(|kind| kind.to_string())
        .collect();
    if kinds.is_empty() {
        vec!["standalone".to_string()]
    } else {
        kinds
    }
}

/// One body's tests, in a fresh copy of the case's repository with the body spliced in;
/// `on_test` is called with each test's number (from 0) and id as it starts.
pub fn test_body(
    context: &ExecContext,
    case: &ExecCase,
    body: &str,
    on_test: &dyn Fn(usize, &str),
) -> Outcome {
    let env = match context.envs.env_for(&case.repository) {
        Ok(env) => env,
        Err(message) => return Outcome::error(message),
    };
    let repository = context.repos.join(&case.repository);
    if !repository.is_dir() {
        return Outcome::error(format!(
            "no repository {} under {}",
            case.repository,
            context.repos.display()
        ));
    }
    context.harness.run_observed(
        &Trial {
            repository: &repository,
            file: &case.path,
            body: case.body,
            indent: case.indent,
            completion: body,
            tests: &case.tests,
            env: &env,
        },
        context.cancel,
        on_test,
    )
}

/// A case's counts from its samples' outcomes.
pub fn case_outcomes(namespace: &str, details: Vec<Outcome>) -> CaseOutcomes {
    let outcomes: Vec<Status> = details.iter().map(|o| o.status).collect();
    CaseOutcomes {
        namespace: namespace.to_string(),
        n: outcomes.iter().filter(|s| s.is_scored()).count() as u64,
        c: outcomes.iter().filter(|&&s| s == Status::Pass).count() as u64,
        first_failure: details
            .iter()
            .find(|o| matches!(o.status, Status::Fail | Status::Timeout))
            .and_then(|o| o.first_failure.clone()),
        outcomes,
        details,
        groups: Vec::new(),
        recall: None,
    }
}

/// Pass@k for each of `ks` over the cases with at least k samples that ran.
pub fn pass_at_ks(per_case: &[CaseOutcomes], ks: &[u64]) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for &k in ks {
        let values: Vec<f64> = per_case
            .iter()
            .filter_map(|case| pass_at_k(case.n, case.c, k).ok())
            .collect();
        insert_mean(&mut out, k, &values);
    }
    out
}

/// The mean of `values` under `k`'s name, when there are any.
fn insert_mean(out: &mut BTreeMap<String, f64>, k: u64, values: &[f64]) {
    if !values.is_empty() {
        out.insert(
            k.to_string(),
            values.iter().sum::<f64>() / values.len() as f64,
        );
    }
}

/// Recall@k for each of `ks` (over all dependencies, or those of `kind`) over the cases with
/// such dependencies and at least k samples.
pub fn recall_at_ks(
    per_case: &[CaseOutcomes],
    ks: &[u64],
    kind: Option<&str>,
) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for &k in ks {
        let values: Vec<f64> = per_case
            .iter()
            .filter_map(|case| {
                let samples: Vec<Option<f64>> = case
                    .recall
                    .as_ref()?
                    .iter()
                    .map(|r| match kind {
                        None => r.all,
                        Some(kind) => r.by_kind.get(kind).copied(),
                    })
                    .collect();
                best_of_first(&samples, usize::try_from(k).ok()?)
            })
            .collect();
        insert_mean(&mut out, k, &values);
    }
    out
}

/// The scores of each of `groups` that some case of `per_case` is in; for a group that
/// `is_kind` names a dependency kind, Recall@k over that kind's dependencies.
pub fn group_scores(
    per_case: &[CaseOutcomes],
    groups: &[&str],
    ks: &[u64],
    is_kind: impl Fn(&str) -> bool,
) -> BTreeMap<String, GroupScore> {
    let mut out = BTreeMap::new();
    for &group in groups {
        let members: Vec<CaseOutcomes> = per_case
            .iter()
            .filter(|c| c.groups.iter().any(|g| g == group))
            .cloned()
            .collect();
        if members.is_empty() {
            continue;
        }
        let recall_at_k = if is_kind(group) {
            recall_at_ks(&members, ks, Some(group))
        } else {
            BTreeMap::new()
        };
        out.insert(
            group.to_string(),
            GroupScore {
                cases: members.iter().filter(|c| c.n > 0).count(),
                pass_at_k: pass_at_ks(&members, ks),
                recall_at_k,
            },
        );
    }
    out
}

/// Pass@k, Recall@k and the outcomes of `per_case`.
pub fn exec_score(per_case: Vec<CaseOutcomes>, ks: &[u64]) -> ExecScore {
    let groups = ["standalone", "intra_class", "intra_file", "cross_file"];
    ExecScore {
        cases: per_case.iter().filter(|c| c.n > 0).count(),
        pass_at_k: pass_at_ks(&per_case, ks),
        recall_at_k: recall_at_ks(&per_case, ks, None),
        by_dependency: group_scores(&per_case, &groups, ks, |group| group != "standalone"),
        per_case,
    }
}

/// The metrics of one body tested at a replayed case (`crossfile.score`): Pass@1 by the
/// benchmark's estimator over that one sample, when its tests decided (not an `error`), and its
/// Recall@1 when the case has dependencies.
pub fn one_body_metrics(outcome: &Outcome, recall: Option<f64>) -> BTreeMap<String, f64> {
    let mut metrics = BTreeMap::new();
    if outcome.status.is_scored() {
        let passed = u64::from(outcome.status == Status::Pass);
        if let Ok(value) = pass_at_k(1, passed, 1) {
            metrics.insert("pass@1".to_string(), value);
        }
    }
    if let Some(recall) = recall {
        metrics.insert("recall@1".to_string(), recall);
    }
    metrics
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(status: Status) -> Outcome {
        let mut outcome = Outcome::error("x");
        outcome.status = status;
        outcome.first_failure = (status != Status::Pass).then(|| format!("t::{}", status.name()));
        outcome
    }

    #[test]
    fn errors_are_left_out_of_n_and_failures_are_counted() {
        let case = case_outcomes(
            "a",
            vec![
                outcome(Status::Error),
                outcome(Status::Pass),
                outcome(Status::Timeout),
                outcome(Status::Fail),
            ],
        );
        assert_eq!((case.n, case.c), (3, 1));
        assert_eq!(case.first_failure.as_deref(), Some("t::timeout"));
        let all_errors = case_outcomes("b", vec![outcome(Status::Error)]);
        assert_eq!(all_errors.n, 0);
        let score = exec_score(vec![case, all_errors], &[1, 3, 5]);
        assert_eq!(score.cases, 1);
        assert!((score.pass_at_k["1"] - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(score.pass_at_k["3"], 1.0);
        assert!(
            !score.pass_at_k.contains_key("5"),
            "no case has 5 samples that ran"
        );
    }

    #[test]
    fn pass_at_k_over_five_samples_matches_hand_computed_values() {
        // n = 5: pass@k = 1 - C(5 - c, k) / C(5, k).
        let want: [[f64; 3]; 6] = [
            [0.0, 0.0, 0.0],
            [0.2, 0.6, 1.0],
            [0.4, 0.9, 1.0],
            [0.6, 1.0, 1.0],
            [0.8, 1.0, 1.0],
            [1.0, 1.0, 1.0],
        ];
        for (c, want) in want.iter().enumerate() {
            let statuses = (0..5).map(|i| if i < c { Status::Pass } else { Status::Fail });
            let case = case_outcomes("a", statuses.map(outcome).collect());
            let got = pass_at_ks(&[case], &[1, 3, 5]);
            for (k, want) in ["1", "3", "5"].iter().zip(want) {
                assert!(
                    (got[*k] - want).abs() < 1e-12,
                    "c={c} k={k}: {} != {want}",
                    got[*k]
                );
            }
        }
    }

    #[test]
    fn recall_at_k_takes_the_best_of_the_first_k_and_groups_by_dependency_kind() {
        let recall = |all: f64, class: Option<f64>| SampleRecall {
            all: Some(all),
            by_kind: class
                .map(|c| ("intra_class".to_string(), c))
                .into_iter()
                .collect(),
        };
        let mut with_deps = case_outcomes("a", vec![outcome(Status::Fail), outcome(Status::Pass)]);
        with_deps.groups = vec!["intra_class".into()];
        with_deps.recall = Some(vec![recall(0.5, Some(0.0)), recall(1.0, Some(1.0))]);
        let mut standalone = case_outcomes("b", vec![outcome(Status::Pass), outcome(Status::Pass)]);
        standalone.groups = vec!["standalone".into()];
        let score = exec_score(vec![with_deps, standalone], &[1, 2]);
        assert_eq!(score.recall_at_k["1"], 0.5, "the first sample only");
        assert_eq!(score.recall_at_k["2"], 1.0, "the best of two");
        let class = &score.by_dependency["intra_class"];
        assert_eq!((class.cases, class.pass_at_k["1"]), (1, 0.5));
        assert_eq!(class.recall_at_k["1"], 0.0);
        let alone = &score.by_dependency["standalone"];
        assert_eq!((alone.cases, alone.pass_at_k["1"]), (1, 1.0));
        assert!(alone.recall_at_k.is_empty(), "no dependency, no recall");
        assert!(!score.by_dependency.contains_key("cross_file"));
    }
}
