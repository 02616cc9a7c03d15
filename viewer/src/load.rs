//! Where a record comes from: the page itself, a URL relative to it, a file the user
//! picked or dropped. Each source ends in the rule the CLI applies: `read_saved` for a
//! record (as `--replay`), `read_baseline` for a baseline (as `--baseline`).

use crate::Loaded;
use sealmark_engine::combined::{Saved, read_any};
use sealmark_engine::record::{SavedRecordError, read_baseline};
use std::sync::Arc;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

/// How a slot reads its text: as a record or as a baseline.
pub type Reader = fn(&str, &str) -> Loaded;

/// A record or a combined record of several servers, or why there is none; `source`
/// names where it came from.
pub fn parse(text: &str, source: &str) -> Loaded {
    match read_any(text) {
        Ok(Saved::One(r)) => Loaded::Record(Arc::new(*r)),
        Ok(Saved::Several(c)) => Loaded::Several(Arc::new(c)),
        Err(e) => problem(e, source),
    }
}

/// A baseline: as a record, but one of another methodology is compared, not refused.
pub fn parse_baseline(text: &str, source: &str) -> Loaded {
    match read_baseline(text) {
        Ok(r) => Loaded::Record(Arc::new(r)),
        Err(e) => problem(e, source),
    }
}

fn problem(e: SavedRecordError, source: &str) -> Loaded {
    Loaded::Problem(format!("{source}: this is not a record the viewer can read: {e}"))
}

/// The record embedded in the page by `sealmark run --format html`, if there is one.
pub fn embedded() -> Option<String> {
    let doc = web_sys::window()?.document()?;
    let text = doc.get_element_by_id("sealmark-record")?.text_content()?;
    (!text.trim().is_empty()).then_some(text)
}

/// A parameter of the page's URL (`?record=`, `&baseline=`).
pub fn param(name: &str) -> Option<String> {
    let search = web_sys::window()?.location().search().ok()?;
    web_sys::UrlSearchParams::new_with_str(&search).ok()?.get(name)
}

/// The text at `path`, relative to the page.
pub async fn fetch_text(path: &str) -> Result<String, String> {
    let window = web_sys::window().ok_or("no window")?;
    let resp = JsFuture::from(window.fetch_with_str(path)).await.map_err(|_| {
        format!("{path} could not be fetched (a page opened from file:// cannot fetch; open the file instead)")
    })?;
    let resp: web_sys::Response = resp.dyn_into().map_err(|_| "not a response".to_string())?;
    if !resp.ok() {
        return Err(format!("{path}: HTTP {}", resp.status()));
    }
    let text = JsFuture::from(resp.text().map_err(|_| "no body".to_string())?)
        .await
        .map_err(|_| format!("{path}: the body could not be read"))?;
    text.as_string().ok_or_else(|| format!("{path}: the body is not text"))
}

/// The first file of a picker or a drop, with its name.
pub fn first_file(files: Option<web_sys::FileList>) -> Option<web_sys::File> {
    files?.get(0)
}

/// A picked or dropped file's text.
pub async fn file_text(file: &web_sys::File) -> Result<String, String> {
    let name = file.name();
    let text = JsFuture::from(file.text()).await.map_err(|_| format!("{name} could not be read"))?;
    text.as_string().ok_or_else(|| format!("{name} is not text"))
}

/// Milliseconds since the page started loading.
pub fn now_ms() -> f64 {
    web_sys::window().and_then(|w| w.performance()).map_or(0.0, |p| p.now())
}
