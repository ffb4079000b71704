//! Arena battles over real stdio with SmolLM2: two blind suggestions per inline request, the vote
//! written for the arm shown where the user picked, a battle superseded or left at the end as no
//! choice, the order drawn per seed (recorded, balanced, repeatable), a failed arm showing no
//! battle, two servers writing one votes file at once, a bad arm named, and both suggestions'
//! metrics recorded (never shown) at a replayed CrossCodeEval case, and at a replayed
//! EvoCodeBench case both bodies tested before the vote is written.

use std::path::Path;
use std::time::{Duration, Instant};

use crossfile_bench::arena::Vote;
use serde_json::{Value, json};

use crate::lsp::client::{Client, FIXTURE, uri};
use crate::support::Workspace;

const TEXT: &str = "from geometry.shapes import Rectangle, rectangle_area\n\nbox = Rectangle(3, 4)\nprint(rectangle_";

/// Two arms whose suggestions differ (2 raw tokens against 10), the votes file, a seed.
fn arena(ws: &Workspace, votes: &Path, seed: u64) -> Value {
    json!({
        "index": {"cache_dir": ws.cache.path().join("index")},
        "lsp": {"debounce_ms": 0},
        "arena": {
            "enabled": true,
            "seed": seed,
            "votes": votes,
            "arms": [
                {"retriever": "none", "prompt.max_new_tokens": 2, "postprocess.unit": "raw"},
                {"retriever": "bm25", "prompt": {"max_new_tokens": 10}, "postprocess": {"unit": "raw"}},
            ],
        },
    })
}

fn open(client: &mut Client, root: &Path, text: &str) {
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri(root, "app.py"), "languageId": "python",
               "version": 1, "text": text}}),
    );
}

fn change(client: &mut Client, root: &Path, version: i64, text: &str) {
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri(root, "app.py"), "version": version},
               "contentChanges": [{"text": text}]}),
    );
}

/// The inline answer at the end of `TEXT`'s last line (or at `line`:`character`).
fn ask(client: &mut Client, root: &Path, line: u32, character: u32) -> Value {
    client.request(
        "textDocument/inlineCompletion",
        json!({"textDocument": {"uri": uri(root, "app.py")},
               "position": {"line": line, "character": character},
               "context": {"triggerKind": 2}}),
    )
}

/// A battle's two items: (battle id, [text shown 1, text shown 2]).
fn battle_of(answer: &Value) -> (u64, [String; 2]) {
    let items = answer
        .pointer("/result/items")
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("no items: {answer}"));
    assert_eq!(items.len(), 2, "a battle is two items: {answer}");
    let mut ids = Vec::new();
    let mut texts = Vec::new();
    for (n, item) in items.iter().enumerate() {
        assert_eq!(
            item.pointer("/command/command"),
            Some(&json!("crossfile.arenaVote"))
        );
        let args = item.pointer("/command/arguments/0").expect("arguments");
        assert_eq!(args["pick"], json!(n + 1), "{answer}");
        ids.push(args["battle"].as_u64().expect("a battle id"));
        texts.push(item["insertText"].as_str().unwrap_or_default().to_string());
        // Blind: an item holds its text, its range and its vote, nothing that could name an arm.
        let keys = |v: &Value| -> Vec<String> {
            let mut keys: Vec<String> = v
                .as_object()
                .map(|o| o.keys().cloned().collect())
                .unwrap_or_default();
            keys.sort();
            keys
        };
        assert_eq!(keys(item), ["command", "insertText", "range"], "{item}");
        assert_eq!(keys(args), ["battle", "pick"], "{item}");
        assert_eq!(
            item.pointer("/command/title"),
            Some(&json!(format!("crossfile arena: {}", n + 1)))
        );
    }
    assert_eq!(ids[0], ids[1]);
    (ids[0], [texts[0].clone(), texts[1].clone()])
}

/// The votes file's lines, each read as the [`Vote`] its published format is (none yet: empty).
fn votes(path: &Path) -> Vec<Vote> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn a_battle_is_two_blind_suggestions_and_the_vote_names_the_arm_picked() {
    let ws = Workspace::new(FIXTURE);
    let path = ws.cache.path().join("votes").join("votes.jsonl");
    let mut client = Client::start(ws.cache.path());
    client.initialize(ws.root(), arena(&ws, &path, 7));
    client.wait_for_index();
    open(&mut client, ws.root(), TEXT);
    let (id, shown) = battle_of(&ask(&mut client, ws.root(), 3, 16));
    assert_ne!(shown[0], shown[1], "the arms differ: {shown:?}");
    let (again, _) = battle_of(&ask(&mut client, ws.root(), 3, 16));
    assert_eq!(again, id, "the same text and cursor: the same battle");
    assert!(!path.exists(), "nothing is written before the vote");

    let voted = client.execute("crossfile.arenaVote", json!({"battle": id, "pick": 2}));
    assert_eq!(voted["recorded"], json!(true), "{voted}");
    assert_eq!(voted["votes"], json!(path));
    let twice = client.execute("crossfile.arenaVote", json!({"battle": id, "pick": 1}));
    assert_eq!(twice["recorded"], json!(false), "voted once: {twice}");
    let lines = votes(&path);
    assert_eq!(lines.len(), 1);
    // The line's shape is a published format (docs/arena.md): fields are only ever added.
    let text = std::fs::read_to_string(&path).expect("votes");
    let raw: Value = serde_json::from_str(text.lines().next().expect("a line")).expect("json");
    expect_test::expect![[r#"
        {
          arms: [string]
          case_id: null
          choice: number
          choice_ms: number
          col: number
          draw: {
            index: number
            rule: string
            seed: number
          }
          first: number
          language: string
          latency_ms: [number]
          line: number
          metrics: null
          path: string
          settings_hash: [string]
          texts: [string]
          time: string
          version: number
          workspace: string
        }
    "#]]
    .assert_eq(&crate::shape::shape(&raw));
    let vote = &lines[0];
    let first = usize::from(vote.first);
    assert_eq!(
        vote.choice.map(usize::from),
        Some(1 - first),
        "pick 2 is the arm shown second"
    );
    assert_eq!(vote.texts[1 - first], shown[1]);
    assert_eq!(vote.texts[first], shown[0]);
    assert_eq!(
        (
            vote.path.as_str(),
            vote.line,
            vote.col,
            vote.language.as_deref()
        ),
        ("app.py", 4, 17, Some("python"))
    );
    assert_eq!(vote.workspace, "ws");
    let draw = vote.draw.as_ref().expect("the battle's draw");
    assert_eq!(
        (draw.rule.as_str(), draw.seed, draw.index),
        ("uniform", 7, 0)
    );
    assert!(vote.choice_ms.is_some_and(|ms| ms > 0.0));
    let none = "{postprocess.unit=\"raw\", prompt.max_new_tokens=2, retriever=\"none\"}";
    let bm25 = "{postprocess.unit=\"raw\", prompt.max_new_tokens=10, retriever=\"bm25\"}";
    assert_eq!(vote.arms, [none, bm25], "arms in the settings' order");
    let revealed = client.execute("crossfile.arenaReveal", json!({}));
    assert_eq!(revealed["picked"], json!(2));
    assert_eq!(
        (&revealed["battle"], &revealed["votes"]),
        (&json!(id), &json!(path))
    );
    assert_eq!(
        revealed["arms"][1],
        json!(vote.arms[1 - first]),
        "{revealed}"
    );
    assert_eq!(revealed["texts"][1], json!(shown[1]));

    // Typing on is no choice: the next request in the document records the battle shown.
    change(&mut client, ws.root(), 2, &format!("{TEXT}a"));
    let (second, _) = battle_of(&ask(&mut client, ws.root(), 3, 17));
    assert_ne!(second, id);
    change(&mut client, ws.root(), 3, &format!("{TEXT}ar"));
    battle_of(&ask(&mut client, ws.root(), 3, 18));
    let lines = votes(&path);
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1].choice, None, "superseded: no choice");
    assert_eq!(lines[1].col, 18);
    let dismissed = client.execute("crossfile.arenaVote", json!({"battle": second, "pick": 1}));
    assert_eq!(dismissed["recorded"], json!(false), "already no choice");
    let status = client.execute("crossfile.status", json!({}));
    let counts = &status["arena"];
    assert_eq!(
        (&counts["battles"], &counts["recorded"], &counts["failed"]),
        (&json!(3), &json!(2), &json!(0)),
        "{status}"
    );
    assert_eq!(counts["arms"], json!([none, bm25]));
    assert_eq!(counts["seed"], json!(7));
    // The battle still shown when the session ends is no choice too.
    assert_eq!(client.finish(true), Some(0));
    let lines = votes(&path);
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[2].choice, None);
    assert_eq!(lines[2].draw.as_ref().map(|d| d.index), Some(2));
}

#[test]
fn the_order_shown_is_drawn_per_seed_recorded_balanced_and_repeatable() {
    let ws = Workspace::new(FIXTURE);
    let runs = std::cell::Cell::new(0);
    let draws = |seed: u64, battles: usize| -> Vec<(u8, Option<u8>)> {
        runs.set(runs.get() + 1);
        let path = ws.cache.path().join(format!("votes-{}.jsonl", runs.get()));
        let mut client = Client::start(ws.cache.path());
        client.initialize(ws.root(), arena(&ws, &path, seed));
        client.wait_for_index();
        open(&mut client, ws.root(), TEXT);
        for n in 0..battles {
            let (id, _) = battle_of(&ask(&mut client, ws.root(), 3, 16));
            let pick = [json!(1), json!(2), Value::Null][n % 3].clone();
            client.execute("crossfile.arenaVote", json!({"battle": id, "pick": pick}));
        }
        assert_eq!(client.finish(true), Some(0));
        votes(&path)
            .into_iter()
            .map(|v| (v.first, v.choice))
            .collect()
    };
    let mut firsts = Vec::new();
    for seed in 1..=8 {
        let drawn = draws(seed, 2);
        assert_eq!(drawn.len(), 2);
        firsts.extend(drawn.iter().map(|(first, _)| *first));
        // The pick is the place shown; the choice the arm there.
        let (first, choice) = drawn[0];
        assert_eq!(choice, Some(first), "pick 1 is the arm shown first");
        let (first, choice) = drawn[1];
        assert_eq!(choice, Some(1 - first), "pick 2 is the arm shown second");
    }
    let shown_first_0 = firsts.iter().filter(|&&f| f == 0).count();
    assert!(
        (4..=12).contains(&shown_first_0),
        "over 16 draws each arm is shown first 4..=12 times: {firsts:?}"
    );
    assert_eq!(
        draws(3, 2).iter().map(|(f, _)| *f).collect::<Vec<_>>(),
        firsts[4..6],
        "the same seed draws the same order"
    );
}

#[test]
fn a_failed_arm_shows_no_battle_and_is_counted() {
    let ws = Workspace::new(FIXTURE);
    let path = ws.cache.path().join("votes.jsonl");
    // A port nothing listens on, on this machine only.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = closed.local_addr().expect("addr").port();
    drop(closed);
    let mut options = arena(&ws, &path, 1);
    options["arena"]["arms"][1] = json!({"retriever": "bm25", "backend": {
        "kind": "llamacpp", "endpoint": format!("http://127.0.0.1:{port}"),
        "retries": 0, "timeout_ms": 2000}});
    let mut client = Client::start(ws.cache.path());
    client.initialize(ws.root(), options);
    client.wait_for_index();
    open(&mut client, ws.root(), TEXT);
    let answer = ask(&mut client, ws.root(), 3, 16);
    let message = answer
        .pointer("/error/message")
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("an error: {answer}"));
    assert!(message.contains("an arm of the battle failed"), "{message}");
    assert!(!path.exists(), "no battle, no vote");
    let status = client.execute("crossfile.status", json!({}));
    assert_eq!(status.pointer("/arena/failed"), Some(&json!(1)), "{status}");
    assert_eq!(status.pointer("/arena/battles"), Some(&json!(0)));
    assert_eq!(client.finish(true), Some(0));
}

#[test]
fn two_servers_voting_into_one_file_at_once_lose_no_line() {
    let ws = Workspace::new(FIXTURE);
    let path = ws.cache.path().join("shared-votes.jsonl");
    let battles = 6;
    std::thread::scope(|scope| {
        for seed in [1, 2] {
            let (ws, path) = (&ws, &path);
            scope.spawn(move || {
                let cache = tempfile::tempdir().expect("a cache");
                let mut client = Client::start(cache.path());
                // Both index the one workspace into one cache at once, as two editors do.
                client.initialize(ws.root(), arena(ws, path, seed));
                client.wait_for_index();
                open(&mut client, ws.root(), TEXT);
                for _ in 0..battles {
                    let (id, _) = battle_of(&ask(&mut client, ws.root(), 3, 16));
                    let voted =
                        client.execute("crossfile.arenaVote", json!({"battle": id, "pick": 1}));
                    assert_eq!(voted["recorded"], json!(true));
                }
                assert_eq!(client.finish(true), Some(0));
            });
        }
    });
    let lines = votes(&path);
    assert_eq!(lines.len(), 2 * battles, "every vote, whole");
    for seed in [1, 2] {
        let indices: Vec<u64> = lines
            .iter()
            .filter_map(|v| v.draw.as_ref())
            .filter(|d| d.seed == seed)
            .map(|d| d.index)
            .collect();
        assert_eq!(
            indices,
            (0..battles as u64).collect::<Vec<_>>(),
            "seed {seed}"
        );
    }
}

#[test]
fn a_bad_arm_is_a_settings_error_naming_it() {
    let ws = Workspace::new(FIXTURE);
    let mut client = Client::start(ws.cache.path());
    let mut options = arena(&ws, &ws.cache.path().join("v.jsonl"), 1);
    options["arena"]["arms"] =
        json!(["bm25", {"prompt.layout": "sideways"}, {"index.fixed_lines": 3}]);
    client.initialize(ws.root(), options);
    client.wait_for_index();
    let shown = client.shown_messages();
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(
        shown[0].contains("arena.arms[1].prompt.layout"),
        "{}",
        shown[0]
    );
    // A section no arm may set: the ones it may, from the arm's type.
    assert!(
        shown[0].contains("arena.arms[2].index: unknown field `index`, expected one of `retrieve`"),
        "{}",
        shown[0]
    );
    // The arena is not on: a plain suggestion answers.
    open(&mut client, ws.root(), TEXT);
    let answer = ask(&mut client, ws.root(), 3, 16);
    let items = answer.pointer("/result/items").and_then(Value::as_array);
    assert!(items.is_some_and(|i| i.len() <= 1), "{answer}");
    assert_eq!(client.finish(true), Some(0));
}

#[test]
fn an_untrusted_workspace_cannot_send_code_through_an_arm() {
    let ws = Workspace::new(FIXTURE);
    ws.write(
        "crossfile.toml",
        "[arena]\nenabled = true\narms = [\"none\", { retriever = \"bm25\", backend.kind = \"openai\", backend.endpoint = \"http://127.0.0.1:9\" }, \"bm25\"]\n",
    );
    let mut client = Client::start(ws.cache.path());
    client.initialize(
        ws.root(),
        json!({"index": {"cache_dir": ws.cache.path().join("index")}, "arena": {"votes": ws.cache.path().join("v.jsonl")}}),
    );
    client.wait_for_index();
    let shown = client.shown_messages().join("\n");
    assert!(shown.contains("arena.arms[1].backend.kind"), "{shown}");
    assert!(shown.contains("arena.arms[1].backend.endpoint"), "{shown}");
    let status = client.execute("crossfile.status", json!({}));
    assert_eq!(
        status.pointer("/arena/arms"),
        Some(&json!(["none", "bm25"])),
        "{status}"
    );
    assert_eq!(client.finish(true), Some(0));
}

#[test]
fn a_battle_at_a_replayed_case_records_both_suggestions_metrics_and_shows_none() {
    let cache = tempfile::tempdir().expect("a cache");
    let path = cache.path().join("votes.jsonl");
    let arena = format!(
        "[arena]\nenabled = true\nseed = 3\nvotes = {:?}\narms = [\"none\", \"bm25\"]\n",
        path.display().to_string()
    );
    let mut client = Client::start_without_folders(cache.path(), &arena);
    let cases = crate::support::shared_dir().join("bench/cceval/python-dev.jsonl");
    let opened = client.open_case(
        json!({"cases": cases, "repos": crate::support::bench_repos(),
                                         "format": "cceval", "case": 0}),
    );
    let id = opened
        .pointer("/case/id")
        .and_then(Value::as_str)
        .expect("id");
    let answer = client.request(
        "textDocument/inlineCompletion",
        json!({"textDocument": {"uri": opened["uri"]}, "position": opened["position"],
               "context": {"triggerKind": 1}}),
    );
    let (battle, shown) = battle_of(&answer);
    assert!(
        !answer.to_string().contains("\"es\""),
        "no metric is shown before the vote: {answer}"
    );
    client.execute("crossfile.arenaVote", json!({"battle": battle, "pick": 1}));
    let lines = votes(&path);
    assert_eq!(lines.len(), 1);
    let vote = &lines[0];
    assert_eq!(vote.case_id.as_deref(), Some(id));
    let first = usize::from(vote.first);
    assert_eq!(vote.texts[first], shown[0]);
    let metrics = vote.metrics.as_ref().expect("the metrics at a case");
    for side in metrics {
        assert!(
            side.contains_key("es") && side.contains_key("em"),
            "both metrics at the case: {vote:?}"
        );
    }
    let revealed = client.execute("crossfile.arenaReveal", json!({}));
    assert_eq!(revealed["caseId"], json!(id));
    assert_eq!(revealed["metrics"][0], json!(metrics[first]), "{revealed}");
    assert_eq!(client.finish(true), Some(0));
}

#[test]
fn a_battle_at_an_executed_case_writes_its_vote_once_both_bodies_are_tested() {
    use crate::bench::evocodebench::{dev_cases, env_cache, environments};
    environments();
    let cache = tempfile::tempdir().expect("a cache");
    let path = cache.path().join("votes.jsonl");
    let extra = format!(
        "n_ctx = 1024\n[arena]\nenabled = true\nseed = 5\nvotes = {:?}\narms = [\"none\", \"bm25\"]\n",
        path.display().to_string()
    );
    let mut client = Client::start_without_folders(cache.path(), &extra);
    let envs = env_cache().join("envs").join("evocodebench");
    let opened = client.open_case(json!({
        "cases": dev_cases(), "repos": crate::support::bench_repos(), "format": "evocodebench",
        "case": 0, "setting": "local_completion", "envs": envs, "maxNewTokens": 32}));
    let id = opened
        .pointer("/case/id")
        .and_then(Value::as_str)
        .expect("id")
        .to_string();
    let answer = client.request(
        "textDocument/inlineCompletion",
        json!({"textDocument": {"uri": opened["uri"]}, "position": opened["position"],
               "context": {"triggerKind": 1}}),
    );
    let (battle, _) = battle_of(&answer);
    let voted = client.execute("crossfile.arenaVote", json!({"battle": battle, "pick": 2}));
    assert_eq!(voted["recorded"], json!(true), "{voted}");
    // Decided at once (the reveal names the arms), written once both bodies' tests have run.
    let revealed = client.execute("crossfile.arenaReveal", json!({}));
    assert_eq!(revealed["battle"], json!(battle), "{revealed}");
    let started = Instant::now();
    while votes(&path).is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "no vote written"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let lines = votes(&path);
    let vote = &lines[0];
    assert_eq!(vote.case_id.as_deref(), Some(id.as_str()));
    let metrics = vote.metrics.as_ref().expect("the metrics at a case");
    for side in metrics {
        let pass = side.get("pass@1").copied();
        assert!(
            matches!(pass, Some(p) if p == 0.0 || p == 1.0),
            "each body tested: {vote:?}"
        );
    }
    let status = client.execute("crossfile.status", json!({}));
    assert_eq!(
        status.pointer("/arena/recorded"),
        Some(&json!(1)),
        "{status}"
    );
    assert_eq!(client.finish(true), Some(0));
}
