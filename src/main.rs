//! The `crossfile` command line.
fn main() {}
