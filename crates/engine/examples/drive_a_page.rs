//! Drives one page with the engine as a library, no transport in between:
//! open a URL, read its snapshot, click the first link or button by its ref,
//! and read what the click led to. Typed calls (an `Action`) go through the
//! same door as a transport's JSON (`Session::call`): checked, audited,
//! redacted.
//!
//! `cargo run -p cdpilot-engine --example drive_a_page -- https://example.com`
//! (Chromium from `$CDPILOT_CHROME` or PATH).

use engine::calls::{ClickArgs, Common, ElementTarget, NavigateArgs, SnapshotArgs};
use engine::{Action, ActionError, Config, Engine};

/// The ref on the first snapshot line that names a link or a button.
fn first_clickable(snapshot: &str) -> Option<String> {
    let line = snapshot
        .lines()
        .find(|l| (l.contains("link") || l.contains("button")) && l.contains("[ref="))?;
    let start = line.find("[ref=")? + "[ref=".len();
    Some(line[start..].split(']').next()?.to_owned())
}

async fn drive(engine: &Engine, url: String) -> Result<(), ActionError> {
    let session = engine.session();
    let open = Action::Navigate(NavigateArgs {
        url: Some(url),
        // The call's budget: one that needs longer ends with `timeout`.
        common: Common {
            timeout_ms: Some(30_000),
            ..Default::default()
        },
        ..Default::default()
    });
    let opened = session.call(open.into()).await?;
    println!("{}\n", opened.text);

    let snapshot = Action::Snapshot(SnapshotArgs::default());
    let page = session.call(snapshot.clone().into()).await?;
    println!("{}\n", page.text);

    let Some(reference) = first_clickable(&page.text) else {
        println!("nothing to click on this page");
        return Ok(());
    };
    let click = Action::Click(ClickArgs {
        target: ElementTarget {
            reference: Some(reference.clone()),
            selector: None,
        },
        ..Default::default()
    });
    let clicked = session.call(click.into()).await?;
    println!("clicked {reference}: {}\n", clicked.text);

    let after = session.call(snapshot.clone().into()).await?;
    println!("now at {} ({})", after.data["url"], after.data["title"]);
    Ok(())
}

#[tokio::main]
async fn main() {
    let Some(url) = std::env::args().nth(1) else {
        eprintln!("usage: drive_a_page URL");
        std::process::exit(2);
    };
    let engine = Engine::new(Config::default());
    let result = drive(&engine, url).await;
    // Closes the browser the engine launched, whatever happened.
    engine.shutdown().await;
    if let Err(e) = result {
        // `e.code` is what a caller branches on; `e` prints the message and
        // the next step a model would read.
        eprintln!("{e}");
        std::process::exit(1);
    }
}
