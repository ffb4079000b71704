//! The embedded backend's kept KV caches, on the real default model and recorded prompt
//! sequences (a person typing, the left context cut further on, documents taking turns): what
//! reuse gives against a fresh context, how much of each prompt it keeps, and that exact requests,
//! cancels, evictions and a prompt over the context leave every slot consistent.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use crossfile_engine::backend::{
    Backend, BackendError, EmbeddedBackend, GenerateRequest, Generation,
};
use crossfile_engine::model::ModelSettings;
use tokio_util::sync::CancellationToken;

use crate::backends::embedded::runtime;
use crate::backends::tokenizer::small_model;
use crate::support::{corpus_workspace, read_text};

const N_CTX: u32 = 1024;
const NEW_TOKENS: u32 = 12;

fn backend(kv_slots: u32) -> Arc<EmbeddedBackend> {
    shifting_backend(kv_slots, 0)
}

/// A backend that shifts runs of at least `shift_min_span` kept tokens (0: never).
fn shifting_backend(kv_slots: u32, shift_min_span: u32) -> Arc<EmbeddedBackend> {
    let settings = ModelSettings {
        path: None,
        named: crossfile_engine::model::SMOLLM2_135M,
        n_ctx: N_CTX,
        threads: crate::support::MODEL_THREADS,
        kv_slots,
        kv_shift_min_span: shift_min_span,
        tokenizer: None,
    };
    Arc::new(EmbeddedBackend::load(&small_model(), &settings).expect("load the model"))
}

/// Lines `from..to` of a click source file.
fn lines(file: &str, from: usize, to: usize) -> String {
    let text = read_text(&corpus_workspace("click").join("src/click").join(file));
    text.split_inclusive('\n')
        .skip(from)
        .take(to - from)
        .collect()
}

fn request(prompt: &str, reuse_kv: bool) -> GenerateRequest {
    GenerateRequest {
        reuse_kv,
        ..crate::backends::embedded::request(prompt, NEW_TOKENS, &[])
    }
}

fn generate(backend: &EmbeddedBackend, prompt: &str, reuse_kv: bool) -> Generation {
    runtime()
        .block_on(backend.generate(&request(prompt, reuse_kv), &CancellationToken::new()))
        .expect("generate")
}

/// A person typing `typed` after `before`, a few characters at a time: the prompt at each stop.
fn typing(before: &str, typed: &str, step: usize) -> Vec<String> {
    let chars: Vec<char> = typed.chars().collect();
    (1..=chars.len().div_ceil(step))
        .map(|k| {
            let end = (k * step).min(chars.len());
            format!("{before}{}", chars[..end].iter().collect::<String>())
        })
        .collect()
}

/// A live completion of `prompt` in a fresh context: a backend of its own, whose one slot is
/// cold. Timed by the tests that wait for a read ahead; the others take [`cold`].
fn fresh(prompt: &str) -> Generation {
    let answer = generate(&backend(1), prompt, true);
    assert_eq!(answer.reused_tokens, Some(0), "a cold slot reuses nothing");
    answer
}

/// [`fresh`], once per prompt in this test binary: greedy decoding in a fresh context gives the
/// same answer every time, and the tests here ask for the same prompts' over and over.
fn cold(prompt: &str) -> Generation {
    static ANSWERS: OnceLock<Mutex<HashMap<String, Generation>>> = OnceLock::new();
    let answers = ANSWERS.get_or_init(Mutex::default);
    let known = answers
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(prompt)
        .cloned();
    known.unwrap_or_else(|| {
        let answer = fresh(prompt);
        answers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(prompt.to_string(), answer.clone());
        answer
    })
}

/// Each prompt completed live with reuse (one backend, its slots kept) and in a fresh context;
/// the prompts whose two answers differ, and the reused share of every prompt.
fn compare(prompts: &[String], kept: &EmbeddedBackend) -> (Vec<usize>, Vec<(u32, u32)>) {
    let mut differ = Vec::new();
    let mut shares = Vec::new();
    for (i, prompt) in prompts.iter().enumerate() {
        let reused = generate(kept, prompt, true);
        let exact = cold(prompt);
        assert_eq!(reused.prompt_tokens, exact.prompt_tokens);
        if reused.text != exact.text {
            eprintln!(
                "prompt {i}: reuse {:?} ≠ fresh {:?}",
                reused.text, exact.text
            );
            differ.push(i);
        }
        shares.push((
            reused.reused_tokens.expect("counted"),
            reused.prompt_tokens.expect("counted"),
        ));
    }
    (differ, shares)
}

#[test]
fn typing_reuses_all_but_the_new_characters_and_answers_as_a_fresh_context() {
    let before = lines("core.py", 1180, 1215);
    let typed = lines("core.py", 1215, 1218);
    let prompts = typing(&before, &typed, 7);
    assert!(prompts.len() >= 8, "{}", prompts.len());
    let (differ, shares) = compare(&prompts, &backend(1));
    eprintln!("typing: reused/prompt tokens {shares:?}; differing answers at {differ:?}");
    assert_eq!(shares[0].0, 0, "a cold slot reuses nothing");
    let block = EmbeddedBackend::KV_BLOCK as u32;
    for (i, pair) in shares.windows(2).enumerate() {
        let ((_, before), (reused, now)) = (pair[0], pair[1]);
        // The previous prompt's whole blocks are kept: at most a block and the tokens of the
        // word that grew are evaluated again.
        assert!(
            reused + block + 4 >= before && reused < now && reused % block == 0,
            "prompt {}: reused {reused} of {now}, the previous had {before}",
            i + 1
        );
    }
    // Kept blocks were evaluated exactly as a fresh context evaluates them: the same answers.
    assert_eq!(differ, Vec::<usize>::new());
}

#[test]
fn a_left_context_cut_further_on_is_shifted_only_when_asked_and_then_answers_differently() {
    // The window of the file the prompt shows moves down at a time, as an editor's left context
    // does while the user types below it; a line above it (the template's, here the path) stays.
    let prompts: Vec<String> = (0..6)
        .map(|k| {
            format!(
                "# src/click/core.py\n{}",
                lines("core.py", 1150 + 4 * k, 1215 + k)
            )
        })
        .collect();
    let (differ, shares) = compare(&prompts, &shifting_backend(1, 32));
    eprintln!("shifted: reused/prompt tokens {shares:?}; differing answers at {differ:?}");
    // Only the path line is a common prefix: what is kept was shifted. (Where a cut leaves a
    // line break that tokenizes with its neighbour, nothing matches and nothing is shifted.)
    let shifted = shares[1..]
        .iter()
        .filter(|&&(reused, total)| reused * 2 > total)
        .count();
    assert!(shifted >= 2, "{shares:?}");
    // A shifted run's KV was computed over the lines that went, and the default model follows
    // them: its answers may differ from a fresh context's (measured: 1 of these 3; 5 of 5 on
    // 35-line windows). That is why shifting is off by default; then nothing is shifted and every
    // answer is a fresh context's.
    let (differ, shares) = compare(&prompts, &backend(1));
    eprintln!("not shifted: reused/prompt tokens {shares:?}");
    let block = EmbeddedBackend::KV_BLOCK as u32;
    assert!(
        shares.iter().all(|&(reused, _)| reused < block),
        "{shares:?}"
    );
    assert_eq!(differ, Vec::<usize>::new());
}

#[test]
fn two_documents_keep_a_slot_each_and_a_third_evicts_the_least_recent() {
    let backend = backend(2);
    let core = typing(&lines("core.py", 1180, 1215), "        if ", 5);
    let parser = typing(&lines("parser.py", 200, 235), "        for ", 6);
    let termui = lines("termui.py", 100, 135);
    // Alternating: each document finds its own slot again.
    let mut reused = Vec::new();
    for (a, b) in core.iter().zip(&parser) {
        reused.push(generate(&backend, a, true).reused_tokens.unwrap_or(0));
        reused.push(generate(&backend, b, true).reused_tokens.unwrap_or(0));
    }
    eprintln!("alternating: reused {reused:?}");
    assert_eq!(&reused[..2], &[0, 0], "two cold slots");
    assert!(reused[2..].iter().all(|&r| r > 300), "{reused:?}");
    // A third document shares nothing: it takes the least recently used slot (core's)...
    let third = generate(&backend, &termui, true);
    assert_eq!(third.reused_tokens, Some(0));
    // ... so parser's is still there and core's is gone.
    let last_parser = parser.last().expect("prompts");
    let again = generate(&backend, &format!("{last_parser}x"), true);
    assert!(again.reused_tokens.unwrap_or(0) > 300, "{again:?}");
    let last_core = core.last().expect("prompts");
    let evicted = generate(&backend, last_core, true);
    assert_eq!(evicted.reused_tokens, Some(0), "core's slot was evicted");
    // What an evicted slot's document is answered is a fresh context's answer.
    assert_eq!(evicted.text, cold(last_core).text);
}

#[test]
fn exact_requests_cancels_and_an_oversized_prompt_leave_the_slots_consistent() {
    let rt = runtime();
    let (kept, fresh) = (backend(1), backend(1));
    let base = lines("core.py", 1180, 1215);
    let warm = generate(&kept, &base, true);
    assert_eq!(warm.reused_tokens, Some(0));

    // Cancelled while it reads a long new tail or generates: the slot holds only what was
    // decoded, and the next request that shares the base reuses it and answers right.
    let long_tail = format!("{base}{}", lines("core.py", 1215, 1260));
    let cancel = CancellationToken::new();
    let outcome = rt.block_on(async {
        let task = {
            let (kept, cancel) = (kept.clone(), cancel.clone());
            let mut long = request(&long_tail, true);
            long.max_tokens = 200;
            tokio::spawn(async move { kept.generate(&long, &cancel).await })
        };
        tokio::time::sleep(Duration::from_millis(150)).await;
        cancel.cancel();
        task.await.expect("join")
    });
    assert!(
        matches!(outcome, Err(BackendError::Cancelled)),
        "{outcome:?}"
    );
    let next = format!("{base}    def ");
    let after_cancel = generate(&kept, &next, true);
    assert!(
        after_cancel.reused_tokens.unwrap_or(0) > 300,
        "{after_cancel:?}"
    );
    assert_eq!(after_cancel.text, cold(&next).text);

    // A prompt over the context is refused before it touches a slot.
    let over = format!("{base}{}", lines("core.py", 100, 400));
    let refused = rt.block_on(kept.generate(&request(&over, true), &CancellationToken::new()));
    assert!(
        matches!(refused, Err(BackendError::Model { .. })),
        "{refused:?}"
    );
    let still = generate(&kept, &format!("{next}x"), true);
    assert!(still.reused_tokens.unwrap_or(0) > 300, "{still:?}");

    // An exact request after all that is a fresh context's answer, bit for bit, and reuses
    // nothing.
    let exact = generate(&kept, &next, false);
    let reference = generate(&fresh, &next, false);
    assert_eq!(
        (exact.text, exact.prompt_tokens, exact.reused_tokens),
        (reference.text, reference.prompt_tokens, Some(0))
    );
}

/// A decoding time budget stops a long generation early: the text so far, whole characters only,
/// a prefix of what the generation would have been.
#[test]
fn a_time_budget_cuts_decoding_and_keeps_what_was_generated() {
    let backend = backend(1);
    let prompt = lines("core.py", 1180, 1215);
    let mut long = request(&prompt, true);
    long.max_tokens = 120;
    let full = runtime()
        .block_on(backend.generate(&long, &CancellationToken::new()))
        .expect("generate");
    assert!(!full.out_of_time);
    long.max_generate_ms = Some(150);
    let cut = runtime()
        .block_on(backend.generate(&long, &CancellationToken::new()))
        .expect("generate");
    eprintln!(
        "budget: {} of {} tokens in {:?} ms",
        cut.generated_tokens.unwrap_or(0),
        full.generated_tokens.unwrap_or(0),
        cut.generate_ms
    );
    assert!(cut.out_of_time, "{cut:?}");
    assert!(
        cut.generated_tokens.unwrap_or(0) < full.generated_tokens.unwrap_or(0),
        "{cut:?}"
    );
    assert!(
        !cut.text.is_empty() && full.text.starts_with(&cut.text),
        "{cut:?} / {full:?}"
    );
    assert!(!cut.text.contains('\u{fffd}'), "{cut:?}");
}

/// An answer its time budget cut goes on where it stopped when the same prompt is asked again
/// with no budget (the server's background replacement): nothing of the prompt is read again,
/// the cut text is where it starts, and the whole answer is the one a fresh context gives
/// without a budget. Another prompt does not resume it.
#[test]
fn a_cut_answer_resumes_where_it_stopped_and_ends_as_the_uncut_answer() {
    let prompt = lines("core.py", 1180, 1215);
    let mut long = request(&prompt, true);
    long.max_tokens = 120;
    let uncut = runtime()
        .block_on(backend(1).generate(&long, &CancellationToken::new()))
        .expect("generate");
    assert!(
        !uncut.out_of_time && uncut.generated_tokens > Some(8),
        "{uncut:?}"
    );

    let backend = backend(2);
    let mut budget = long.clone();
    budget.max_generate_ms = Some(100);
    let cut = runtime()
        .block_on(backend.generate(&budget, &CancellationToken::new()))
        .expect("generate");
    assert!(cut.out_of_time, "{cut:?}");
    let resumed = runtime()
        .block_on(backend.generate(&long, &CancellationToken::new()))
        .expect("generate");
    eprintln!(
        "cut after {:?} tokens, resumed to {:?} in {:?} ms (prompt {:?} ms)",
        cut.generated_tokens, resumed.generated_tokens, resumed.generate_ms, resumed.prompt_ms
    );
    assert_eq!(
        resumed.reused_tokens, resumed.prompt_tokens,
        "nothing read again"
    );
    assert!(!resumed.out_of_time);
    assert!(resumed.text.starts_with(&cut.text));
    assert_eq!(resumed.text, uncut.text);
    assert_eq!(resumed.generated_tokens, uncut.generated_tokens);

    // Once resumed, the answer is whole: the same prompt again is read as usual.
    let again = runtime()
        .block_on(backend.generate(&long, &CancellationToken::new()))
        .expect("generate");
    assert!(again.reused_tokens < again.prompt_tokens, "{again:?}");
    assert_eq!(again.text, uncut.text);

    // A cut answer is not resumed by another prompt.
    let cut = runtime()
        .block_on(backend.generate(&budget, &CancellationToken::new()))
        .expect("generate");
    assert!(cut.out_of_time);
    let other = format!("{prompt}    ");
    let mut asked = long.clone();
    asked.prompt = other;
    let answer = runtime()
        .block_on(backend.generate(&asked, &CancellationToken::new()))
        .expect("generate");
    assert!(answer.reused_tokens < answer.prompt_tokens, "{answer:?}");
}

/// Asks `backend` for `prompt`, live, with `fallback` as the prompt whose answer would also do.
/// `prompt` asked live with `fallback`, and `ahead` to read while nothing is asked, as the
/// completer asks at a new cross-file block.
fn with_fallback(
    backend: &EmbeddedBackend,
    prompt: &str,
    fallback: &str,
    ahead: Option<&str>,
) -> Generation {
    let asked = GenerateRequest {
        fallback: Some(fallback.into()),
        read_ahead: ahead.map(str::to_string),
        ..request(prompt, true)
    };
    runtime()
        .block_on(backend.generate(&asked, &CancellationToken::new()))
        .expect("generate")
}

/// `answer` found its prompt read ahead (all but its last block kept) and answered as a fresh
/// context did (`fresh`): read in blocks, as exact as any live read.
fn assert_read_ahead(answer: &Generation, fresh: &Generation) {
    let (reused, total) = (
        answer.reused_tokens.unwrap_or(0),
        answer.prompt_tokens.unwrap_or(0),
    );
    assert!(
        reused + EmbeddedBackend::KV_BLOCK as u32 >= total,
        "not read ahead: {answer:?}"
    );
    assert_eq!(answer.text, fresh.text, "as a fresh context answers");
}

/// The last answer's prompt (`old`), the prompt with retrieval's new cross-file block (`new`),
/// and that prompt with its left context a step further (`ahead`).
fn block_change() -> (String, String, String) {
    let body = lines("core.py", 1180, 1215);
    let old = format!(
        "# src/click/parser.py\n{}{body}",
        lines("parser.py", 200, 215)
    );
    let block = format!("# src/click/termui.py\n{}", lines("termui.py", 100, 115));
    let new = format!("{block}{body}");
    let ahead = format!("{block}{}", lines("core.py", 1190, 1215));
    (old, new, ahead)
}

/// Retrieval gave a new cross-file block: the new prompt is cold, the last one warm. The warm
/// one answers at once (a fresh context's answer for it), the new one is read while nothing is
/// asked, and once it is ready it answers itself, as a fresh context would.
#[test]
fn a_cold_prompt_is_answered_from_its_warm_fallback_while_it_is_read_ahead() {
    let (old, new, ahead) = block_change();
    let kept = backend(2);
    generate(&kept, &old, true);

    let answered = with_fallback(&kept, &new, &old, Some(&ahead));
    let fresh_old = cold(&old);
    assert!(answered.from_fallback, "{answered:?}");
    assert_eq!(
        (answered.text.as_str(), answered.prompt_tokens),
        (fresh_old.text.as_str(), fresh_old.prompt_tokens)
    );

    // Asked again until the new prompt is ready; each answer in between is the fallback's.
    let started = std::time::Instant::now();
    let ready = loop {
        std::thread::sleep(Duration::from_millis(500));
        let answer = with_fallback(&kept, &new, &old, Some(&ahead));
        if !answer.from_fallback {
            break answer;
        }
        assert_eq!(answer.text, fresh_old.text);
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "never read ahead"
        );
    };
    let fresh_new = cold(&new);
    eprintln!(
        "read ahead in {:.1} s: reused {:?} of {:?}",
        started.elapsed().as_secs_f64(),
        ready.reused_tokens,
        ready.prompt_tokens
    );
    // The request may come while the read is under way (between its batches, on a busy machine):
    // it then reads the rest itself. Most of the prompt was read ahead either way.
    let (reused, total) = (
        ready.reused_tokens.unwrap_or(0),
        ready.prompt_tokens.unwrap_or(0),
    );
    assert!(reused * 2 >= total, "not read ahead: {ready:?}");
    assert_eq!(ready.text, fresh_new.text, "as a fresh context answers");
    // Asked once more, it is all there.
    assert_read_ahead(&with_fallback(&kept, &new, &old, Some(&ahead)), &fresh_new);
    assert_ne!(
        fresh_new.text, fresh_old.text,
        "the two prompts must be told apart"
    );

    // One slot cannot keep the fallback and read the prompt: the prompt itself is read.
    let single = backend(1);
    generate(&single, &old, true);
    let answer = with_fallback(&single, &new, &old, None);
    assert!(!answer.from_fallback, "{answer:?}");
    assert_eq!(answer.text, fresh_new.text);
}

/// After a fallback's answer no request may come for seconds (the user types along the
/// suggestion): the idle time reads the new block's prompt, then the step the request asked to
/// read ahead, in the fallback's slot, so both find their prompt ready.
#[test]
fn the_step_is_read_ahead_after_the_new_block_without_another_request() {
    let (old, new, ahead) = block_change();
    let started = std::time::Instant::now();
    let (fresh_new, fresh_ahead) = (fresh(&new), fresh(&ahead));
    let both = started.elapsed();
    let kept = backend(2);
    generate(&kept, &old, true);
    assert!(with_fallback(&kept, &new, &old, Some(&ahead)).from_fallback);

    std::thread::sleep(both * 2 + Duration::from_secs(3));
    for (prompt, fresh) in [(&ahead, &fresh_ahead), (&new, &fresh_new)] {
        assert_read_ahead(&generate(&kept, prompt, true), fresh);
    }
}

/// While a request is on its way (`Backend::foreground`: the language server builds its prompt
/// and needs a core), nothing is read ahead; once it is answered, reading ahead goes on.
#[test]
fn nothing_is_read_ahead_while_a_request_is_on_its_way() {
    let (old, new, ahead) = block_change();
    let started = std::time::Instant::now();
    let fresh_new = fresh(&new);
    let read = started.elapsed();
    let kept = backend(2);
    generate(&kept, &old, true);

    let on_its_way = kept.foreground();
    assert!(with_fallback(&kept, &new, &old, Some(&ahead)).from_fallback);
    // Time enough to read the new prompt twice over, had anything been read.
    std::thread::sleep(read * 2 + Duration::from_secs(2));
    let asked = generate(&kept, &new, true);
    let (reused, total) = (
        asked.reused_tokens.unwrap_or(0),
        asked.prompt_tokens.unwrap_or(0),
    );
    assert!(
        reused * 2 < total,
        "read ahead while a request was on its way: {asked:?}"
    );
    assert_eq!(asked.text, fresh_new.text, "as a fresh context answers");
    drop(on_its_way);

    // The guard gone, the step asked for is read ahead while nothing is asked.
    let fresh_ahead = cold(&ahead);
    let again = with_fallback(&kept, &new, &old, Some(&ahead));
    assert!(!again.from_fallback, "{again:?}");
    assert_eq!(again.text, fresh_new.text);
    std::thread::sleep(read * 2 + Duration::from_secs(2));
    assert_read_ahead(&generate(&kept, &ahead, true), &fresh_ahead);
}
