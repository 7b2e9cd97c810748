//! `cdpilot pair`: asks a running `cdpilot mcp --extension` (its loopback
//! listener, found through the runtime directory) or serve for a one-time
//! pairing link
//! (`POST /v1/extension/pair`) and prints it alone on the last line of
//! stdout, for the user to open in the Chrome where the cdpilot extension
//! is loaded.
//!
//! The listener's file is checked by the one rule for local peers
//! (`server::find_extension_listener`), a `--server` on loopback by its
//! owner; and a link is printed only when it pairs with the very address
//! asked (an impostor's answer naming another server is refused).

use std::process::ExitCode;

use anyhow::{anyhow, Result};

use super::server::{self, Server};

pub async fn run(url: Option<String>, token: Option<String>) -> Result<ExitCode> {
    let server = match (url, token) {
        (Some(url), Some(token)) => Server {
            url: url.trim_end_matches('/').to_owned(),
            token,
            pid: None,
            named_by: "--server".into(),
        },
        _ => match server::find_extension_listener().await.map_err(|e| anyhow!(e.0))? {
            Some(listener) => listener,
            None => server::find()
                .await
                .map_err(|e| anyhow!(e.0))?
                .ok_or_else(|| {
                    anyhow!("neither a `cdpilot mcp --extension` nor a cdpilot serve is running for this user: start one (your MCP client starts `cdpilot mcp --extension`; or `cdpilot serve --extension`), or name a serve with --server http://127.0.0.1:PORT --token TOKEN")
                })?,
        },
    };
    let (status, body) = server
        .http("POST", "/v1/extension/pair", None)
        .await
        .map_err(|e| anyhow!(e.0))?;
    if status != 200 {
        return Err(anyhow!("{} answered {status}: {}", server.url, body.trim()));
    }
    let answer: serde_json::Value = serde_json::from_str(&body)?;
    let link = answer["link"]
        .as_str()
        .ok_or_else(|| anyhow!("{} answered without a link: {body}", server.url))?;
    let asked = format!("ws://{}", server.url.trim_start_matches("http://"));
    let names = link
        .split_once("#server=")
        .map(|(_, rest)| rest.split('&').next().unwrap_or(""));
    if !link.starts_with("chrome-extension://") || !names.is_some_and(|n| same_place(n, &asked)) {
        return Err(anyhow!(
            "{} answered a pairing link for another server than the one asked ({asked}): refused, not printed. Another program may hold its port; stop it, or run `cdpilot doctor` to see what the runtime directory names",
            server.url
        ));
    }
    println!(
        "Open this link in the Chrome where the cdpilot extension is loaded (id {}); it pairs once, within {} s:",
        answer["extension_id"].as_str().unwrap_or(""),
        answer["expires_in_s"]
    );
    println!("{link}");
    Ok(ExitCode::SUCCESS)
}

/// Whether two `ws://HOST:PORT` addresses are one place: the same port on
/// the same address, loopback's spellings being one.
fn same_place(a: &str, b: &str) -> bool {
    let resolve = |url: &str| -> Vec<std::net::SocketAddr> {
        let authority = url.trim_start_matches("ws://").trim_end_matches('/');
        std::net::ToSocketAddrs::to_socket_addrs(authority)
            .map(Iterator::collect)
            .unwrap_or_default()
    };
    let (a, b) = (resolve(a), resolve(b));
    a.iter().any(|x| {
        b.iter().any(|y| {
            x.port() == y.port() && (x.ip() == y.ip() || (x.ip().is_loopback() && y.ip().is_loopback()))
        })
    })
}
