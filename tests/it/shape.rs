//! A JSON document's shape: its keys and the kinds of their values, without the values, one key
//! per line. Where a shape is the contract (a command's `--json`, a published file format), a test
//! snapshots it with `expect!`, so a field added, removed, renamed or retyped shows as a diff to
//! review (`UPDATE_EXPECT=1` writes the new shape), while values that vary from run to run (times,
//! scores, paths) do not.

use serde_json::Value;

/// `value`'s shape: objects with their keys in order, an array by its first element's shape (`[]`
/// when empty), and `string`, `number`, `bool` or `null` for the rest.
pub fn shape(value: &Value) -> String {
    let mut out = String::new();
    write_shape(value, 0, &mut out);
    out.push('\n');
    out
}

fn write_shape(value: &Value, depth: usize, out: &mut String) {
    match value {
        Value::Object(map) if map.is_empty() => out.push_str("{}"),
        Value::Object(map) => {
            out.push_str("{\n");
            for (key, v) in map {
                out.push_str(&"  ".repeat(depth + 1));
                out.push_str(key);
                out.push_str(": ");
                write_shape(v, depth + 1, out);
                out.push('\n');
            }
            out.push_str(&"  ".repeat(depth));
            out.push('}');
        }
        Value::Array(items) => match items.first() {
            None => out.push_str("[]"),
            Some(first) => {
                out.push('[');
                write_shape(first, depth, out);
                out.push(']');
            }
        },
        Value::String(_) => out.push_str("string"),
        Value::Number(_) => out.push_str("number"),
        Value::Bool(_) => out.push_str("bool"),
        Value::Null => out.push_str("null"),
    }
}

#[test]
fn a_shape_keeps_keys_and_kinds_and_drops_values() {
    let doc = serde_json::json!({
        "b": [{"x": 1, "y": "two"}, {"x": 3}], "a": null, "c": [], "d": {"e": true}, "f": {}
    });
    expect_test::expect![[r#"
        {
          a: null
          b: [{
            x: number
            y: string
          }]
          c: []
          d: {
            e: bool
          }
          f: {}
        }
    "#]]
    .assert_eq(&shape(&doc));
}
