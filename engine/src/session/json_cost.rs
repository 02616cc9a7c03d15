//! What a JSON message costs in memory once parsed.
//!
//! A line's length says little about what it costs as a `serde_json::Value`: eight
//! megabytes of `{"a":0},` become a million B-tree maps, close to 700 MiB. The harness
//! estimates the cost from the bytes before parsing, and from the value after, and
//! bounds both, so a server cannot grow sealmark by the shape of what it sends.

use serde_json::Value;

/// Every value: the enum itself, in a `Vec` or a map.
const VALUE: usize = 32;
/// A non-empty object: its B-tree leaf node.
const OBJECT: usize = 640;
/// An object member: its key's `String`, beside the value.
const MEMBER: usize = 24;

/// The most one message may cost parsed; a costlier line is treated as too large.
pub const MESSAGE_BUDGET: usize = 16 * 1024 * 1024;

/// The estimated cost of `line` parsed, read from its bytes alone: the structure outside
/// strings, and the text inside them.
pub fn of_line(line: &[u8]) -> usize {
    let (mut cost, mut in_string, mut escaped) = (VALUE, false, false);
    for &b in line {
        if in_string {
            cost += 1;
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        cost += match b {
            b'"' => {
                in_string = true;
                0
            }
            b'{' => OBJECT,
            b'[' | b',' => VALUE,
            b':' => MEMBER,
            _ => 0,
        };
    }
    cost
}

/// The estimated cost of a parsed value, by the same measure as `of_line`.
pub fn of_value(value: &Value) -> usize {
    let mut cost = 0;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        cost += VALUE;
        match v {
            Value::String(s) => cost += s.len(),
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => {
                cost += OBJECT;
                for (k, v) in map {
                    cost += MEMBER + k.len();
                    stack.push(v);
                }
            }
            _ => {}
        }
    }
    cost
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_lines_cost_more_than_their_length() {
        let objects = format!("[{}{{}}]", "{\"a\":0},".repeat(100_000));
        let zeros = format!("[{}0]", "0,".repeat(100_000));
        let text = format!("{{\"t\":\"{}\"}}", "x".repeat(800_000));
        assert!(of_line(objects.as_bytes()) > 60 * objects.len());
        assert!(of_line(zeros.as_bytes()) > 15 * zeros.len());
        assert!(of_line(text.as_bytes()) < 2 * text.len());
    }

    #[test]
    fn the_two_estimates_agree_in_size() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}}"#,
            r#"[0,1,2,[3,4],{"k":"v\"w"}]"#,
            r#""just a string""#,
        ] {
            let parsed: Value = serde_json::from_str(line).expect("valid");
            let (bytes, value) = (of_line(line.as_bytes()), of_value(&parsed));
            assert!(bytes.abs_diff(value) * 4 <= bytes.max(value), "{line}: {bytes} vs {value}");
        }
    }
}
