//! `browser_network`'s shaping actions: `route`, `unroute`, `routes`, `har`
//! (the session's routes, `crate::policy::routes`) and `conditions` (the
//! tab's network: offline, throttled). Checks every argument before
//! anything is routed (a bad field is `invalid_argument` naming it, and
//! nothing is routed half-way); bodies and HAR files are read only from the
//! output directory, and bounded.

use std::sync::Arc;

use cdp::protocol::network::EmulateNetworkConditions;
use serde_json::{json, Value};

use super::{NetworkAction, NetworkArgs, NotFound, RouteAnswer, TYPES};
use crate::config::{Config, FilesConfig, Source};
use crate::policy::har::Har;
use crate::policy::routes::{self, Answer, Route, Routes};
use crate::tab::Tab;
use crate::{ActionError, ActionOutput, Budget};

/// The largest HAR file read, in bytes.
const MAX_HAR: usize = 64 << 20;

/// Which fields each shaping action takes (beyond `action`, `tab` and
/// `timeout_ms`), for the error naming a field given to the wrong one.
fn fields_of(action: NetworkAction) -> &'static [&'static str] {
    match action {
        NetworkAction::Route => &[
            "url", "type", "answer", "error", "status", "headers", "text", "json", "file", "method",
            "post_data", "delay_ms",
        ],
        NetworkAction::Unroute => &["id"],
        NetworkAction::Routes => &[],
        NetworkAction::Har => &["url", "file", "not_found"],
        NetworkAction::Conditions => &["preset", "offline", "latency_ms", "download_kbps", "upload_kbps"],
        NetworkAction::List => &["filter", "type", "failed"],
        NetworkAction::Get => &["id", "body"],
    }
}

/// The fields given, by name.
fn given(args: &NetworkArgs) -> Vec<&'static str> {
    let fields = [
        ("filter", args.filter.is_some()),
        ("type", args.kind.is_some()),
        ("failed", args.failed.is_some()),
        ("id", args.id.is_some()),
        ("body", args.body.is_some()),
        ("url", args.url.is_some()),
        ("answer", args.answer.is_some()),
        ("error", args.error.is_some()),
        ("status", args.status.is_some()),
        ("headers", args.headers.is_some()),
        ("text", args.text.is_some()),
        ("json", args.json.is_some()),
        ("file", args.file.is_some()),
        ("method", args.method.is_some()),
        ("post_data", args.post_data.is_some()),
        ("delay_ms", args.delay_ms.is_some()),
        ("not_found", args.not_found.is_some()),
        ("preset", args.preset.is_some()),
        ("offline", args.offline.is_some()),
        ("latency_ms", args.latency_ms.is_some()),
        ("download_kbps", args.download_kbps.is_some()),
        ("upload_kbps", args.upload_kbps.is_some()),
    ];
    fields.iter().filter(|(_, set)| *set).map(|(name, _)| *name).collect()
}

/// Checks a call's fields against its action (every action: a field of
/// another action is named), and a shaping action's values.
pub(super) fn check(args: &NetworkArgs) -> Result<(), ActionError> {
    let allowed = fields_of(args.action);
    if let Some(stray) = given(args).into_iter().find(|f| !allowed.contains(f)) {
        let action = format!("{:?}", args.action).to_ascii_lowercase();
        let takes = if allowed.is_empty() {
            "nothing else".to_owned()
        } else {
            allowed.join(", ")
        };
        return Err(ActionError::invalid(
            format!("{stray} is not an argument of action {action}"),
            format!("Action {action} takes {takes}."),
        ));
    }
    match args.action {
        NetworkAction::Route => {
            route_answer(args, None)?;
            route_types(args)?;
            Route::new(required_url(args)?, vec![], Answer::Delay { ms: 0 }).map_err(bad_pattern)?;
            Ok(())
        }
        NetworkAction::Har => {
            if args.file.is_none() {
                return Err(ActionError::invalid(
                    "action har needs file: the HAR file under the output directory",
                    "Pass file, e.g. {\"action\": \"har\", \"file\": \"run1.har\"}.",
                ));
            }
            if let Some(url) = &args.url {
                Route::new(url, vec![], Answer::Delay { ms: 0 }).map_err(bad_pattern)?;
            }
            Ok(())
        }
        NetworkAction::Conditions => conditions(args).map(|_| ()),
        _ => Ok(()),
    }
}

fn required_url(args: &NetworkArgs) -> Result<&str, ActionError> {
    args.url.as_deref().ok_or_else(|| {
        ActionError::invalid(
            "action route needs url: the URL pattern it answers",
            "Pass url, e.g. \"https://api.example.com/*\" (URLPattern syntax, as the URL rules).",
        )
    })
}

fn bad_pattern(why: String) -> ActionError {
    ActionError::invalid(
        format!("url: {why}"),
        "Write a whole URL pattern, e.g. \"https://api.example.com/*\" or \"*://*/*.png\".",
    )
}

/// The resource types a route is for (`type`, a comma list).
fn route_types(args: &NetworkArgs) -> Result<Vec<String>, ActionError> {
    let Some(kinds) = &args.kind else { return Ok(vec![]) };
    kinds
        .split(',')
        .map(|k| k.trim().to_ascii_lowercase())
        .map(|k| match TYPES.contains(&k.as_str()) {
            true => Ok(k),
            false => Err(ActionError::invalid(
                format!("type: \"{k}\" is not a resource type"),
                format!("Use one or more of: {} (comma separated).", TYPES.join(", ")),
            )),
        })
        .collect()
}

/// A header name and value a route may send: no line breaks (a header
/// cannot smuggle a second one), a token for a name.
fn headers(args: &NetworkArgs) -> Result<Vec<(String, String)>, ActionError> {
    let Some(map) = &args.headers else { return Ok(vec![]) };
    map.iter()
        .map(|(name, value)| {
            let value = match value {
                Value::String(text) => text.clone(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                _ => {
                    return Err(ActionError::invalid(
                        format!("headers.{name}: a header's value is text"),
                        "Give each header a text value, e.g. {\"content-type\": \"text/html\"}.",
                    ))
                }
            };
            let name_ok = !name.is_empty() && name.bytes().all(|b| b.is_ascii_graphic() && !b"()<>@,;:\\\"/[]?={}".contains(&b));
            if !name_ok {
                return Err(ActionError::invalid(
                    format!("headers: {name:?} is not a header name"),
                    "Use a plain header name such as content-type.",
                ));
            }
            if value.contains(['\r', '\n', '\0']) {
                return Err(ActionError::invalid(
                    format!("headers.{name}: a header's value may not hold a line break"),
                    "Give the value on one line.",
                ));
            }
            Ok((name.clone(), value))
        })
        .collect()
}

/// What a `route` call answers with; `files` given: the body file is read
/// (the check passes none, and checks everything but the file).
fn route_answer(args: &NetworkArgs, files: Option<&FilesConfig>) -> Result<Answer, ActionError> {
    let Some(answer) = args.answer else {
        return Err(ActionError::invalid(
            "action route needs answer: abort, fulfill, continue or delay",
            "Pass answer, e.g. {\"action\": \"route\", \"url\": \"*://*/*.png\", \"answer\": \"abort\"}.",
        ));
    };
    let only = |fields: &[&str], for_answer: &str| -> Result<(), ActionError> {
        let per_answer = ["error", "status", "text", "json", "file", "method", "post_data", "delay_ms"];
        let stray = given(args)
            .into_iter()
            .find(|f| per_answer.contains(f) && !fields.contains(f));
        match stray {
            Some(stray) => Err(ActionError::invalid(
                format!("{stray} is not for answer {for_answer}"),
                format!(
                    "Answer {for_answer} takes {}.",
                    if fields.is_empty() { "no more fields".to_owned() } else { fields.join(", ") }
                ),
            )),
            None => Ok(()),
        }
    };
    match answer {
        RouteAnswer::Abort => {
            only(&["error"], "abort")?;
            if args.headers.is_some() {
                return Err(ActionError::invalid("headers is not for answer abort", "Leave headers out."));
            }
            let word = args.error.as_deref().unwrap_or("Failed");
            let reason = routes::error_reason(word).ok_or_else(|| {
                ActionError::invalid(
                    format!("error: \"{word}\" is not a network error"),
                    format!("Use one of: {}.", routes::ERROR_REASONS.join(", ")),
                )
            })?;
            Ok(Answer::Abort { reason })
        }
        RouteAnswer::Fulfill => {
            only(&["status", "text", "json", "file"], "fulfill")?;
            let status = args.status.unwrap_or(200);
            let status = u16::try_from(status).ok().filter(|s| (100..=599).contains(s)).ok_or_else(|| {
                ActionError::invalid(
                    format!("status: {status} is not an HTTP status"),
                    "Pass a status from 100 to 599 (default 200).",
                )
            })?;
            let mut headers = headers(args)?;
            let bodies = [args.text.is_some(), args.json.is_some(), args.file.is_some()];
            if bodies.iter().filter(|b| **b).count() > 1 {
                return Err(ActionError::invalid(
                    "text, json and file are three ways to give one body: pass one",
                    "Keep one of text, json or file.",
                ));
            }
            let content_type = headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case("content-type"))
                .map(|(_, v)| v.to_ascii_lowercase());
            let says_json = content_type.as_deref().is_some_and(|t| t.contains("json"));
            let body: Vec<u8> = if let Some(value) = &args.json {
                if content_type.is_none() {
                    headers.push(("Content-Type".into(), "application/json".into()));
                }
                value.to_string().into_bytes()
            } else if let Some(text) = &args.text {
                if says_json {
                    if let Err(e) = serde_json::from_str::<Value>(text) {
                        return Err(ActionError::invalid(
                            format!("text: the content-type says JSON but the text is not JSON ({e})"),
                            "Pass the body as json, fix the text, or give another content-type.",
                        ));
                    }
                }
                text.clone().into_bytes()
            } else if let (Some(file), Some(files)) = (&args.file, files) {
                read_bounded(files, file, routes::MAX_BODY)?
            } else {
                Vec::new()
            };
            if body.len() > routes::MAX_BODY {
                return Err(ActionError::invalid(
                    format!("the body is {} bytes, over the {} MiB a route answers with", body.len(), routes::MAX_BODY >> 20),
                    "Give a smaller body.",
                ));
            }
            if content_type.is_none() && args.text.is_some() {
                headers.push(("Content-Type".into(), "text/plain; charset=utf-8".into()));
            }
            Ok(Answer::Fulfill {
                status,
                headers,
                body: Arc::from(body),
            })
        }
        RouteAnswer::Continue => {
            only(&["method", "post_data"], "continue")?;
            let headers = headers(args)?;
            if headers.is_empty() && args.method.is_none() && args.post_data.is_none() {
                return Err(ActionError::invalid(
                    "answer continue needs something to change: headers, method or post_data",
                    "Pass what to change, or use answer delay with delay_ms to only hold the request.",
                ));
            }
            if let Some(method) = &args.method {
                if method.is_empty() || !method.bytes().all(|b| b.is_ascii_alphabetic()) {
                    return Err(ActionError::invalid(
                        format!("method: {method:?} is not an HTTP method"),
                        "Use GET, POST, PUT, PATCH, DELETE…",
                    ));
                }
            }
            Ok(Answer::Continue {
                headers,
                method: args.method.as_ref().map(|m| m.to_ascii_uppercase()),
                post_data: args.post_data.clone(),
            })
        }
        RouteAnswer::Delay => {
            only(&["delay_ms"], "delay")?;
            if args.headers.is_some() {
                return Err(ActionError::invalid("headers is not for answer delay", "Leave headers out."));
            }
            match args.delay_ms {
                Some(ms) if ms <= routes::MAX_DELAY_MS => Ok(Answer::Delay { ms }),
                Some(ms) => Err(ActionError::invalid(
                    format!("delay_ms: {ms} is over {} ms", routes::MAX_DELAY_MS),
                    "Pass a delay up to 60000 ms.",
                )),
                None => Err(ActionError::invalid(
                    "answer delay needs delay_ms",
                    "Pass delay_ms, e.g. 2000.",
                )),
            }
        }
    }
}

/// A file under the output directory, at most `max` bytes.
fn read_bounded(files: &FilesConfig, requested: &str, max: usize) -> Result<Vec<u8>, ActionError> {
    let (path, bytes) = crate::files::read_bytes_inside(files, requested, max)?;
    if bytes.len() > max {
        return Err(ActionError::invalid(
            format!("file: {} is over {} MiB", path.display(), max >> 20),
            "Use a smaller file.",
        ));
    }
    Ok(bytes)
}

/// The conditions a `conditions` call sets: `Ok(None)` clears them; the
/// call without fields only reports (`Err` never for that: see `run`).
fn conditions(args: &NetworkArgs) -> Result<Option<Option<EmulateNetworkConditions>>, ActionError> {
    let numbers = [args.latency_ms, args.download_kbps, args.upload_kbps];
    if args.preset.is_none() && args.offline.is_none() && numbers.iter().all(Option::is_none) {
        return Ok(None);
    }
    for (name, value) in ["latency_ms", "download_kbps", "upload_kbps"].iter().zip(numbers) {
        if let Some(v) = value {
            if !v.is_finite() || v < 0.0 {
                return Err(ActionError::invalid(
                    format!("{name}: {v} is not a positive number"),
                    "Pass a number of 0 or more.",
                ));
            }
        }
    }
    let mut set = EmulateNetworkConditions {
        offline: false,
        latency: 0.0,
        download_throughput: -1.0,
        upload_throughput: -1.0,
    };
    if let Some(preset) = &args.preset {
        let wanted = preset.trim().to_ascii_lowercase();
        if wanted == "none" {
            if args.offline == Some(true) || numbers.iter().any(Option::is_some) {
                return Err(ActionError::invalid(
                    "preset none clears the conditions: it takes no other field",
                    "Pass preset none alone, or leave it out.",
                ));
            }
            return Ok(Some(None));
        }
        let Some((_, latency, down, up)) = crate::throttle::PRESETS.iter().find(|(name, ..)| *name == wanted) else {
            return Err(ActionError::invalid(
                format!("preset: \"{preset}\" is not a throttling preset"),
                "Use Slow 3G, Fast 3G, Slow 4G, Fast 4G, or none to clear.",
            ));
        };
        set.latency = *latency;
        set.download_throughput = *down;
        set.upload_throughput = *up;
    }
    if let Some(ms) = args.latency_ms {
        set.latency = ms;
    }
    if let Some(kbps) = args.download_kbps {
        set.download_throughput = kbps * 1000.0 / 8.0;
    }
    if let Some(kbps) = args.upload_kbps {
        set.upload_throughput = kbps * 1000.0 / 8.0;
    }
    set.offline = args.offline.unwrap_or(false);
    let browsers_own = !set.offline && set.latency == 0.0 && set.download_throughput < 0.0 && set.upload_throughput < 0.0;
    Ok(Some((!browsers_own).then_some(set)))
}

/// Runs a shaping action.
pub(super) async fn run(
    tab: &Tab,
    args: &NetworkArgs,
    config: &Config,
    budget: &Budget,
) -> Result<ActionOutput, ActionError> {
    let files = &config.files;
    if args.action == NetworkAction::Conditions {
        if let Some(set) = conditions(args)? {
            tab.set_network(set, budget).await?;
        }
        let (words, value) = crate::throttle::describe(tab.state(|s| s.emulated().network()));
        return Ok(ActionOutput::new(
            format!("This tab's network: {words}."),
            json!({ "conditions": value }),
        ));
    }
    let routes = tab
        .gate()
        .routes()
        .ok_or_else(|| ActionError::internal("the tab serves no session's routes"))?;
    let said = match args.action {
        NetworkAction::Route => {
            let answer = route_answer(args, Some(files))?;
            let route = Route::new(required_url(args)?, route_types(args)?, answer).map_err(bad_pattern)?;
            let route = routes.add(route).map_err(|full| {
                ActionError::invalid(full, "Remove routes with action unroute (id, or none for all) first.")
            })?;
            format!("Added {}: {} {}.", route.id, route.answer.word(), route.pattern())
        }
        NetworkAction::Har => {
            let file = args.file.as_deref().unwrap_or_default();
            let bytes = read_bounded(files, file, MAX_HAR)?;
            let text = String::from_utf8(bytes).map_err(|_| {
                ActionError::invalid(format!("file: {file} is not UTF-8 text"), "Pass a HAR 1.2 file (JSON).")
            })?;
            let har = Har::parse(&text).map_err(|why| {
                ActionError::invalid(format!("file: {file}: {why}"), "Pass a HAR 1.2 file as DevTools or cdpilot's trace writes it.")
            })?;
            let entries = har.len();
            let not_found_fails = args.not_found == Some(NotFound::Fail);
            let answer = Answer::Har {
                har: Arc::new(har),
                not_found_fails,
            };
            let route = Route::new(args.url.as_deref().unwrap_or("*://*:*/*"), vec![], answer).map_err(bad_pattern)?;
            let route = routes.add(route).map_err(|full| {
                ActionError::invalid(full, "Remove routes with action unroute (id, or none for all) first.")
            })?;
            let rest = if not_found_fails { "fail" } else { "go to the network" };
            format!(
                "Added {}: {entries} answers from {file} for {}; requests it does not hold {rest}.",
                route.id,
                route.pattern()
            )
        }
        NetworkAction::Unroute => {
            let gone = routes.remove(args.id.as_deref());
            match (&args.id, gone.len()) {
                (Some(id), 0) => {
                    return Err(ActionError::invalid(
                        format!("there is no route \"{id}\""),
                        "List them with action routes and pass one's id, or leave id out to remove all.",
                    ))
                }
                (_, n) => format!("Removed {n} route(s)."),
            }
        }
        _ => String::new(),
    };
    tab.arm_routes(budget).await?;
    Ok(list(&routes, said, config.browser.source))
}

/// What the session's routes cannot answer on a browser of `source`
/// (`docs/src/spec/tools.md`, "Where it routes"): the URL rules still
/// hold there.
fn not_routed(source: Source) -> &'static [&'static str] {
    match source {
        // The relay pauses no new tab: a popup is routed from the
        // session's next call in it.
        Source::Extension => &["shared_worker", "service_worker", "popup_first_request"],
        // Chrome pauses none of a shared or service worker's requests.
        Source::Launch | Source::AutoConnect => &["shared_worker", "service_worker"],
    }
}

/// How [`not_routed`]'s names read.
fn not_routed_words(names: &[&str]) -> String {
    let words: Vec<&str> = names
        .iter()
        .map(|n| match *n {
            "shared_worker" => "a shared worker's requests",
            "service_worker" => "a service worker's",
            "popup_first_request" => "a popup's before the session's next call in it",
            other => other,
        })
        .collect();
    words.join(", ")
}

/// The session's routes after `said`, and what they cannot answer on a
/// browser of `source`.
fn list(routes: &Routes, said: String, source: Source) -> ActionOutput {
    let all = routes.list();
    let mut text = said;
    if !text.is_empty() {
        text.push(' ');
    }
    text += &match all.len() {
        0 => "No routes are set.".to_owned(),
        n => format!("{n} route(s), newest answers first; each inside the URL rules:"),
    };
    let mut listed = Vec::new();
    for r in &all {
        let types = if r.types.is_empty() { String::new() } else { format!(" [{}]", r.types.join(",")) };
        text += &format!("\n{} {} {}{types} hits={}", r.id, r.answer.word(), r.pattern(), r.hits());
        listed.push(json!({
            "id": r.id, "answer": r.answer.word(), "url": r.pattern(), "types": r.types, "hits": r.hits(),
        }));
    }
    let not_routed = not_routed(source);
    if !all.is_empty() {
        text += "\nThey answer this tab's requests from now on, and another tab of the session's from its next call.";
        text += &format!(
            " Not routed on this browser (the URL rules still hold them): {}.",
            not_routed_words(not_routed)
        );
    }
    ActionOutput::new(text, json!({ "routes": listed, "not_routed": not_routed }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A route's answer names what it cannot route on the browser it runs
    /// on (`spec/tools.md`, "Where it routes"), in its text and its data.
    #[test]
    fn the_routes_say_what_this_browser_does_not_route() {
        let routes = Routes::default();
        let abort = Answer::Abort { reason: "Failed" };
        routes.add(Route::new("http://x.test/*", vec![], abort).unwrap()).unwrap();
        let launched = list(&routes, String::new(), Source::Launch);
        assert_eq!(launched.data["not_routed"], json!(["shared_worker", "service_worker"]));
        assert!(launched.text.contains("Not routed on this browser (the URL rules still hold them): a shared worker's requests, a service worker's."));
        let extension = list(&routes, String::new(), Source::Extension);
        assert_eq!(extension.data["not_routed"][2], "popup_first_request");
        assert!(extension.text.contains("a popup's before the session's next call in it"));
    }
}
