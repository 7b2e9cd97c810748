//! Drives one page with the engine as a library, no transport in between:
//! open a URL, read its snapshot, click the first link or button by its ref,
//! and read what the click led to.
//!
//! `cargo run -p cdpilot-engine --example drive_a_page -- https://example.com`
//! (Chromium from `$CDPILOT_CHROME` or PATH).

use std::time::Duration;

use engine::action::{ClickArgs, ElementTarget, NavigateArgs, SnapshotArgs};
use engine::{Action, ActionError, Budget, Config, Engine};

/// Each call's budget: a call that needs longer ends with `timeout`.
fn budget() -> Budget {
    Budget::with_timeout(Duration::from_secs(30))
}

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
        ..Default::default()
    });
    let opened = session.perform(&open, &budget()).await?;
    println!("{}\n", opened.text);

    let snapshot = Action::Snapshot(SnapshotArgs::default());
    let page = session.perform(&snapshot, &budget()).await?;
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
    let clicked = session.perform(&click, &budget()).await?;
    println!("clicked {reference}: {}\n", clicked.text);

    let after = session.perform(&snapshot, &budget()).await?;
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
