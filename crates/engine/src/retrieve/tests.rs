//! Rankings on a small fixture workspace, indexed for real (tantivy on disk): `bm25`, `jaccard`,
//! `hybrid` and `mmr` as snapshots (`UPDATE_EXPECT=1` refreshes them), and the rules every
//! ranking keeps — ties by path then line, nothing from the query's own region, reciprocal rank
//! fusion's arithmetic — checked on their own.

use std::path::Path;

use expect_test::{Expect, expect};

use super::{
    DenseSettings, Exclude, Hit, Query, RetrieveSettings, Retriever, RetrieverSpec, build,
};
use crate::Position;
use crate::chunk::{ChunkerKind, ChunkerSettings};
use crate::index::{Index, IndexSettings, Progress, Snapshot};
use crate::workspace::WorkspaceSettings;

/// Two identical files (`a/dup.py`, `b/dup.py`) tie on every retriever; `app/main.py` is the
/// query's file: its lines repeat the query's words (they would rank first) but all sit in its
/// own region (the cursor's line and the 20 before it).
const FILES: &[(&str, &str)] = &[
    (
        "lib/config.py",
        "import json\n\n\ndef parse_config(path):\n    with open(path) as handle:\n        return json.load(handle)\n\n\ndef config_value(config, key, default=None):\n    return config.get(key, default)\n",
    ),
    (
        "lib/users.py",
        "class User:\n    def __init__(self, user_id, name):\n        self.user_id = user_id\n        self.name = name\n\n\ndef load_user(store, user_id):\n    row = store.fetch(user_id)\n    return User(row[\"id\"], row[\"name\"])\n",
    ),
    (
        "a/dup.py",
        "def cached_config(path):\n    return parse_config(path)\n",
    ),
    (
        "b/dup.py",
        "def cached_config(path):\n    return parse_config(path)\n",
    ),
    (
        "lib/math_utils.py",
        "def mean(values):\n    return sum(values) / len(values)\n",
    ),
];

const QUERY_FILE: &str = "app/main.py";
const QUERY_TEXT: &str = "from lib.config import parse_config\nfrom lib.users import load_user\n\n\ndef main(store, path):\n    config = parse_config(path)\n    user = load_user(store, config_value(config, \"user\"))\n    return ";

struct Fixture {
    _dir: tempfile::TempDir,
    snapshot: std::sync::Arc<Snapshot>,
    settings: RetrieveSettings,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("ws");
    for (path, text) in FILES.iter().chain([&(QUERY_FILE, QUERY_TEXT)]) {
        let file = root.join(path);
        std::fs::create_dir_all(file.parent().unwrap_or(Path::new("."))).expect("mkdir");
        std::fs::write(&file, text).expect("write");
    }
    let index_settings = IndexSettings {
        cache_dir: dir.path().join("cache"),
        bm25_chunker: ChunkerKind::Sliding,
        chunker: ChunkerSettings {
            sliding_lines: 4,
            sliding_stride: 2,
            ..ChunkerSettings::default()
        },
        workspace: WorkspaceSettings {
            max_file_bytes: 1 << 20,
        },
        lock_wait_ms: 1_000,
    };
    let (index, _) =
        Index::open_or_build(&root, &index_settings, &Progress::none()).expect("index");
    let settings = RetrieveSettings {
        retriever: RetrieverSpec::Bm25,
        top_k: 5,
        query_lines: 10,
        jaccard_query_lines: 20,
        rrf_k: 60.0,
        exclude: Exclude::Window,
        dense: DenseSettings {
            endpoint: None,
            model: "default".into(),
            api_key_env: None,
            timeout_ms: 1_000,
            cache_dir: dir.path().join("cache"),
        },
    };
    Fixture {
        snapshot: index.snapshot(),
        _dir: dir,
        settings,
    }
}

/// The query at the end of `QUERY_TEXT`.
fn query() -> Query {
    let line = QUERY_TEXT.matches('\n').count() as u32;
    let col = QUERY_TEXT.rsplit('\n').next().unwrap_or("").len() as u32;
    Query::new(QUERY_FILE, QUERY_TEXT, Position { line, col }).expect("query")
}

fn ranked(f: &Fixture, spec: &str, top_k: usize) -> Vec<Hit> {
    let spec: RetrieverSpec = spec.parse().expect("spec");
    build(&spec, &f.settings)
        .expect("build")
        .retrieve(&f.snapshot, &query(), top_k)
        .expect("retrieve")
}

fn render(hits: &[Hit]) -> String {
    hits.iter()
        .map(|h| {
            format!(
                "{}:{}-{} {:.4}\n",
                h.path,
                h.lines.start + 1,
                h.lines.end,
                h.score
            )
        })
        .collect()
}

fn check(f: &Fixture, spec: &str, want: Expect) {
    want.assert_eq(&render(&ranked(f, spec, 5)));
}

#[test]
fn rankings_on_the_fixture() {
    let f = fixture();
    check(
        &f,
        "bm25",
        expect![[r#"
        lib/config.py:1-4 7.5029
        lib/users.py:5-8 6.3605
        lib/users.py:7-10 6.1503
        a/dup.py:1-3 5.9691
        b/dup.py:1-3 5.9691
    "#]],
    );
    check(
        &f,
        "jaccard",
        expect![[r#"
        a/dup.py:1-3 0.2667
        b/dup.py:1-3 0.2667
        lib/config.py:1-4 0.2667
        lib/config.py:7-10 0.2222
        lib/config.py:9-11 0.2222
    "#]],
    );
    check(
        &f,
        "hybrid:bm25+jaccard",
        expect![[r#"
        lib/config.py:1-4 0.0323
        a/dup.py:1-3 0.0320
        b/dup.py:1-3 0.0315
        lib/users.py:5-8 0.0308
        lib/users.py:7-10 0.0308
    "#]],
    );
    check(
        &f,
        "mmr:bm25:0.5",
        expect![[r#"
        lib/config.py:1-4 0.5000
        lib/users.py:5-8 0.3552
        lib/config.py:7-10 0.2937
        lib/config.py:3-6 0.1828
        a/dup.py:1-3 0.1585
    "#]],
    );
}

#[test]
fn ties_break_by_path_then_line_and_the_own_region_is_never_returned() {
    let f = fixture();
    let own = query().own_region();
    for spec in ["bm25", "jaccard", "hybrid:bm25+jaccard", "mmr:bm25:0.5"] {
        let hits = ranked(&f, spec, 20);
        assert!(!hits.is_empty(), "{spec}: no hit");
        for pair in hits.windows(2) {
            let (a, b) = (&pair[0], &pair[1]);
            assert!(
                a.score > b.score
                    || (a.score == b.score && (&a.path, a.lines.start) < (&b.path, b.lines.start)),
                "{spec}: {a:?} before {b:?}"
            );
        }
        assert!(
            hits.iter().all(|h| h.path != QUERY_FILE
                || h.lines.end <= own.start
                || h.lines.start >= own.end),
            "{spec}: a hit in the own region {own:?}: {hits:?}"
        );
        // The two identical files tie, `a/` first. Fusion then sums reciprocal *ranks*, so the
        // tie's order becomes a (deterministic) difference, and MMR penalises the second copy.
        let dup: Vec<&Hit> = hits.iter().filter(|h| h.path.ends_with("dup.py")).collect();
        if spec != "mmr:bm25:0.5" {
            assert_eq!(dup.len(), 2, "{spec}: {hits:?}");
            assert_eq!(
                (dup[0].path.as_str(), dup[1].path.as_str()),
                ("a/dup.py", "b/dup.py"),
                "{spec}"
            );
        }
        if spec == "bm25" || spec == "jaccard" {
            assert_eq!(dup[0].score, dup[1].score, "{spec}");
        }
    }
}

/// `retrieve.exclude = "none"` lets the query's own file rank (its lines repeat the query's words,
/// so it comes first); `window` and `file` leave it out (the whole file sits in the window).
#[test]
fn the_own_file_ranks_only_when_nothing_is_excluded() {
    let mut f = fixture();
    for spec in ["bm25", "jaccard"] {
        for &exclude in <Exclude as crate::choice::Choice>::all() {
            f.settings.exclude = exclude;
            let hits = ranked(&f, spec, 20);
            let own = hits.iter().filter(|h| h.path == QUERY_FILE).count();
            match exclude {
                Exclude::None => assert!(
                    hits.first().is_some_and(|h| h.path == QUERY_FILE),
                    "{spec}: {hits:?}"
                ),
                Exclude::Window | Exclude::File => assert_eq!(own, 0, "{spec} {exclude:?}"),
            }
        }
    }
}

#[test]
fn hybrid_scores_are_reciprocal_rank_sums_of_its_parts() {
    let f = fixture();
    let top_k = 3;
    let parts = [
        ranked(&f, "bm25", 4 * top_k),
        ranked(&f, "jaccard", 4 * top_k),
    ];
    let mut want: Vec<(String, u32, f64)> = Vec::new();
    for list in &parts {
        for (rank, hit) in list.iter().enumerate() {
            let add = 1.0 / (60.0 + rank as f64 + 1.0);
            match want
                .iter_mut()
                .find(|(p, s, _)| *p == hit.path && *s == hit.lines.start)
            {
                Some(entry) => entry.2 += add,
                None => want.push((hit.path.clone(), hit.lines.start, add)),
            }
        }
    }
    want.sort_by(|a, b| b.2.total_cmp(&a.2).then((&a.0, a.1).cmp(&(&b.0, b.1))));
    want.truncate(top_k);
    let got: Vec<(String, u32, f64)> = ranked(&f, "hybrid:bm25+jaccard", top_k)
        .into_iter()
        .map(|h| (h.path, h.lines.start, h.score))
        .collect();
    assert_eq!(got, want);
}

/// A mix on the real index: every hit names the source that gave it, the sources take turns
/// from their own rankings, and no hit only repeats what earlier hits show.
#[test]
fn a_mix_names_each_hits_source_and_sends_each_chunk_once() {
    let f = fixture();
    let top_k = 3;
    let definitions = ranked(&f, "definitions", top_k);
    let bm25 = ranked(&f, "bm25", top_k);
    assert!(!definitions.is_empty() && !bm25.is_empty());
    let mixed = ranked(&f, "mix:definitions*2+bm25", top_k);
    let sources: Vec<&str> = mixed.iter().filter_map(|h| h.source.as_deref()).collect();
    assert_eq!(sources.len(), mixed.len(), "{mixed:?}");
    assert_eq!(
        mixed.first().map(|h| &h.text),
        definitions.first().map(|h| &h.text)
    );
    for (source, own) in [("definitions", &definitions), ("bm25", &bm25)] {
        let given: Vec<&Hit> = mixed
            .iter()
            .filter(|h| h.source.as_deref() == Some(source))
            .collect();
        assert!(!given.is_empty(), "{source}: {mixed:?}");
        // A source's hits keep their own order and come from its own ranking.
        let positions: Vec<usize> = given
            .iter()
            .map(|h| {
                own.iter()
                    .position(|o| o.text == h.text)
                    .expect("its own hit")
            })
            .collect();
        assert!(
            positions.windows(2).all(|w| w[0] < w[1]),
            "{source}: {positions:?}"
        );
    }
    // No hit repeats what earlier hits show: each brings a line of its own.
    let lines = |t: &str| -> Vec<String> {
        t.lines()
            .map(|l| l.trim().to_owned())
            .filter(|l| !l.is_empty())
            .collect()
    };
    for (i, hit) in mixed.iter().enumerate() {
        let before: Vec<String> = mixed[..i].iter().flat_map(|h| lines(&h.text)).collect();
        assert!(
            lines(&hit.text).iter().any(|l| !before.contains(l)),
            "{hit:?} repeats {:?}",
            &mixed[..i]
        );
    }
}

/// A query's search text (EvoCodeBench's signature and requirement) replaces the lines before the
/// cursor for every lexical retriever: here words only `lib/math_utils.py` holds rank it first,
/// where the cursor's own lines rank it nowhere.
#[test]
fn a_search_text_is_what_retrievers_search_with() {
    let f = fixture();
    let mut asked = query();
    asked.search_text =
        Some("def average(values):\n    \"\"\"The mean of values: sum over len.\"\"\"".into());
    for spec in ["bm25", "jaccard", "bm25-cceval"] {
        let retriever = build(&spec.parse().expect("spec"), &f.settings).expect("build");
        let before = retriever
            .retrieve(&f.snapshot, &query(), 3)
            .expect("retrieve");
        assert!(
            before.iter().all(|h| h.path != "lib/math_utils.py"),
            "{spec}: {before:?}"
        );
        let hits = retriever
            .retrieve(&f.snapshot, &asked, 3)
            .expect("retrieve");
        assert_eq!(
            hits.first().map(|h| h.path.as_str()),
            Some("lib/math_utils.py"),
            "{spec}: {hits:?}"
        );
    }
}

#[test]
fn random_context_is_as_much_as_the_inner_returns_from_other_files_and_repeats_per_seed() {
    let f = fixture();
    for inner in ["bm25", "jaccard"] {
        let retrieved = ranked(&f, inner, 3);
        let drawn = ranked(&f, &format!("random:{inner}:1"), 3);
        assert_eq!(drawn.len(), retrieved.len(), "{inner}: as many chunks");
        assert!(
            drawn.iter().all(|h| h.path != QUERY_FILE),
            "{inner}: other files only"
        );
        assert!(
            drawn.iter().all(|h| h.chunker == retrieved[0].chunker),
            "{inner}: the inner hits' chunker"
        );
        let again = ranked(&f, &format!("random:{inner}:1"), 3);
        assert_eq!(
            render(&drawn),
            render(&again),
            "{inner}: the same seed, the same draw"
        );
    }
    // Over seeds, every chunk of another file comes up (a uniform draw, not the ranking).
    let mut seen = std::collections::BTreeSet::new();
    for seed in 0..200 {
        for hit in ranked(&f, &format!("random:bm25:{seed}"), 1) {
            seen.insert((hit.path, hit.lines.start));
        }
    }
    let chunks: usize = f
        .snapshot
        .files()
        .filter(|file| file.path != QUERY_FILE)
        .map(|file| file.sliding.len())
        .sum();
    assert_eq!(seen.len(), chunks, "{seen:?}");
    // Nothing retrieved, nothing drawn.
    assert!(ranked(&f, "random:none", 5).is_empty());
}

#[test]
fn a_threshold_keeps_only_hits_scoring_at_least_it() {
    let f = fixture();
    let all = ranked(&f, "jaccard", 5);
    assert!(all.len() >= 2, "{}", render(&all));
    let cut = all[1].score;
    let kept = ranked(&f, &format!("threshold:jaccard:{cut}"), 5);
    assert_eq!(
        render(&kept),
        render(
            &all.iter()
                .filter(|h| h.score >= cut)
                .cloned()
                .collect::<Vec<_>>()
        )
    );
    assert!(kept.len() < all.len() || all.iter().all(|h| h.score >= cut));
    assert!(
        ranked(&f, "threshold:jaccard:1.01", 5).is_empty(),
        "no chunk above 1"
    );
}

/// `definitions` on the fixture: the names used near the cursor, resolved through the file's
/// imports (`lib/config.py`, `lib/users.py`), nearest and most used first, each a skeleton.
#[test]
fn definitions_are_the_names_near_the_cursor_as_skeletons() {
    let f = fixture();
    let hits = ranked(&f, "definitions", 5);
    expect![[r#"
        lib/users.py:7-9 1.0000
        lib/config.py:4-6 0.8333
        lib/config.py:9-10 0.8000
    "#]]
    .assert_eq(&render(&hits));
    assert_eq!(
        hits[0].text,
        "def load_user(store, user_id):\n    row = store.fetch(user_id)\n    return User(row[\"id\"], row[\"name\"])\n",
        "a short function is whole"
    );
    assert!(hits.iter().all(|h| h.chunker == Some(ChunkerKind::Syntax)));
    // Nothing of the query's own file, and nothing without a name near the cursor.
    assert!(hits.iter().all(|h| h.path != QUERY_FILE));
    assert!(!hits.iter().any(|h| h.path == "lib/math_utils.py"));
}

/// A TypeScript file's relative import resolves to the class it uses; a class's skeleton shows
/// its fields and its methods' signatures.
#[test]
fn definitions_resolve_typescript_imports_to_class_skeletons() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("ws");
    let files = [
        (
            "src/store.ts",
            "export class Store {\n  private items: string[] = [];\n\n  add(item: string): number {\n    this.items.push(item);\n    return this.items.length;\n  }\n}\n",
        ),
        (
            "src/other/store.ts",
            "export class Store {\n  size = 0;\n}\n",
        ),
        (
            "src/app.ts",
            "import { Store } from './store';\n\nconst store = new Store();\nstore.",
        ),
    ];
    for (path, text) in files {
        let file = root.join(path);
        std::fs::create_dir_all(file.parent().unwrap_or(Path::new("."))).expect("mkdir");
        std::fs::write(&file, text).expect("write");
    }
    let settings = IndexSettings {
        cache_dir: dir.path().join("cache"),
        bm25_chunker: ChunkerKind::Sliding,
        chunker: ChunkerSettings::default(),
        workspace: WorkspaceSettings {
            max_file_bytes: 1 << 20,
        },
        lock_wait_ms: 1_000,
    };
    let (index, _) = Index::open_or_build(&root, &settings, &Progress::none()).expect("index");
    let text = files[2].1;
    let query = Query::new("src/app.ts", text, Position { line: 3, col: 6 }).expect("query");
    let hits = super::definitions::Definitions
        .retrieve(&index.snapshot(), &query, 3)
        .expect("retrieve");
    assert_eq!(
        hits[0].path, "src/store.ts",
        "the imported one first: {hits:?}"
    );
    assert_eq!(
        hits[0].text, files[0].1,
        "a class of short methods is whole"
    );
    assert!(hits[0].score > hits.get(1).map_or(0.0, |h| h.score));
}

#[test]
fn recent_ranks_other_files_chunks_by_shared_words_newest_on_a_tie() {
    let f = fixture();
    let mut ring = super::Ring::new();
    ring.note(
        "lib/ledger.py",
        0,
        "def add_entry(ledger, amount):\n    pass",
    );
    ring.note("notes.md", 0, "add_entry ledger amount");
    ring.note("lib/other.py", 0, "def unrelated():\n    return 0");
    ring.note("lib/copy.py", 0, "def add_entry(amount, ledger):\n    pass");
    ring.note(QUERY_FILE, 0, "add_entry(ledger, amount)");
    let text = "from lib.ledger import add_entry\n\nadd_entry(ledger, ";
    let mut at = Query::new(QUERY_FILE, text, Position { line: 2, col: 18 }).expect("query");
    at.recent = ring.chunks();
    let recent = build(&RetrieverSpec::Recent, &f.settings).expect("build");
    let hits = recent.retrieve(&f.snapshot, &at, 5).expect("retrieve");
    let paths: Vec<&str> = hits.iter().map(|h| h.path.as_str()).collect();
    assert_eq!(
        paths,
        ["lib/copy.py", "lib/ledger.py"],
        "the cursor's file, other languages and chunks sharing no word left out; newer first"
    );
    assert!(hits[0].score > 0.0 && hits[0].score == hits[1].score);
    assert_eq!(hits[0].text, "def add_entry(amount, ledger):\n    pass");
    let one = recent.retrieve(&f.snapshot, &at, 1).expect("retrieve");
    assert_eq!(one.len(), 1);
    // With no ring (a plain `bench run` case, a cursor the server saw nothing before), nothing.
    let empty = recent.retrieve(&f.snapshot, &query(), 5);
    assert!(empty.expect("retrieve").is_empty());
    // `recent-commit` ranks the case's chunks alone, and `recent` never reads them.
    let commit = build(&RetrieverSpec::RecentCommit, &f.settings).expect("build");
    assert!(
        commit
            .retrieve(&f.snapshot, &at, 5)
            .expect("retrieve")
            .is_empty()
    );
    let mut case = Query::new(QUERY_FILE, text, Position { line: 2, col: 18 }).expect("query");
    case.case_recent = ring.chunks();
    let hits = commit.retrieve(&f.snapshot, &case, 5).expect("retrieve");
    let paths: Vec<&str> = hits.iter().map(|h| h.path.as_str()).collect();
    assert_eq!(paths, ["lib/copy.py", "lib/ledger.py"]);
    assert!(
        recent
            .retrieve(&f.snapshot, &case, 5)
            .expect("retrieve")
            .is_empty()
    );
}
