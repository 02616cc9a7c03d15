//! `--format html`: a folder that shows the record in the viewer. It opens from any
//! static host and from `file://`, and asks for nothing but its own files: the record is
//! embedded in the page, the viewer's WebAssembly travels inside a script, and a content
//! security policy forbids inline script and every other origin.

use sealmark_engine::combined::Combined;
use sealmark_engine::record::Record;
use sealmark_engine::render;
use sealmark_engine::text::visible;

/// The viewer's files, compiled in by build.rs from `cli/viewer-bundle/`.
pub struct Viewer {
    pub js: &'static str,
    pub wasm: &'static [u8],
    /// The same module inside a script that starts it, for pages opened from file://.
    pub wasm_js: &'static str,
    pub css: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/viewer_bundle.rs"));

/// The folder's files: name and content.
pub fn files(record: &Record) -> Vec<(&'static str, Vec<u8>)> {
    folder(format!("{} {}", record.server.name, record.server.version), render::json(record))
}

/// The same for a run of several: the viewer opens the combined record as a table of
/// servers, each server's report one click away.
pub fn combined_files(c: &Combined) -> Vec<(&'static str, Vec<u8>)> {
    folder(format!("{} servers", c.servers.len()), render::combined::json(c))
}

fn folder(title: String, json: String) -> Vec<(&'static str, Vec<u8>)> {
    let viewer = &VIEWER;
    vec![
        ("index.html", page(&title, &json).into_bytes()),
        ("viewer.js", viewer.js.as_bytes().to_vec()),
        ("viewer-start.js", START.as_bytes().to_vec()),
        ("viewer.wasm", viewer.wasm.to_vec()),
        ("viewer-wasm.js", viewer.wasm_js.as_bytes().to_vec()),
        ("viewer.css", viewer.css.as_bytes().to_vec()),
        ("favicon.svg", FAVICON.as_bytes().to_vec()),
        ("sealmark-report.json", json.into_bytes()),
    ]
}

/// The tab's icon: a shield.
const FAVICON: &str = "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 16 16\"><path d=\"M8 1 2 3v5c0 3.5 2.6 6 6 7 3.4-1 6-3.5 6-7V3z\" fill=\"#1a7f37\"/></svg>\n";

/// Starts the viewer. Over HTTP the module is fetched as it is (the smallest download);
/// a page opened from file:// may not fetch, so there it arrives inside a script, and
/// so it does when a host will not serve the .wasm.
const START: &str = "// Starts the sealmark viewer (see sealmark's cli/src/publish.rs).
(function () {
  function fromScript() {
    var s = document.createElement('script');
    s.src = 'viewer-wasm.js';
    document.body.appendChild(s);
  }
  if (location.protocol === 'file:') fromScript();
  else wasm_bindgen({ module_or_path: 'viewer.wasm' }).catch(fromScript);
})();
";

/// The page: the record as inert JSON, then the viewer.
fn page(title: &str, json: &str) -> String {
    let title = escape(&visible(title));
    // `<` escaped inside JSON strings keeps `</script>` in a server's text from ending the block.
    let data = json.trim_end().replace('<', "\\u003c");
    format!(
        r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; connect-src 'self'; img-src 'self' data:">
<meta name="referrer" content="no-referrer">
<title>sealmark report · {title}</title>
<link rel="stylesheet" href="viewer.css">
<link rel="icon" href="favicon.svg" type="image/svg+xml">
</head>
<body>
<noscript>This report needs JavaScript and WebAssembly; the record is sealmark-report.json beside this page.</noscript>
<script type="application/json" id="sealmark-record">{data}</script>
<script src="viewer.js"></script>
<script src="viewer-start.js"></script>
</body>
</html>
"#
    )
}

/// Text for an HTML attribute or element.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_text_cannot_leave_the_data_block_or_the_title() {
        let mut rec = sealmark_engine::sample::capped();
        rec.server.name = "</script><script>alert(1)</script>".into();
        let json = render::json(&rec);
        let html = page(&format!("{} {}", rec.server.name, rec.server.version), &json);
        assert_eq!(html.matches("<script").count(), 3, "only the page's own scripts: {html}");
        assert!(html.contains("<title>sealmark report · &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;"));
        let start = html.find("id=\"sealmark-record\">").unwrap() + "id=\"sealmark-record\">".len();
        let end = html[start..].find("</script>").unwrap() + start;
        let back: serde_json::Value = serde_json::from_str(&html[start..end]).unwrap();
        assert_eq!(back["server"]["name"], "</script><script>alert(1)</script>");
    }
}
