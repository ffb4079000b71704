//! Live completion's layout on SmolLM2 (the mechanics; the default model's typing is measured
//! by `bench typing`), a real index of click and BM25: the prompt stays the same while a person
//! types along a line (the left context's start, and the cross-file block's order as far as
//! retrieval still ranks its chunks best), and at the end of a finished line the next line is
//! suggested.

use std::sync::Arc;

use crossfile_engine::Position;
use crossfile_engine::backend::{
    Backend, BackendError, EmbeddedBackend, GenerateRequest, Generation, after_leading_line_break,
};
use crossfile_engine::complete::{Completer, Live as LiveMode, Mode};
use crossfile_engine::config::Settings;
use crossfile_engine::index::{Index, Progress};
use crossfile_engine::model::ModelSettings;
use crossfile_engine::retrieve::{self, Query, Retriever};
use tokio_util::sync::CancellationToken;

use crate::backends::embedded::runtime;
use crate::backends::tokenizer::small_model;
use crate::support::{corpus_workspace, read_text};

const N_CTX: u32 = 1024;

struct Live {
    settings: Settings,
    index: Index,
    retriever: Arc<dyn Retriever>,
    backend: Arc<EmbeddedBackend>,
    _cache: tempfile::TempDir,
}

fn live() -> Live {
    let cache = tempfile::tempdir().expect("a cache dir");
    let mut settings = Settings::default();
    settings.index.cache_dir = cache.path().to_path_buf();
    settings.model.n_ctx = N_CTX;
    settings.prompt.max_new_tokens = 24;
    let root = corpus_workspace("click");
    let (index, _) =
        Index::open_or_build(&root, &settings.index, &Progress::none()).expect("index click");
    let retriever: Arc<dyn Retriever> =
        Arc::from(retrieve::build(&settings.retrieve.retriever, &settings.retrieve).expect("bm25"));
    let model = ModelSettings {
        n_ctx: N_CTX,
        threads: crate::support::MODEL_THREADS,
        ..settings.model.clone()
    };
    let backend = Arc::new(EmbeddedBackend::load(&small_model(), &model).expect("load the model"));
    Live {
        settings,
        index,
        retriever,
        backend,
        _cache: cache,
    }
}

impl Live {
    fn completer(&self) -> Completer {
        let tokenizer = self.backend.tokenizer().expect("the model's tokenizer");
        Completer::new(
            &self.settings,
            self.backend.clone(),
            tokenizer,
            Mode::default(),
        )
    }

    /// The language server's completer: steady prompts over a kept KV cache.
    fn steady(&self) -> Completer {
        self.completer()
            .with_mode(Mode::Live(LiveMode::typing(true, None, 0)))
    }

    /// What retrieval at the start of `query`'s line ranks best, by place.
    fn retrieved_at_line_start(&self, query: &Query) -> Vec<crossfile_engine::retrieve::Hit> {
        let hits = self
            .retriever
            .retrieve(
                &self.index.snapshot(),
                &query.at_line_start(),
                self.settings.retrieve.top_k,
            )
            .expect("retrieve");
        by_place(hits)
    }

    fn complete(
        &self,
        completer: &Completer,
        query: Query,
    ) -> crossfile_engine::complete::Completion {
        runtime()
            .block_on(completer.complete(
                self.index.snapshot(),
                query,
                self.retriever.clone(),
                self.settings.retrieve.top_k,
                &CancellationToken::new(),
            ))
            .expect("complete")
    }
}

const FILE: &str = "src/click/core.py";

fn text() -> String {
    read_text(&corpus_workspace("click").join(FILE))
}

/// `hits` ordered by file and first line.
fn by_place(
    mut hits: Vec<crossfile_engine::retrieve::Hit>,
) -> Vec<crossfile_engine::retrieve::Hit> {
    hits.sort_by(|a, b| (&a.path, a.lines.start).cmp(&(&b.path, b.lines.start)));
    hits
}

/// The cursor after the first `col` bytes of 0-based line `line`.
fn query(text: &str, line: u32, col: u32) -> Query {
    Query::new(FILE, text, Position { line, col }).expect("a cursor in the file")
}

#[test]
fn typing_along_a_line_keeps_the_start_and_the_block_order_of_a_live_prompt() {
    let live = live();
    let steady = live.steady();
    let text = text();
    // Deep in the file, so the left context is cut; a long line to type along.
    let (line, row) = text
        .split('\n')
        .enumerate()
        .skip(1200)
        .find(|(_, row)| row.trim().len() > 40)
        .expect("a long line");
    let indent = row.len() - row.trim_start().len();
    let mut prompts = Vec::new();
    for col in (indent + 4..row.len()).step_by(6) {
        let query = query(&text, line as u32, col as u32);
        let completion = live.complete(&steady, query.clone());
        let prompt = completion.prompt;
        assert!(prompt.tokens.total + 24 <= N_CTX, "{:?}", prompt.tokens);
        assert!(query.left.ends_with(&prompt.left));
        // The same chunks as retrieval at the line's start ranks them, only in another order.
        assert_eq!(
            by_place(completion.hits.clone()),
            live.retrieved_at_line_start(&query)
        );
        let block: Vec<String> = completion.hits[..prompt.hits_used]
            .iter()
            .map(|h| format!("{}:{}", h.path, h.lines.start))
            .collect();
        prompts.push((
            block,
            query.left.len() - prompt.left.len(),
            prompt.crossfile,
        ));
    }
    assert!(prompts.len() >= 4);
    assert!(prompts[0].1 > 0, "the left context is cut");
    assert!(!prompts[0].0.is_empty(), "a cross-file block");
    for pair in prompts.windows(2) {
        let ((before, start, _), (after, then, _)) = (&pair[0], &pair[1]);
        assert_eq!(start, then, "the same start along the line");
        // The run of the last block's chunks still in the block stays first, in its order.
        let kept = before.iter().take_while(|c| after.contains(c)).count();
        assert_eq!(after[..kept], before[..kept], "{before:?} then {after:?}");
    }
    let blocks: std::collections::HashSet<&String> = prompts.iter().map(|p| &p.2).collect();
    assert!(
        blocks.len() < prompts.len(),
        "the block stays the same for a while"
    );
    // The exact layout follows the cursor: its left context starts further on each time.
    let exact = live.completer();
    let starts: Vec<usize> = [indent + 4, row.len()]
        .iter()
        .map(|&col| {
            let query = query(&text, line as u32, col as u32);
            let prompt = exact.prompt(&query, &[]);
            query.left.len() - prompt.left.len()
        })
        .collect();
    assert!(starts[1] > starts[0], "{starts:?}");
}

/// A backend that applies its stops from an answer's start, as HTTP servers do: the embedded
/// one, never asked to let an answer start on the next line.
struct StopsFromTheStart(Arc<EmbeddedBackend>);

#[async_trait::async_trait]
impl Backend for StopsFromTheStart {
    fn name(&self) -> &'static str {
        self.0.name()
    }

    fn keeps_contexts(&self) -> bool {
        self.0.keeps_contexts()
    }

    async fn generate(
        &self,
        request: &GenerateRequest,
        cancel: &CancellationToken,
    ) -> Result<Generation, BackendError> {
        let request = GenerateRequest {
            may_start_below: false,
            ..request.clone()
        };
        self.0.generate(&request, cancel).await
    }
}

/// At the end of a finished line, with the live layout (nothing after the cursor's line in the
/// prompt), the model goes on with a line break more often than not. The suggestion is then the
/// next line, from that one answer: the same prompt answered with no stop, through its second
/// line break. A backend whose stops apply from the start (an HTTP server) answers blank there,
/// and the next line comes from a second request with the line break in the prompt.
#[test]
fn the_end_of_a_finished_line_gets_the_next_line() {
    let live = live();
    let text = text();
    let kept =
        |completer: Completer| completer.with_mode(Mode::Live(LiveMode::typing(true, Some(0), 0)));
    let tokenizer = live.backend.tokenizer().expect("the model's tokenizer");
    let one_answer = kept(live.completer());
    let two_requests = kept(Completer::new(
        &live.settings,
        Arc::new(StopsFromTheStart(live.backend.clone())),
        tokenizer,
        Mode::default(),
    ));
    let answer = |prompt: &str, stop: &[&str]| {
        let request = GenerateRequest {
            reuse_kv: true,
            ..crate::backends::embedded::request(prompt, 24, stop)
        };
        runtime()
            .block_on(live.backend.generate(&request, &CancellationToken::new()))
            .expect("generate")
            .text
    };
    let (mut below, mut tried, mut twice) = (0, 0, 0);
    for (line, row) in text.split('\n').enumerate().skip(300) {
        if below == 2 || tried == 12 {
            break;
        }
        if row.trim().is_empty() {
            continue;
        }
        tried += 1;
        let at = query(&text, line as u32, row.len() as u32);
        let offered = live.complete(&one_answer, at.clone());
        let raw = answer(&offered.prompt.text, &[]);
        let Some(start) = after_leading_line_break(&raw) else {
            // Code on the same line is the suggestion; an answer that ended at once may still
            // get the next line from a second request.
            if !raw.trim().is_empty() {
                assert!(!offered.suggestion.starts_with('\n'), "{line}: {raw:?}");
            }
            continue;
        };
        let next = raw[start..].split('\n').next().unwrap_or_default();
        if next.trim().is_empty() {
            continue;
        }
        below += 1;
        assert_eq!(offered.suggestion, format!("\n{next}"), "{line}: {raw:?}");
        assert!(
            !offered.prompt.left.ends_with('\n'),
            "{line}: one answer, to the line's own prompt"
        );
        if twice == 0 {
            let asked_again = live.complete(&two_requests, at);
            if !asked_again.suggestion.is_empty() {
                twice += 1;
                assert!(
                    asked_again.prompt.left.ends_with('\n'),
                    "{line}: the second request has the line break"
                );
                let then = answer(&asked_again.prompt.text, &["\n"]);
                assert_eq!(asked_again.suggestion, format!("\n{then}"), "{line}");
            }
        }
    }
    assert_eq!(below, 2, "two line ends answered below in {tried}");
    assert_eq!(twice, 1, "a line end asked twice");
}

fn block(completion: &crossfile_engine::complete::Completion) -> Vec<String> {
    completion.hits[..completion.prompt.hits_used]
        .iter()
        .map(|h| format!("{}:{}", h.path, h.lines.start))
        .collect()
}

/// Line after line, retrieval at each line's start gives a new cross-file block now and then,
/// and the left context's start moves a step now and then. The kept context holds the last
/// answer's prompt: the first answer after a change is laid out with the last block and start
/// (at once), while the new prompt is read; asked again once it is, the answer shows
/// retrieval's block and the steady start.
#[test]
fn a_new_block_or_start_answers_from_the_last_one_until_it_is_read() {
    let live = live();
    let steady = live.steady();
    let text = text();
    let shown = |at: &Query, completion: &crossfile_engine::complete::Completion| {
        (
            block(completion),
            crossfile_engine::prompt::start_line(&at.left, &completion.prompt.left),
        )
    };
    let mut last = None;
    let (mut new_block, mut new_start) = (false, false);
    for (line, row) in text.split('\n').enumerate().skip(1200).take(120) {
        if row.trim().is_empty() {
            continue;
        }
        let indent = row.len() - row.trim_start().len();
        let at = query(&text, line as u32, indent as u32);
        let completion = live.complete(&steady, at.clone());
        if !completion.generation.from_fallback {
            last = Some(shown(&at, &completion));
            continue;
        }
        let fallback = shown(&at, &completion);
        assert_eq!(Some(&fallback), last.as_ref(), "{line}: the last answer's");
        assert!(
            at.left.ends_with(&completion.prompt.left),
            "{line}: this cursor's left"
        );
        assert!(completion.prompt.text.contains(&completion.prompt.left));
        let started = std::time::Instant::now();
        let ready = loop {
            std::thread::sleep(std::time::Duration::from_millis(500));
            let again = live.complete(&steady, at.clone());
            if !again.generation.from_fallback {
                break again;
            }
            assert!(started.elapsed().as_secs() < 60, "{line}: never read");
        };
        assert_eq!(
            by_place(ready.hits.clone()),
            live.retrieved_at_line_start(&at),
            "{line}: retrieval's chunks once read"
        );
        let now = shown(&at, &ready);
        assert_eq!(
            now.1,
            crossfile_engine::prompt::start_line(&at.left, &steady.prompt(&at, &ready.hits).left),
            "{line}: the steady start once read"
        );
        new_block |= now.0 != fallback.0;
        new_start |= now.1 != fallback.1;
        if new_block && new_start {
            return;
        }
        last = Some(now);
    }
    panic!("in 120 lines, a new block: {new_block}, a new start: {new_start}");
}
