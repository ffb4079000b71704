//! The reference's likelihood the embedded backend measures beside an exact answer, against
//! llama-server's own log-probabilities of the tokens it generated greedily with the same GGUF
//! (`n_probs`): the same prompts, the small model, both real.

use std::sync::Arc;

use crossfile_bench::perf::LlamaServer;
use crossfile_engine::backend::{Backend, EmbeddedBackend, GenerateRequest};
use crossfile_engine::model::ModelSettings;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::backends::embedded::{request, runtime};
use crate::backends::servers::llama_server_binary;
use crate::backends::tokenizer::small_model;
use crate::support::{corpus_workspace, read_text};

const N_CTX: u32 = 512;
const NEW_TOKENS: u32 = 10;

/// Prompts that end inside a line of real code.
fn prompts() -> Vec<String> {
    let text = read_text(&corpus_workspace("click").join("src/click/utils.py"));
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    [40, 75, 120, 180, 240, 300, 360, 420]
        .iter()
        .map(|&end| {
            let mut prompt: String = lines[end - 25..end].concat();
            let next = lines[end];
            let indent = next.len() - next.trim_start().len();
            prompt.push_str(&next[..indent + (next.trim().len() / 3)]);
            prompt
        })
        .collect()
}

/// llama-server's greedy answer to `prompt` and the log-probability of each of its tokens.
async fn server_answer(server: &LlamaServer, prompt: &str) -> (String, Vec<f64>) {
    let body = json!({"prompt": prompt, "n_predict": NEW_TOKENS, "temperature": 0.0,
                      "top_k": 1, "n_probs": 1, "cache_prompt": false});
    let answer: Value = reqwest::Client::new()
        .post(format!("{}/completion", server.url))
        .json(&body)
        .send()
        .await
        .expect("llama-server answers")
        .json()
        .await
        .expect("JSON");
    let content = answer["content"].as_str().expect("content").to_string();
    let logprobs = answer["completion_probabilities"]
        .as_array()
        .expect("completion_probabilities")
        .iter()
        .map(|t| t["logprob"].as_f64().expect("a logprob"))
        .collect();
    (content, logprobs)
}

#[test]
fn the_reference_likelihood_is_llama_servers_log_probability_of_its_tokens() {
    let settings = ModelSettings {
        path: None,
        named: crossfile_engine::model::SMOLLM2_135M,
        n_ctx: N_CTX,
        threads: crate::support::MODEL_THREADS,
        kv_slots: 1,
        kv_shift_min_span: 0,
        tokenizer: None,
    };
    let model = small_model();
    let backend = Arc::new(EmbeddedBackend::load(&model, &settings).expect("load the model"));
    let rt = runtime();
    let server = rt
        .block_on(LlamaServer::start(
            &llama_server_binary(),
            &model,
            N_CTX,
            2,
            &[],
        ))
        .expect("llama-server starts");
    let cancel = CancellationToken::new();
    let mut compared = 0;
    let mut largest: f64 = 0.0;
    for prompt in prompts() {
        let (content, logprobs) = rt.block_on(server_answer(&server, &prompt));
        if content.is_empty() {
            continue;
        }
        let asked = GenerateRequest {
            likelihood_of: Some(content.clone()),
            ..request(&prompt, NEW_TOKENS, &[])
        };
        let answer = rt
            .block_on(backend.generate(&asked, &cancel))
            .expect("generate");
        let likelihood = answer
            .likelihood
            .expect("an exact request gets the likelihood");
        assert!(likelihood.mean_logprob <= 0.0, "{likelihood:?}");
        if likelihood.tokens as usize != logprobs.len() {
            // The text tokenized alone is not what the server generated token by token.
            continue;
        }
        let server_mean = logprobs.iter().sum::<f64>() / logprobs.len() as f64;
        let difference = (likelihood.mean_logprob - server_mean).abs();
        eprintln!(
            "{content:?}: embedded {:.4}, llama-server {server_mean:.4}",
            likelihood.mean_logprob
        );
        largest = largest.max(difference);
        compared += 1;
        // A text the model would not write is far less likely than its own answer.
        let unlikely = GenerateRequest {
            likelihood_of: Some(content.chars().rev().collect()),
            ..request(&prompt, NEW_TOKENS, &[])
        };
        let worse = rt
            .block_on(backend.generate(&unlikely, &cancel))
            .expect("generate")
            .likelihood
            .expect("a likelihood");
        assert!(
            worse.mean_logprob < likelihood.mean_logprob - 1.0,
            "{worse:?} against {likelihood:?}"
        );
        // The answer itself is not changed by measuring a likelihood beside it.
        let plain = rt
            .block_on(backend.generate(&request(&prompt, NEW_TOKENS, &[]), &cancel))
            .expect("generate");
        assert_eq!(plain.text, answer.text);
        assert_eq!(plain.likelihood, None);
    }
    assert!(compared >= 5, "only {compared} prompts compared");
    assert!(
        largest < 0.05,
        "mean log-probabilities differ by up to {largest:.4}"
    );
}

#[test]
fn a_live_request_gets_no_likelihood() {
    let settings = ModelSettings {
        path: None,
        named: crossfile_engine::model::SMOLLM2_135M,
        n_ctx: N_CTX,
        threads: crate::support::MODEL_THREADS,
        kv_slots: 1,
        kv_shift_min_span: 0,
        tokenizer: None,
    };
    let backend = EmbeddedBackend::load(&small_model(), &settings).expect("load the model");
    let asked = GenerateRequest {
        likelihood_of: Some(" x".into()),
        reuse_kv: true,
        ..request("def f():\n    return", 4, &[])
    };
    let answer = runtime()
        .block_on(backend.generate(&asked, &CancellationToken::new()))
        .expect("generate");
    assert_eq!(answer.likelihood, None);
}
