//! One writer per file: two `bench run` on one run file, outputs that are inputs, two servers
//! replaying in place on the same repositories.

use super::*;
use crate::support::{small_model, stderr};

#[test]
fn a_second_bench_run_on_the_same_run_file_is_refused_naming_the_first() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cases = dev_cases(dir.path(), 2);
    let out = dir.path().join("run.jsonl");
    let user = dir.path().join("user.toml");
    std::fs::write(
        &user,
        format!(
            "[backend]\nkind = \"openai\"\nendpoint = \"{}\"\ntimeout_ms = 60000\nretries = 0\n\
             [model]\npath = {:?}\n",
            hanging_listener().0,
            small_model()
        ),
    )
    .expect("write the user config");
    let repos = bench_repos();
    let (cases_s, repos_s, out_s) = (
        cases.to_str().expect("utf-8"),
        repos.to_str().expect("utf-8"),
        out.to_str().expect("utf-8"),
    );
    let args = bench_run_args("cceval", cases_s, repos_s, out_s);
    let mut first = Command::new(env!("CARGO_BIN_EXE_crossfile"))
        .args(&args)
        .env("CROSSFILE_CACHE_DIR", dir.path().join("cache"))
        .env("CROSSFILE_CONFIG", &user)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start the first bench run");
    let lock = crossfile_bench::lock::lock_path(&out);
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !std::fs::read_to_string(&lock).is_ok_and(|t| t.starts_with("pid")) {
        assert!(
            std::time::Instant::now() < deadline,
            "the first run never locked {}",
            out.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let second = crossfile_with(&args, &dir.path().join("cache"), &user, &[]);
    let _ = first.kill();
    let _ = first.wait();
    assert_eq!(second.status.code(), Some(1));
    let message = stderr(&second);
    assert!(
        message.contains("in use by another crossfile")
            && message.contains(&format!("pid {}", first.id())),
        "{message}"
    );
    let text = std::fs::read_to_string(&out).expect("run file");
    assert!(
        text.is_empty(),
        "nothing written while the model hung: {text}"
    );
}

#[test]
fn bench_refuses_outputs_that_are_inputs_and_runs_with_nothing_to_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = dir.path().join("cache");
    let user = dir.path().join("no-user.toml");
    let cases = dev_cases(dir.path(), 1);
    let repos = bench_repos();
    let run = dir.path().join("run.jsonl");
    let (cases_s, repos_s, run_s) = (
        cases.to_str().expect("utf-8"),
        repos.to_str().expect("utf-8"),
        run.to_str().expect("utf-8"),
    );
    let none = ["--backend", "none"];
    let args = [
        &bench_run_args("cceval", cases_s, repos_s, run_s)[..],
        &none,
    ]
    .concat();
    let out = crossfile_with(&args, &cache, &user, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Resuming a finished run file runs nothing and is still a success.
    let out = crossfile_with(&args, &cache, &user, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let before = std::fs::read(&run).expect("run file");

    // An output that is an input, by its name or through links, is refused and left alone.
    let soft = dir.path().join("soft.jsonl");
    let hard = dir.path().join("hard.jsonl");
    std::os::unix::fs::symlink(&run, &soft).expect("symlink");
    std::fs::hard_link(&run, &hard).expect("hard link");
    for output in [&run, &soft, &hard] {
        let output = output.to_str().expect("utf-8");
        for refused in [
            vec!["bench", "report", run_s, "--html", output],
            vec![
                "bench", "export", run_s, "--format", "cceval", "--out", output,
            ],
        ] {
            let out = crossfile_with(&refused, &cache, &user, &[]);
            assert_eq!(out.status.code(), Some(1), "{refused:?}");
            assert!(
                stderr(&out).contains("is also an input"),
                "{}",
                stderr(&out)
            );
            assert_eq!(
                std::fs::read(&run).expect("run file"),
                before,
                "{refused:?}"
            );
        }
    }
    let args = [
        &bench_run_args("cceval", cases_s, repos_s, cases_s)[..],
        &none,
    ]
    .concat();
    let out = crossfile_with(&args, &cache, &user, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("is also an input"),
        "{}",
        stderr(&out)
    );

    // Nothing to run: an empty cases file, or every record skipped by the wrong format.
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").expect("write");
    let fresh = dir.path().join("fresh.jsonl");
    let fresh_s = fresh.to_str().expect("utf-8");
    for (format, file, says) in [
        (
            "cceval",
            empty.to_str().expect("utf-8"),
            "the file is empty",
        ),
        ("repoeval", cases_s, "is --format repoeval right?"),
    ] {
        let args = [&bench_run_args(format, file, repos_s, fresh_s)[..], &none].concat();
        let out = crossfile_with(&args, &cache, &user, &[]);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("no case to run") && stderr(&out).contains(says),
            "{}",
            stderr(&out)
        );
        assert!(!fresh.exists(), "a run file was created for nothing");
    }
}

/// Two servers on one cache folder, both asked to replay in place in the same repositories:
/// the second is refused (naming the first), replays in its copy instead, and after both
/// walk their cases and shut down, every repository file is as it was, byte for byte.
#[cfg(feature = "embedded")]
#[test]
fn two_servers_replaying_in_place_never_lose_a_file() {
    use crate::lsp::client::Client;
    use crate::lsp::replay::tree_digest;
    use serde_json::{Value, json};

    let cache = tempfile::tempdir().expect("tempdir");
    let dir = tempfile::tempdir().expect("tempdir");
    let (repos, cases) = repos_copy(dir.path(), 3);
    let before = tree_digest(&repos);
    let start = || Client::start_without_folders(cache.path(), NO_MODEL);
    let (mut a, mut b) = (start(), start());
    let in_place =
        |case: usize| json!({"cases": cases, "repos": repos, "case": case, "inPlace": true});
    a.execute("crossfile.replayCase", in_place(0));
    let refused = b.request(
        "workspace/executeCommand",
        json!({"command": "crossfile.replayCase", "arguments": [in_place(1)]}),
    );
    let message = refused
        .pointer("/error/message")
        .and_then(Value::as_str)
        .unwrap_or_default();
    assert!(
        message.contains("in use by another crossfile")
            && message.contains(&format!("pid {}", a.pid())),
        "{refused}"
    );
    b.execute(
        "crossfile.replayCase",
        json!({"cases": cases, "repos": repos, "case": 1}),
    );
    for step in [
        "crossfile.nextCase",
        "crossfile.previousCase",
        "crossfile.nextCase",
    ] {
        a.execute(step, Value::Null);
        b.execute(
            if step.ends_with("nextCase") {
                "crossfile.previousCase"
            } else {
                "crossfile.nextCase"
            },
            Value::Null,
        );
    }
    assert_eq!(a.finish(true), Some(0));
    assert_eq!(b.finish(true), Some(0));
    assert!(
        before == tree_digest(&repos),
        "a repository file was left changed"
    );
}
