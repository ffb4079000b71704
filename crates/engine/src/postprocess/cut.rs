//! Cutting a suggestion to its first line or to a block.
//!
//! The block rule, for every language: the suggestion's first line is always kept (so a line cut
//! is a prefix of a block cut). The *reference line* is the first line with generated text: the
//! cursor's line (the left context's last line followed by the suggestion's first line) when
//! the suggestion's first line is not blank, else the suggestion's first non-blank line; its
//! indentation is the reference indentation (tabs advance to the next multiple of 8 columns, as
//! Python's tokenizer counts them). Each following line is kept while
//! - it lies inside a bracket, string or comment the suggestion opened on an earlier line
//!   (brackets opened in the suggestion must balance before a line may end the block), or
//! - it is blank, or
//! - it is indented at least as deep as the reference line and does not start by closing a
//!   bracket the suggestion did not open (`}` of the enclosing block, `)` of the enclosing call).
//!
//! The first line that fails ends the block, which is then cut after its last non-blank line.
//! So in Python a block is the rest of the indented block the cursor is in, and in Java,
//! TypeScript and C# the statements up to the `}` that closes the enclosing block, with any
//! construct the suggestion opens (`if (…) {`, a multi-line call) kept whole. Brackets inside
//! strings and comments do not count; strings or comments opened before the cursor are not seen.

use crate::chunk::is_python_whitespace;
use crate::lang::Language;

/// The suggestion up to its first `\n` (a `\r` before it dropped), or all of it.
pub fn first_line(raw: &str) -> &str {
    let line = raw.split('\n').next().unwrap_or(raw);
    if line.len() < raw.len() {
        line.strip_suffix('\r').unwrap_or(line)
    } else {
        line
    }
}

/// The suggestion cut to one block (see the module documentation for the rule). `left` is the
/// text before the cursor; only its last line is read.
pub fn block<'a>(language: Language, left: &str, raw: &'a str) -> &'a str {
    let cursor_line = left.rsplit('\n').next().unwrap_or(left);
    let mut scanner = Scanner::new(language);
    let mut lines = Lines::new(raw);
    let Some(first) = lines.next() else {
        return raw;
    };
    scanner.scan(first.text);
    // The end of the kept text: the end of the last non-blank line kept so far.
    let mut keep = first_line(raw).len();
    let mut reference = (!is_blank(first.text)).then(|| indentation(cursor_line, first.text));
    for line in lines {
        let continued = scanner.depth > 0 || scanner.state != State::Code;
        let starts_with_closer = scanner.state == State::Code
            && line
                .text
                .trim_start_matches(is_python_whitespace)
                .starts_with([')', ']', '}']);
        scanner.scan(line.text);
        if continued {
            if !is_blank(line.text) {
                keep = line.end;
            }
            continue;
        }
        if is_blank(line.text) {
            continue;
        }
        match reference {
            None => reference = Some(indentation("", line.text)),
            Some(indent) if indentation("", line.text) < indent || starts_with_closer => break,
            Some(_) => {}
        }
        keep = line.end;
    }
    &raw[..keep]
}

/// One line of a text: its content without `\r\n`/`\n`, and the byte offset where the content
/// ends.
struct Line<'a> {
    text: &'a str,
    end: usize,
}

struct Lines<'a> {
    raw: &'a str,
    at: usize,
    done: bool,
}

impl<'a> Lines<'a> {
    fn new(raw: &'a str) -> Lines<'a> {
        Lines {
            raw,
            at: 0,
            done: false,
        }
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = Line<'a>;

    fn next(&mut self) -> Option<Line<'a>> {
        if self.done {
            return None;
        }
        let rest = &self.raw[self.at..];
        let (len, next) = match rest.find('\n') {
            Some(nl) => (nl, self.at + nl + 1),
            None => {
                self.done = true;
                (rest.len(), self.raw.len())
            }
        };
        let line = &rest[..len];
        let text = line.strip_suffix('\r').unwrap_or(line);
        let item = Line {
            text,
            end: self.at + text.len(),
        };
        self.at = next;
        Some(item)
    }
}

fn is_blank(line: &str) -> bool {
    line.chars().all(is_python_whitespace)
}

/// The indentation, in columns, of the line `head` followed by `tail`.
fn indentation(head: &str, tail: &str) -> usize {
    let mut columns = 0;
    for c in head.chars().chain(tail.chars()) {
        match c {
            '\t' => columns = (columns / 8 + 1) * 8,
            c if is_python_whitespace(c) => columns += 1,
            _ => break,
        }
    }
    columns
}

/// Where a scan stands between lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Code,
    /// Inside a string literal; `triple` for Python's `'''`/`"""`, `verbatim` for C#'s `@"…"`
    /// (no backslash escapes, `""` is a quote).
    Str {
        quote: char,
        triple: bool,
        verbatim: bool,
    },
    /// Inside a TypeScript template literal.
    Template,
    /// Inside a `/* … */` comment.
    BlockComment,
}

/// A light lexer that counts the brackets the suggestion opened, skipping strings and comments.
struct Scanner {
    language: Language,
    state: State,
    /// Brackets opened in the suggestion and not yet closed (closing an older one counts 0).
    depth: u32,
}

impl Scanner {
    fn new(language: Language) -> Scanner {
        Scanner {
            language,
            state: State::Code,
            depth: 0,
        }
    }

    /// Scans one line (without its line break).
    fn scan(&mut self, line: &str) {
        let python = self.language == Language::Python;
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            let next = chars.get(i + 1).copied();
            match self.state {
                State::Code => match c {
                    '#' if python => break,
                    '/' if !python && next == Some('/') => break,
                    '/' if !python && next == Some('*') => {
                        self.state = State::BlockComment;
                        i += 1;
                    }
                    '"' | '\'' => {
                        let triple = python && next == Some(c) && chars.get(i + 2) == Some(&c);
                        let verbatim = self.language == Language::CSharp
                            && c == '"'
                            && i > 0
                            && chars[i - 1] == '@';
                        self.state = State::Str {
                            quote: c,
                            triple,
                            verbatim,
                        };
                        if triple {
                            i += 2;
                        }
                    }
                    '`' if matches!(self.language, Language::TypeScript | Language::Tsx) => {
                        self.state = State::Template;
                    }
                    '(' | '[' | '{' => self.depth += 1,
                    ')' | ']' | '}' => self.depth = self.depth.saturating_sub(1),
                    _ => {}
                },
                State::Str {
                    quote,
                    triple,
                    verbatim,
                } => {
                    let escaped = if verbatim {
                        c == quote && next == Some(quote)
                    } else {
                        c == '\\'
                    };
                    if escaped {
                        // Skip the escaped character (or the second quote of `""`).
                        i += 1;
                    } else if c == quote && !triple {
                        self.state = State::Code;
                    } else if c == quote && next == Some(quote) && chars.get(i + 2) == Some(&quote)
                    {
                        self.state = State::Code;
                        i += 2;
                    }
                }
                State::Template => {
                    if c == '\\' {
                        i += 1;
                    } else if c == '`' {
                        self.state = State::Code;
                    }
                }
                State::BlockComment => {
                    if c == '*' && next == Some('/') {
                        self.state = State::Code;
                        i += 1;
                    }
                }
            }
            i += 1;
        }
        // Only triple-quoted, verbatim and template strings and block comments span lines.
        if let State::Str {
            triple: false,
            verbatim: false,
            ..
        } = self.state
        {
            self.state = State::Code;
        }
    }
}
