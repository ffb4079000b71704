//! Cases mined from history (`--format history`) through the real binary: a small repository as
//! a parent commit left it and cases in two files its commit adds (absent from that tree), run
//! with `none` and `bm25` and the small model, then `bench report` by line category and by where
//! the chunks come from. The fixture is shared with the language server's replay test.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::json;

use crossfile_bench::bench::runfile::record::RunRecord;

use super::checks;
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
) -> Vec<RunRecord> {
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
    checks::run_records(out)
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
        let id = r.case_id.as_str();
        assert!(r.error.is_none(), "{id}: {:?}", r.error);
        assert_eq!(r.format, "history", "{id}");
        let (path, line) = id
            .strip_prefix(&format!("{REPOSITORY}/"))
            .and_then(|rest| rest.rsplit_once(':'))
            .expect("the fixture's id");
        assert_eq!((r.path.as_str(), r.line.to_string()), (path, line.into()));
        let category = ADDED
            .iter()
            .find(|(p, _, _)| *p == path)
            .and_then(|(_, _, cases)| cases.iter().find(|(l, _, _)| l.to_string() == line))
            .map(|(_, category, _)| *category);
        assert_eq!(r.category.as_deref(), category, "{id}");
        let scored: Vec<&str> = r.metrics.keys().map(String::as_str).collect();
        for m in ["em", "es", "id_em", "id_precision", "id_recall", "id_f1"] {
            assert!(scored.contains(&m), "{id}: {m}");
        }
        // Retrieval ran over the parent's tree; no chunk covers the hidden line (1-based).
        checks::no_chunk_covers(r, r.line + 1);
        // Each chunk's origin, relative to the case's file: `pkg/report/summary.py` imports
        // `pkg.util`; `pkg/cli.py` shares `pkg/` with `pkg/util.py`.
        for chunk in &r.chunks {
            let folder = |p: &str| p.rsplit_once('/').map_or("", |(f, _)| f).to_string();
            let expected = if chunk.path == path {
                "same_file"
            } else if folder(&chunk.path) == folder(path) {
                "same_dir"
            } else if (path, chunk.path.as_str()) == ("pkg/report/summary.py", "pkg/util.py") {
                "imported"
            } else {
                "elsewhere"
            };
            assert_eq!(chunk.origin.as_deref(), Some(expected), "{id}: {chunk:?}");
            *origins.entry(expected).or_default() += 1;
        }
        // The identifier overlap: every reference here has identifiers, so a pair that
        // retrieved something has one, in 0..=1.
        match r.chunks.len() {
            0 => assert!(r.overlap.is_none(), "{id}: {:?}", r.overlap),
            _ => assert!(
                r.overlap.is_some_and(|o| (0.0..=1.0).contains(&o)),
                "{id}: {:?}",
                r.overlap
            ),
        }
        if r.retriever == "bm25" {
            bm25_chunks += r.chunks.len();
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
    let report = checks::report(&stdout(&report));
    let found: BTreeMap<&str, usize> = report
        .by_category
        .iter()
        .map(|(category, cells)| {
            let n = |retriever: &str| cells.get(retriever).map(|c| c.n);
            assert_eq!(n("bm25"), n("none"), "{category}");
            for retriever in ["none", "bm25"] {
                let cell = &cells[retriever];
                checks::interval_holds_mean(cell);
                let es = cell.es.expect("es");
                assert!((0.0..=100.0).contains(&es), "{cell:?}");
            }
            (category.as_str(), n("none").expect("none's cell"))
        })
        .collect();
    assert_eq!(found, categories());
    // Where bm25's context came from, from the run file alone; `none` retrieved nothing.
    let provenance = &report.provenance;
    assert_eq!(
        provenance.keys().collect::<Vec<_>>(),
        ["bm25"],
        "{provenance:?}"
    );
    let bm25 = &provenance["bm25"];
    assert_eq!(bm25.chunks, bm25_chunks);
    assert_eq!(bm25.origins.len(), 4, "{:?}", bm25.origins);
    for (origin, n) in &origins {
        assert!(
            (bm25.origins[*origin] - *n as f64 / bm25_chunks as f64).abs() < 1e-12,
            "{origin}: {:?}",
            bm25.origins
        );
    }
    let labels: Vec<&str> = bm25.by_overlap.iter().map(|b| b.bucket.as_str()).collect();
    assert_eq!(
        labels,
        ["0", "(0, 0.25]", "(0.25, 0.5]", "(0.5, 0.75]", "(0.75, 1]"]
    );
    let bucketed: usize = bm25.by_overlap.iter().map(|b| b.n).sum();
    assert_eq!(
        bucketed + bm25.unmeasured,
        categories().values().sum::<usize>()
    );
    for b in &bm25.by_overlap {
        match b.n {
            0 => assert!(b.em.is_none() && b.es.is_none(), "{b:?}"),
            _ => assert!(b.es.is_some_and(|es| (0.0..=100.0).contains(&es)), "{b:?}"),
        }
    }
    let compared = &report.category_comparisons;
    assert_eq!(
        compared.len(),
        categories().len(),
        "none against bm25, per category"
    );
    for c in compared {
        assert_eq!((c.a.as_str(), c.b.as_str()), ("none", "bm25"));
        let metrics: Vec<&str> = c.metrics.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(metrics, ["em", "es", "chrf"], "{c:?}");
        let category = c.category.as_deref().expect("a category");
        assert!(report.by_category.contains_key(category));
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
        let id = r.case_id.as_str();
        assert!(r.error.is_none(), "{id}: {:?}", r.error);
        let chunks = &r.chunks;
        let held: Vec<bool> = chunks
            .iter()
            .map(|c| c.tokens.expect("a chunk's tokens") > 0)
            .collect();
        assert!(
            held.windows(2).all(|w| w[0] || !w[1]),
            "{id}: the prompt holds a prefix of the list: {held:?}"
        );
        if held.iter().any(|h| *h) {
            assert!(r.prompt_tokens.crossfile > 0, "{id}");
        }
        for c in chunks {
            let source = c.source.as_deref().expect("a source");
            assert!(["definitions", "bm25"].contains(&source), "{id}: {c:?}");
            *by_source.entry(source.to_owned()).or_default() += 1;
            for v in [c.reference_overlap, c.suggestion_overlap]
                .into_iter()
                .flatten()
            {
                assert!((0.0..=1.0).contains(&v), "{id}: {c:?}");
            }
        }
        // The mix starts with its first source where it found something.
        if chunks
            .iter()
            .any(|c| c.source.as_deref() == Some("definitions"))
        {
            assert_eq!(
                chunks[0].source.as_deref(),
                Some("definitions"),
                "{id}: {chunks:?}"
            );
        }
        if id.ends_with("summary.py:4") {
            // `ledger = Ledger()`: the class comes from the imported module, and holds half of
            // the reference's identifiers (`Ledger`, not `ledger`).
            assert!(
                chunks.iter().any(|c| c.path == "pkg/util.py"
                    && c.origin.as_deref() == Some("imported")
                    && c.reference_overlap == Some(0.5)),
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
    let report = checks::report(&stdout(&report));
    let sources = &report.sources[spec];
    let names: Vec<&str> = sources.sources.iter().map(|s| s.source.as_str()).collect();
    assert_eq!(names, ["definitions", "bm25"], "{sources:?}");
    let shares: f64 = sources.sources.iter().map(|s| s.token_share).sum();
    assert!((shares - 1.0).abs() < 1e-9, "{sources:?}");
    for row in &sources.sources {
        assert_eq!(Some(row.chunks), by_source.get(&row.source).copied());
    }
    let drawn: usize = sources.by_drawn_on.iter().map(|g| g.n).sum();
    assert_eq!(drawn, records.len());
    let markdown = crossfile(
        &["bench", "report", out.to_str().expect("utf-8")],
        dir.path(),
    );
    assert!(stdout(&markdown).contains("## Context sources"));
}
