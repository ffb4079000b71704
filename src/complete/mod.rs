//! The completion pipeline: retrieve, build the prompt, generate, post-process, with a trace.
