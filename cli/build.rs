//! Compiles the viewer, when it has been built (`scripts/build-viewer`), into the binary,
//! so `sealmark run --format html` can publish it without any file beside sealmark.
//! Without it the html format says how to get it; everything else works the same.

use base64::Engine;
use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let viewer = manifest.join("../viewer");
    // The directory always exists, so cargo rescans it rather than rerunning every build.
    println!("cargo::rerun-if-changed={}", viewer.display());
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let code = match bundle(&viewer.join("dist"), &out) {
        Some((js, wasm, wasm_js, css)) => format!(
            "pub const VIEWER: Option<Viewer> = Some(Viewer {{ js: include_str!({js:?}), wasm: include_bytes!({wasm:?}), \
             wasm_js: include_str!({wasm_js:?}), css: include_str!({css:?}) }});\n"
        ),
        None => "pub const VIEWER: Option<Viewer> = None;\n".to_string(),
    };
    std::fs::write(out.join("viewer_bundle.rs"), code).expect("write viewer_bundle.rs");
}

/// The viewer's script, its WebAssembly (plain, and as a script that starts it), and its
/// style sheet.
fn bundle(dist: &Path, out: &Path) -> Option<(PathBuf, PathBuf, PathBuf, PathBuf)> {
    let files: Vec<PathBuf> = std::fs::read_dir(dist).ok()?.flatten().map(|e| e.path()).collect();
    let find = |suffix: &str| files.iter().find(|p| p.to_string_lossy().ends_with(suffix)).cloned();
    let (js, wasm, css) = (find(".js")?, find("_bg.wasm")?, find(".css")?);
    // A page opened from file:// may not fetch, so the module travels inside a script.
    let encoded = base64::engine::general_purpose::STANDARD.encode(std::fs::read(&wasm).ok()?);
    let wasm_js = out.join("viewer-wasm.js");
    let start = format!(
        "// The sealmark viewer's WebAssembly, base64-encoded so the page also works from file://.\n\
         (function () {{\n  const text = atob(\"{encoded}\");\n  const bytes = new Uint8Array(text.length);\n  \
         for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);\n  \
         wasm_bindgen({{ module_or_path: bytes }});\n}})();\n"
    );
    std::fs::write(&wasm_js, start).ok()?;
    Some((js, wasm, wasm_js, css))
}
