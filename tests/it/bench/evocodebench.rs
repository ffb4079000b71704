//! EvoCodeBench's DEV cases through `bench setup-env` and `bench score --format evocodebench`:
//! the real repositories, their real environments (pinned packages from PyPI) and their own
//! tests, in the sandbox. The reference figures are `replay.py`'s (../shared/bench/evocodebench).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crossfile_bench::bench::runfile::record::RunRecord;
use crossfile_bench::bench::scoring::execution::ExecScore;
use crossfile_bench::harness::Status;
use serde_json::{Value, json};

use crate::bench::checks::run_records;
use crate::support::{
    bench_repos, copy_tree, crossfile, crossfile_with_env, shared_dir, stderr, stdout,
};

fn evo_dir() -> PathBuf {
    shared_dir().join("bench").join("evocodebench")
}

pub fn dev_cases() -> PathBuf {
    evo_dir().join("dev.jsonl")
}

/// The cache the environments live in: the user's, like the default model (made once, kept).
pub fn env_cache() -> PathBuf {
    crossfile_engine::config::default_cache_dir()
}

/// Sets up the DEV environments once (quick when they are already there).
pub fn environments() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        let repos = bench_repos();
        let requirements = evo_dir().join("requirements");
        let out = crossfile(
            &[
                "bench",
                "setup-env",
                "--format",
                "evocodebench",
                "--repos",
                &repos.to_string_lossy(),
                "--requirements",
                &requirements.to_string_lossy(),
            ],
            &env_cache(),
        );
        assert!(out.status.success(), "setup-env: {}", stderr(&out));
    });
}

fn records() -> Vec<Value> {
    std::fs::read_to_string(dev_cases())
        .expect("dev.jsonl")
        .lines()
        .map(|line| serde_json::from_str(line).expect("a record"))
        .collect()
}

/// The reference body of `record`, from its file.
fn reference_body(repos: &Path, record: &Value) -> String {
    let path = repos.join(record["completion_path"].as_str().expect("path"));
    let text = std::fs::read_to_string(path).expect("the case's file");
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let (first, last) = (
        record["body_position"][0].as_u64().expect("first") as usize,
        record["body_position"][1].as_u64().expect("last") as usize,
    );
    lines[first - 1..last].concat()
}

/// Writes `{"namespace", "completion"}` lines.
fn write_completions(path: &Path, completions: &[(String, String)]) {
    let lines: Vec<String> = completions
        .iter()
        .map(|(namespace, completion)| {
            json!({"namespace": namespace, "completion": completion}).to_string()
        })
        .collect();
    std::fs::write(path, lines.join("\n") + "\n").expect("write completions");
}

/// `bench score --format evocodebench … --json`: the document, read as the [`ExecScore`] it
/// serializes, and the exit code with stderr.
fn score(
    cases: &Path,
    repos: &Path,
    predictions: &Path,
    extra: &[&str],
    cache: &Path,
) -> (ExecScore, String) {
    let mut args = vec!["bench", "score", "--format", "evocodebench", "--cases"];
    let (cases, repos, predictions) = (
        cases.to_string_lossy().into_owned(),
        repos.to_string_lossy().into_owned(),
        predictions.to_string_lossy().into_owned(),
    );
    args.extend([
        cases.as_str(),
        "--repos",
        repos.as_str(),
        "--predictions",
        predictions.as_str(),
        "--json",
    ]);
    args.extend(extra);
    let out = crossfile(&args, cache);
    let log = format!("exit {:?}\n{}", out.status.code(), stderr(&out));
    (exec_score(&stdout(&out), &log), log)
}

/// `bench score --json`'s document for EvoCodeBench, read as its type.
fn exec_score(json: &str, log: &str) -> ExecScore {
    serde_json::from_str(json).unwrap_or_else(|e| panic!("the score document: {e}\n{json}\n{log}"))
}

/// Every file of a tree with its bytes' hash, for "unchanged" checks.
fn tree_hashes(root: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read dir") {
            let path = entry.expect("entry").path();
            let meta = std::fs::symlink_metadata(&path).expect("metadata");
            if meta.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap_or_default();
                out.insert(path, blake3::hash(&bytes).to_hex().to_string());
            }
        }
    }
    out
}

/// Each case's namespace and its first sample's outcome (`None`: no sample).
fn outcomes(document: &ExecScore) -> Vec<(String, Option<Status>)> {
    document
        .per_case
        .iter()
        .map(|case| (case.namespace.clone(), case.outcomes.first().copied()))
        .collect()
}

#[test]
fn reference_bodies_pass_stubs_fail_and_the_repositories_are_left_unchanged() {
    environments();
    let repos = bench_repos();
    let before: Vec<_> = ["ollama-python", "microagents"]
        .iter()
        .map(|r| tree_hashes(&repos.join(r)))
        .collect();
    let dir = tempfile::tempdir().expect("temp dir");
    let records = records();
    let reference: Vec<(String, String)> = records
        .iter()
        .map(|r| {
            (
                r["namespace"].as_str().expect("ns").to_string(),
                reference_body(&repos, r),
            )
        })
        .collect();
    let stub: Vec<(String, String)> = reference
        .iter()
        .map(|(ns, _)| (ns.clone(), "raise NotImplementedError\n".to_string()))
        .collect();
    for (name, completions, want) in [
        ("reference", &reference, Status::Pass),
        ("stub", &stub, Status::Fail),
    ] {
        let predictions = dir.path().join(format!("{name}.jsonl"));
        write_completions(&predictions, completions);
        let (document, log) = score(
            &dev_cases(),
            &repos,
            &predictions,
            &["--jobs", "2"],
            &env_cache(),
        );
        assert_eq!(document.cases, 30, "{name}: {log}");
        let wrong: Vec<_> = outcomes(&document)
            .into_iter()
            .filter(|(_, outcome)| *outcome != Some(want))
            .collect();
        assert!(wrong.is_empty(), "{name}: not {want:?}: {wrong:?}\n{log}");
        let pass_at_1 = document.pass_at_k["1"];
        assert_eq!(
            pass_at_1,
            if want == Status::Pass { 1.0 } else { 0.0 },
            "{name}"
        );
        // Recall@1: every dependency the benchmark records for a reference body is found in it
        // (all 25 cases that have one, each kind); a stub uses only what its signature names.
        let recall = document.recall_at_k["1"];
        if want == Status::Pass {
            assert_eq!(recall, 1.0, "{name}");
            for kind in ["intra_class", "intra_file", "cross_file"] {
                assert_eq!(document.by_dependency[kind].recall_at_k["1"], 1.0, "{kind}");
            }
            assert_eq!(document.by_dependency["standalone"].cases, 5);
        } else {
            assert!(recall < 0.1, "{name}: {recall}");
        }
    }
    let after: Vec<_> = ["ollama-python", "microagents"]
        .iter()
        .map(|r| tree_hashes(&repos.join(r)))
        .collect();
    assert!(before == after, "a repository changed under the tests");
}

#[test]
fn the_official_gpt4_completions_score_as_replay_measured_them_case_by_case() {
    environments();
    let repos = bench_repos();
    let expected: Vec<Value> = std::fs::read_to_string(evo_dir().join("fixtures/expected.jsonl"))
        .expect("expected.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a line"))
        .collect();
    for (setting, pass_at_1) in [
        ("baseline", 3.0 / 30.0),
        ("local_completion", 15.0 / 30.0),
        ("local_infilling", 20.0 / 30.0),
    ] {
        let predictions = evo_dir().join(format!("fixtures/gpt-4-1106_greedy.{setting}.jsonl"));
        let (document, log) = score(
            &dev_cases(),
            &repos,
            &predictions,
            &["--jobs", "2"],
            &env_cache(),
        );
        let got = document.pass_at_k["1"];
        assert!(
            (got - pass_at_1).abs() < 1e-12,
            "{setting}: Pass@1 {got}\n{log}"
        );
        for case in &document.per_case {
            let namespace = &case.namespace;
            let want = expected
                .iter()
                .find(|e| e["setting"] == setting && e["namespace"] == namespace.as_str())
                .unwrap_or_else(|| panic!("{setting} {namespace} not in expected.jsonl"));
            let outcome = case.outcomes.first().copied();
            let passed = want["result"] == "Pass";
            assert_eq!(
                outcome == Some(Status::Pass),
                passed,
                "{setting} {namespace}: {outcome:?}\n{log}"
            );
            if !passed {
                let failed = want["failed_test"]
                    .as_str()
                    .expect("the expected failed_test");
                assert_eq!(
                    case.first_failure.as_deref(),
                    Some(failed),
                    "{setting} {namespace}"
                );
            }
        }
    }
}

/// The case the hostile bodies replace: `SQLiteMemoization._compute_hash`, whose test passes
/// when it returns any string.
const HOSTILE_CASE: &str = "memoize.SQLiteMemoization._compute_hash";

/// A probe: a body that looks for what the sandbox must hide, raises with what it found (so the
/// test fails and its output, which run files and editors keep, would show it), and otherwise
/// returns a string (so the case's test passes).
fn probe(search: &str) -> String {
    format!(
        "found = []\n{search}if found:\n    raise AssertionError('seen: %r' % (found,))\nreturn 'x'\n"
    )
}

/// Runs a probe body as a plain function with `python`, outside any sandbox, with `env` added:
/// whether it found something (the probe's own control: it can see what it looks for).
fn probe_finds_outside(python: &Path, body: &str, env: &[(&str, &str)]) -> bool {
    let indented: String = body.lines().map(|line| format!("    {line}\n")).collect();
    let script = format!("def probe():\n{indented}\nprobe()\n");
    let out = std::process::Command::new(python)
        .args(["-c", &script])
        .envs(env.iter().copied())
        .output()
        .expect("run the probe");
    let found = String::from_utf8_lossy(&out.stderr).contains("seen:");
    assert!(found || out.status.success(), "{out:?}");
    found
}

#[test]
fn generated_bodies_see_neither_the_home_folder_nor_secrets_the_host_nor_the_repository() {
    environments();
    // Everything the probes look for lives outside /tmp (which the sandbox replaces), so that only
    // the sandbox's view of the machine can hide it.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".ssh")).expect("mkdir");
    let key = home.join(".ssh").join("id_ed25519");
    std::fs::write(&key, "crossfile-probe-home-key\n").expect("plant the key");
    std::fs::write(home.join(".bash_history"), "crossfile-probe-history\n").expect("history");
    let repos = dir.path().join("repos");
    std::fs::create_dir(&repos).expect("mkdir");
    let original = repos.join("microagents");
    copy_tree(&bench_repos().join("microagents"), &original);
    let before = tree_hashes(&repos);
    let record = records()
        .into_iter()
        .find(|r| r["namespace"] == HOSTILE_CASE)
        .expect("the case");
    let cases = dir.path().join("cases.jsonl");
    std::fs::write(&cases, record.to_string() + "\n").expect("write");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
    listener.set_nonblocking(true).expect("nonblocking");
    let port = listener.local_addr().expect("addr").port();
    let outside = dir.path().join("escaped.txt");
    const ENV_SECRET: &str = "crossfile-probe-env-secret";

    let home_probe = probe(&format!(
        "import os\n\
         for path in [{key:?}, {history:?}, '/etc/shadow']:\n    \
             try:\n        found.append(open(path).read())\n    except OSError:\n        pass\n\
         try:\n    found.extend(os.listdir({home:?}))\nexcept OSError:\n    pass\n",
        key = key.to_string_lossy(),
        history = home.join(".bash_history").to_string_lossy(),
        home = home.to_string_lossy(),
    ));
    let env_probe = probe(&format!(
        "import glob, os\n\
         found.extend(k for k, v in os.environ.items() if {ENV_SECRET:?} in v)\n\
         for path in glob.glob('/proc/*/environ'):\n    \
             try:\n        \
                 if {ENV_SECRET:?}.encode() in open(path, 'rb').read():\n            \
                     found.append(path)\n    \
             except OSError:\n        pass\n"
    ));
    let host_probe = probe(&format!(
        "import socket, urllib.request\n\
         try:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2).sendall(b'escaped')\n    \
             found.append('the host listener')\nexcept OSError:\n    pass\n\
         try:\n    urllib.request.urlopen('http://example.com', timeout=2)\n    \
             found.append('the internet')\nexcept OSError:\n    pass\n"
    ));
    let repository_probe = probe(&format!(
        "import os, shutil\n\
         shutil.rmtree({original:?}, ignore_errors=True)\n\
         try:\n    open({outside:?}, 'w').write('escaped')\n    found.append('wrote outside')\n\
         except OSError:\n    pass\n\
         try:\n    found.extend(os.listdir({original:?}))\nexcept OSError:\n    pass\n",
        original = original.to_string_lossy(),
        outside = outside.to_string_lossy(),
    ));

    // Each probe can find what it looks for when nothing hides it.
    let python = env_cache().join("envs/evocodebench/microagents/bin/python");
    assert!(probe_finds_outside(&python, &home_probe, &[]), "home");
    assert!(
        probe_finds_outside(&python, &env_probe, &[("CROSSFILE_PROBE_KEY", ENV_SECRET)]),
        "environment"
    );
    assert!(probe_finds_outside(&python, &host_probe, &[]), "host");
    let _ = listener.accept(); // the control's own connection

    let reference = reference_body(&bench_repos(), &record);
    let bodies = [
        ("reference", reference),
        ("plain", "return 'x'\n".to_string()),
        ("home", home_probe),
        ("environment", env_probe),
        ("host", host_probe),
        ("repository", repository_probe),
        ("forever", "while True:\n    pass\n".to_string()),
    ];
    let predictions = dir.path().join("probes.jsonl");
    let completions: Vec<(String, String)> = bodies
        .iter()
        .map(|(_, body)| (HOSTILE_CASE.to_string(), body.clone()))
        .collect();
    write_completions(&predictions, &completions);
    let (cases, repos_arg, predictions) = (
        cases.to_string_lossy().into_owned(),
        repos.to_string_lossy().into_owned(),
        predictions.to_string_lossy().into_owned(),
    );
    let out = crossfile_with_env(
        &[
            "bench",
            "score",
            "--format",
            "evocodebench",
            "--cases",
            &cases,
            "--repos",
            &repos_arg,
            "--predictions",
            &predictions,
            "--json",
            "--test-timeout",
            "4",
            "--k",
            "1",
        ],
        &env_cache(),
        &[
            ("HOME", &home.to_string_lossy()),
            ("CROSSFILE_PROBE_KEY", ENV_SECRET),
        ],
    );
    let (document_text, log) = (stdout(&out), stderr(&out));
    let document = exec_score(&document_text, &log);
    let case = &document.per_case[0];
    assert_eq!(case.n, bodies.len() as u64, "{log}");
    for (i, (name, _)) in bodies.iter().enumerate() {
        let want = if *name == "forever" {
            Status::Timeout
        } else {
            Status::Pass
        };
        assert_eq!(
            case.outcomes.get(i),
            Some(&want),
            "{name}: {document_text}\n{log}"
        );
    }
    for secret in [
        "crossfile-probe-home-key",
        "crossfile-probe-history",
        "id_ed25519",
    ] {
        assert!(
            !document_text.contains(secret) && !log.contains(secret),
            "{secret} shown"
        );
    }
    assert!(!outside.exists(), "a body wrote outside its copy");
    if let Ok((mut stream, _)) = listener.accept() {
        let mut got = Vec::new();
        stream.read_to_end(&mut got).ok();
        panic!("a body reached the host's 127.0.0.1: {got:?}");
    }
    assert!(before == tree_hashes(&repos), "the repository changed");
}

#[test]
fn a_case_without_its_environment_is_an_error_never_a_failure() {
    let dir = tempfile::tempdir().expect("temp dir");
    let repos = bench_repos();
    let record = records()
        .into_iter()
        .find(|r| r["namespace"] == HOSTILE_CASE)
        .expect("the case");
    let cases = dir.path().join("cases.jsonl");
    std::fs::write(&cases, record.to_string() + "\n").expect("write");
    let predictions = dir.path().join("p.jsonl");
    write_completions(
        &predictions,
        &[(HOSTILE_CASE.into(), "return 'x'\n".into())],
    );
    // A cache with no environments in it.
    let (document, log) = score(&cases, &repos, &predictions, &[], dir.path());
    assert_eq!(document.per_case[0].outcomes, [Status::Error], "{log}");
    assert_eq!(document.per_case[0].n, 0, "{log}");
    assert_eq!(document.cases, 0, "{log}");
    assert!(
        log.contains("no Python environment for microagents"),
        "{log}"
    );
    assert!(log.contains("crossfile bench setup-env"), "{log}");
    assert!(
        !log.contains("exit Some(0)"),
        "nothing scored is a failure: {log}"
    );
}

/// `bench run --format evocodebench` on the first `limit` DEV cases with the embedded model into
/// `out` (the environments in the user's cache, the bench indexes beside `out`); the records by
/// case.
#[cfg(feature = "embedded")]
fn run(out: &Path, limit: usize, extra: &[&str]) -> (BTreeMap<String, RunRecord>, String) {
    environments();
    let gguf = crate::backends::servers::default_gguf();
    let (cases, repos, out_arg, limit, indexes) = (
        dev_cases().to_string_lossy().into_owned(),
        bench_repos().to_string_lossy().into_owned(),
        out.to_string_lossy().into_owned(),
        limit.to_string(),
        out.with_extension("indexes").to_string_lossy().into_owned(),
    );
    let mut args = vec![
        "bench",
        "run",
        "--format",
        "evocodebench",
        "--cases",
        &cases,
        "--repos",
        &repos,
        "--out",
        &out_arg,
        "--limit",
        &limit,
        "--model",
        gguf.to_str().expect("utf-8"),
        "--n-ctx",
        "1024",
        "--jobs",
        "2",
        "--cache-dir",
        &indexes,
    ];
    args.extend(extra);
    let output = crossfile(&args, &env_cache());
    let log = format!("exit {:?}\n{}", output.status.code(), stderr(&output));
    let records = if out.exists() {
        run_records(out)
    } else {
        Vec::new()
    };
    let records = records
        .into_iter()
        .map(|r| (r.case_id.clone(), r))
        .collect();
    (records, log)
}

/// Three sampled bodies for each of two DEV cases, twice with the same seed: the same bodies
/// and the same outcomes, each tested in its repository (Pass@k and Recall@k per case from
/// them); another seed draws other bodies; a finished run resumed runs nothing.
#[cfg(feature = "embedded")]
#[test]
fn sampled_bodies_are_generated_tested_and_drawn_again_alike_for_a_seed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sampled = |name: &str, seed: &str| {
        run(
            &dir.path().join(name),
            2,
            &[
                "--retriever",
                "none",
                "--setting",
                "baseline",
                "--samples",
                "3",
                "--temperature",
                "0.8",
                "--top-p",
                "0.95",
                "--seed",
                seed,
                "--max-new-tokens",
                "48",
                "--k",
                "1,3",
            ],
        )
    };
    let (first, log) = sampled("a.jsonl", "7");
    assert_eq!(first.len(), 2, "{log}");
    let bodies = |records: &BTreeMap<String, RunRecord>| -> Vec<Vec<String>> {
        records
            .values()
            .map(|r| r.samples.iter().map(|s| s.suggestion.clone()).collect())
            .collect()
    };
    for (namespace, r) in &first {
        assert!(r.error.is_none(), "{namespace}: {r:?}\n{log}");
        assert_eq!(r.format, "evocodebench");
        assert_eq!(r.samples.len(), 3, "{namespace}");
        for s in &r.samples {
            assert!(
                matches!(
                    s.outcome.status,
                    Status::Pass | Status::Fail | Status::Timeout
                ),
                "{namespace}: {s:?}"
            );
        }
        let passed = r
            .samples
            .iter()
            .filter(|s| s.outcome.status == Status::Pass)
            .count();
        let pass1 = r.metrics["pass@1"];
        assert!(
            (pass1 - passed as f64 / 3.0).abs() < 1e-9,
            "{namespace}: {r:?}"
        );
        let pass3 = r.metrics["pass@3"];
        assert_eq!(pass3, if passed > 0 { 1.0 } else { 0.0 }, "{namespace}");
        assert_eq!(r.suggestion, r.samples[0].suggestion);
        let settings = r.settings.as_ref().expect("the run's settings");
        assert_eq!(settings.samples, 3);
        assert_eq!(settings.sampling.map(|s| s.seed), Some(7));
        // The prompt is the signature with the requirement as its docstring, never the body.
        assert!(!r.prompt.contains(r.reference.trim()));
    }
    assert!(
        bodies(&first).iter().any(|b| b[0] != b[1] || b[1] != b[2]),
        "sampling drew three equal bodies for every case: {:?}",
        bodies(&first)
    );
    let (again, log) = sampled("b.jsonl", "7");
    assert_eq!(bodies(&again), bodies(&first), "{log}");
    let statuses = |records: &BTreeMap<String, RunRecord>| -> Vec<Status> {
        records
            .values()
            .flat_map(|r| r.samples.iter().map(|s| s.outcome.status))
            .collect()
    };
    assert_eq!(statuses(&again), statuses(&first));
    let (other, _) = sampled("c.jsonl", "8");
    assert_ne!(bodies(&other), bodies(&first), "another seed, other bodies");

    // Resumed when finished: nothing runs, nothing is written again.
    let before = std::fs::read(dir.path().join("a.jsonl")).expect("run file");
    let (_, log) = sampled("a.jsonl", "7");
    assert!(log.contains("exit Some(0)"), "{log}");
    assert_eq!(
        std::fs::read(dir.path().join("a.jsonl")).expect("run file"),
        before
    );
}

/// Greedy local completion with BM25 over the repository: the prompt holds the code above the
/// function, the requirement as its docstring and retrieved chunks (never the body), and the
/// body generated is tested.
#[cfg(feature = "embedded")]
#[test]
fn a_greedy_run_with_retrieval_prompts_with_the_code_above_and_tests_the_body() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (ran, log) = run(
        &dir.path().join("run.jsonl"),
        2,
        &[
            "--retriever",
            "bm25",
            "--setting",
            "local_completion",
            "--max-new-tokens",
            "64",
            "--json",
        ],
    );
    assert_eq!(ran.len(), 2, "{log}");
    let cases: BTreeMap<String, Value> = records()
        .into_iter()
        .map(|r| (r["namespace"].as_str().expect("namespace").to_string(), r))
        .collect();
    for (namespace, r) in &ran {
        assert!(r.error.is_none(), "{namespace}: {r:?}\n{log}");
        let case = &cases[namespace];
        let prompt = &r.prompt;
        let functionality = case["requirement"]["Functionality"].as_str().expect("text");
        let first_words: String = functionality
            .split_whitespace()
            .take(6)
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            prompt.contains(&first_words),
            "{namespace}: the requirement in {prompt}"
        );
        assert!(!prompt.contains(r.reference.trim()));
        assert!(!r.chunks.is_empty(), "{namespace}");
        assert_eq!(r.samples.len(), 1);
        assert!(r.metrics.contains_key("pass@1"), "{r:?}");
        assert_eq!(
            Some(u64::from(r.line)),
            case["body_position"][0].as_u64().map(|l| l - 1)
        );
        // The run's settings, on every record.
        let settings = r.settings.as_ref().expect("the run's settings");
        assert_eq!(
            settings.setting.as_deref(),
            Some("local_completion"),
            "{settings:?}"
        );
        assert_eq!(settings.n_ctx, 1024);
        assert_eq!(settings.backend, "embedded");
        assert_eq!(settings.max_new_tokens, Some(64));
        assert!(settings.sampling.is_none());
        let sha = settings
            .model_sha256
            .as_deref()
            .expect("the model's sha256");
        assert!(
            sha.len() == 64 && sha.chars().all(|c| c.is_ascii_hexdigit()),
            "{sha}"
        );
    }
}

/// A repository whose own build raises unless a variable is set (as open-iris's `setup.py` does):
/// its environment is made all the same, with a warning, and its cases run like any other.
#[test]
fn a_repository_whose_build_raises_gets_an_environment_and_its_cases_run() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
    let repo = dir.path().join("repos").join("unbuildable");
    for folder in ["src/unbuildable", "tests"] {
        std::fs::create_dir_all(repo.join(folder)).expect("mkdir");
    }
    std::fs::write(
        repo.join("setup.py"),
        "import os\nfrom setuptools import setup\n\
         if 'UNBUILDABLE_ENV' not in os.environ:\n    \
             raise RuntimeError('set UNBUILDABLE_ENV to build')\n\
         setup(name='unbuildable', packages=['unbuildable'], package_dir={'': 'src'})\n",
    )
    .expect("setup.py");
    std::fs::write(
        repo.join("src/unbuildable/__init__.py"),
        "def double(x):\n    \"\"\"Twice x.\"\"\"\n    return 2 * x\n",
    )
    .expect("module");
    std::fs::write(
        repo.join("tests/test_double.py"),
        "from unbuildable import double\n\n\ndef test_double():\n    assert double(3) == 6\n",
    )
    .expect("test");
    let requirements = dir.path().join("requirements");
    std::fs::create_dir(&requirements).expect("mkdir");
    std::fs::write(requirements.join("unbuildable.txt"), "pytest==7.4.4\n").expect("pins");
    let cache = dir.path().join("cache");
    let repos = dir.path().join("repos").to_string_lossy().into_owned();
    let requirements = requirements.to_string_lossy().into_owned();
    let set_up = || {
        let args = [
            "bench",
            "setup-env",
            "--format",
            "evocodebench",
            "--repos",
            &repos,
            "--requirements",
            &requirements,
        ];
        let out = crossfile(&args, &cache);
        assert!(out.status.success(), "setup-env: {}", stderr(&out));
        stderr(&out)
    };
    for (round, done) in [(1, "made  unbuildable"), (2, "kept  unbuildable")] {
        let log = set_up();
        assert!(log.contains(done), "round {round}: {log}");
        // What failed (the build's own message) and what was done instead.
        for said in [
            "warning unbuildable: installing unbuildable itself",
            "set UNBUILDABLE_ENV to build",
            "its tests import unbuildable's sources",
        ] {
            assert!(log.contains(said), "round {round}: {said:?} not in {log}");
        }
    }

    let record = json!({
        "namespace": "unbuildable.double", "type": "function",
        "completion_path": "unbuildable/src/unbuildable/__init__.py",
        "signature_position": [1, 1], "body_position": [3, 3],
        "dependency": {"intra_class": [], "intra_file": [], "cross_file": []},
        "tests": ["tests/test_double.py::test_double"],
        "requirement": {"Functionality": "Doubles a number.\n", "Arguments": ":param x: a number"},
        "indent": 4
    });
    let cases = dir.path().join("cases.jsonl");
    std::fs::write(&cases, record.to_string() + "\n").expect("cases");
    let predictions = dir.path().join("predictions.jsonl");
    write_completions(
        &predictions,
        &[
            ("unbuildable.double".into(), "return 2 * x\n".into()),
            ("unbuildable.double".into(), "return x\n".into()),
        ],
    );
    let (document, log) = score(&cases, Path::new(&repos), &predictions, &[], &cache);
    assert_eq!(
        document.per_case[0].outcomes,
        [Status::Pass, Status::Fail],
        "{log}"
    );
}
