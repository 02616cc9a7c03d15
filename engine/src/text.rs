//! Text helpers shared by judges and renderers: excerpts that show what is invisible.

/// Characters a person cannot see but a model reads: zero-width, bidi controls,
/// Unicode tag characters and the byte order mark.
pub fn is_invisible(c: char) -> bool {
    matches!(c as u32,
        0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2064 | 0x2066..=0x2069 | 0xFEFF | 0xE0000..=0xE007F)
}

/// A short, single-line excerpt of `text` around byte offset `at`, with control and
/// invisible characters spelled out so a report shows what a model would read.
pub fn excerpt(text: &str, at: usize, radius: usize) -> String {
    let start = floor_char(text, at.saturating_sub(radius));
    let end = floor_char(text, (at + radius).min(text.len()));
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    out.push_str(&visible(&text[start..end]));
    if end < text.len() {
        out.push('…');
    }
    out
}

/// Whether a character must never reach a terminal or a page as it came: controls
/// (ESC, BEL, CR, BS, DEL, the C1 range…) and the invisible ones.
pub fn is_unsafe(c: char) -> bool {
    c.is_control() || is_invisible(c)
}

/// `c` as a `\u{…}` escape.
pub fn push_escaped(out: &mut String, c: char) {
    out.push_str(&format!("\\u{{{:x}}}", c as u32));
}

/// `text` with control and invisible characters written as `\u{…}` escapes.
pub fn visible(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c == '\n' || c == '\t' {
            out.push(' ');
        } else if is_unsafe(c) {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    out
}

/// At most `max` characters of `text`, cut on a character boundary, with `…` when cut.
pub fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

fn floor_char(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// `%xx` sequences decoded; anything else kept as it is.
pub fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned()
}

/// The bytes RFC 3986 does not leave as they are: all but letters, digits and `-._~`.
pub const NOT_UNRESERVED: &percent_encoding::AsciiSet =
    &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// A URL without any `user:password@`.
pub fn without_userinfo(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
            format!("{scheme}://{host}{path}")
        }
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_loses_its_user_and_password() {
        assert_eq!(without_userinfo("http://u:p@127.0.0.1:8080/mcp"), "http://127.0.0.1:8080/mcp");
        assert_eq!(without_userinfo("https://h/a@b"), "https://h/a@b");
    }

    #[test]
    fn invisible_characters_are_spelled_out() {
        assert_eq!(visible("a\u{200b}b\u{1b}[31m"), "a\\u{200b}b\\u{1b}[31m");
        assert_eq!(excerpt("0123456789", 5, 2), "…3456…");
        assert_eq!(clip("héllo", 2), "hé…");
    }
}
