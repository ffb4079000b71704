//! Outputs never overwrite inputs: an output path that is one of the command's inputs (the same
//! file, also through a symbolic or hard link) is refused before anything is written.

use std::path::Path;

use super::BenchError;

/// `Err` when `output` is the same file as one of `inputs`. An output that does not exist yet
/// cannot be an input.
pub fn refuse_overwriting_inputs(output: &Path, inputs: &[&Path]) -> Result<(), BenchError> {
    for input in inputs {
        if same_file::is_same_file(output, input).unwrap_or(false) {
            return Err(BenchError::OutputIsInput {
                output: output.to_path_buf(),
                input: input.to_path_buf(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_file_by_any_name_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let run = dir.path().join("run.jsonl");
        std::fs::write(&run, "{}\n").expect("write");
        let other = dir.path().join("report.html");
        let soft = dir.path().join("soft.jsonl");
        let hard = dir.path().join("hard.jsonl");
        std::os::unix::fs::symlink(&run, &soft).expect("symlink");
        std::fs::hard_link(&run, &hard).expect("hard link");
        let dotted = dir.path().join(".").join("run.jsonl");
        for output in [&run, &soft, &hard, &dotted] {
            let err = refuse_overwriting_inputs(output, &[&other, &run]).expect_err("refused");
            assert!(err.to_string().contains("is also an input"), "{err}");
        }
        assert!(refuse_overwriting_inputs(&other, &[&run]).is_ok());
        std::fs::write(&other, "x").expect("write");
        assert!(refuse_overwriting_inputs(&other, &[&run]).is_ok());
    }
}
