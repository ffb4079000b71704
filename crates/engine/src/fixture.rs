//! Workspaces written as one string, for tests: files separated by `//- path` lines, the cursor
//! as `$0` (rust-analyzer's fixture form). Text before the first `//- ` line is ignored; each
//! file's text is kept byte for byte (`\r` included) up to the next `//- ` line.
//!
//! ```
//! let fixture = crossfile_engine::fixture::Fixture::parse(
//!     "//- shapes.py\nclass Box: ...\n//- app.py\nfrom shapes import Box\nbox = Box$0()\n",
//! );
//! assert_eq!(fixture.files.len(), 2);
//! let cursor = fixture.cursor.as_ref().expect("a cursor");
//! assert_eq!((cursor.path.as_str(), cursor.position.line, cursor.position.col), ("app.py", 1, 9));
//! assert_eq!(fixture.text("app.py"), Some("from shapes import Box\nbox = Box()\n"));
//! ```

use std::path::Path;

use crate::Position;

/// The cursor marker.
pub const CURSOR: &str = "$0";

/// The files of a fixture, in order, and where its `$0` was.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fixture {
    pub files: Vec<FixtureFile>,
    pub cursor: Option<FixtureCursor>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FixtureFile {
    /// Relative to the workspace root, `/`-separated.
    pub path: String,
    pub text: String,
}

/// Where `$0` was, in the file's text without it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FixtureCursor {
    pub path: String,
    /// Byte offset in the file's text.
    pub offset: usize,
    /// The engine's position: 0-based line, byte column.
    pub position: Position,
    /// UTF-16 code units before the cursor in its line (an LSP position's `character`).
    pub utf16_col: u32,
}

impl Fixture {
    /// Parses `text`. Panics on a second `$0`: a fixture has one cursor (this is test input).
    pub fn parse(text: &str) -> Fixture {
        let mut fixture = Fixture::default();
        for line in text.split_inclusive('\n') {
            if let Some(path) = line.strip_prefix("//- ") {
                fixture.files.push(FixtureFile {
                    path: path.trim().to_string(),
                    text: String::new(),
                });
            } else if let Some(file) = fixture.files.last_mut() {
                file.text.push_str(line);
            }
        }
        for file in &mut fixture.files {
            let Some(offset) = file.text.find(CURSOR) else {
                continue;
            };
            assert!(
                fixture.cursor.is_none(),
                "a fixture has one {CURSOR}; another is in {}",
                file.path
            );
            file.text.replace_range(offset..offset + CURSOR.len(), "");
            let before = &file.text[..offset];
            let line_start = before.rfind('\n').map_or(0, |i| i + 1);
            let in_line = &before[line_start..];
            fixture.cursor = Some(FixtureCursor {
                path: file.path.clone(),
                offset,
                position: Position {
                    line: u32::try_from(before.matches('\n').count()).unwrap_or(u32::MAX),
                    col: u32::try_from(in_line.len()).unwrap_or(u32::MAX),
                },
                utf16_col: u32::try_from(in_line.encode_utf16().count()).unwrap_or(u32::MAX),
            });
        }
        fixture
    }

    /// The text of the file at `path`.
    pub fn text(&self, path: &str) -> Option<&str> {
        self.files
            .iter()
            .find(|f| f.path == path)
            .map(|f| f.text.as_str())
    }

    /// Writes every file under `root`, making folders as needed.
    pub fn write(&self, root: &Path) -> std::io::Result<()> {
        for file in &self.files {
            let path = root.join(&file.path);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(path, &file.text)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_keep_their_bytes_and_the_cursor_its_place() {
        let fixture = Fixture::parse(
            "\nignored\n//- a/b.py\nx = 1\r\n//-  c.ts \nconst s = \"é🎉\"; s.$0len\n//- empty.py\n",
        );
        let paths: Vec<&str> = fixture.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["a/b.py", "c.ts", "empty.py"]);
        assert_eq!(fixture.text("a/b.py"), Some("x = 1\r\n"));
        assert_eq!(fixture.text("c.ts"), Some("const s = \"é🎉\"; s.len\n"));
        assert_eq!(fixture.text("empty.py"), Some(""));
        let cursor = fixture.cursor.expect("a cursor");
        assert_eq!(cursor.path, "c.ts");
        assert_eq!((cursor.position.line, cursor.offset), (0, 22));
        assert_eq!((cursor.position.col, cursor.utf16_col), (22, 19));
        assert_eq!(Fixture::parse("//- a.py\nx\n").cursor, None);
    }

    #[test]
    fn a_fixture_is_written_under_its_root() {
        let dir = tempfile::tempdir().expect("dir");
        let fixture = Fixture::parse("//- pkg/m.py\ndef f():\n    pass\n//- top.py\n");
        fixture.write(dir.path()).expect("written");
        let read = |p: &str| std::fs::read_to_string(dir.path().join(p)).ok();
        assert_eq!(read("pkg/m.py").as_deref(), Some("def f():\n    pass\n"));
        assert_eq!(read("top.py").as_deref(), Some(""));
    }

    #[test]
    #[should_panic(expected = "a fixture has one $0")]
    fn two_cursors_are_refused() {
        Fixture::parse("//- a.py\n$0\n//- b.py\n$0\n");
    }
}
