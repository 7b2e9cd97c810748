//! Naming the file of a navigation that was answered with a download: the
//! `Content-Disposition` header's file name, else the URL's last segment.
//! Pure text handling; the navigation watch (`navigation.rs`) decides when a
//! response is one.

/// The file a response with this `Content-Disposition` saves as, when it
/// is an attachment (`None`: the response is meant to be shown).
pub(crate) fn file_name(disposition: &str, url: &str) -> Option<String> {
    let attachment = disposition
        .trim_start()
        .get(..10)
        .is_some_and(|kind| kind.eq_ignore_ascii_case("attachment"));
    attachment.then(|| attachment_name(disposition).unwrap_or_else(|| last_segment(url)))
}

/// The file name a `Content-Disposition` header gives (`filename*=` in
/// UTF-8 first, else `filename=`, quoted or not).
fn attachment_name(disposition: &str) -> Option<String> {
    let params: Vec<(String, &str)> = disposition
        .split(';')
        .skip(1)
        .filter_map(|part| part.split_once('='))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim()))
        .collect();
    let extended = params
        .iter()
        .find(|(name, _)| name == "filename*")
        .and_then(|(_, value)| {
            let (_charset_and_language, encoded) = value.rsplit_once('\'')?;
            Some(percent_decoded(encoded))
        });
    let plain = || {
        params
            .iter()
            .find(|(name, _)| name == "filename")
            .map(|(_, value)| value.trim_matches('"').to_owned())
    };
    extended.or_else(plain).filter(|name| !name.is_empty())
}

fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The last path segment of a URL, for a download that names no file.
fn last_segment(url: &str) -> String {
    let path = url.split(['?', '#']).next().unwrap_or_default();
    match path.rsplit('/').next() {
        Some(name) if !name.is_empty() => name.to_owned(),
        _ => "unnamed".to_owned(),
    }
}
