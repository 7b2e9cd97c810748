//! The reading corpus: real saved pages with reference extractions, served
//! from loopback, and the scores an extraction gets against them.
//!
//! The corpus is data in the repository's `tests/corpus/reading` (made by
//! `scripts/make-corpus` from registry packages' test fixtures; its README
//! names the sources and licences); `$CDPILOT_CORPUS` names another
//! directory of the same shape instead. It holds `manifest.json` (one entry
//! per page: `name`, `source`, `lang`, optional `charset`, `reference` text)
//! and `pages/<name>.html.gz`, served as-is with `Content-Encoding: gzip`.
//! [`BLOCK_EXTERNAL`] are browser flags that keep the browser from resolving
//! names; with cdpilot's egress gate, a test's URL rules keep every
//! connection on this machine.
//!
//! A saved page keeps none of its sub-resources. `/with-assets/<name>`
//! serves it with every absolute `http(s)://` URL (attributes, `srcset`,
//! inline scripts) pointed at `/asset/…` on the same server, which answers
//! that and every other unknown path (the page's relative URLs) with a
//! stand-in of a fixed size by what the browser says it fetches
//! (`Sec-Fetch-Dest`, else the extension; [`STAND_IN_BYTES`]: an image, a
//! font, a media file, a stylesheet that loads two fonts, an empty
//! script): the page as a browser would load it, its requests on loopback,
//! for what blocking some of them saves (the routes figures, issue 44).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use axum::extract::{Path as UrlPath, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use tokio::net::TcpListener;

/// Browser flags that stop the browser resolving any name but loopback.
/// Connections go through cdpilot's egress gate (the browser's
/// `--proxy-server` is the gate's, and a test may not set its own): a test
/// keeps them on loopback with URL rules (see the corpus test).
pub const BLOCK_EXTERNAL: &[&str] = &["--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"];

/// One saved page and its reference extraction.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Page {
    /// The file stem under `pages/`.
    pub name: String,
    /// Where the page and its reference come from.
    pub source: String,
    /// The page's language, when the source says.
    #[serde(default)]
    pub lang: String,
    /// The charset the server states for the page's bytes, when the manifest
    /// gives one: a saved page re-encoded as UTF-8 may still declare its old
    /// charset in a meta tag, which the browser would believe otherwise.
    #[serde(default)]
    pub charset: Option<String>,
    /// The reference extraction, as plain text.
    pub reference: String,
}

/// Where the corpus is: `$CDPILOT_CORPUS`, else the repository's
/// `tests/corpus/reading`; `None` when that has no manifest.
pub fn dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("CDPILOT_CORPUS") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus/reading"),
    };
    dir.join("manifest.json").is_file().then_some(dir)
}

/// The corpus's pages.
pub fn pages(dir: &Path) -> Vec<Page> {
    let text = std::fs::read_to_string(dir.join("manifest.json")).expect("read manifest.json");
    serde_json::from_str(&text).expect("manifest.json is a list of pages")
}

/// The corpus served on `http://127.0.0.1:P/p/<name>` until dropped.
pub struct CorpusSite {
    /// `http://127.0.0.1:P`.
    pub origin: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for CorpusSite {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl CorpusSite {
    /// Serves `dir`'s pages.
    pub async fn start(dir: &Path) -> CorpusSite {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr: SocketAddr = listener.local_addr().expect("address");
        let content_types = pages(dir)
            .into_iter()
            .map(|p| {
                let ty = match &p.charset {
                    Some(c) => format!("text/html; charset={c}"),
                    None => "text/html".to_string(),
                };
                (p.name, ty)
            })
            .collect();
        let served = Served {
            pages: dir.join("pages"),
            content_types,
        };
        let app = Router::new()
            .route("/p/{name}", get(serve))
            .route("/with-assets/{name}", get(with_assets))
            .fallback(asset)
            .with_state(std::sync::Arc::new(served));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        CorpusSite {
            origin: format!("http://{addr}"),
            task,
        }
    }

    /// The URL of page `name`.
    pub fn url(&self, name: &str) -> String {
        format!("{}/p/{name}", self.origin)
    }

    /// The URL of page `name` with its sub-resources served as stand-ins.
    pub fn url_with_assets(&self, name: &str) -> String {
        format!("{}/with-assets/{name}", self.origin)
    }
}

/// The size of each kind of stand-in, in bytes (about the median of each
/// kind on the web): images, fonts, media, stylesheets.
pub const STAND_IN_BYTES: [(&str, usize); 4] = [
    ("image", 32 << 10),
    ("font", 32 << 10),
    ("media", 512 << 10),
    ("stylesheet", 8 << 10),
];

/// The page, decompressed (`gzip -dc`: the testkit has no inflater), with
/// absolute URLs pointed at this server's `/asset/`.
async fn with_assets(
    State(served): State<std::sync::Arc<Served>>,
    UrlPath(name): UrlPath<String>,
) -> Response {
    let Some(content_type) = served.content_types.get(&name) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let path = served.pages.join(format!("{name}.html.gz"));
    let Ok(out) = tokio::process::Command::new("gzip")
        .arg("-dc")
        .arg(&path)
        .output()
        .await
    else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let page = String::from_utf8_lossy(&out.stdout)
        .replace("https://", "/asset/https/")
        .replace("http://", "/asset/http/")
        .replace("https:\\u002F\\u002F", "\\u002Fasset\\u002Fhttps\\u002F")
        .replace("=\"//", "=\"/asset/https/")
        // Namespaces are names, not resources (inline SVG, createElementNS).
        .replace("/asset/http/www.w3.org", "http://www.w3.org");
    ([(header::CONTENT_TYPE, content_type.clone())], page).into_response()
}

/// A stand-in for a sub-resource, by what the browser says it fetches
/// (`Sec-Fetch-Dest`), else by its path's extension.
async fn asset(uri: axum::http::Uri, headers: axum::http::HeaderMap) -> Response {
    let ext = uri
        .path()
        .rsplit('/')
        .next()
        .and_then(|file| file.rsplit_once('.'))
        .map(|(_, ext)| ext.to_ascii_lowercase())
        .unwrap_or_default();
    let dest = headers
        .get("sec-fetch-dest")
        .and_then(|d| d.to_str().ok())
        .unwrap_or_default();
    let kind = match (dest, ext.as_str()) {
        ("image", _) | (_, "jpg" | "jpeg" | "png" | "gif" | "webp" | "svg") => "image",
        ("font", _) | (_, "woff" | "woff2" | "ttf" | "otf") => "font",
        ("video" | "audio" | "track", _) | (_, "mp4" | "webm" | "mp3" | "ogg") => "media",
        ("style", _) | (_, "css") => "stylesheet",
        _ => "other",
    };
    let size = |kind: &str| {
        STAND_IN_BYTES
            .iter()
            .find(|(k, _)| *k == kind)
            .map_or(0, |(_, n)| *n)
    };
    let (content_type, body): (&str, Vec<u8>) = match kind {
        "image" => ("image/jpeg", vec![0; size("image")]),
        "font" => ("font/woff2", vec![0; size("font")]),
        "media" => ("video/mp4", vec![0; size("media")]),
        "stylesheet" => {
            let fonts = "@font-face{font-family:A;src:url(/asset/font/a.woff2)}\
                         @font-face{font-family:B;src:url(/asset/font/b.woff2)}\
                         body{font-family:A,sans-serif}h1,h2{font-family:B,serif}\n";
            let mut css = fonts.as_bytes().to_vec();
            css.resize(size("stylesheet"), b' ');
            ("text/css", css)
        }
        // Scripts and everything else: empty (a stand-in script would
        // only fail to parse).
        _ => ("text/plain", Vec::new()),
    };
    ([(header::CONTENT_TYPE, content_type)], body).into_response()
}

/// What the server needs to answer a page.
struct Served {
    /// The `pages/` directory.
    pages: PathBuf,
    /// Each manifest page's Content-Type; a name not in the manifest is
    /// not served.
    content_types: HashMap<String, String>,
}

async fn serve(State(served): State<std::sync::Arc<Served>>, UrlPath(name): UrlPath<String>) -> Response {
    let Some(content_type) = served.content_types.get(&name) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    match tokio::fs::read(served.pages.join(format!("{name}.html.gz"))).await {
        Ok(bytes) => (
            [
                (header::CONTENT_TYPE, content_type.clone()),
                (header::CONTENT_ENCODING, "gzip".to_string()),
            ],
            bytes,
        )
            .into_response(),
        Err(_) => StatusCode::NOT_FOUND.into_response(),
    }
}

/// Lower-cased word tokens of `text`; each Han, kana or Hangul character is
/// a token of its own (those scripts do not separate words with spaces).
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    for c in text.chars() {
        if is_cjk(c) {
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            out.push(c.to_string());
        } else if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        } else if !word.is_empty() {
            out.push(std::mem::take(&mut word));
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0xAC00..=0xD7AF)
}

/// Bag-of-tokens precision, recall and F1 of `got` against `reference`.
pub fn score(got: &str, reference: &str) -> (f64, f64, f64) {
    let mut bag = std::collections::HashMap::<String, i64>::new();
    let reference = tokens(reference);
    for t in &reference {
        *bag.entry(t.clone()).or_default() += 1;
    }
    let got = tokens(got);
    let mut common = 0usize;
    for t in &got {
        if let Some(n) = bag.get_mut(t) {
            if *n > 0 {
                *n -= 1;
                common += 1;
            }
        }
    }
    if got.is_empty() || reference.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    let p = common as f64 / got.len() as f64;
    let r = common as f64 / reference.len() as f64;
    let f1 = if p + r > 0.0 { 2.0 * p * r / (p + r) } else { 0.0 };
    (p, r, f1)
}

/// The value at fraction `q` (0.5: the median) of `values`.
pub fn quantile(values: &[f64], q: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[((v.len() - 1) as f64 * q).round() as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_and_scores() {
        assert_eq!(tokens("Héllo, wörld 42!"), ["héllo", "wörld", "42"]);
        assert_eq!(tokens("日本語 text"), ["日", "本", "語", "text"]);
        let (p, r, f1) = score("a b c d", "a b x y");
        assert_eq!((p, r, f1), (0.5, 0.5, 0.5));
        assert_eq!(score("", "a").2, 0.0);
        assert_eq!(quantile(&[3.0, 1.0, 2.0], 0.5), 2.0);
    }
}
