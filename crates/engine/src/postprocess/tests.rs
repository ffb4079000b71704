//! Table tests of the line and block cuts, the overlap rule and `apply`.

use super::{Unit, apply, block, drop_right_overlap, first_line};
use crate::lang::Language;

#[test]
fn first_line_stops_at_the_first_newline() {
    let rows = [
        ("", ""),
        ("abc", "abc"),
        ("a\nb", "a"),
        ("a\r\nb", "a"),
        ("a\r", "a\r"),
        ("\nb", ""),
        ("😀x\ny", "😀x"),
        ("   ", "   "),
        ("  \n  ", "  "),
    ];
    for (raw, expected) in rows {
        assert_eq!(first_line(raw), expected, "{raw:?}");
    }
}

#[test]
fn python_block_keeps_the_rest_of_the_indented_block() {
    let rows = [
        // (left, raw, expected)
        ("", "", ""),
        ("x = ", "1", "1"),
        ("x = ", "1\n", "1"),
        ("x = ", "   ", "   "),
        ("x = ", "\n\n", ""),
        // Siblings at the cursor's indentation stay; a dedent ends the block.
        (
            "def f():\n    x = ",
            "1\n    y = 2\n\nz = 3",
            "1\n    y = 2",
        ),
        (
            "def f():\n    x = ",
            "1\r\n    y = 2\r\nz = 3\r\n",
            "1\r\n    y = 2",
        ),
        // The cursor at the end of a header: the first generated line is the body's.
        (
            "def f(x):",
            "\n    return x\n\nprint(f(1))",
            "\n    return x",
        ),
        (
            "def f(x):\n",
            "    if x:\n        return 1\n    return 2\nf(1)",
            "    if x:\n        return 1\n    return 2",
        ),
        // Blank lines inside the block stay; trailing ones go.
        (
            "def f():\n    ",
            "a = 1\n\n    b = 2\n\n\nc",
            "a = 1\n\n    b = 2",
        ),
        // Inside brackets the suggestion opened, indentation does not matter.
        (
            "    x = ",
            "foo(1,\n2)\n    y = 3\nz",
            "foo(1,\n2)\n    y = 3",
        ),
        (
            "    x = ",
            "\"\"\"doc\nmore\n\"\"\"\n    y\nz",
            "\"\"\"doc\nmore\n\"\"\"\n    y",
        ),
        ("    x = ", "'(' + 1\ny", "'(' + 1"),
        ("    x = ", "1  # (\ny", "1  # ("),
        // A line that closes a bracket opened before the cursor ends the block.
        (
            "x = [\n    1,\n    ",
            "2,\n    3,\n    ]\ny = 1",
            "2,\n    3,",
        ),
        ("    x = 😀", "😀\n    é = 2\nfin", "😀\n    é = 2"),
        ("\tif a:\n\t\t", "b()\n\t\tc()\n\td()", "b()\n\t\tc()"),
    ];
    for (left, raw, expected) in rows {
        assert_eq!(
            block(Language::Python, left, raw),
            expected,
            "{left:?} + {raw:?}"
        );
    }
}

#[test]
fn brace_block_keeps_balanced_constructs_until_the_enclosing_block_closes() {
    let rows = [
        // (left, raw, expected)
        ("", "", ""),
        (
            "    int x = ",
            "1;\n    int y = 2;\n}\nvoid g() {}",
            "1;\n    int y = 2;",
        ),
        (
            "    ",
            "if (a) {\n        b();\n    } else {\n        c();\n    }\n    d();\n}",
            "if (a) {\n        b();\n    } else {\n        c();\n    }\n    d();",
        ),
        (
            "    foo(",
            "a,\n      b);\n    bar();\n}",
            "a,\n      b);\n    bar();",
        ),
        // A dedented continuation of a call opened before the cursor ends the block.
        ("    foo(", "a,\n  b);\n    bar();\n}", "a,"),
        ("    x = ", "call(\n1,\n2);\n  y();", "call(\n1,\n2);"),
        (
            "    s = ",
            "\"}\";\n    t = '{';\n}",
            "\"}\";\n    t = '{';",
        ),
        (
            "    s = ",
            "1; // }\n    t = 2; /* {\n} */\n  }",
            "1; // }\n    t = 2; /* {\n} */",
        ),
        ("  x = ", "1;\r\n  y = 2;\r\n}\r\n", "1;\r\n  y = 2;"),
        ("    x = ", "1;\n\n\n", "1;"),
    ];
    for language in [
        Language::Java,
        Language::TypeScript,
        Language::Tsx,
        Language::CSharp,
    ] {
        for (left, raw, expected) in rows {
            assert_eq!(
                block(language, left, raw),
                expected,
                "{language:?} {left:?} + {raw:?}"
            );
        }
    }
    // Template literals (TypeScript) and verbatim strings (C#) span lines.
    let ts = block(Language::TypeScript, "  s = ", "`a\n}\nb`;\n  t();\n}");
    assert_eq!(ts, "`a\n}\nb`;\n  t();");
    let cs = block(Language::CSharp, "  s = ", "@\"a\\\n}\"\" \";\n  t();\n}");
    assert_eq!(cs, "@\"a\\\n}\"\" \";\n  t();");
}

#[test]
fn overlap_with_the_right_context_is_dropped() {
    let rows = [
        // (suggestion, right, expected)
        ("foo(a)", ")", "foo(a"),
        ("print(\"x\"):", "\"):\n    pass", "print(\"x"),
        ("\"):", "\"):", ""),
        ("ab", "abc", ""),
        ("abc", "", "abc"),
        ("", ")", ""),
        ("f()", ")\r\nnext", "f("),
        ("f()\r", ")\r\n", "f()\r"),
        ("😀)", ")", "😀"),
        ("a😀", "😀b", "a"),
        ("a", "b", "a"),
        ("x)\n", ")", "x)\n"),
        ("x", "\nx", "x"),
        ("   ", "   x", ""),
    ];
    for (suggestion, right, expected) in rows {
        assert_eq!(
            drop_right_overlap(suggestion, right),
            expected,
            "{suggestion:?} {right:?}"
        );
    }
}

#[test]
fn apply_cuts_then_drops_the_overlap() {
    let py = Language::Python;
    assert_eq!(apply(Unit::Line, py, "x = f(", ")", "a, b)\ny = 2"), "a, b");
    assert_eq!(
        apply(Unit::Statement, py, "x = f(", ")", "a, b)\ny = 2"),
        "a, b"
    );
    assert_eq!(
        apply(Unit::Block, py, "x = f(", ")\n", "a)\ny = 2\n"),
        "a)\ny = 2"
    );
    assert_eq!(apply(Unit::Raw, py, "x = f(", ")", "a)\n"), "a)\n");
    let java = Language::Java;
    assert_eq!(apply(Unit::Statement, java, "f(", ");", "a);\ng();"), "a");
    assert_eq!(apply(Unit::Line, java, "", "", ""), "");
    for &unit in <Unit as crate::choice::Choice>::all() {
        assert_eq!(unit.to_string().parse::<Unit>(), Ok(unit));
    }
    assert!("lines".parse::<Unit>().is_err());
}
