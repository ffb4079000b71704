//! Cases mined from history (`--format history`) through the real binary: a small repository as
//! a parent commit left it and cases in two files its commit adds (absent from that tree), run
//! with `none` and `bm25` and the small model, then `bench report` by line category and by where
//! the chunks come from. The fixture is shared with the language server's replay test.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::lsp::replay::tree_digest;
use crate::support::{crossfile, small_model, stderr, stdout};

/// The folder of the parent commit's tree under the repositories folder.
pub const REPOSITORY: &str = "ledger-0123456";
const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";
const PARENT: &str = "89abcdef0123456789abcdef0123456789abcdef";

/// The parent commit's tree: what the added files use.
const TREE: &[(&str, &str)] = &[
    ("pkg/__init__.py", ""),
    (
        "pkg/util.py",
        "class Ledger:\n    \"\"\"Amounts in order.\"\"\"\n\n    def __init__(self):\n        self.items = []\n\n    def add(self, amount):\n        self.items.append(amount)\n\n    def total(self):\n        return sum(self.items)\n\n\ndef format_total(value):\n    return f\"total: {value:.2f}\"\n",
    ),
];

/// A case of an added file: its 0-based line, category and identifiers.
type Target = (usize, &'static str, &'static [&'static str]);

/// The files the commit adds, and their cases.
const ADDED: &[(&str, &str, &[Target])] = &[
    (
        "pkg/report/summary.py",
        "from pkg.util import Ledger, format_total\n\n\ndef summarize(amounts):\n    ledger = Ledger()\n    for amount in amounts:\n        ledger.add(amount)\n    text = format_total(ledger.total())\n    print(text)\n    return text\n",
        &[
            (0, "non_informative", &[]),
            (4, "inproject", &["Ledger"]),
            (6, "infile", &["ledger"]),
            (7, "inproject", &["format_total"]),
            (8, "common", &[]),
        ],
    ),
    (
        "pkg/cli.py",
        "import sys\n\nfrom pkg.report.summary import summarize\n\n\ndef main():\n    amounts = [float(a) for a in sys.argv[1:]]\n    summarize(amounts)\n",
        &[(7, "committed", &["summarize"])],
    ),
];

/// Writes the parent commit's tree under `dir/repos/` and the cases under `dir/cases.jsonl`;
/// returns (cases, repos).
pub fn history_fixture(dir: &Path) -> (PathBuf, PathBuf) {
    let repos = dir.join("repos");
    for (path, text) in TREE {
        let file = repos.join(REPOSITORY).join(path);
        std::fs::create_dir_all(file.parent().expect("a parent")).expect("mkdir");
        std::fs::write(file, text).expect("write");
    }
    let mut lines = Vec::new();
    for (path, text, cases) in ADDED {
        let file_lines: Vec<&str> = text.split_inclusive('\n').collect();
        for (line, category, identifiers) in *cases {
            let target = file_lines[*line].trim_end_matches('\n');
            let code = target.trim_start();
            let indent = &target[..target.len() - code.len()];
            let record = json!({
                "prompt": file_lines[..*line].concat() + indent,
                "groundtruth": code,
                "right_context": format!("\n{}", file_lines[*line + 1..].concat()),
                "metadata": {
                    "task_id": format!("{REPOSITORY}/{path}:{line}"),
                    "repository": REPOSITORY, "commit": COMMIT, "parent": PARENT,
                    "path": path, "line": line, "category": category,
                    "identifiers": identifiers,
                },
            });
            lines.push(record.to_string());
        }
    }
    let cases = dir.join("cases.jsonl");
    std::fs::write(&cases, lines.join("\n") + "\n").expect("write cases");
    (cases, repos)
}

/// `bench run --format history` of `cases` in `repos` into `out` with the small model (its
/// vocabulary alone, `--backend none`, where it is not built in), `--retriever` and `extra`
/// options; its records once it succeeded.
pub fn run_history(
    cwd: &Path,
    [cases, repos, out]: [&Path; 3],
    retrievers: &str,
    extra: &[&str],
) -> Vec<Value> {
    let small = small_model();
    let mut args = vec![
        "bench",
        "run",
        "--format",
        "history",
        "--retriever",
        retrievers,
    ];
    args.extend(extra);
    for (flag, path) in [
        ("--cases", cases),
        ("--repos", repos),
        ("--out", out),
        ("--model", small.as_path()),
    ] {
        args.extend([flag, path.to_str().expect("utf-8")]);
    }
    if !cfg!(feature = "embedded") {
        args.extend(["--backend", "none"]);
    }
    let run = crossfile(&args, cwd);
    assert!(run.status.success(), "{}", stderr(&run));
    std::fs::read_to_string(out)
        .expect("run file")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a record"))
        .collect()
}

/// The categories of the fixture's cases and how many of each.
fn categories() -> BTreeMap<&'static str, usize> {
    let mut out = BTreeMap::new();
    for (_, _, cases) in ADDED {
        for (_, category, _) in *cases {
            *out.entry(*category).or_default() += 1;
        }
    }
    out
}

#[test]
fn history_cases_run_in_the_parent_tree_and_report_by_category() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (cases, repos) = history_fixture(dir.path());
    let before = tree_digest(&repos);
    let out = dir.path().join("run.jsonl");
    let records = run_history(
        dir.path(),
        [&cases, &repos, &out],
        "none,bm25",
        &["--n-ctx", "1024", "--max-new-tokens", "12"],
    );
    assert!(before == tree_digest(&repos), "the run wrote in the tree");

    assert_eq!(records.len(), 2 * categories().values().sum::<usize>());
    let mut bm25_chunks = 0;
    let mut origins: BTreeMap<&str, usize> = BTreeMap::new();
    for r in &records {
        let id = r["case_id"].as_str().expect("case_id");
        assert!(r["error"].is_null(), "{id}: {}", r["error"]);
        assert_eq!(r["format"], "history", "{id}");
        let (path, line) = id
            .strip_prefix(&format!("{REPOSITORY}/"))
            .and_then(|rest| rest.rsplit_once(':'))
            .expect("the fixture's id");
        assert_eq!(
            (r["path"].as_str(), r["line"].to_string()),
            (Some(path), line.into())
        );
        let category = ADDED
            .iter()
            .find(|(p, _, _)| *p == path)
            .and_then(|(_, _, cases)| cases.iter().find(|(l, _, _)| l.to_string() == line))
            .map(|(_, category, _)| *category);
        assert_eq!(r["category"].as_str(), category, "{id}");
        for m in ["em", "es", "id_em", "id_precision", "id_recall", "id_f1"] {
            assert!(r["metrics"][m].is_number(), "{id}: {m}");
        }
        // Retrieval ran over the parent's tree; no chunk covers the hidden line (1-based).
        let hidden = r["line"].as_u64().expect("line") + 1;
        for chunk in r["chunks"].as_array().expect("chunks") {
            let start = chunk["start_line"].as_u64().expect("start_line");
            let end = chunk["end_line"].as_u64().expect("end_line");
            assert!(
                !(chunk["path"] == r["path"] && (start..=end).contains(&hidden)),
                "{id}: {chunk} covers the hidden line"
            );
        }
        // Each chunk's origin, relative to the case's file: `pkg/report/summary.py` imports
        // `pkg.util`; `pkg/cli.py` shares `pkg/` with `pkg/util.py`.
        let chunks = r["chunks"].as_array().expect("chunks");
        for chunk in chunks {
            let chunk_path = chunk["path"].as_str().expect("path");
            let folder = |p: &str| p.rsplit_once('/').map_or("", |(f, _)| f).to_string();
            let expected = if chunk_path == path {
                "same_file"
            } else if folder(chunk_path) == folder(path) {
                "same_dir"
            } else if (path, chunk_path) == ("pkg/report/summary.py", "pkg/util.py") {
                "imported"
            } else {
                "elsewhere"
            };
            assert_eq!(chunk["origin"], expected, "{id}: {chunk}");
            *origins.entry(expected).or_default() += 1;
        }
        // The identifier overlap: every reference here has identifiers, so a pair that
        // retrieved something has one, in 0..=1.
        match chunks.len() {
            0 => assert!(r.get("overlap").is_none(), "{id}: {}", r["overlap"]),
            _ => assert!(
                r["overlap"]
                    .as_f64()
                    .is_some_and(|o| (0.0..=1.0).contains(&o)),
                "{id}: {}",
                r["overlap"]
            ),
        }
        if r["retriever"] == "bm25" {
            bm25_chunks += chunks.len();
        }
    }
    assert!(bm25_chunks > 0, "bm25 found the tree's code");
    assert!(
        origins.contains_key("imported") && origins.contains_key("same_dir"),
        "{origins:?}"
    );

    // The report groups by category from the run file alone.
    let report = crossfile(
        &["bench", "report", out.to_str().expect("utf-8"), "--json"],
        dir.path(),
    );
    assert!(report.status.success(), "{}", stderr(&report));
    let report: Value = serde_json::from_str(&stdout(&report)).expect("JSON");
    let by_category = report["by_category"].as_object().expect("by_category");
    let found: BTreeMap<&str, usize> = by_category
        .iter()
        .map(|(category, cells)| {
            let none = cells["none"]["n"].as_u64().expect("n") as usize;
            assert_eq!(cells["bm25"]["n"].as_u64(), Some(none as u64), "{category}");
            for retriever in ["none", "bm25"] {
                let cell = &cells[retriever];
                let em = cell["em"].as_f64().expect("em");
                let es = cell["es"].as_f64().expect("es");
                assert!((0.0..=100.0).contains(&em), "{cell}");
                assert!((0.0..=100.0).contains(&es), "{cell}");
                let low = cell["em_ci"]["low"].as_f64().expect("em_ci.low");
                assert!(low <= em, "{cell}");
            }
            (category.as_str(), none)
        })
        .collect();
    assert_eq!(found, categories());
    // Where bm25's context came from, from the run file alone; `none` retrieved nothing.
    let provenance = report["provenance"].as_object().expect("provenance");
    assert_eq!(
        provenance.keys().collect::<Vec<_>>(),
        ["bm25"],
        "{provenance:?}"
    );
    let bm25 = &provenance["bm25"];
    assert_eq!(bm25["chunks"].as_u64(), Some(bm25_chunks as u64));
    let shares = bm25["origins"].as_object().expect("origins");
    assert_eq!(shares.len(), 4, "{shares:?}");
    let of = |origin: &str| shares[origin].as_f64().expect("a share");
    for (origin, n) in &origins {
        assert!(
            (of(origin) - *n as f64 / bm25_chunks as f64).abs() < 1e-12,
            "{origin}: {shares:?}"
        );
    }
    let buckets = bm25["by_overlap"].as_array().expect("by_overlap");
    let labels: Vec<&str> = buckets
        .iter()
        .filter_map(|b| b["bucket"].as_str())
        .collect();
    assert_eq!(
        labels,
        ["0", "(0, 0.25]", "(0.25, 0.5]", "(0.5, 0.75]", "(0.75, 1]"]
    );
    let bucketed: u64 = buckets.iter().filter_map(|b| b["n"].as_u64()).sum();
    let bm25_pairs = categories().values().sum::<usize>() as u64;
    assert_eq!(
        bucketed + bm25["unmeasured"].as_u64().expect("unmeasured"),
        bm25_pairs
    );
    for b in buckets {
        match b["n"].as_u64() {
            Some(0) => assert!(b["em"].is_null() && b["es"].is_null(), "{b}"),
            _ => assert!(
                b["es"]
                    .as_f64()
                    .is_some_and(|es| (0.0..=100.0).contains(&es)),
                "{b}"
            ),
        }
    }
    let compared = report["category_comparisons"].as_array().expect("list");
    assert_eq!(
        compared.len(),
        categories().len(),
        "none against bm25, per category"
    );
    for c in compared {
        assert_eq!(
            (c["a"].as_str(), c["b"].as_str()),
            (Some("none"), Some("bm25"))
        );
        let metrics: Vec<&str> = c["metrics"]
            .as_array()
            .expect("metrics")
            .iter()
            .filter_map(|m| m["name"].as_str())
            .collect();
        assert_eq!(metrics, ["em", "es", "chrf"], "{c}");
        assert!(by_category.contains_key(c["category"].as_str().expect("category")));
    }
    let html = dir.path().join("report.html");
    let markdown = crossfile(
        &[
            "bench",
            "report",
            out.to_str().expect("utf-8"),
            "--html",
            html.to_str().expect("utf-8"),
        ],
        dir.path(),
    );
    let markdown = stdout(&markdown);
    assert!(markdown.contains("## By line category"), "{markdown}");
    assert!(
        markdown.contains("| committed | none (control) |"),
        "{markdown}"
    );
    assert!(
        markdown.contains("## Where the context comes from"),
        "{markdown}"
    );
    let page = std::fs::read_to_string(&html).expect("the page");
    assert!(page.contains("id=\"categories\"") && page.contains("by line category: es"));
    assert!(page.contains("id=\"provenance\"") && page.contains("es by identifier overlap"));
}

/// A `mix:` of `definitions` and `bm25` over the same cases: each chunk names its source and
/// what the prompt held of it, the prompt holds a prefix of the list starting with the first
/// source where it found something, the case that uses `Ledger` gets its class from the imported module, and `bench report` says what each source gave.
#[test]
fn a_mix_names_each_chunks_source_and_the_report_says_what_each_gave() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (cases, repos) = history_fixture(dir.path());
    let out = dir.path().join("run.jsonl");
    let spec = "mix:definitions*2+bm25*1";
    let records = run_history(
        dir.path(),
        [&cases, &repos, &out],
        spec,
        &["--n-ctx", "1024", "--max-new-tokens", "12"],
    );
    assert_eq!(records.len(), categories().values().sum::<usize>());
    let mut by_source: BTreeMap<String, usize> = BTreeMap::new();
    for r in &records {
        let id = r["case_id"].as_str().expect("case_id");
        assert!(r["error"].is_null(), "{id}: {}", r["error"]);
        let chunks = r["chunks"].as_array().expect("chunks");
        let held: Vec<bool> = chunks
            .iter()
            .map(|c| c["tokens"].as_u64().expect("tokens") > 0)
            .collect();
        assert!(
            held.windows(2).all(|w| w[0] || !w[1]),
            "{id}: the prompt holds a prefix of the list: {held:?}"
        );
        if held.iter().any(|h| *h) {
            assert!(r["prompt_tokens"]["crossfile"].as_u64() > Some(0), "{id}");
        }
        for c in chunks {
            let source = c["source"].as_str().expect("a source");
            assert!(["definitions", "bm25"].contains(&source), "{id}: {c}");
            *by_source.entry(source.to_owned()).or_default() += 1;
            for overlap in ["reference_overlap", "suggestion_overlap"] {
                if let Some(v) = c[overlap].as_f64() {
                    assert!((0.0..=1.0).contains(&v), "{id}: {c}");
                }
            }
        }
        // The mix starts with its first source where it found something.
        if chunks.iter().any(|c| c["source"] == "definitions") {
            assert_eq!(chunks[0]["source"], "definitions", "{id}: {chunks:?}");
        }
        if id.ends_with("summary.py:4") {
            // `ledger = Ledger()`: the class comes from the imported module, and holds half of
            // the reference's identifiers (`Ledger`, not `ledger`).
            assert!(
                chunks.iter().any(|c| c["path"] == "pkg/util.py"
                    && c["origin"] == "imported"
                    && c["reference_overlap"].as_f64() == Some(0.5)),
                "{id}: {chunks:?}"
            );
        }
    }
    assert_eq!(by_source.len(), 2, "{by_source:?}");

    let report = crossfile(
        &["bench", "report", out.to_str().expect("utf-8"), "--json"],
        dir.path(),
    );
    assert!(report.status.success(), "{}", stderr(&report));
    let report: Value = serde_json::from_str(&stdout(&report)).expect("JSON");
    let sources = &report["sources"][spec];
    let rows = sources["sources"].as_array().expect("sources");
    let names: Vec<&str> = rows.iter().filter_map(|s| s["source"].as_str()).collect();
    assert_eq!(names, ["definitions", "bm25"], "{sources}");
    let shares: f64 = rows.iter().filter_map(|s| s["token_share"].as_f64()).sum();
    assert!((shares - 1.0).abs() < 1e-9, "{sources}");
    for row in rows {
        let source = row["source"].as_str().expect("source");
        assert_eq!(
            row["chunks"].as_u64(),
            by_source.get(source).map(|n| *n as u64)
        );
    }
    let drawn: u64 = sources["by_drawn_on"]
        .as_array()
        .expect("by_drawn_on")
        .iter()
        .filter_map(|g| g["n"].as_u64())
        .sum();
    assert_eq!(drawn, records.len() as u64);
    let markdown = crossfile(
        &["bench", "report", out.to_str().expect("utf-8")],
        dir.path(),
    );
    assert!(stdout(&markdown).contains("## Context sources"));
}
