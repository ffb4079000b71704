//! Typing the script into one running server, as an editor would: a `didChange` per keystroke
//! and an inline completion request after it, on an open-loop clock; every answer timed at its
//! arrival, and each completion's token counts read back with `crossfile.context`.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::script::{Keystroke, RetypedLines};
use super::verify::Recorded;
use crate::perf::serve_child::file_uri;
use crate::perf::{ClientError, LspClient, PerfError};
use crossfile_engine::metrics::cceval_es;

/// How fast the person types.
#[derive(Clone, Copy, Debug)]
pub struct Pace {
    /// Between two keystrokes.
    pub keystroke: Duration,
    /// After a keystroke that ends an identifier, an operator or a line.
    pub pause: Duration,
    /// From opening a file to the first keystroke (the server indexes the opened buffer).
    pub settle: Duration,
}

/// How long the first completion in a file (a cold prompt) may take.
const FIRST_WITHIN: Duration = Duration::from_secs(300);

/// How long the last answers of a place may take after its last keystroke.
const LAST_ANSWERS_WITHIN: Duration = Duration::from_secs(120);

/// JSON-RPC's `RequestCancelled`: a newer keystroke superseded the request.
const REQUEST_CANCELLED: i64 = -32800;

/// What one server did with the keystrokes.
#[derive(Clone, Debug, Default)]
pub struct Observed {
    pub keystrokes: usize,
    /// Milliseconds to each place's first suggestion, asked at the cursor before typing (the
    /// file's prompt read cold).
    pub first_ms: Vec<f64>,
    /// Inline completion requests sent (one per keystroke).
    pub requests: usize,
    /// Requests answered with a suggestion or none.
    pub answered: usize,
    /// Requests superseded by a newer keystroke.
    pub cancelled: usize,
    /// Requests that failed, and the first failure.
    pub errors: usize,
    pub first_error: Option<String>,
    /// Each pause's keystroke-to-answer time in milliseconds (`None`: superseded or failed).
    pub pauses: Vec<Option<f64>>,
    /// Each answered pause: where, and its suggestion's edit similarity (0..=1) to what was
    /// typed next.
    pub answered_pauses: Vec<AnsweredPause>,
    /// Completions the model made (typing along one is not another), and their prompt tokens
    /// already in a kept KV cache and evaluated.
    pub completions: usize,
    pub reused_tokens: u64,
    pub evaluated_tokens: u64,
    /// Up to `record` completions' prompts and answers (not cut by a time budget), in order.
    pub recorded: Vec<Recorded>,
}

/// A pause answered in time.
#[derive(Clone, Copy, Debug)]
pub struct AnsweredPause {
    /// The place's index and the offset of `original` typed up to.
    pub place: usize,
    pub offset: usize,
    pub es: f64,
    /// Answered by typing along an earlier suggestion, not by the model: the offset the
    /// completion behind it was asked at (`crossfile.context`'s `askedAt`).
    pub along_from: Option<usize>,
}

impl AnsweredPause {
    /// Whether the answer typed along an earlier suggestion.
    pub fn is_along(&self) -> bool {
        self.along_from.is_some()
    }
}

/// A request not answered yet.
enum Waiting {
    /// An inline completion after keystroke `offset` of place `place`.
    Completion {
        place: usize,
        offset: usize,
        pause: bool,
        sent: Instant,
    },
    /// `crossfile.context` after the answer to the request at `offset` of place `place`; at a
    /// pause, the index of its answered pause.
    Context {
        place: usize,
        offset: usize,
        pause: Option<usize>,
    },
}

/// Types `places` into the server behind `client`, recording up to `record` completions' prompts;
/// `after_place` is called after each place (its index), for progress and memory readings.
pub fn type_places(
    client: &mut LspClient,
    places: &[RetypedLines],
    pace: Pace,
    record: usize,
    after_place: &mut dyn FnMut(usize, &Observed) -> Result<(), PerfError>,
) -> Result<Observed, PerfError> {
    let mut typist = Typist {
        client,
        places,
        record,
        waiting: HashMap::new(),
        serials: HashSet::new(),
        observed: Observed::default(),
    };
    for (index, place) in places.iter().enumerate() {
        typist.type_place(index, place, pace)?;
        after_place(index, &typist.observed)?;
    }
    Ok(typist.observed)
}

/// Asks for one completion at `offset` of `place`, in the open document, and waits as long as
/// `timeout` for it: the answer and the milliseconds it took; a failed completion is an error.
fn waited_completion(
    client: &mut LspClient,
    uri: &str,
    place: &RetypedLines,
    offset: usize,
    timeout: Duration,
) -> Result<(Value, f64), PerfError> {
    let (id, sent) = client.start_request(
        "textDocument/inlineCompletion",
        inline_params(uri, place, offset),
    )?;
    let (answer, at) = client.response(id, timeout)?;
    match answer.get("error") {
        Some(error) => Err(PerfError::Unmeasurable(format!(
            "the completion at {}:{} failed: {error}",
            place.rel,
            place.position(offset).line + 1
        ))),
        None => Ok((answer, at.duration_since(sent).as_secs_f64() * 1e3)),
    }
}

/// [`waited_completion`] at `place`'s start: the milliseconds it took.
fn first_completion(
    client: &mut LspClient,
    uri: &str,
    place: &RetypedLines,
    timeout: Duration,
) -> Result<f64, PerfError> {
    waited_completion(client, uri, place, place.start, timeout).map(|(_, ms)| ms)
}

/// Opens `place`, asks for one completion at its start (the model's load) and closes it.
pub fn warm_up(
    client: &mut LspClient,
    place: &RetypedLines,
    timeout: Duration,
) -> Result<(), PerfError> {
    let uri = file_uri(&place.abs);
    open(client, &uri, place)?;
    first_completion(client, &uri, place, timeout)?;
    client.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri}}),
    )?;
    Ok(())
}

struct Typist<'a> {
    client: &'a mut LspClient,
    places: &'a [RetypedLines],
    record: usize,
    waiting: HashMap<i64, Waiting>,
    /// The completions already counted, and the offset each was asked at.
    serials: HashSet<u64>,
    observed: Observed,
}

impl Typist<'_> {
    fn type_place(
        &mut self,
        index: usize,
        place: &RetypedLines,
        pace: Pace,
    ) -> Result<(), PerfError> {
        let uri = file_uri(&place.abs);
        open(self.client, &uri, place)?;
        std::thread::sleep(pace.settle);
        // The person puts the cursor there and reads the first suggestion before typing: a cold
        // prompt, measured apart from the keystrokes.
        let first = first_completion(self.client, &uri, place, FIRST_WITHIN)?;
        self.observed.first_ms.push(first);
        let mut next = Instant::now();
        for (version, keystroke) in (2..).zip(&place.keystrokes) {
            self.collect_until(next)?;
            self.type_key(index, place, &uri, version, keystroke)?;
            next += if keystroke.pause {
                pace.pause
            } else {
                pace.keystroke
            };
        }
        self.collect_until(next)?;
        let end = Instant::now() + LAST_ANSWERS_WITHIN;
        while !self.waiting.is_empty() && Instant::now() < end {
            self.collect_until(end.min(Instant::now() + Duration::from_millis(100)))?;
        }
        self.waiting.clear();
        self.client.notify(
            "textDocument/didClose",
            json!({"textDocument": {"uri": uri}}),
        )?;
        Ok(())
    }

    /// Sends the keystroke's change and the completion request after it.
    fn type_key(
        &mut self,
        index: usize,
        place: &RetypedLines,
        uri: &str,
        version: i64,
        keystroke: &Keystroke,
    ) -> Result<(), PerfError> {
        let at = place.position(keystroke.at);
        let range = json!({"start": {"line": at.line, "character": at.col},
                           "end": {"line": at.line, "character": at.col}});
        self.client.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version},
                   "contentChanges": [{"range": range, "text": place.typed(keystroke)}]}),
        )?;
        let (id, sent) = self.client.start_request(
            "textDocument/inlineCompletion",
            inline_params(uri, place, keystroke.to),
        )?;
        self.waiting.insert(
            id,
            Waiting::Completion {
                place: index,
                offset: keystroke.to,
                pause: keystroke.pause,
                sent,
            },
        );
        self.observed.keystrokes += 1;
        self.observed.requests += 1;
        Ok(())
    }

    /// Takes the answers that arrive before `deadline`.
    fn collect_until(&mut self, deadline: Instant) -> Result<(), PerfError> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let answer = self
                .client
                .wait_until(left, |m| m.get("id").is_some() && m.get("method").is_none());
            match answer {
                Ok((message, at)) => self.take(&message, at)?,
                Err(ClientError::Timeout { .. }) => return Ok(()),
                Err(e) => return Err(e.into()),
            }
        }
    }

    fn take(&mut self, message: &Value, at: Instant) -> Result<(), PerfError> {
        let Some(waiting) = message
            .get("id")
            .and_then(Value::as_i64)
            .and_then(|id| self.waiting.remove(&id))
        else {
            return Ok(());
        };
        match waiting {
            Waiting::Context {
                place,
                offset,
                pause,
            } => {
                let context = message.get("result").unwrap_or(&Value::Null);
                self.count_tokens(context);
                let asked_at = context
                    .get("askedAt")
                    .and_then(|at| self.places.get(place)?.offset_of(at));
                if let (Some(from), Some(pause)) = (asked_at, pause)
                    && from < offset
                    && let Some(answered) = self.observed.answered_pauses.get_mut(pause)
                {
                    answered.along_from = Some(from);
                }
                Ok(())
            }
            Waiting::Completion {
                place,
                offset,
                pause,
                sent,
            } => self.take_completion(message, place, offset, pause, at.duration_since(sent)),
        }
    }

    fn take_completion(
        &mut self,
        message: &Value,
        index: usize,
        offset: usize,
        pause: bool,
        took: Duration,
    ) -> Result<(), PerfError> {
        let observed = &mut self.observed;
        if let Some(error) = message.get("error") {
            if error.get("code").and_then(Value::as_i64) == Some(REQUEST_CANCELLED) {
                observed.cancelled += 1;
            } else {
                observed.errors += 1;
                observed
                    .first_error
                    .get_or_insert_with(|| error.to_string());
            }
            if pause {
                tracing::debug!(offset, ms = took.as_secs_f64() * 1e3, %error, "a pause without an answer");
                observed.pauses.push(None);
            }
            return Ok(());
        }
        observed.answered += 1;
        let suggestion = message
            .pointer("/result/items/0/insertText")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let mut answered_pause = None;
        if pause {
            tracing::debug!(
                offset,
                ms = took.as_secs_f64() * 1e3,
                suggestion,
                "a pause answered"
            );
            observed.pauses.push(Some(took.as_secs_f64() * 1e3));
            answered_pause = Some(observed.answered_pauses.len());
            observed.answered_pauses.push(AnsweredPause {
                place: index,
                offset,
                es: similarity(&self.places[index], offset, suggestion),
                along_from: None,
            });
        }
        let uri = file_uri(&self.places[index].abs);
        let (id, _) = self.client.start_request(
            "workspace/executeCommand",
            json!({"command": "crossfile.context", "arguments": [{"uri": uri}]}),
        )?;
        self.waiting.insert(
            id,
            Waiting::Context {
                place: index,
                offset,
                pause: answered_pause,
            },
        );
        Ok(())
    }

    /// Adds a completion's prompt tokens the first time its serial is seen (the answers of typing
    /// along it share it).
    fn count_tokens(&mut self, context: &Value) {
        let Some(serial) = context.get("serial").and_then(Value::as_u64) else {
            return;
        };
        if !self.serials.insert(serial) {
            return;
        }
        let number = |key: &str| {
            context
                .pointer(&format!("/generation/{key}"))
                .and_then(Value::as_u64)
                .unwrap_or(0)
        };
        let (total, reused) = (number("promptTokens"), number("reusedTokens"));
        let observed = &mut self.observed;
        observed.completions += 1;
        observed.reused_tokens += reused.min(total);
        observed.evaluated_tokens += total.saturating_sub(reused);
        let text = |pointer: &str| context.pointer(pointer).and_then(Value::as_str);
        let out_of_time = context.pointer("/generation/outOfTime") == Some(&Value::Bool(true));
        if observed.recorded.len() < self.record
            && !out_of_time
            && let (Some(prompt), Some(text)) = (text("/prompt"), text("/generation/text"))
        {
            observed.recorded.push(Recorded {
                prompt: prompt.to_string(),
                text: text.to_string(),
            });
        }
    }
}

/// Edit similarity (0..=1) of `suggestion`, at `offset` of `place`, to what the person typed
/// next, as far as the suggestion's lines reach.
pub fn similarity(place: &RetypedLines, offset: usize, suggestion: &str) -> f64 {
    let lines = suggestion.split('\n').count();
    cceval_es(suggestion, place.typed_next(offset, lines)) / 100.0
}

/// Opens `place` as typed up to `offset`, asks for a completion at `offset` and waits as long as
/// `timeout` for it: the suggestion (empty for none).
pub fn suggestion_at(
    client: &mut LspClient,
    place: &RetypedLines,
    offset: usize,
    timeout: Duration,
) -> Result<String, PerfError> {
    let uri = file_uri(&place.abs);
    open_text(client, &uri, place, &place.text_at(offset))?;
    let answer = waited_completion(client, &uri, place, offset, timeout);
    client.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri}}),
    )?;
    let (answer, _) = answer?;
    Ok(answer
        .pointer("/result/items/0/insertText")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string())
}

fn open(client: &mut LspClient, uri: &str, place: &RetypedLines) -> Result<(), ClientError> {
    open_text(client, uri, place, &place.opened_text())
}

fn open_text(
    client: &mut LspClient,
    uri: &str,
    place: &RetypedLines,
    text: &str,
) -> Result<(), ClientError> {
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": place.language.name(),
               "version": 1, "text": text}}),
    )
}

fn inline_params(uri: &str, place: &RetypedLines, offset: usize) -> Value {
    let at = place.position(offset);
    json!({"textDocument": {"uri": uri},
           "position": {"line": at.line, "character": at.col},
           "context": {"triggerKind": 2}})
}
