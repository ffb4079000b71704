//! Tests of the miner's rule: cross-file identifier uses and the trivial-line filters.

use expect_test::{Expect, expect};

use super::{CrossFileNames, Source, is_trivial_line, is_trivial_reference};
use crossfile_engine::lang::{self, Language, Outline};

/// Parses a fixture (`//- path` headers, then each file) and renders every file's cursors as
/// `path:line: <line before the cursor>$0<reference>  [identifier]`.
fn check(fixture: &str, expect: Expect) {
    let files: Vec<(String, String)> = crossfile_engine::fixture::Fixture::parse(fixture)
        .files
        .into_iter()
        .map(|f| (f.path, f.text))
        .collect();
    let parsed: Vec<(Language, tree_sitter::Tree, Outline)> = files
        .iter()
        .map(|(path, text)| {
            let language = Language::from_path(path.as_ref()).expect("a known extension");
            let tree = lang::parse(language, text).expect("parses");
            let outline = lang::outline(language, text, &tree);
            (language, tree, outline)
        })
        .collect();
    let sources: Vec<Source> = files
        .iter()
        .zip(&parsed)
        .map(|((path, text), (language, _, outline))| Source {
            path,
            language: *language,
            text,
            outline,
        })
        .collect();
    let names = CrossFileNames::new(sources.iter().copied());
    let mut out = String::new();
    for (source, (_, tree, _)) in sources.iter().zip(&parsed) {
        for cursor in names.cursors(*source, tree) {
            let start = source.text[..cursor.offset]
                .rfind('\n')
                .map_or(0, |i| i + 1);
            out.push_str(&format!(
                "{}:{}: {}$0{}  [{}]\n",
                source.path,
                cursor.line,
                &source.text[start..cursor.offset],
                &source.text[cursor.offset..cursor.line_end],
                cursor.name
            ));
        }
    }
    expect.assert_eq(&out);
}

#[test]
fn python_definitions_elsewhere_and_workspace_imports() {
    check(
        r#"
//- pkg/core.py
class Command:
    def invoke(self, ctx):
        return ctx

def echo(message):
    print(message)

def go():
    pass
//- pkg/globals.py
_local = None
//- pkg/cli.py
import os
from typing import List
from .core import Command, echo
from .globals import _local
from . import core

# Command in a comment
def main(args: List):
    cmd = Command("x")
    cmd.invoke(args)
    s = "Command"
    echo(os.path.join("a", "b"))
    if _local:
        pass
    core.echo("hi")
    x = cmd.__init__
    local(echo)
    return go
    y = os.path._local

def local(f):
    return f.invoke
"#,
        expect![[r#"
            pkg/cli.py:8:     cmd = $0Command("x")  [Command]
            pkg/cli.py:9:     cmd.$0invoke(args)  [invoke]
            pkg/cli.py:11:     $0echo(os.path.join("a", "b"))  [echo]
            pkg/cli.py:12:     if $0_local:  [_local]
            pkg/cli.py:14:     $0core.echo("hi")  [core]
            pkg/cli.py:16:     local($0echo)  [echo]
            pkg/cli.py:21:     return f.$0invoke  [invoke]
        "#]],
    );
}

#[test]
fn declarations_keyword_arguments_and_locals_are_not_cross_file_uses() {
    check(
        r#"
//- lib.py
def echo(x): pass
def items(): pass
def go(): pass
class Base:
    def open(self): pass
//- app.py
from lib import Base
def run(echo, n=items):
    open("f")
    echo(n)
    items = [1]
    print(items)
    for go in range(3):
        pass
    f(echo=1, items=2)
    x.items()
    class Sub(Base):
        pass
    try:
        pass
    except Base as err:
        pass
//- store.ts
export class Store {}
export function double(x: number) { return 2 * x; }
//- app.ts
import { Store, double } from "./store";
function f(store: Store, n = double(1)) {
  const { double } = helpers;
  return double(n) + { Store: 1 }.Store;
}
"#,
        expect![[r#"
            app.py:9:     x.$0items()  [items]
            app.py:10:     class Sub($0Base):  [Base]
            app.py:14:     except $0Base as err:  [Base]
            app.ts:1: function f(store: $0Store, n = double(1)) {  [Store]
            app.ts:3:   return double(n) + { Store: 1 }.$0Store;  [Store]
        "#]],
    );
}

#[test]
fn typescript_imports_and_exports() {
    check(
        r#"
//- src/store.ts
export class Store {
  get(key: string): number { return 0 }
}
export const double = (x: number) => x * 2;
//- src/index.ts
import { Store } from "./store";
import { double } from "./store.js";
export { Store as S } from "./store";
const s = new Store();
const d = double(2);
const t: Store = s;
// new Store()
const msg = `Store ${s}`;
s.get("k");
"#,
        expect![[r#"
            src/index.ts:3: const s = new $0Store();  [Store]
            src/index.ts:4: const d = $0double(2);  [double]
            src/index.ts:5: const t: $0Store = s;  [Store]
            src/index.ts:8: s.$0get("k");  [get]
        "#]],
    );
}

#[test]
fn java_and_csharp_use_types_and_methods_of_other_files() {
    check(
        r#"
//- src/a/Base.java
package a;
public class Base { public void run() {} }
//- src/a/Main.java
package a;
import a.Base;
public class Main extends Base {
  void go() { run(); new Base().run(); }
}
//- Runtime.cs
namespace P { public static class Runtime { public static int Call() => 0; } }
//- User.cs
using P;
namespace P {
  class User {
    int F() { return Runtime.Call(); }
  }
}
"#,
        expect![[r#"
            src/a/Main.java:2: public class Main extends $0Base {  [Base]
            src/a/Main.java:3:   void go() { $0run(); new Base().run(); }  [run]
            User.cs:3:     int F() { return $0Runtime.Call(); }  [Runtime]
        "#]],
    );
}

#[test]
fn a_single_file_has_no_cursors() {
    check(
        r#"
//- only.py
def f():
    return g()

def g():
    return f()
"#,
        expect![[r#""#]],
    );
}

#[test]
fn long_lines_are_skipped() {
    let long = format!("x = [{}echo(1)]", "1, ".repeat(100));
    check(
        &format!(
            "//- a.py\ndef echo(x):\n    pass\n//- b.py\nfrom a import echo\n{long}\ny = echo(2)\n"
        ),
        expect![[r#"
            b.py:2: y = $0echo(2)  [echo]
        "#]],
    );
}

#[test]
fn trivial_lines() {
    let rows: &[(&str, Language, bool)] = &[
        ("", Language::Python, true),
        ("   \t", Language::Python, true),
        ("# Command()", Language::Python, true),
        ("    // Store.get()", Language::Java, true),
        ("/* Store */", Language::TypeScript, true),
        ("   * @param store", Language::CSharp, true),
        ("}", Language::Java, true),
        ("    });", Language::TypeScript, true),
        ("  ) ;", Language::CSharp, true),
        ("🎉 ✓", Language::Python, true),
        ("x = 1", Language::Python, false),
        ("# not a comment in C#", Language::CSharp, false),
        ("émoji = 🎉", Language::Python, false),
        ("@Override", Language::Java, false),
    ];
    for &(line, language, trivial) in rows {
        assert_eq!(
            is_trivial_line(line, language),
            trivial,
            "{line:?} ({language:?})"
        );
    }
}

#[test]
fn trivial_references() {
    let rows: &[(&str, bool)] = &[
        ("", true),
        ("go", true),
        ("f()", false),
        ("a )", true),
        ("  ab  ", true),
        ("123;", true),
        ("é()", false),
        ("Command(name)", false),
        ("_x)", false),
        ("🎉🎉🎉", true),
    ];
    for &(reference, trivial) in rows {
        assert_eq!(is_trivial_reference(reference), trivial, "{reference:?}");
    }
}
