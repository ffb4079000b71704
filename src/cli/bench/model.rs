//! `crossfile bench model ROOT`: prints what [`crossfile_bench::perf::measure_generation`] measured.

use std::io::Write;

use crossfile_bench::perf::{GenerationParams, measure_generation};
use crossfile_engine::config::{ModelOptions, Options, Settings};

use super::super::args::BenchModelArgs;

pub fn run(args: &BenchModelArgs) -> anyhow::Result<()> {
    let flags = Options {
        model: Some(ModelOptions {
            path: args.model.clone(),
            name: args.model_name.clone(),
            ..ModelOptions::default()
        }),
        ..Options::default()
    };
    let report = measure_generation(&GenerationParams {
        root: args.root.clone(),
        settings: Settings::load_with(&args.root, flags)?,
        llama_server: args.llama_server.clone(),
        prompts: args.prompts,
        prompt_tokens: args.prompt_tokens,
        new_tokens: args.new_tokens,
        cursors: args.cursors,
        draft: args.draft.clone(),
        draft_max: args.draft_max,
    })?;
    if args.json {
        return super::super::print_json(&serde_json::to_value(&report)?);
    }
    let mut out = format!("model {}\n", report.model.display());
    out.push_str(&format!(
        "embedded     prompt {:.1} tok/s, generation {:.1} tok/s ({} prompts of {} tokens, {} new tokens, {} threads)\n",
        report.embedded.prompt_tps,
        report.embedded.generate_tps,
        report.prompts,
        report.prompt_tokens,
        report.new_tokens,
        report.threads
    ));
    if let Some(server) = &report.llama_server {
        out.push_str(&format!(
            "llama-server prompt {:.1} tok/s, generation {:.1} tok/s; embedded/server {:.2}x prompt, {:.2}x generation; greedy outputs agree {}\n",
            server.prompt_tps,
            server.generate_tps,
            report.ratio_prompt,
            report.ratio_generate,
            server.greedy_agreement
        ));
    }
    if let Some(spec) = &report.speculative {
        out.push_str(&format!(
            "llama-server with --model-draft {} (at most {} a step): generation {:.1} tok/s, {:.2}x llama-server alone; {:.0} of {:.0} drafted tokens accepted ({:.0}%); greedy outputs equal to llama-server alone's {}\n",
            spec.draft.display(),
            spec.draft_max,
            spec.generate_tps,
            spec.speedup,
            spec.accepted,
            spec.drafted,
            100.0 * spec.accepted / spec.drafted,
            spec.equal_to_alone
        ));
    }
    let complete = &report.complete;
    let p50 = &complete.p50_ms;
    out.push_str(&format!(
        "complete (p50 of {}, prompts of {:.0} tokens): total {:.0} ms = retrieve {:.1} + prompt {:.1} + generate {:.0} + postprocess {:.2}; first token {:.0} ms\n",
        complete.cursors,
        complete.p50_prompt_tokens,
        p50.total,
        p50.retrieve,
        p50.prompt,
        p50.generate,
        p50.postprocess,
        p50.first_token
    ));
    std::io::stdout().lock().write_all(out.as_bytes())?;
    Ok(())
}
