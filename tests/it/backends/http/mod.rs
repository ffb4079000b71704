//! HTTP backends: faults from a local stub (500, 429, a hang, a torn body, a wrong content type,
//! a refused connection, cancellation), the request and response shapes of each API, and real
//! servers (`llama-server` for `llamacpp`, `llama-cpp-python` for `openai` and `openai-chat`).
//!
//! Ollama and TGI cannot be installed on the machines these tests run on (no registry ships
//! them), so their backends are checked against fixtures that replay the request and response
//! shapes their API documentation gives: the stub asserts the body the backend sends and answers
//! with the documented JSON. The real-server tests are in `http_backends/real.rs`.

mod real;

use std::sync::Once;
use std::time::{Duration, Instant};

use crossfile_engine::backend::{
    Backend, BackendError, BackendKind, BackendSettings, CHAT_INSTRUCTION, FimChunk, FimParts,
    FimRoute, GenerateRequest, LlamaCppBackend, OllamaBackend, OpenAiBackend, OpenAiChatBackend,
    TgiBackend,
};
use crossfile_engine::http::HttpError;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::backends::servers::{self, Reply, Stub};

const KEY_ENV: &str = "CROSSFILE_TEST_HTTP_BACKENDS_KEY";
const KEY: &str = "sk-crossfile-test-7f3a9c1e5b-DO-NOT-LOG";

/// The name of an environment variable holding [`KEY`].
fn key_env() -> &'static str {
    static SET: Once = Once::new();
    SET.call_once(|| {
        // SAFETY: set once, before any backend reads it; no test reads this variable through
        // C code, and Rust's own environment access is locked.
        unsafe { std::env::set_var(KEY_ENV, KEY) }
    });
    KEY_ENV
}

pub(crate) fn settings(
    kind: BackendKind,
    endpoint: &str,
    timeout_ms: u64,
    retries: u32,
) -> BackendSettings {
    BackendSettings {
        kind,
        endpoint: endpoint.to_string(),
        model: "test-model".into(),
        api_key_env: Some(key_env().to_string()),
        timeout_ms,
        retries,
        cache_entries: 0,
        fim: FimRoute::Prompt,
    }
}

fn openai(endpoint: &str, timeout_ms: u64, retries: u32) -> OpenAiBackend {
    OpenAiBackend::new(&settings(
        BackendKind::OpenAi,
        endpoint,
        timeout_ms,
        retries,
    ))
    .expect("valid settings")
}

pub(crate) fn request(prompt: &str, max_tokens: u32, stop: &[&str]) -> GenerateRequest {
    GenerateRequest {
        prompt: prompt.to_string(),
        fim: None,
        max_tokens,
        stop: stop.iter().map(|s| s.to_string()).collect(),
        may_start_below: false,
        reuse_kv: false,
        max_generate_ms: None,
        fallback: None,
        read_ahead: None,
        sampling: None,
        likelihood_of: None,
    }
}

const COMPLETION: &str = r#"{"id":"cmpl-1","object":"text_completion","created":1,"model":"m",
 "choices":[{"text":" return a + b\n","index":0,"logprobs":null,"finish_reason":"stop"}],
 "usage":{"prompt_tokens":7,"completion_tokens":5,"total_tokens":12}}"#;

/// The error, checked never to show the key, in its message or its `Debug`.
fn keyless(result: Result<crossfile_engine::backend::Generation, BackendError>) -> BackendError {
    let e = result.expect_err("an error");
    for shown in [e.to_string(), format!("{e:?}")] {
        assert!(!shown.contains(KEY), "the API key leaked: {shown}");
    }
    e
}

#[tokio::test]
async fn a_500_is_retried_then_reported_with_its_status_and_body() {
    let stub = Stub::start(vec![Reply::status(500, r#"{"error":"model crashed"}"#)]).await;
    let e = keyless(
        openai(&stub.url, 5_000, 2)
            .generate(&request("x", 4, &[]), &CancellationToken::new())
            .await,
    );
    assert_eq!(e.kind(), "http_status", "{e}");
    match &e {
        BackendError::Http(HttpError::Status { status, body, .. }) => {
            assert_eq!(*status, 500);
            assert!(body.contains("model crashed"), "{body}");
        }
        other => panic!("{other}"),
    }
    assert_eq!(stub.requests().len(), 3, "one attempt and two retries");
}

#[tokio::test]
async fn a_429_is_retried_after_retry_after_and_then_succeeds() {
    let stub = Stub::start(vec![
        Reply::Full {
            status: 429,
            content_type: "application/json",
            headers: vec![("Retry-After", "1".into())],
            body: r#"{"error":"slow down"}"#.into(),
        },
        Reply::json(COMPLETION),
    ])
    .await;
    let started = Instant::now();
    let g = openai(&stub.url, 5_000, 2)
        .generate(
            &request("def add(a, b):\n", 8, &["\n"]),
            &CancellationToken::new(),
        )
        .await
        .expect("the retry succeeds");
    let waited = started.elapsed();
    assert_eq!(g.text, " return a + b");
    assert_eq!((g.prompt_tokens, g.generated_tokens), (Some(7), Some(5)));
    assert!(
        waited >= Duration::from_millis(950),
        "Retry-After: 1 honoured ({waited:?})"
    );
    assert!(waited < Duration::from_secs(5), "{waited:?}");
    let requests = stub.requests();
    assert_eq!(requests.len(), 2);
    for r in &requests {
        assert_eq!(
            (r.method.as_str(), r.path.as_str()),
            ("POST", "/v1/completions")
        );
        assert_eq!(
            r.header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        );
    }
}

#[tokio::test]
async fn a_hang_past_the_timeout_is_a_timeout_fast_and_not_retried() {
    let stub = Stub::start(vec![Reply::Hang]).await;
    let started = Instant::now();
    let e = keyless(
        openai(&stub.url, 300, 2)
            .generate(&request("x", 4, &[]), &CancellationToken::new())
            .await,
    );
    assert!(
        matches!(
            e,
            BackendError::Http(HttpError::Timeout { after_ms: 300, .. })
        ),
        "{e}"
    );
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(stub.requests().len(), 1);
}

#[tokio::test]
async fn a_torn_body_a_wrong_content_type_and_missing_fields_are_malformed() {
    let cases = [
        (
            Reply::Torn {
                body: r#"{"choices":[{"te"#.into(),
                promised: 400,
            },
            "ended early",
        ),
        (
            Reply::Full {
                status: 200,
                content_type: "text/html; charset=utf-8",
                headers: vec![],
                body: "<html>proxy login</html>".into(),
            },
            "content type `text/html; charset=utf-8` is not JSON",
        ),
        (Reply::json(r#"{"id":"x"}"#), "missing field `choices`"),
        (Reply::json(r#"{"choices":[]}"#), "no choices"),
        (Reply::json("not json"), "unexpected JSON"),
    ];
    for (reply, expected) in cases {
        let stub = Stub::start(vec![reply]).await;
        let e = keyless(
            openai(&stub.url, 5_000, 2)
                .generate(&request("x", 4, &[]), &CancellationToken::new())
                .await,
        );
        assert_eq!(e.kind(), "malformed", "{e}");
        assert!(e.to_string().contains(expected), "{e}");
        assert_eq!(
            stub.requests().len(),
            1,
            "{e}: a malformed answer is not retried"
        );
    }
}

#[tokio::test]
async fn a_refused_connection_is_refused() {
    let port = servers::free_port();
    let started = Instant::now();
    let e = keyless(
        openai(&format!("http://127.0.0.1:{port}"), 5_000, 1)
            .generate(&request("x", 4, &[]), &CancellationToken::new())
            .await,
    );
    assert_eq!(e.kind(), "refused", "{e}");
    assert!(e.to_string().contains(&format!("127.0.0.1:{port}")), "{e}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn cancelling_in_flight_is_quick_and_the_backend_stays_usable() {
    let stub = Stub::start(vec![Reply::Hang, Reply::json(COMPLETION)]).await;
    let backend = openai(&stub.url, 30_000, 0);
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let started = Instant::now();
    let hang = request("x", 4, &[]);
    let (result, ()) = tokio::join!(backend.generate(&hang, &cancel), async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        trigger.cancel();
    });
    assert!(matches!(keyless(result), BackendError::Cancelled));
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    let g = backend
        .generate(&request("x", 4, &[]), &CancellationToken::new())
        .await
        .expect("the next request succeeds");
    assert_eq!(g.text, " return a + b\n");
    // A token cancelled before the call never reaches the server.
    let cancelled = CancellationToken::new();
    cancelled.cancel();
    let e = backend.generate(&request("x", 4, &[]), &cancelled).await;
    assert!(matches!(e, Err(BackendError::Cancelled)));
    assert_eq!(stub.requests().len(), 2);
}

#[tokio::test]
async fn a_key_echoed_by_the_server_is_redacted_and_debug_hides_it() {
    let body = format!(r#"{{"error":"invalid key Bearer {KEY}"}}"#);
    let stub = Stub::start(vec![Reply::status(401, &body)]).await;
    let backend = openai(&stub.url, 5_000, 2);
    let e = keyless(
        backend
            .generate(&request("x", 4, &[]), &CancellationToken::new())
            .await,
    );
    assert!(
        e.to_string().contains("invalid key Bearer [redacted]"),
        "{e}"
    );
    assert_eq!(stub.requests().len(), 1, "a 401 is not retried");
    let shown = format!("{backend:?}");
    assert!(
        !shown.contains(KEY) && shown.contains("[redacted]"),
        "{shown}"
    );
    let missing = BackendSettings {
        api_key_env: Some("CROSSFILE_TEST_SURELY_UNSET_VARIABLE".into()),
        ..settings(BackendKind::OpenAi, &stub.url, 1_000, 0)
    };
    let e = OpenAiBackend::new(&missing).expect_err("unset key variable");
    assert_eq!(e.kind(), "config");
    assert!(
        e.to_string()
            .contains("CROSSFILE_TEST_SURELY_UNSET_VARIABLE"),
        "{e}"
    );
}

#[tokio::test]
async fn openai_completions_send_greedy_limits_and_at_most_four_stops() {
    let stub = Stub::start(vec![Reply::json(COMPLETION)]).await;
    let stops = ["\n", "\r\n", ";", "}", "def "];
    let g = openai(&format!("{}/v1", stub.url), 5_000, 0)
        .generate(
            &request("def add(a, b):\n", 8, &stops),
            &CancellationToken::new(),
        )
        .await
        .expect("completion");
    assert_eq!(g.text, " return a + b");
    let sent = &stub.requests()[0];
    assert_eq!(sent.path, "/v1/completions");
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(
        sent.json(),
        json!({
            "model": "test-model",
            "prompt": "def add(a, b):\n",
            "max_tokens": 8,
            "temperature": 0.0,
            "stop": ["\n", "\r\n", ";", "}"],
            "repeat_penalty": 1.0,
            "stream": false
        })
    );
}

#[tokio::test]
async fn openai_chat_wraps_the_prompt_and_strips_a_code_fence() {
    let answer = json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": "```python\n    return a + b\n```"}}],
        "usage": {"prompt_tokens": 40, "completion_tokens": 9, "total_tokens": 49}
    });
    let stub = Stub::start(vec![Reply::json(&answer.to_string())]).await;
    let backend = OpenAiChatBackend::new(&settings(BackendKind::OpenAiChat, &stub.url, 5_000, 0))
        .expect("settings");
    let g = backend
        .generate(
            &request("def add(a, b):\n", 8, &["\n"]),
            &CancellationToken::new(),
        )
        .await
        .expect("chat");
    assert_eq!(g.text, "    return a + b");
    assert_eq!((g.prompt_tokens, g.generated_tokens), (Some(40), Some(9)));
    let sent = &stub.requests()[0];
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(
        sent.json(),
        json!({
            "model": "test-model",
            "messages": [{"role": "user",
                "content": format!("{CHAT_INSTRUCTION}\n\ndef add(a, b):\n")}],
            "max_tokens": 16,
            "temperature": 0.0,
            "repeat_penalty": 1.0,
            "stream": false
        })
    );
}

/// Ollama's documented `/api/generate` exchange (docs/api.md, "Generate a completion",
/// non-streaming), replayed.
#[tokio::test]
async fn ollama_sends_a_raw_greedy_request_and_reads_the_documented_answer() {
    let answer = json!({
        "model": "codellama:7b-code",
        "created_at": "2023-08-04T19:22:45.499127Z",
        "response": "    return a + b\n\ndef sub(a, b):",
        "done": true,
        "done_reason": "stop",
        "context": [1, 2, 3],
        "total_duration": 5043500667u64,
        "load_duration": 5025959,
        "prompt_eval_count": 26,
        "prompt_eval_duration": 325953000,
        "eval_count": 290,
        "eval_duration": 4709213000u64
    });
    let stub = Stub::start(vec![Reply::json(&answer.to_string())]).await;
    let backend =
        OllamaBackend::new(&settings(BackendKind::Ollama, &stub.url, 5_000, 0)).expect("settings");
    let g = backend
        .generate(
            &request("def add(a, b):\n", 16, &["\n\n"]),
            &CancellationToken::new(),
        )
        .await
        .expect("ollama");
    assert_eq!(g.text, "    return a + b");
    assert_eq!((g.prompt_tokens, g.generated_tokens), (Some(26), Some(290)));
    assert_eq!(g.prompt_ms, Some(325.953));
    assert_eq!(g.generate_ms, Some(4709.213));
    let sent = &stub.requests()[0];
    assert_eq!(sent.path, "/api/generate");
    assert_eq!(
        sent.json(),
        json!({
            "model": "test-model",
            "prompt": "def add(a, b):\n",
            "stream": false,
            "raw": true,
            "options": {"temperature": 0.0, "num_predict": 16, "stop": ["\n\n"]}
        })
    );
}

/// TGI's documented `/generate` exchange (its OpenAPI `GenerateRequest`/`GenerateResponse`,
/// with `details`), replayed. TGI keeps the stop sequence in `generated_text`.
#[tokio::test]
async fn tgi_sends_greedy_parameters_and_reads_the_documented_answer() {
    let answer = json!({
        "generated_text": "    return a + b\n\n",
        "details": {
            "finish_reason": "stop_sequence",
            "generated_tokens": 6,
            "seed": null,
            "prefill": [],
            "tokens": [{"id": 262, "text": "    ", "logprob": -0.01, "special": false}]
        }
    });
    let stub = Stub::start(vec![Reply::json(&answer.to_string())]).await;
    let backend =
        TgiBackend::new(&settings(BackendKind::Tgi, &stub.url, 5_000, 0)).expect("settings");
    let stops = ["\n\n", "\nclass ", "\ndef ", "\n#", "\nif "];
    let g = backend
        .generate(
            &request("def add(a, b):\n", 16, &stops),
            &CancellationToken::new(),
        )
        .await
        .expect("tgi");
    assert_eq!(g.text, "    return a + b");
    assert_eq!(g.generated_tokens, Some(6));
    let sent = &stub.requests()[0];
    assert_eq!(sent.path, "/generate");
    assert_eq!(
        sent.json(),
        json!({
            "inputs": "def add(a, b):\n",
            "parameters": {
                "max_new_tokens": 16,
                "stop": ["\n\n", "\nclass ", "\ndef ", "\n#"],
                "do_sample": false,
                "details": true
            }
        })
    );
    // TGI's documented validation error shape comes back as a status with its message.
    let stub = Stub::start(vec![Reply::status(
        422,
        r#"{"error":"Input validation error: `inputs` must be non-empty","error_type":"validation"}"#,
    )])
    .await;
    let e = keyless(
        TgiBackend::new(&settings(BackendKind::Tgi, &stub.url, 5_000, 2))
            .expect("settings")
            .generate(&request("", 16, &[]), &CancellationToken::new())
            .await,
    );
    assert!(
        e.to_string()
            .contains("HTTP 422: {\"error\":\"Input validation"),
        "{e}"
    );
}

#[tokio::test]
async fn llamacpp_sends_completion_and_infill_shapes() {
    let answer = json!({
        "content": " return a + b\n", "tokens_predicted": 6, "tokens_evaluated": 9,
        "stop": true, "timings": {"prompt_n": 9, "prompt_ms": 80.5, "predicted_n": 6,
        "predicted_ms": 82.25}
    });
    let stub = Stub::start(vec![Reply::json(&answer.to_string())]).await;
    let backend =
        LlamaCppBackend::new(&settings(BackendKind::LlamaCpp, &stub.url, 5_000, 0)).expect("ok");
    let g = backend
        .generate(
            &request("def add(a, b):\n", 16, &["\n"]),
            &CancellationToken::new(),
        )
        .await
        .expect("completion");
    assert_eq!(g.text, " return a + b");
    assert_eq!((g.prompt_tokens, g.generated_tokens), (Some(9), Some(6)));
    assert_eq!((g.prompt_ms, g.generate_ms), (Some(80.5), Some(82.25)));
    let mut fim = request(
        "<fim_prefix>def add(a, b):\n<fim_suffix>\n<fim_middle>",
        16,
        &[],
    );
    fim.fim = Some(FimParts {
        prefix: "def add(a, b):\n".into(),
        suffix: "\nprint(add(1, 2))\n".into(),
        chunks: vec![FimChunk {
            filename: "util.py".into(),
            text: "def sub(a, b):\n    return a - b\n".into(),
        }],
    });
    // By default crossfile's own prompt goes to /completion, FIM or not.
    backend
        .generate(&fim, &CancellationToken::new())
        .await
        .expect("completion");
    // With `backend.fim = "infill"`, the parts and chunks go to /infill.
    let infill = LlamaCppBackend::new(&BackendSettings {
        fim: FimRoute::Infill,
        ..settings(BackendKind::LlamaCpp, &stub.url, 5_000, 0)
    })
    .expect("ok");
    infill
        .generate(&fim, &CancellationToken::new())
        .await
        .expect("infill");
    let sent = stub.requests();
    assert_eq!(sent[0].path, "/completion");
    assert_eq!(
        sent[0].json(),
        json!({"prompt": "def add(a, b):\n", "n_predict": 16, "temperature": 0.0,
               "repeat_penalty": 1.0, "stop": ["\n"], "cache_prompt": true})
    );
    assert_eq!(sent[1].path, "/completion");
    assert_eq!(
        sent[1].json()["prompt"],
        "<fim_prefix>def add(a, b):\n<fim_suffix>\n<fim_middle>"
    );
    assert_eq!(sent[2].path, "/infill");
    assert_eq!(
        sent[2].json(),
        json!({"input_prefix": "def add(a, b):\n", "input_suffix": "\nprint(add(1, 2))\n",
               "input_extra": [{"filename": "util.py", "text": "def sub(a, b):\n    return a - b\n"}],
               "prompt": "", "n_predict": 16, "temperature": 0.0, "repeat_penalty": 1.0,
               "cache_prompt": true})
    );
}

/// A sampled request sends its temperature, top-p and seed in each API's own fields (TGI also
/// turns sampling on); a greedy one sends neither top-p nor seed (the shapes above).
#[tokio::test]
async fn a_sampled_request_sends_temperature_top_p_and_seed_in_each_apis_fields() {
    let sampling = crossfile_engine::backend::Sampling::new(0.4, 0.95, 1234).expect("valid");
    let sampled = GenerateRequest {
        sampling: Some(sampling),
        ..request("def add(a, b):\n", 8, &[])
    };
    let sent = |stub: &Stub| stub.requests()[0].json();
    let generate = |backend: Box<dyn Backend>| {
        let sampled = sampled.clone();
        async move {
            backend
                .generate(&sampled, &CancellationToken::new())
                .await
                .expect("answer")
        }
    };
    // The three fields, wherever the API nests them (rounded: f32 sent as JSON numbers).
    let fields = |at: &serde_json::Value| {
        let number = |v: &serde_json::Value| v.as_f64().map(|x| (x * 1e6).round() / 1e6);
        (
            number(&at["temperature"]),
            number(&at["top_p"]),
            at["seed"].clone(),
        )
    };
    let want = (Some(0.4), Some(0.95), json!(1234));

    let stub = Stub::start(vec![Reply::json(COMPLETION)]).await;
    generate(Box::new(openai(&format!("{}/v1", stub.url), 5_000, 0))).await;
    assert_eq!(fields(&sent(&stub)), want, "openai");

    let stub = Stub::start(vec![Reply::json(r#"{"response": "x", "done": true}"#)]).await;
    generate(Box::new(
        OllamaBackend::new(&settings(BackendKind::Ollama, &stub.url, 5_000, 0)).expect("settings"),
    ))
    .await;
    assert_eq!(fields(&sent(&stub)["options"]), want, "ollama");

    let stub = Stub::start(vec![Reply::json(r#"{"generated_text": "x"}"#)]).await;
    generate(Box::new(
        TgiBackend::new(&settings(BackendKind::Tgi, &stub.url, 5_000, 0)).expect("settings"),
    ))
    .await;
    let parameters = &sent(&stub)["parameters"];
    assert_eq!(parameters["do_sample"], json!(true), "{parameters}");
    assert_eq!(fields(parameters), want, "tgi");

    let stub = Stub::start(vec![Reply::json(r#"{"content": "x"}"#)]).await;
    generate(Box::new(
        LlamaCppBackend::new(&settings(BackendKind::LlamaCpp, &stub.url, 5_000, 0))
            .expect("settings"),
    ))
    .await;
    assert_eq!(fields(&sent(&stub)), want, "llamacpp");
}
