//! Tests of the replay copies: cases placed in a copy and put back, in place and restored byte
//! for byte, and files absent from the repository made and removed with their folders.

use super::*;
use crate::bench::cases::{CaseFormat, Target};
use crossfile_engine::lang::Language;

fn case(path: &str, line: u32, prompt: &str, reference: &str, right: &str) -> Case {
    Case {
        id: format!("{path}:{line}"),
        task_id: "t".into(),
        format: CaseFormat::Cceval,
        target: Target::Line,
        language: Language::Python,
        repository: "repo".into(),
        path: path.into(),
        line,
        reference: reference.into(),
        prompt: prompt.into(),
        right_context: Some(right.into()),
        provided: None,
        category: None,
        identifiers: Vec::new(),
        recent: Vec::new(),
        record_line: 1,
    }
}

#[test]
fn cases_are_placed_in_a_copy_and_the_previous_file_is_put_back() {
    let temp = tempfile::tempdir().expect("temp dir");
    let repos = temp.path().join("repos");
    let repo = repos.join("repo");
    fs::create_dir_all(repo.join("pkg")).expect("mkdir");
    fs::create_dir_all(repo.join(".git")).expect("mkdir");
    fs::write(repo.join(".git/HEAD"), "ref").expect("write");
    let a = "import os\nx = os.getcwd()\n";
    let b = "def f():\n    return 1\n";
    fs::write(repo.join("a.py"), a).expect("write");
    fs::write(repo.join("pkg/b.py"), b).expect("write");
    let copies = ReplayCopies::new(temp.path().join("replay"));

    let first = case("a.py", 1, "import os\nx = ", "os.getcwd()", "\n");
    let view = CaseView::new(&first, &repos, 1 << 20).expect("view");
    let placed = copies.place(&first, &view).expect("placed");
    assert_eq!(
        fs::read_to_string(&placed.file).ok().as_deref(),
        Some("import os\nx = \n")
    );
    assert_eq!(
        fs::read_to_string(placed.root.join("pkg/b.py"))
            .ok()
            .as_deref(),
        Some(b)
    );
    assert!(!placed.root.join(".git").exists());
    // The repository itself is untouched.
    assert_eq!(
        fs::read_to_string(repo.join("a.py")).ok().as_deref(),
        Some(a)
    );

    // The next case, in another file, puts a.py back; new copies (a new session) too.
    let second = case("pkg/b.py", 1, "def f():\n    return ", "1", "\n");
    let view = CaseView::new(&second, &repos, 1 << 20).expect("view");
    let copies = ReplayCopies::new(temp.path().join("replay"));
    let placed = copies.place(&second, &view).expect("placed");
    assert_eq!(
        fs::read_to_string(placed.root.join("a.py")).ok().as_deref(),
        Some(a)
    );
    assert_eq!(
        fs::read_to_string(&placed.file).ok().as_deref(),
        Some("def f():\n    return \n")
    );
    assert_eq!(
        fs::read_to_string(repo.join("pkg/b.py")).ok().as_deref(),
        Some(b)
    );
}

#[test]
fn in_place_cases_are_restored_byte_for_byte() {
    let temp = tempfile::tempdir().expect("temp dir");
    let repos = temp.path().join("repos");
    let repo = repos.join("repo");
    fs::create_dir_all(&repo).expect("mkdir");
    let a = "import os\r\nx = os.getcwd()\r\n";
    fs::write(repo.join("a.py"), a).expect("write");
    fs::write(repo.join("b.py"), "y = 2\nz = y\n").expect("write");
    let copies = ReplayCopies::new(temp.path().join("replay"));
    assert_eq!(copies.restore_abandoned().ok(), Some(None));

    let first = case("a.py", 1, "import os\nx = ", "os.getcwd()", "\n");
    let view = CaseView::new(&first, &repos, 1 << 20).expect("view");
    let lock = copies.lock_in_place(&view.root).expect("in-place lock");
    // Another session on the same copies is refused while this one holds it.
    let other = ReplayCopies::new(temp.path().join("replay"));
    let refused = other.lock_in_place(&view.root).expect_err("held");
    assert!(
        refused.to_string().contains("in use by another crossfile"),
        "{refused}"
    );
    let placed = copies.place_in_place(&first, &view, &lock).expect("placed");
    assert_eq!(placed.file, repo.canonicalize().expect("root").join("a.py"));
    assert_eq!(
        fs::read_to_string(repo.join("a.py")).ok().as_deref(),
        Some("import os\nx = \n")
    );
    // The next case restores the first file before it writes its own.
    let second = case("b.py", 1, "y = 2\nz = ", "y", "\n");
    let view = CaseView::new(&second, &repos, 1 << 20).expect("view");
    copies
        .place_in_place(&second, &view, &lock)
        .expect("placed");
    assert_eq!(
        fs::read(repo.join("a.py")).ok(),
        Some(a.as_bytes().to_vec())
    );
    // A live holder's file is not "abandoned": another session leaves it alone.
    assert_eq!(other.restore_abandoned().ok(), Some(None));
    assert_eq!(
        fs::read_to_string(repo.join("b.py")).ok().as_deref(),
        Some("y = 2\nz = \n")
    );
    // Its holder gone (as after a crash), a new session restores what it left.
    drop(lock);
    let restored = other.restore_abandoned().expect("restored");
    assert_eq!(
        restored,
        Some(repo.canonicalize().expect("root").join("b.py"))
    );
    assert_eq!(
        fs::read_to_string(repo.join("b.py")).ok().as_deref(),
        Some("y = 2\nz = y\n")
    );
    assert_eq!(other.restore_abandoned().ok(), Some(None));
}

#[test]
fn replaying_moves_from_in_place_to_a_copy_restoring_and_releasing() {
    let temp = tempfile::tempdir().expect("temp dir");
    let repos = temp.path().join("repos");
    let repo = repos.join("repo");
    fs::create_dir_all(&repo).expect("mkdir");
    let a = "import os\nx = os.getcwd()\n";
    fs::write(repo.join("a.py"), a).expect("write");
    let copies = ReplayCopies::new(temp.path().join("replay"));
    let first = case("a.py", 1, "import os\nx = ", "os.getcwd()", "\n");
    let view = CaseView::new(&first, &repos, 1 << 20).expect("view");

    let (placed, held) = copies.replay(&first, &view, true, None).expect("in place");
    assert_eq!(placed.root, view.root);
    assert!(held.is_some(), "in place holds the lock");
    // The same repository in place again keeps the one lock.
    let (_, held) = copies.replay(&first, &view, true, held).expect("again");
    assert_eq!(
        fs::read_to_string(repo.join("a.py")).ok().as_deref(),
        Some("import os\nx = \n")
    );

    // A copy next: the repository's file goes back and the lock is released.
    let (placed, held) = copies.replay(&first, &view, false, held).expect("copy");
    assert!(held.is_none());
    assert_ne!(placed.root, view.root);
    assert_eq!(
        fs::read_to_string(repo.join("a.py")).ok().as_deref(),
        Some(a)
    );
    let other = ReplayCopies::new(temp.path().join("replay"));
    assert!(other.lock_in_place(&view.root).is_ok(), "released");
}

/// Every folder and file under `root` (`.git` left out), with each file's bytes.
fn tree(root: &Path) -> Vec<(String, Option<Vec<u8>>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).expect("read dir").flatten() {
            let path = entry.path();
            let rel = path
                .strip_prefix(root)
                .expect("inside")
                .display()
                .to_string();
            if rel == ".git" {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
                out.push((rel, None));
            } else {
                out.push((rel, fs::read(&path).ok()));
            }
        }
    }
    out.sort();
    out
}

/// A history case: its file is the one its commit adds, in folders the repository lacks too.
fn added(path: &str) -> Case {
    Case {
        format: CaseFormat::History,
        ..case(path, 1, "import os\nx = ", "os.sep", "\nprint(x)\n")
    }
}

#[test]
fn a_file_absent_from_the_repository_is_made_and_removed_with_its_folders() {
    let temp = tempfile::tempdir().expect("temp dir");
    let repos = temp.path().join("repos");
    let repo = repos.join("repo");
    fs::create_dir_all(repo.join("pkg")).expect("mkdir");
    fs::write(repo.join("a.py"), "import os\nx = os.getcwd()\n").expect("write");
    fs::write(repo.join("pkg/b.py"), "y = 1\n").expect("write");
    let before = tree(&repo);
    let copies = ReplayCopies::new(temp.path().join("replay"));

    // Into a copy: the file and its folders are made there, and only there.
    let history = added("pkg/new/deeper/c.py");
    let view = CaseView::new(&history, &repos, 1 << 20).expect("an absent file is laid out");
    assert_eq!(view.text(), "import os\nx = \nprint(x)\n");
    let placed = copies.place(&history, &view).expect("placed");
    assert_eq!(
        fs::read_to_string(&placed.file).ok().as_deref(),
        Some("import os\nx = \nprint(x)\n")
    );
    assert_eq!(placed.restored, None);
    assert_eq!(tree(&repo), before, "the repository is untouched");
    // The next case removes it and the folders made for it: the copy is the repository again.
    let next = case("a.py", 1, "import os\nx = ", "os.getcwd()", "\n");
    let view = CaseView::new(&next, &repos, 1 << 20).expect("view");
    let placed = copies.place(&next, &view).expect("placed");
    assert_eq!(placed.restored.as_deref(), Some("pkg/new/deeper/c.py"));
    let again = copies.place(&next, &view).expect("placed");
    assert_eq!(again.restored.as_deref(), Some("a.py"));
    assert_eq!(tree(&placed.root), {
        let mut expected = before.clone();
        for (rel, bytes) in &mut expected {
            if rel == "a.py" {
                *bytes = Some(b"import os\nx = \n".to_vec());
            }
        }
        expected
    });

    // In place: made in the repository, then removed with its folders, also after a crash.
    let view = CaseView::new(&history, &repos, 1 << 20).expect("view");
    let lock = copies.lock_in_place(&view.root).expect("in-place lock");
    let placed = copies
        .place_in_place(&history, &view, &lock)
        .expect("placed in place");
    assert!(placed.file.starts_with(&view.root) && placed.file.is_file());
    assert_ne!(tree(&repo), before);
    assert_eq!(
        copies.restore_in_place(&lock).expect("restored"),
        Some(placed.file.clone())
    );
    assert_eq!(tree(&repo), before, "the file and its folders are gone");
    copies
        .place_in_place(&history, &view, &lock)
        .expect("placed in place");
    drop(lock);
    let other = ReplayCopies::new(temp.path().join("replay"));
    assert_eq!(other.restore_abandoned().ok(), Some(Some(placed.file)));
    assert_eq!(
        tree(&repo),
        before,
        "a killed session's file is removed too"
    );
    // A file that is there is saved and put back as before, whatever an earlier absent one left.
    let lock = other.lock_in_place(&view.root).expect("in-place lock");
    let view = CaseView::new(&next, &repos, 1 << 20).expect("view");
    other.place_in_place(&next, &view, &lock).expect("placed");
    other.restore_in_place(&lock).expect("restored");
    assert_eq!(tree(&repo), before);
}

#[test]
fn a_cceval_case_still_needs_its_file_and_nothing_may_stand_at_an_absent_path() {
    let temp = tempfile::tempdir().expect("temp dir");
    let repos = temp.path().join("repos");
    fs::create_dir_all(repos.join("repo/dir.py")).expect("mkdir");
    let missing = case("gone.py", 1, "import os\nx = ", "os.sep", "\n");
    let error = CaseView::new(&missing, &repos, 1 << 20).expect_err("no file");
    assert!(error.to_string().contains("not in"), "{error}");
    let error = CaseView::new(&added("dir.py"), &repos, 1 << 20).expect_err("a folder");
    assert!(error.to_string().contains("not a regular file"), "{error}");
}
