//! C#: keywords, and the definitions and `using` directives of a file.

use tree_sitter::Node;

use super::walk::{self, Frame, Visit, Visitor};
use super::{Outline, SymbolKind};

/// CrossCodeEval's C# keywords (`var`, `true` and `false` are identifiers there), sorted.
pub(super) const KEYWORDS: &[&str] = &[
    "abstract",
    "as",
    "base",
    "bool",
    "break",
    "byte",
    "case",
    "catch",
    "char",
    "checked",
    "class",
    "const",
    "continue",
    "decimal",
    "default",
    "delegate",
    "do",
    "double",
    "else",
    "enum",
    "event",
    "explicit",
    "extern",
    "finally",
    "fixed",
    "float",
    "for",
    "foreach",
    "goto",
    "if",
    "implicit",
    "in",
    "int",
    "interface",
    "internal",
    "is",
    "lock",
    "long",
    "namespace",
    "new",
    "null",
    "object",
    "operator",
    "out",
    "override",
    "params",
    "private",
    "protected",
    "public",
    "readonly",
    "ref",
    "return",
    "sbyte",
    "sealed",
    "short",
    "sizeof",
    "stackalloc",
    "static",
    "string",
    "struct",
    "switch",
    "this",
    "throw",
    "try",
    "typeof",
    "uint",
    "ulong",
    "unchecked",
    "unsafe",
    "ushort",
    "using",
    "virtual",
    "void",
    "volatile",
    "while",
];

/// The outline rules for C#: types, methods, constructors, local functions, `using` directives.
pub(super) struct CSharp;

impl<'t> Visitor<'t, CSharp> {
    /// `using A.B;` and `using static A.B;` bind no name of their own; `using X = A.B;` binds `X`.
    fn using(&mut self, node: Node<'t>, out: &mut Outline) {
        let src = self.src;
        let mut alias = None;
        let mut module = None;
        walk::descendants(&mut self.cursor, node, |child, field| {
            if field == Some("name") {
                alias = Some(walk::text(child, src).to_owned());
            } else if child.is_named() && child.kind() != "comment" {
                module = Some(walk::compact(child, src));
            }
            false
        });
        if let Some(module) = module {
            walk::import(out, node, module, alias.into_iter().collect());
        }
    }
}

impl<'t> Visit<'t> for Visitor<'t, CSharp> {
    fn visit(&mut self, node: Node<'t>, parent: &mut Frame, out: &mut Outline) -> Option<Frame> {
        let name = || node.child_by_field_name("name");
        match node.kind() {
            "comment" | "string_literal" | "attribute_list" => None,
            "class_declaration"
            | "struct_declaration"
            | "interface_declaration"
            | "enum_declaration"
            | "record_declaration" => {
                walk::define(out, self.src, node, name(), SymbolKind::Class, None);
                Some(Frame {
                    class_decl: true,
                    ..Frame::default()
                })
            }
            // Namespaces have declaration lists too: only a type's is a class body.
            "declaration_list" => Some(Frame {
                class_body: parent.class_decl,
                ..Frame::default()
            }),
            // `#if` around members keeps them members.
            "preproc_if" | "preproc_elif" | "preproc_else" => Some(Frame {
                class_body: parent.class_body,
                ..Frame::default()
            }),
            "method_declaration" | "constructor_declaration" | "destructor_declaration" => {
                let kind = if parent.class_body {
                    SymbolKind::Method
                } else {
                    SymbolKind::Function
                };
                walk::define(out, self.src, node, name(), kind, None);
                Some(Frame::default())
            }
            "local_function_statement" => {
                walk::define(out, self.src, node, name(), SymbolKind::Function, None);
                Some(Frame::default())
            }
            "using_directive" => {
                self.using(node, out);
                None
            }
            _ => Some(Frame::default()),
        }
    }
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use crate::lang::Language;
    use crate::lang::walk::outline_text;

    fn check(fixture: &str, expect: Expect) {
        expect.assert_eq(&outline_text(Language::CSharp, fixture));
    }

    #[test]
    fn definitions_and_usings() {
        check(
            r#"using System;
using System.Collections.Generic;
using static System.Math;
using Dict = System.Collections.Generic.Dictionary<string, int>;
global using Json = System.Text.Json;

namespace Shop.Store
{
    [Serializable]
    public class Store : IStore
    {
        public Store() { }

        ~Store() { }

        public int Count(int x)
        {
            int Twice(int y) => y * 2;
            return Twice(x);
        }

#if DEBUG
        public void Dump() { }
#endif

        public int Size { get; set; }

        private struct Slot { public void Clear() { } }
    }

    public interface IStore { int Count(int x); }

    public enum Mode { On, Off }

    public record Point(int X, int Y);
}
"#,
            expect![[r#"
                class    Store 8..29
                method   Store 11..12
                method   Store 13..14
                method   Count 15..20
                function Twice 17..18
                method   Dump 22..23
                class    Slot 27..28
                method   Clear 27..28
                class    IStore 30..31
                method   Count 30..31
                class    Mode 32..33
                class    Point 34..35
                import   0 System []
                import   1 System.Collections.Generic []
                import   2 System.Math []
                import   3 System.Collections.Generic.Dictionary<string,int> [Dict]
                import   4 System.Text.Json [Json]
            "#]],
        );
    }

    #[test]
    fn file_scoped_namespace_and_top_level_statements() {
        check(
            "namespace App;\n\nusing X;\n\nclass A\n{\n    void F() { }\n}\n",
            expect![[r#"
                class    A 4..8
                method   F 6..7
                import   2 X []
            "#]],
        );
        check(
            "Console.WriteLine(1);\nstatic int Add(int a, int b) => a + b;\n",
            expect![[r#"
            function Add 1..2
        "#]],
        );
        check("class { void 🦀( }", expect![[r#""#]]);
    }
}
