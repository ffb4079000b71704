//! The TypeScript form of the extensions, `editors/vscode/src/protocol.ts`: every command's name,
//! argument and answer, generated from the types of `ext.rs` (ts-rs reads their serde
//! attributes, so a field's name, optionality and type on the wire are the ones written there).
//! The test fails when the committed file differs from what these types give;
//! `scripts/protocol-ts` writes it again.

use std::collections::{BTreeMap, HashSet};

use expect_test::expect_file;
use ts_rs::{Config, TS, TypeVisitor};

use super::*;

/// LSP's own `Position`, which `lsp-types` gives no TypeScript form.
#[derive(TS)]
#[allow(dead_code)]
struct Position {
    line: u32,
    character: u32,
}

/// Declarations of every named type reachable from the commands, each once (by its TypeScript
/// name: `serde_json::Value` and ts-rs's stand-in for it are one `JsonValue`), by name: the order
/// in which ts-rs visits a type's dependencies changes from one build to the next.
struct Declarations {
    config: Config,
    seen: HashSet<String>,
    out: BTreeMap<String, String>,
}

impl TypeVisitor for Declarations {
    fn visit<T: TS + 'static + ?Sized>(&mut self) {
        if T::output_path().is_none() {
            return;
        }
        let name = T::ident(&self.config);
        if !self.seen.insert(name.clone()) {
            return;
        }
        let docs = T::docs().unwrap_or_default();
        let declaration = layout(&T::decl(&self.config));
        self.out
            .insert(name, format!("{docs}export {declaration}\n"));
        T::visit_dependencies(self);
    }
}

/// The commands' names with their argument and answer types, and every type they use.
struct Protocol {
    types: Declarations,
    commands: Vec<String>,
    names: Vec<&'static str>,
}

impl Protocol {
    fn command<C: Command + 'static>(&mut self)
    where
        C::Params: TS + 'static,
        C::Result: TS + 'static,
    {
        for visit in [visit_root::<C::Params>, visit_root::<C::Result>] {
            visit(&mut self.types);
        }
        let config = &self.types.config;
        self.commands.push(format!(
            "  '{}': {{ params: {}; result: {} }};\n",
            C::NAME,
            <C::Params as TS>::name(config),
            <C::Result as TS>::name(config),
        ));
        self.names.push(C::NAME);
    }
}

/// A command's argument or answer: the type itself and what it wraps (`Option<T>`, `Vec<T>`).
fn visit_root<T: TS + 'static>(types: &mut Declarations) {
    types.visit::<T>();
    T::visit_generics(types);
}

fn protocol() -> Protocol {
    let mut protocol = Protocol {
        types: Declarations {
            // u64 and usize travel as JSON numbers.
            config: Config::new().with_large_int("number"),
            seen: HashSet::new(),
            out: BTreeMap::new(),
        },
        commands: Vec::new(),
        names: Vec::new(),
    };
    protocol.command::<ReplayCase>();
    protocol.command::<NextCase>();
    protocol.command::<PreviousCase>();
    protocol.command::<Score>();
    protocol.command::<Compare>();
    protocol.command::<Context>();
    protocol.command::<ListCases>();
    protocol.command::<Retrievers>();
    protocol.command::<Status>();
    protocol.command::<ArenaVote>();
    protocol.command::<ArenaReveal>();
    protocol.types.visit::<Position>();
    protocol
}

/// ts-rs writes a declaration on one line with its fields' docs between the fields (its `format`
/// feature would bring dprint's TypeScript parser); this puts each field of a top-level object
/// type on its own line, its doc above it. Comments are skipped over: their text may hold braces
/// and commas.
fn layout(declaration: &str) -> String {
    let mut out = String::new();
    let mut copied = 0;
    let mut depth = 0usize;
    let mut open = 0;
    let mut i = 0;
    while i < declaration.len() {
        let rest = &declaration[i..];
        if rest.starts_with("/*") {
            i += rest.find("*/").map_or(rest.len(), |end| end + 2);
            continue;
        }
        let c = rest.chars().next().unwrap_or(' ');
        match c {
            '{' | '(' | '[' | '<' => {
                if depth == 0 && c == '{' {
                    open = i;
                }
                depth += 1;
            }
            '}' | ')' | ']' | '>' => {
                depth = depth.saturating_sub(1);
                if depth == 0 && c == '}' {
                    out.push_str(&declaration[copied..open]);
                    out.push_str("{\n");
                    for field in split_fields(&declaration[open + 1..i]) {
                        out.push_str(&indent(field));
                        out.push_str(";\n");
                    }
                    out.push('}');
                    copied = i + 1;
                }
            }
            _ => {}
        }
        i += c.len_utf8();
    }
    out.push_str(&declaration[copied..]);
    out
}

/// The fields of an object type's body: split at its own commas, outside nested types and
/// comments.
fn split_fields(body: &str) -> Vec<&str> {
    let mut fields = Vec::new();
    let (mut depth, mut start, mut i) = (0usize, 0, 0);
    while i < body.len() {
        let rest = &body[i..];
        if rest.starts_with("/*") {
            i += rest.find("*/").map_or(rest.len(), |end| end + 2);
            continue;
        }
        let c = rest.chars().next().unwrap_or(' ');
        match c {
            '{' | '(' | '[' | '<' => depth += 1,
            '}' | ')' | ']' | '>' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                fields.push(body[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
        i += c.len_utf8();
    }
    fields.push(body[start..].trim());
    fields.retain(|f| !f.is_empty());
    fields
}

/// A field (its doc comment's lines, then the field) indented by two spaces.
fn indent(field: &str) -> String {
    field
        .lines()
        .map(|line| match line.trim() {
            doc if doc.starts_with('*') => format!("   {doc}"),
            other => format!("  {other}"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn typescript(protocol: &Protocol) -> String {
    let mut out = String::from(
        "// Generated from crates/server/src/lsp/ext.rs (documented in docs/lsp-extensions.md) by\n\
         // scripts/protocol-ts: do not edit; change the Rust types and run it again.\n\n\
         /** Each `workspace/executeCommand` command of the server: its argument and its answer. */\n\
         export interface Commands {\n",
    );
    out.extend(protocol.commands.iter().cloned());
    out.push_str(
        "}\n\nexport type CommandName = keyof Commands;\n\n\
         /** Sends a command to the server: its argument and its answer typed by its name. */\n\
         export type Execute = <K extends CommandName>(command: K, argument?: Commands[K]['params']) \
         => Promise<Commands[K]['result']>;\n",
    );
    for declaration in protocol.types.out.values() {
        out.push('\n');
        out.push_str(declaration);
    }
    out
}

#[test]
fn protocol_ts_is_generated_from_ext() {
    let protocol = protocol();
    assert_eq!(protocol.names, ALL, "every command announced, in order");
    expect_file!["../../../../../editors/vscode/src/protocol.ts"].assert_eq(&typescript(&protocol));
}
