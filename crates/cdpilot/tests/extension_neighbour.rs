//! The relay door against a local neighbour (issue 34, findings 1a and 1b):
//! the extension is paired with a real `cdpilot serve --extension`, serve
//! stops, and another program takes its port and plays cdpilot to the
//! extension that dials it again. Run once as this user and once as
//! another, unprivileged one (`setpriv` to uid 65534: this binary runs
//! itself as the impostor), it must get nothing: no token, no key, no
//! command obeyed, no tab opened, and the relay hangs up on it. And a
//! program that holds the extension's token (stolen from the profile) is
//! refused by the real server: the relay never sends it, so serve never
//! takes it.
//!
//! `harness = false`: the same binary is the test and, with
//! `CDPILOT_IMPOSTOR_PORT` set, the impostor process.

mod support;

use std::time::Duration;

use serde_json::{json, Value};
use support::extension::{connected_within, paired, status, UserChrome};
use support::relay::{self, Heard};
use support::text_of;
use testkit::TestSite;

const IMPOSTOR_PORT: &str = "CDPILOT_IMPOSTOR_PORT";
const IMPOSTOR_BAIT: &str = "CDPILOT_IMPOSTOR_BAIT";
/// How long the impostor waits for the relay to dial it and hang up: the
/// relay's longest backoff (4 s) several times over.
const IMPOSTOR_WAIT: Duration = Duration::from_secs(30);

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    if let Ok(port) = std::env::var(IMPOSTOR_PORT) {
        runtime.block_on(impostor_process(port.parse().unwrap()));
        return;
    }
    eprintln!("test an_impostor_on_the_relays_port_gets_nothing ...");
    runtime.block_on(an_impostor_on_the_relays_port_gets_nothing(Who::ThisUser));
    eprintln!("test an_impostor_run_as_another_user_gets_nothing ...");
    runtime.block_on(an_impostor_on_the_relays_port_gets_nothing(Who::Nobody));
    eprintln!("test a_stolen_token_is_refused_and_the_paired_relay_goes_on ...");
    runtime.block_on(a_stolen_token_is_refused_and_the_paired_relay_goes_on());
    // cargo's own summary line, so scripts/test counts these three.
    println!("test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out");
}

/// The impostor, as a process of its own: what it heard, as JSON on stdout.
async fn impostor_process(port: u16) {
    let bait = std::env::var(IMPOSTOR_BAIT).unwrap();
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .expect("the impostor takes the relay's port");
    let heard = relay::impostor(listener, &bait, IMPOSTOR_WAIT).await;
    let uid = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| {
            l.strip_prefix("Uid:")
                .map(|u| u.split_whitespace().next().unwrap().to_owned())
        })
        .unwrap();
    println!(
        "{}",
        json!({"uid": uid, "texts": heard.texts, "closed_by_relay": heard.closed_by_relay})
    );
}

enum Who {
    ThisUser,
    /// uid/gid 65534, no groups.
    Nobody,
}

async fn an_impostor_on_the_relays_port_gets_nothing(who: Who) {
    let site = TestSite::start().await;
    let (mut serve, chrome) = paired("").await;
    let token = relay::stored_token(&chrome).await;
    assert!(token.len() >= 32, "the extension keeps a token: {token:?}");
    let port: u16 = serve.authority.rsplit_once(':').unwrap().1.parse().unwrap();
    serve.terminate().await;
    let bait = site.url("/index.html?opened-by-the-impostor");

    let heard = match who {
        Who::ThisUser => {
            let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await.unwrap();
            relay::impostor(listener, &bait, IMPOSTOR_WAIT).await
        }
        Who::Nobody => {
            let output = tokio::process::Command::new("setpriv")
                .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .arg(std::env::current_exe().unwrap())
                .env(IMPOSTOR_PORT, port.to_string())
                .env(IMPOSTOR_BAIT, &bait)
                .kill_on_drop(true)
                .output();
            let output = tokio::time::timeout(IMPOSTOR_WAIT * 2, output)
                .await
                .expect("the impostor process ends")
                .unwrap();
            assert!(
                output.status.success(),
                "{}",
                String::from_utf8_lossy(&output.stderr)
            );
            let said: Value = serde_json::from_slice(&output.stdout).unwrap();
            assert_eq!(said["uid"], "65534", "the impostor ran as another user: {said}");
            Heard {
                texts: said["texts"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| t.as_str().unwrap().to_owned())
                    .collect(),
                closed_by_relay: said["closed_by_relay"] == true,
            }
        }
    };

    assert!(
        !heard.texts.is_empty(),
        "the relay dialled its saved port: {heard:?}"
    );
    let hello: Value = serde_json::from_str(&heard.texts[0]).unwrap();
    assert_eq!(hello["type"], "hello", "{hello}");
    for text in &heard.texts {
        assert!(
            !text.contains(&token),
            "the relay sent its token to the impostor: {text}"
        );
        let message: Value = serde_json::from_str(text).unwrap();
        assert!(
            message["type"] == "hello",
            "the relay said nothing but hello to a server that did not prove itself: {text}"
        );
    }
    assert!(
        heard.closed_by_relay,
        "the relay hung up on the impostor: {heard:?}"
    );
    assert!(
        chrome.agent_pages().await.is_empty(),
        "no tab was opened: {:?}",
        chrome.agent_pages().await
    );
    assert!(
        !site
            .received()
            .iter()
            .any(|r| r.path.contains("opened-by-the-impostor")),
        "the bait was never fetched"
    );
    // The user is told why in the popup.
    let popup = chrome.popup().await;
    let state = UserChrome::eval(&popup, "chrome.runtime.sendMessage({type: 'state'})").await;
    assert!(
        state["error"].as_str().unwrap().contains("did not prove"),
        "{state}"
    );
}

async fn a_stolen_token_is_refused_and_the_paired_relay_goes_on() {
    let site = TestSite::start().await;
    let (serve, chrome) = paired("").await;
    let token = relay::stored_token(&chrome).await;
    for version in [1, 2] {
        let mut thief = relay::connect(&serve.authority).await;
        relay::send(
            &mut thief,
            json!({"type": "hello", "protocol_version": version, "client": "extension", "token": token}),
        )
        .await;
        let answer = relay::next(&mut thief).await;
        if let Ok(answer) = &answer {
            assert_eq!(answer["type"], "reject", "the token alone is refused: {answer}");
        }
    }
    assert!(connected_within(&serve, Duration::from_secs(5)).await);
    assert_eq!(status(&serve).await["connected"], true);
    let mut mcp = serve.mcp_client();
    assert_eq!(mcp.initialize().await.status, 200);
    let nav = mcp
        .call("browser_navigate", json!({"url": site.url("/counter.html")}))
        .await;
    assert_eq!(
        nav["isError"],
        false,
        "the paired relay still works: {}",
        text_of(&nav)
    );
}
