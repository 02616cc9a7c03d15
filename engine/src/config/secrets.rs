//! Credentials a config holds as literal text. Found by one rule, so the record, every
//! report, error and log line hide the same values, and `init --from` moves the same
//! values into the environment.

use super::ServerConfig;
use std::ops::Range;

/// What is shown in place of a credential.
pub const HIDDEN: &str = "<redacted>";

/// A key (a flag, a variable, a header, a query parameter) whose value is a secret by
/// its name: one of its words (split at `_`, `-`, `.` and lower-to-upper case) is a secret
/// word, or ends in one long enough not to end ordinary words (`PGPASSWORD`,
/// `accessToken`), so `AUTHOR`, `MONKEY` and `TOKENIZERS_PARALLELISM` are not secrets.
pub fn secret_name(key: &str) -> bool {
    const WORDS: [&str; 12] = [
        "key",
        "apikey",
        "token",
        "secret",
        "password",
        "passwd",
        "credential",
        "auth",
        "authorization",
        "cookie",
        "session",
        "sessionid",
    ];
    const ENDINGS: [&str; 4] = ["token", "secret", "password", "passwd"];
    words(key).iter().any(|w| {
        let w = w.strip_suffix('s').filter(|s| WORDS.contains(s)).unwrap_or(w);
        WORDS.contains(&w) || ENDINGS.iter().any(|e| w.ends_with(e))
    })
}

/// The words of a key, lower case: `X-Api-Key` and `apiKey` are both `api`, `key`.
fn words(key: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut lower_before = false;
    for c in key.chars() {
        if !c.is_ascii_alphanumeric() {
            out.push(String::new());
            lower_before = false;
            continue;
        }
        if c.is_ascii_uppercase() && lower_before {
            out.push(String::new());
        }
        lower_before = c.is_ascii_lowercase() || c.is_ascii_digit();
        out.last_mut().expect("never empty").push(c.to_ascii_lowercase());
    }
    out.retain(|w| !w.is_empty());
    out
}

/// One credential inside a value: where it is, and a variable name it could be read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub at: Range<usize>,
    pub name: String,
}

/// Text that is not a literal value: `${VARIABLE}` references, `{placeholder}`s and an
/// auth scheme word between them.
fn not_literal(value: &str) -> bool {
    if value.contains("${") {
        return true;
    }
    let mut literal = String::new();
    let mut depth = 0;
    for c in value.chars() {
        match c {
            '{' => depth += 1,
            '}' if depth > 0 => depth -= 1,
            _ if depth == 0 => literal.push(c),
            _ => {}
        }
    }
    value.contains('{')
        && literal.split_whitespace().all(|w| ["bearer", "basic", "token"].contains(&w.to_ascii_lowercase().as_str()))
}

/// The credentials in the URLs of a value: a password (`scheme://user:PASSWORD@host`) and
/// secret-named query values (`?api_key=…`).
pub fn in_urls(value: &str) -> Vec<Found> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(i) = value[from..].find("://") {
        let scheme_start = value[..from + i]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
            .map_or(0, |j| j + 1);
        let scheme = &value[scheme_start..from + i];
        let start = from + i + 3;
        let end = value[start..]
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\''))
            .map_or(value.len(), |j| start + j);
        let url = &value[start..end];
        let authority_end = url.find(['/', '?', '#']).unwrap_or(url.len());
        if let Some(at) = url[..authority_end].rfind('@')
            && let Some(colon) = url[..at].find(':')
            && colon + 1 < at
            && !not_literal(&url[colon + 1..at])
        {
            let name = format!("{}_PASSWORD", env_name(scheme));
            found.push(Found { at: start + colon + 1..start + at, name });
        }
        if let Some(q) = url.find('?') {
            let mut pos = start + q + 1;
            let query_end = url.find('#').map_or(end, |h| start + h);
            for pair in value[pos..query_end.max(pos)].split('&') {
                if let Some((n, v)) = pair.split_once('=')
                    && secret_name(n)
                    && !v.is_empty()
                    && !not_literal(v)
                {
                    let begin = pos + n.len() + 1;
                    found.push(Found { at: begin..begin + v.len(), name: env_name(n) });
                }
                pos += pair.len() + 1;
            }
        }
        from = end.max(start);
    }
    found
}

/// The credentials in the value of an env variable or header `key`: the whole value (less
/// an auth scheme word) when the key names a secret, else those in its URLs.
pub fn in_value(key: &str, value: &str) -> Vec<Found> {
    if !secret_name(key) {
        return in_urls(value);
    }
    if value.is_empty() || not_literal(value) {
        return Vec::new();
    }
    let start = match value.split_once(' ') {
        Some((scheme, _)) if ["bearer", "basic", "token"].contains(&scheme.to_ascii_lowercase().as_str()) => {
            scheme.len() + 1
        }
        _ => 0,
    };
    vec![Found { at: start..value.len(), name: env_name(key) }]
}

/// The credentials in argument `i`: the value of a secret-named flag (`--token=X`, or
/// `--token X`), else those in its URLs.
pub fn in_arg(args: &[String], i: usize) -> Vec<Found> {
    let arg = &args[i];
    if let Some((flag, value)) = arg.split_once('=')
        && flag.starts_with('-')
        && secret_name(flag)
    {
        if value.is_empty() || not_literal(value) {
            return Vec::new();
        }
        return vec![Found { at: flag.len() + 1..arg.len(), name: env_name(flag) }];
    }
    if i > 0 {
        let flag = &args[i - 1];
        if flag.starts_with('-') && !flag.contains('=') && secret_name(flag) && !arg.starts_with('-') {
            return if arg.is_empty() || not_literal(arg) {
                Vec::new()
            } else {
                vec![Found { at: 0..arg.len(), name: env_name(flag) }]
            };
        }
    }
    in_urls(arg)
}

/// `value` with each credential found in it replaced by `with(found)`.
pub fn replaced(value: &str, found: &[Found], mut with: impl FnMut(&Found) -> String) -> String {
    let mut out = String::new();
    let mut last = 0;
    for f in found {
        out.push_str(&value[last..f.at.start]);
        out.push_str(&with(f));
        last = f.at.end;
    }
    out.push_str(&value[last..]);
    out
}

/// `value` with its credentials shown as [`HIDDEN`].
pub fn hidden(value: &str, found: &[Found]) -> String {
    replaced(value, found, |_| HIDDEN.to_string())
}

/// Every literal credential of a server's config, in its url, args, env and headers.
pub fn of_server(s: &ServerConfig) -> Vec<String> {
    let mut out = Vec::new();
    let mut take = |value: &str, found: Vec<Found>| out.extend(found.into_iter().map(|f| value[f.at].to_string()));
    if let Some(url) = &s.url {
        take(url, in_urls(url));
    }
    for i in 0..s.args.len() {
        take(&s.args[i], in_arg(&s.args, i));
    }
    for (k, v) in s.env.iter().chain(&s.headers) {
        take(v, in_value(k, v));
    }
    out
}

/// The shortest secret replaced wherever its text appears (in the record and in what is
/// printed); a shorter one would mangle unrelated words, so it is hidden only where it
/// stands (in a URL, after a secret-named key).
pub const HIDDEN_EVERYWHERE_FROM: usize = 4;

/// Whether a secret's text is replaced wherever it appears: one of
/// [`HIDDEN_EVERYWHERE_FROM`] characters or more that is not a plain number or a yes/no
/// word, which a tool's answer (that the judges read) holds for reasons of its own. The
/// others are hidden only where they stand.
pub fn hidden_everywhere(secret: &str) -> bool {
    const PLAIN: [&str; 6] = ["true", "false", "null", "none", "enabled", "disabled"];
    secret.len() >= HIDDEN_EVERYWHERE_FROM
        && !secret.chars().all(|c| c.is_ascii_digit())
        && !PLAIN.contains(&secret.to_ascii_lowercase().as_str())
}

/// Hides credentials in text meant for people (errors, log lines): each literal secret
/// known that is [`hidden_everywhere`], and any URL's password whatever it is.
pub fn hide(text: &str, secrets: &[String]) -> String {
    let mut out = hidden(text, &in_urls(text));
    let mut long: Vec<&String> = secrets.iter().filter(|s| hidden_everywhere(s)).collect();
    long.sort_by_key(|s| std::cmp::Reverse(s.len()));
    for s in long {
        out = out.replace(s.as_str(), HIDDEN);
    }
    out
}

/// A variable name for a secret: upper case, `-` and `.` as `_`, no leading dashes.
pub fn env_name(s: &str) -> String {
    s.trim_start_matches('-').to_ascii_uppercase().replace(['-', '.', ' '], "_")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(found: Vec<Found>, v: &str) -> String {
        hidden(v, &found)
    }

    #[test]
    fn a_url_s_password_and_secret_query_values_are_credentials() {
        let v = "see http://user:s3cret@127.0.0.1:9/mcp?api_key=k1&page=2 and postgres://a:b@h/db";
        assert_eq!(
            shown(in_urls(v), v),
            "see http://user:<redacted>@127.0.0.1:9/mcp?api_key=<redacted>&page=2 and postgres://a:<redacted>@h/db"
        );
        assert_eq!(in_urls("http://user:s3cret@h/")[0].name, "HTTP_PASSWORD");
        for plain in ["https://h/a@b", "http://user@h/", "http://u:${PW}@h/", "http://h/?page=1", "no url"] {
            assert!(in_urls(plain).is_empty(), "{plain}");
        }
    }

    #[test]
    fn secret_named_keys_and_flags_hold_credentials_but_references_do_not() {
        assert_eq!(shown(in_value("Authorization", "Bearer abc"), "Bearer abc"), "Bearer <redacted>");
        assert_eq!(shown(in_value("API_TOKEN", "abc"), "abc"), "<redacted>");
        assert!(in_value("Authorization", "Bearer {bearer}").is_empty());
        assert!(in_value("API_TOKEN", "${TOKEN}").is_empty());
        let db = "postgres://app:hunter22@db/app";
        assert_eq!(shown(in_value("DATABASE_URL", db), db), "postgres://app:<redacted>@db/app");
        let args: Vec<String> = ["--api-key", "k9", "--token=t9", "--root", "/srv"].map(String::from).into();
        let each: Vec<String> = (0..args.len()).map(|i| shown(in_arg(&args, i), &args[i])).collect();
        assert_eq!(each, ["--api-key", "<redacted>", "--token=<redacted>", "--root", "/srv"]);
    }

    #[test]
    fn a_secret_name_is_a_secret_word_not_a_word_that_contains_one() {
        for secret in [
            "API_KEY",
            "x-api-key",
            "apiKey",
            "APIKEY",
            "GITHUB_TOKEN",
            "accessToken",
            "PGPASSWORD",
            "--password",
            "Authorization",
            "client_secret",
            "SESSION_ID",
            "Cookie",
            "credentials",
            "tokens",
        ] {
            assert!(secret_name(secret), "{secret}");
        }
        for plain in ["AUTHOR", "MONKEY", "TOKENIZERS_PARALLELISM", "KEYBOARD", "--root", "PATH", "turkey"] {
            assert!(!secret_name(plain), "{plain}");
        }
    }

    #[test]
    fn plain_values_are_hidden_only_where_they_stand() {
        for plain in ["false", "TRUE", "3600", "none", "pw"] {
            assert!(!hidden_everywhere(plain), "{plain}");
        }
        assert!(hidden_everywhere("hunter22"));
        let args: Vec<String> = ["--session-timeout", "3600"].map(String::from).into();
        assert_eq!(shown(in_arg(&args, 1), &args[1]), "<redacted>", "still hidden where it stands");
        assert_eq!(hide("took 3600 ms: false", &["3600".into(), "false".into()]), "took 3600 ms: false");
    }

    #[test]
    fn text_for_people_loses_every_known_secret_and_every_url_password() {
        let secrets = vec!["hunter22".to_string(), "pw".to_string()];
        assert_eq!(
            hide("cannot start http://u:pw@h/: hunter22 refused (pwd)", &secrets),
            "cannot start http://u:<redacted>@h/: <redacted> refused (pwd)"
        );
    }
}
