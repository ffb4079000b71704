//! The `crossfile` command line: parses arguments, runs a command, maps errors to exit codes.

mod cli;

fn main() -> std::process::ExitCode {
    cli::run()
}
