//! Compiles the committed viewer (`cli/viewer-bundle/`, refreshed by
//! `scripts/build-viewer`) into the binary, so every sealmark build, `cargo install`
//! included, publishes `--format html` with no file beside it and no trunk anywhere.

use base64::Engine;
use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let bundle = manifest.join("viewer-bundle");
    // Relative to the package, as are the paths the generated code includes: a build
    // directory reused by another clone (.ci/run keeps one) then reads this clone's files.
    println!("cargo::rerun-if-changed=viewer-bundle");
    let wasm = bundle.join("viewer_bg.wasm");
    let bytes = std::fs::read(&wasm).unwrap_or_else(|e| {
        panic!("{}: {e}; the viewer bundle is part of the source tree (scripts/build-viewer makes it)", wasm.display())
    });
    // A page opened from file:// may not fetch, so the module also travels inside a script.
    let encoded = base64::engine::general_purpose::STANDARD.encode(bytes);
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let wasm_js = out.join("viewer-wasm.js");
    let start = format!(
        "// The sealmark viewer's WebAssembly, base64-encoded so the page also works from file://.\n\
         (function () {{\n  const text = atob(\"{encoded}\");\n  const bytes = new Uint8Array(text.length);\n  \
         for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);\n  \
         wasm_bindgen({{ module_or_path: bytes }});\n}})();\n"
    );
    std::fs::write(&wasm_js, start).expect("write viewer-wasm.js");
    let code = "pub const VIEWER: Viewer = Viewer {\n    \
        js: include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/viewer-bundle/viewer.js\")),\n    \
        wasm: include_bytes!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/viewer-bundle/viewer_bg.wasm\")),\n    \
        wasm_js: include_str!(concat!(env!(\"OUT_DIR\"), \"/viewer-wasm.js\")),\n    \
        css: include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/viewer-bundle/viewer.css\")),\n};\n";
    std::fs::write(out.join("viewer_bundle.rs"), code).expect("write viewer_bundle.rs");
}
