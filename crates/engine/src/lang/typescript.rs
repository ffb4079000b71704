//! TypeScript and TSX: keywords, and the definitions and imports of a file.

use tree_sitter::Node;

use super::walk::{self, Frame, Visit, Visitor};
use super::{Outline, SymbolKind};

/// CrossCodeEval's TypeScript keywords (`undefined`, `async`, `await` are identifiers there),
/// sorted. TSX uses them too.
pub(super) const KEYWORDS: &[&str] = &[
    "break",
    "case",
    "catch",
    "class",
    "const",
    "continue",
    "debugger",
    "default",
    "delete",
    "do",
    "else",
    "enum",
    "export",
    "extends",
    "finally",
    "for",
    "function",
    "if",
    "implements",
    "import",
    "in",
    "instanceof",
    "interface",
    "let",
    "new",
    "package",
    "private",
    "protected",
    "public",
    "return",
    "static",
    "super",
    "switch",
    "this",
    "throw",
    "try",
    "typeof",
    "var",
    "void",
    "while",
    "with",
    "yield",
];

/// The outline rules for TypeScript and TSX (their grammars share node names).
pub(super) struct TypeScript;

impl<'t> Visitor<'t, TypeScript> {
    /// `import D, {A, B as C} from './x'`, `import * as ns from 'x'`, `import './side'`,
    /// `import x = require('y')`.
    fn import(&mut self, node: Node<'t>, out: &mut Outline) {
        let src = self.src;
        let mut module = None;
        let mut names = Vec::new();
        walk::descendants(&mut self.cursor, node, |child, field| match child.kind() {
            "string" if field == Some("source") => {
                module = Some(unquote(walk::text(child, src)).to_owned());
                false
            }
            "identifier" => {
                names.push(walk::text(child, src).to_owned());
                false
            }
            "import_specifier" => {
                names.extend(bound_name(child, src));
                false
            }
            "import_clause" | "named_imports" | "namespace_import" | "import_require_clause" => {
                true
            }
            _ => false,
        });
        if let Some(module) = module {
            walk::import(out, node, module, names);
        }
    }

    /// `export * from './a'`, `export * as ns from './a'`, `export { A, B as C } from './b'`:
    /// the names exported (`ns`; `A`, `C`; none for `export *`).
    fn reexport(&mut self, node: Node<'t>, source: Node<'t>, out: &mut Outline) {
        let src = self.src;
        let mut names = Vec::new();
        walk::descendants(&mut self.cursor, node, |child, _| match child.kind() {
            "export_specifier" => {
                names.extend(bound_name(child, src));
                false
            }
            "identifier" => {
                names.push(walk::text(child, src).to_owned());
                false
            }
            "export_clause" | "namespace_export" => true,
            _ => false,
        });
        walk::reexport(
            out,
            node,
            unquote(walk::text(source, src)).to_owned(),
            names,
        );
    }

    /// `import x = A.B;` binds `x`.
    fn import_alias(&mut self, node: Node<'t>, out: &mut Outline) {
        let src = self.src;
        let mut parts = Vec::with_capacity(2);
        walk::descendants(&mut self.cursor, node, |child, _| {
            if matches!(child.kind(), "identifier" | "nested_identifier") {
                parts.push(child);
            }
            false
        });
        if let [name, module] = parts[..] {
            walk::import(
                out,
                node,
                walk::compact(module, src),
                vec![walk::text(name, src).to_owned()],
            );
        }
    }
}

impl<'t> Visit<'t> for Visitor<'t, TypeScript> {
    fn visit(&mut self, node: Node<'t>, parent: &mut Frame, out: &mut Outline) -> Option<Frame> {
        let kind = node.kind();
        match kind {
            "comment" | "html_comment" => return None,
            // Decorators in a class body belong to the member after them.
            "decorator" => {
                if parent.class_body {
                    parent.start.get_or_insert(walk::row(node));
                }
                return None;
            }
            _ => {}
        }
        let start = parent.start.take();
        let name = || node.child_by_field_name("name");
        match kind {
            "string" | "template_string" | "regex" | "type_annotation" => None,
            "class_declaration"
            | "abstract_class_declaration"
            | "interface_declaration"
            | "enum_declaration" => {
                walk::define(out, self.src, node, name(), SymbolKind::Class, start);
                Some(Frame::default())
            }
            "class_body" => Some(Frame {
                class_body: true,
                ..Frame::default()
            }),
            "method_definition" if parent.class_body => {
                walk::define(out, self.src, node, name(), SymbolKind::Method, start);
                Some(Frame::default())
            }
            "public_field_definition"
                if parent.class_body && is_function(node.child_by_field_name("value")) =>
            {
                walk::define(out, self.src, node, name(), SymbolKind::Method, start);
                Some(Frame::default())
            }
            "function_declaration" | "generator_function_declaration" => {
                walk::define(out, self.src, node, name(), SymbolKind::Function, start);
                Some(Frame::default())
            }
            // `export … from './a'` re-exports; `export` and `declare` otherwise start the
            // definition they wrap.
            "export_statement" | "ambient_declaration" => {
                if let Some(source) = node.child_by_field_name("source") {
                    self.reexport(node, source, out);
                    return None;
                }
                Some(Frame {
                    start: Some(walk::lines(node, start).start),
                    ..Frame::default()
                })
            }
            "lexical_declaration" => Some(Frame {
                lexical: true,
                start: Some(walk::lines(node, start).start),
                ..Frame::default()
            }),
            "variable_declarator" if parent.lexical => {
                let name = name().filter(|name| name.kind() == "identifier");
                if is_function(node.child_by_field_name("value")) {
                    walk::define(out, self.src, node, name, SymbolKind::Function, start);
                }
                Some(Frame::default())
            }
            "import_statement" => {
                self.import(node, out);
                None
            }
            "import_alias" => {
                self.import_alias(node, out);
                None
            }
            _ => Some(Frame::default()),
        }
    }
}

/// Whether a value is a function: `() => …`, `function () {…}`, `function* () {…}`.
fn is_function(value: Option<Node>) -> bool {
    value.is_some_and(|v| {
        matches!(
            v.kind(),
            "arrow_function" | "function_expression" | "generator_function"
        )
    })
}

/// The name an import or export specifier binds: `C` of `B as C`, else `B`.
fn bound_name(specifier: Node, src: &str) -> Option<String> {
    specifier
        .child_by_field_name("alias")
        .or_else(|| specifier.child_by_field_name("name"))
        .map(|name| unquote(walk::text(name, src)).to_owned())
}

/// A string literal's content: `'./x'` is `./x`.
fn unquote(s: &str) -> &str {
    s.trim_matches(['\'', '"', '`'])
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use crate::lang::Language;
    use crate::lang::walk::outline_text;

    fn check(language: Language, fixture: &str, expect: Expect) {
        expect.assert_eq(&outline_text(language, fixture));
    }

    #[test]
    fn definitions() {
        check(
            Language::TypeScript,
            r#"export interface Item {
    id: number;
    label(): string;
}

export enum Mode { On, Off }

@Injectable()
export class Store<T> extends Base implements Api {
    private items: T[] = [];
    onChange = (x: T) => {
        this.items.push(x);
    };

    constructor(private readonly api: Api) {
        super();
    }

    @Memo
    // Cached.
    get size(): number {
        return this.items.length;
    }

    async *stream() {}
}

export abstract class Shape { abstract area(): number; }

export function helper(a: number): number {
    function local() {}
    return a;
}

export const double = (x: number) => x * 2, other = 1, triple = function (x: number) {
    return x * 3;
};
let handler = async () => {};
var notCounted = () => 1;
const obj = { method() {} };
function* gen() {}
declare function ambient(): void;
namespace Ns { export function inside() {} }
"#,
            expect![[r#"
                class    Item 0..4
                class    Mode 5..6
                class    Store 7..26
                method   onChange 10..13
                method   constructor 14..17
                method   size 18..23
                method   stream 24..25
                class    Shape 27..28
                function helper 29..33
                function local 30..31
                function double 34..35
                function triple 34..37
                function handler 37..38
                function gen 40..41
                function inside 42..43
            "#]],
        );
    }

    #[test]
    fn imports() {
        check(
            Language::TypeScript,
            r#"import { A, B as C } from './x';
import D from "../d";
import D2, { E } from 'e';
import * as ns from 'lib/ns';
import type { T } from './types';
import './side-effect';
import fs = require('fs');
import Alias = Outer.Inner;
export { A } from './x';
export * from "./all";
export * as space from './space';
export { B as Bee, type T2 } from '../b';
"#,
            expect![[r#"
                import   0 ./x [A, C]
                import   1 ../d [D]
                import   2 e [D2, E]
                import   3 lib/ns [ns]
                import   4 ./types [T]
                import   5 ./side-effect []
                import   6 fs [fs]
                import   7 Outer.Inner [Alias]
                reexport 8 ./x [A]
                reexport 9 ./all []
                reexport 10 ./space [space]
                reexport 11 ../b [Bee, T2]
            "#]],
        );
    }

    #[test]
    fn tsx() {
        check(
            Language::Tsx,
            r#"import React from 'react';

export const Button = ({ label }: Props) => {
    return <button onClick={() => go()}>{label} 🦀</button>;
};

export default function App() {
    return <Button label="x" />;
}
"#,
            expect![[r#"
                function Button 2..5
                function App 6..9
                import   0 react [React]
            "#]],
        );
    }

    #[test]
    fn broken_code() {
        check(
            Language::TypeScript,
            "class A { f( { }\nconst g = () =>\nfunction 🦀() {}\n",
            expect![[r#""#]],
        );
        check(Language::Tsx, "", expect![[r#""#]]);
    }
}
