//! The relay handshake against a real `cdpilot serve --extension`
//! (`docs/src/spec/protocol.md`, "Relay handshake"), spoken by a program
//! of the test's: both ends prove they hold the pairing secret (the
//! one-time code while pairing, then the token) and neither sends it; one
//! relay at a time; and every message out of turn (not JSON, an old hello
//! offering its token, a wrong proof, a proof replayed from another
//! socket, a handshake message after the handshake, a second relay)
//! closes that socket with a reason, said in the reject, the close frame
//! and serve's log, and leaves the paired relay alone.

mod support;

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use server::serve::extension_proof::{key_id, key_of, proof, Role};
use support::extension::{pair_link, paired, status};
use support::relay::{self, refused, Raw};
use support::serve::Serve;
use support::text_of;
use testkit::TestSite;

fn nonce(seed: u8) -> String {
    format!("{seed:02x}").repeat(32)
}

/// A hello for the key of `secret`.
fn hello(secret: &str, nonce: &str) -> Value {
    json!({
        "type": "hello",
        "protocol_version": 2,
        "client": "extension",
        "key": key_id(&key_of(secret)),
        "nonce": nonce,
    })
}

/// Says hello with `secret`, checks the server's proof, answers with ours:
/// the server's nonce.
async fn prove(socket: &mut Raw, server: &str, secret: &str, ours: &str) -> String {
    relay::send(socket, hello(secret, ours)).await;
    let challenge = relay::next(socket).await.expect("a challenge");
    assert_eq!(challenge["type"], "challenge", "{challenge}");
    let theirs = challenge["nonce"].as_str().unwrap().to_owned();
    assert_eq!(
        challenge["proof"],
        proof(&key_of(secret), Role::Server, server, ours, &theirs).as_str(),
        "the server proved it holds the secret"
    );
    let ours_proof = proof(&key_of(secret), Role::Extension, server, ours, &theirs);
    relay::send(socket, json!({"type": "proof", "proof": ours_proof})).await;
    theirs
}

/// Whether serve logged this refusal (the line reaches the test through
/// serve's stderr, a moment after the socket's close frame).
async fn logged(serve: &Serve, reason: &str) -> bool {
    let line = format!("extension relay socket closed: {reason}");
    testkit::processes::wait_until(Duration::from_secs(10), || {
        serve.log.lock().unwrap().iter().any(|l| l.contains(&line))
    })
    .await
}

#[tokio::test]
async fn pairing_proves_both_ends_one_relay_at_a_time_and_the_token_reconnects() {
    let serve = Serve::start("", &["--extension"]).await;
    let server = format!("ws://{}", serve.authority);

    // A key the server does not know.
    let mut stranger = relay::connect(&serve.authority).await;
    relay::send(&mut stranger, hello("guess", &nonce(1))).await;
    refused(&mut stranger, "bad_token").await;

    // The one-time code, proved and never sent, buys the token.
    let link = pair_link(&serve);
    let code = link.rsplit_once("code=").unwrap().1.to_owned();
    let mut first = relay::connect(&serve.authority).await;
    prove(&mut first, &server, &code, &nonce(2)).await;
    let ack = relay::next(&mut first).await.unwrap();
    assert_eq!(ack["type"], "ack", "{ack}");
    let token = ack["token"].as_str().expect("a long-lived token").to_owned();
    // The code is spent.
    let mut again = relay::connect(&serve.authority).await;
    relay::send(&mut again, hello(&code, &nonce(3))).await;
    refused(&mut again, "bad_token").await;

    // A second relay that proves the token is refused while the first is
    // connected; the first goes on.
    let mut second = relay::connect(&serve.authority).await;
    prove(&mut second, &server, &token, &nonce(4)).await;
    refused(&mut second, "already_connected").await;
    relay::send(&mut first, json!({"type": "ping"})).await;
    assert_eq!(relay::next(&mut first).await.unwrap()["type"], "pong");
    assert_eq!(status(&serve).await["connected"], true);
    assert!(logged(&serve, "already_connected").await);

    // A handshake message after the handshake closes that socket.
    relay::send(&mut first, hello(&token, &nonce(5))).await;
    refused(&mut first, "replayed").await;

    // The token reconnects (no new token in the ack), and a message that
    // does not parse closes it.
    let until = Instant::now() + Duration::from_secs(10);
    let mut third = loop {
        let mut third = relay::connect(&serve.authority).await;
        prove(&mut third, &server, &token, &nonce(6)).await;
        match relay::next(&mut third).await {
            Ok(ack) if ack["type"] == "ack" => {
                assert!(ack.get("token").is_none(), "{ack}");
                break third;
            }
            // The first socket's slot is let go as it closes.
            other => {
                assert!(Instant::now() < until, "the token never reconnected: {other:?}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    relay::send(&mut third, json!({"type": "response"})).await;
    refused(&mut third, "malformed").await;
    assert_eq!(status(&serve).await["paired"], true);
}

#[tokio::test]
async fn bad_hellos_wrong_and_replayed_proofs_close_their_socket_and_leave_the_paired_relay_alone() {
    let site = TestSite::start().await;
    let (serve, chrome) = paired("").await;
    let server = format!("ws://{}", serve.authority);
    let token = relay::stored_token(&chrome).await;

    // Not JSON, a proof first, an old hello offering the token, an old
    // protocol version, a hello without a nonce.
    for (first, reason) in [
        (Value::String("nope".into()), "bad_hello"),
        (json!({"type": "proof", "proof": "00"}), "bad_hello"),
        (
            json!({"type": "hello", "protocol_version": 2, "client": "extension", "token": token, "key": key_id(&key_of(&token)), "nonce": nonce(7)}),
            "bad_hello",
        ),
        (
            json!({"type": "hello", "protocol_version": 1, "client": "extension", "token": token}),
            "unsupported_version",
        ),
        (
            json!({"type": "hello", "protocol_version": 2, "client": "extension", "key": key_id(&key_of(&token))}),
            "bad_hello",
        ),
    ] {
        let mut socket = relay::connect(&serve.authority).await;
        match &first {
            Value::String(text) => {
                use futures_util::SinkExt;
                socket
                    .send(tokio_tungstenite::tungstenite::Message::text(text.clone()))
                    .await
                    .unwrap();
            }
            message => relay::send(&mut socket, message.clone()).await,
        }
        refused(&mut socket, reason).await;
        assert!(logged(&serve, reason).await, "serve logs {reason}");
    }

    // A proof for another challenge than this socket's.
    let mut wrong = relay::connect(&serve.authority).await;
    relay::send(&mut wrong, hello(&token, &nonce(8))).await;
    let challenge = relay::next(&mut wrong).await.unwrap();
    assert_eq!(challenge["type"], "challenge", "{challenge}");
    let other = proof(&key_of(&token), Role::Extension, &server, &nonce(8), &nonce(9));
    relay::send(&mut wrong, json!({"type": "proof", "proof": other})).await;
    refused(&mut wrong, "bad_proof").await;

    // A good proof, replayed on a new socket with the same nonce: the
    // server's nonce is new, so it answers nothing.
    let mut recorded = relay::connect(&serve.authority).await;
    let theirs = prove(&mut recorded, &server, &token, &nonce(10)).await;
    refused(&mut recorded, "already_connected").await;
    let replayed = proof(&key_of(&token), Role::Extension, &server, &nonce(10), &theirs);
    let mut replay = relay::connect(&serve.authority).await;
    relay::send(&mut replay, hello(&token, &nonce(10))).await;
    assert_eq!(relay::next(&mut replay).await.unwrap()["type"], "challenge");
    relay::send(&mut replay, json!({"type": "proof", "proof": replayed})).await;
    refused(&mut replay, "bad_proof").await;
    assert!(logged(&serve, "bad_proof").await);

    // The paired relay was left alone: still connected, and it works.
    assert_eq!(status(&serve).await["connected"], true);
    let mut mcp = serve.mcp_client();
    assert_eq!(mcp.initialize().await.status, 200);
    let nav = mcp
        .call("browser_navigate", json!({"url": site.url("/counter.html")}))
        .await;
    assert_eq!(nav["isError"], false, "{}", text_of(&nav));
}
