//! The `cdpilot` binary: argument parsing and wiring only.
//!
//! `cdpilot mcp` serves MCP over stdio until the client closes stdin or a
//! SIGINT/SIGTERM arrives, then closes the browser as a normal quit would
//! (a second signal stops waiting for that). `cdpilot serve` serves many
//! sessions over HTTP until SIGINT/SIGTERM, then shuts down the same way.
//! Logs go to stderr: in stdio mode stdout carries the protocol and nothing
//! else. The browser subcommands (`open`, `snapshot`, `click`, …) are the
//! CLI (`cli/`), a client of a background `cdpilot serve`; `doctor` and the
//! first-contact texts are in `first_contact.rs`.

mod cli;
mod first_contact;
mod log_redact;
#[cfg(not(any(feature = "mimalloc", feature = "jemalloc")))]
mod thread_caches;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use engine::{tools, Config, Engine};
use server::mcp::McpServer;
use tokio_util::sync::CancellationToken;

mod timings;
mod tools_page;

/// `--features dhat-heap`: dhat-rs counts every allocation by its stack
/// (the soak bench's "what grows", docs/src/figures.md).
#[cfg(feature = "dhat-heap")]
#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// `--features mimalloc`: mimalloc instead of the system allocator, to
/// measure one against the other.
#[cfg(all(feature = "mimalloc", not(feature = "dhat-heap")))]
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `--features jemalloc`: jemalloc instead of the system allocator, the
/// same comparison (its settings: `_RJEM_MALLOC_CONF`).
#[cfg(all(feature = "jemalloc", not(feature = "dhat-heap"), not(feature = "mimalloc")))]
#[global_allocator]
static ALLOC: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[derive(Parser)]
#[command(
    name = "cdpilot",
    version,
    about = "Drive a real Chromium safely and fast over CDP, for AI agents."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve MCP over stdio (add this command to your MCP client).
    Mcp(BrowserArgs),
    /// Serve many isolated sessions over HTTP: MCP at /mcp, the WebSocket API at /v1/ws.
    Serve(ServeArgs),
    /// Print the tool definitions (name, description, argument schema).
    Tools {
        /// As the JSON tools/list would send.
        #[arg(long, conflicts_with = "markdown")]
        json: bool,
        /// As the docs book's tools reference (docs/src/tools-reference.md).
        #[arg(long)]
        markdown: bool,
    },
    /// Check the browser: found, its version, launches headless, loads a page.
    Doctor(BrowserArgs),
    /// Print a one-time link that pairs the cdpilot extension in your Chrome with a running serve.
    Pair(PairArgs),
    /// Run a trace's calls again in a fresh session, without the model: each ref re-found by its role and name.
    Replay(cli::replay::ReplayArgs),
    /// Read a trace directory: its network as HAR 1.2, its run as a shell script, its timeline, its video.
    Trace {
        #[command(subcommand)]
        command: cli::trace::TraceCommand,
    },
}

#[derive(clap::Args)]
struct PairArgs {
    /// The serve to pair with (http://127.0.0.1:PORT); default: the CLI's background serve.
    #[arg(long, requires = "token")]
    server: Option<String>,
    /// That serve's token.
    #[arg(long)]
    token: Option<String>,
}

#[derive(clap::Args)]
struct ServeArgs {
    /// Address to listen on (default [serve] listen, 127.0.0.1:8931); port 0 picks a free one.
    #[arg(long)]
    listen: Option<String>,
    /// Bearer token every client must send (default [serve] token, $CDPILOT_SERVE_TOKEN, else generated).
    #[arg(long)]
    token: Option<String>,
    /// Stop after [session] idle_timeout_s with no session (the CLI's background server).
    #[arg(long, hide = true)]
    idle_exit: bool,
    /// Once listening, write {"url", "pid"} to this file (mode 0600); removed at exit.
    #[arg(long, hide = true)]
    state_file: Option<PathBuf>,
    /// A browser endpoint to place sessions on (ws://…, wss://… or http://host:port; repeatable;
    /// default [browser] endpoints, $CDPILOT_BROWSER_ENDPOINTS comma-separated).
    #[arg(long = "endpoint", value_name = "URL")]
    endpoints: Vec<String>,
    #[command(flatten)]
    browser: BrowserArgs,
}

impl ServeArgs {
    /// The configuration with `[serve]` overridden by the environment, then the flags.
    fn config(&self) -> Result<Config> {
        let mut config = self.browser.config()?;
        if !self.endpoints.is_empty() {
            config.browser.endpoints = self.endpoints.clone();
        }
        if let Some(listen) = &self.listen {
            config.serve.listen = listen.clone();
        }
        if let Some(token) = &self.token {
            config.serve.token = token.clone();
        }
        config
            .check()
            .map_err(|e| anyhow::anyhow!("command-line flags: {e}"))?;
        Ok(config)
    }
}

#[derive(clap::Args)]
pub(crate) struct BrowserArgs {
    /// Configuration file (default: $CDPILOT_CONFIG, then ./cdpilot.toml).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Show the browser window.
    #[arg(long, conflicts_with = "headless")]
    headed: bool,
    /// Run the browser without a window (the default).
    #[arg(long)]
    headless: bool,
    /// Chromium binary to launch.
    #[arg(long)]
    executable: Option<PathBuf>,
    /// Attach to a running browser (ws://… or http://host:port) instead of launching one.
    #[arg(long)]
    cdp_url: Option<String>,
    /// Use this persistent profile instead of a fresh temporary one (with --auto-connect: the running Chrome's).
    #[arg(long)]
    user_data_dir: Option<PathBuf>,
    /// Attach to your running Chrome (remote debugging turned on at chrome://inspect) through its
    /// DevToolsActivePort file; each session gets a browser context of its own ([browser] source = "auto_connect").
    #[arg(long, conflicts_with_all = ["cdp_url", "grid"])]
    auto_connect: bool,
    /// Place sessions in your own Chrome, through the paired cdpilot extension ([browser] source =
    /// "extension"); `cdpilot mcp` then listens on loopback for the extension (`cdpilot pair` pairs it).
    #[arg(long, conflicts_with = "auto_connect")]
    extension: bool,
    /// Run each session in a Selenium Grid 4 session of its own (the hub's http://host:4444).
    #[arg(long, value_name = "URL")]
    grid: Option<String>,
    /// Dialog policy: must_respond, auto_dismiss or auto_accept.
    #[arg(long)]
    dialog_policy: Option<String>,
    /// Tool groups beyond core to offer: network, storage, pdf, emulation, all.
    #[arg(long, value_delimiter = ',')]
    caps: Vec<String>,
    /// Allow URLs matching this URLPattern (repeatable; added after the file's rules).
    #[arg(long = "allow", value_name = "PATTERN")]
    allow: Vec<String>,
    /// Deny URLs matching this URLPattern (repeatable; a deny always wins).
    #[arg(long = "deny", value_name = "PATTERN")]
    deny: Vec<String>,
    /// Ask before URLs matching this URLPattern (repeatable; refused when the client cannot ask).
    #[arg(long = "ask", value_name = "PATTERN")]
    ask: Vec<String>,
    /// Print the metrics (as JSON, on stderr) when the server exits.
    #[arg(long)]
    log_metrics: bool,
    /// Trace every session into a directory of its own under DIR ([trace] dir, $CDPILOT_TRACE).
    #[arg(long, value_name = "DIR")]
    trace: Option<PathBuf>,
}

impl BrowserArgs {
    /// The configuration file, with the flags laid over the keys they name.
    pub(crate) fn config(&self) -> Result<Config> {
        let mut config = match Config::locate(self.config.as_deref()) {
            Some(path) => Config::load(&path).map_err(anyhow::Error::msg)?,
            None => Config::default(),
        };
        config
            .apply_env(|name| std::env::var(name).ok())
            .map_err(|e| anyhow::anyhow!("environment: {e}"))?;
        if self.headed {
            config.browser.headless = false;
        }
        if self.headless {
            config.browser.headless = true;
        }
        if let Some(path) = &self.executable {
            config.browser.executable = path.display().to_string();
        }
        if let Some(url) = &self.cdp_url {
            config.browser.cdp_url = url.clone();
        }
        if let Some(url) = &self.grid {
            config.browser.grid = url.clone();
        }
        if let Some(dir) = &self.user_data_dir {
            config.browser.user_data_dir = dir.display().to_string();
        }
        if self.auto_connect {
            config.browser.source = engine::config::Source::AutoConnect;
        }
        if self.extension {
            config.browser.source = engine::config::Source::Extension;
        }
        if !self.caps.is_empty() {
            config.tools.caps = self.caps.clone();
        }
        if let Some(dir) = &self.trace {
            config.trace.dir = dir.display().to_string();
        }
        if let Some(policy) = &self.dialog_policy {
            config.dialogs.policy = policy
                .parse()
                .map_err(|e| anyhow::anyhow!("command-line flags: {e}"))?;
        }
        // After the file's rules, so among matching non-deny rules a flag
        // decides (the last match wins); a deny anywhere still wins.
        for (action, patterns) in [("allow", &self.allow), ("deny", &self.deny), ("ask", &self.ask)] {
            for pattern in patterns {
                config.policy.rules.push(engine::config::Rule {
                    pattern: pattern.clone(),
                    action: action.into(),
                    origin: Some(format!("--{action} {pattern:?}")),
                });
            }
        }
        config
            .check()
            .map_err(|e| anyhow::anyhow!("command-line flags: {e}"))?;
        Ok(config)
    }
}

/// The dhat profiler (`--features dhat-heap`), written when main returns,
/// or earlier once a file named like the profile plus `.now` appears (the
/// soak bench's "what is live after every session closed").
#[cfg(feature = "dhat-heap")]
fn dhat_profile() -> impl Drop {
    use std::sync::{Arc, Mutex};
    let file = std::env::var("CDPILOT_DHAT_FILE").unwrap_or_else(|_| "dhat-heap.json".into());
    let profiler = dhat::Profiler::builder()
        .file_name(&file)
        .trim_backtraces(Some(16))
        .build();
    let held = Arc::new(Mutex::new(Some(profiler)));
    let watcher = held.clone();
    std::thread::spawn(move || loop {
        std::thread::sleep(std::time::Duration::from_millis(500));
        if std::path::Path::new(&format!("{file}.now")).exists() {
            drop(watcher.lock().unwrap().take());
            return;
        }
    });
    struct Written(Arc<Mutex<Option<dhat::Profiler>>>);
    impl Drop for Written {
        fn drop(&mut self) {
            drop(self.0.lock().unwrap().take());
        }
    }
    Written(held)
}

fn main() -> ExitCode {
    // Written when main returns (serve and mcp return after SIGTERM).
    #[cfg(feature = "dhat-heap")]
    let _profiler = dhat_profile();
    if std::env::args_os().len() == 1 {
        first_contact::list_subcommands();
        return ExitCode::SUCCESS;
    }
    let mut command = Cli::command().after_help(
        "Browser commands act in a session of a background `cdpilot serve`, started on first use. `cdpilot` alone lists every command.",
    );
    // The CLI's options go before or after its subcommand.
    command = command.args(cli::global_args());
    for verb in cli::verbs::all() {
        command = command.subcommand(verb.command().args(cli::global_args()));
    }
    let matches = command.get_matches();
    if let Some((name, sub)) = matches.subcommand() {
        if cli::verbs::find(name).is_some() {
            return cli::run(name, sub, &matches);
        }
    }
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("Error: {e:?}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Tools { markdown: true, .. } => {
            cli::out(tools_page::markdown().trim_end());
            Ok(ExitCode::SUCCESS)
        }
        Command::Tools { json, .. } => print_tools(json).map(|()| ExitCode::SUCCESS),
        Command::Doctor(args) => {
            let config = args.config()?;
            Ok(runtime()?.block_on(first_contact::doctor(config)))
        }
        Command::Mcp(args) => {
            first_contact::mcp_banner();
            init_logging();
            let config = args.config()?;
            let runtime = runtime()?;
            let outcome = runtime.block_on(serve_mcp(config, args.log_metrics));
            // The stdin reader sits in a blocking read that only the client
            // can end; do not wait for it.
            runtime.shutdown_background();
            outcome.map(|()| ExitCode::SUCCESS)
        }
        Command::Pair(args) => runtime()?.block_on(cli::pair::run(args.server, args.token)),
        Command::Replay(args) => {
            init_logging();
            let config = args.browser.config()?;
            let runtime = runtime()?;
            let code = runtime.block_on(cli::replay::run(config, &args));
            runtime.shutdown_timeout(std::time::Duration::from_secs(5));
            Ok(code)
        }
        Command::Trace { command } => Ok(cli::trace::run(command)),
        Command::Serve(args) => {
            #[cfg(not(any(feature = "mimalloc", feature = "jemalloc")))]
            thread_caches::off();
            init_logging();
            let config = args.config()?;
            let options = server::serve::Options {
                idle_exit: args.idle_exit,
                state_file: args.state_file.clone(),
            };
            runtime()?
                .block_on(serve_http(config, options))
                .map(|()| ExitCode::SUCCESS)
        }
    }
}

async fn serve_http(config: Config, options: server::serve::Options) -> Result<()> {
    let engine = Arc::new(Engine::start(config).map_err(anyhow::Error::msg)?);
    log_redact::install(engine.secrets(), &engine.config().browser);
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .context("installing the SIGTERM handler")?;
    let stop = async move {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => tracing::info!("SIGINT: shutting down"),
            _ = terminate.recv() => tracing::info!("SIGTERM: shutting down"),
        }
    };
    server::serve::run_with(engine, stop, options)
        .await
        .map_err(anyhow::Error::msg)
}

async fn serve_mcp(config: Config, log_metrics: bool) -> Result<()> {
    let engine = Arc::new(Engine::start(config).map_err(anyhow::Error::msg)?);
    log_redact::install(engine.secrets(), &engine.config().browser);
    // Hand-off pages over stdio: a loopback listener, started by the first
    // hand-off (serve's own listener serves them under `cdpilot serve`).
    let handoffs = engine.handoffs();
    if !handoffs.has_pages() {
        let host = server::serve::dashboard::handoff::OnDemand::new(handoffs);
        handoffs.serve_pages(Arc::new(host));
    }
    // The extension's relay over stdio: a loopback listener of its own
    // (serve's is the extension's way in under `cdpilot serve`).
    let listening = CancellationToken::new();
    let _listener = listening.clone().drop_guard();
    let _paired_with = match engine.extension_relay() {
        Some(_) => Some(extension_listener(&engine, listening).await?),
        None => None,
    };
    let server = McpServer::new(engine.clone());
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .context("installing the SIGTERM handler")?;
    let outcome = tokio::select! {
        served = server.serve_stdio() => served.map_err(anyhow::Error::msg),
        _ = tokio::signal::ctrl_c() => { tracing::info!("SIGINT: shutting down"); Ok(()) }
        _ = terminate.recv() => { tracing::info!("SIGTERM: shutting down"); Ok(()) }
    };
    // Closing waits for Chromium to write out its profile; someone who
    // signals again does not want to wait. Dropping the shutdown still ends
    // Chromium: the launch guard kills it when this process exits.
    tokio::select! {
        _ = engine.shutdown() => {}
        _ = tokio::signal::ctrl_c() => tracing::warn!("SIGINT again: not waiting for the browser to quit"),
        _ = terminate.recv() => tracing::warn!("SIGTERM again: not waiting for the browser to quit"),
    }
    if log_metrics {
        eprintln!("cdpilot metrics: {}", engine.metrics().to_json());
    }
    outcome
}

/// Starts `cdpilot mcp --extension`'s listener and says where it is: on
/// stderr, and in the runtime directory for `cdpilot pair` (removed when
/// the returned guard drops).
async fn extension_listener(
    engine: &Arc<Engine>,
    stopping: CancellationToken,
) -> Result<cli::server::ListenerFile> {
    let (local, token) = server::serve::extension::listen_for_stdio(engine.clone(), stopping)
        .await
        .map_err(anyhow::Error::msg)?;
    let file = cli::server::ListenerFile::write(&format!("http://{local}"), &token)
        .map_err(|e| anyhow::anyhow!(e.0))?;
    eprintln!(
        "cdpilot mcp: listening for the cdpilot extension on ws://{local}; pair it with `cdpilot pair`"
    );
    Ok(file)
}

/// The async runtime every server command runs on: two workers (the
/// machine cdpilot is measured on has two cores).
fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// Logs to stderr (`CDPILOT_LOG`, default `warn`); with
/// `CDPILOT_TIMINGS=<file>`, every timed step to that file as well.
fn init_logging() {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::Layer;

    let filter = tracing_subscriber::EnvFilter::try_from_env("CDPILOT_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let log = tracing_subscriber::fmt::layer()
        .with_writer(log_redact::Redacting)
        .with_ansi(false)
        .with_filter(filter);
    let timings = std::env::var("CDPILOT_TIMINGS")
        .ok()
        .filter(|path| !path.is_empty())
        .and_then(|path| match timings::Timings::to(&path) {
            Ok(layer) => Some(layer),
            Err(e) => {
                eprintln!("cdpilot: CDPILOT_TIMINGS={path}: {e}; step timings are off");
                None
            }
        })
        .map(|layer| {
            layer.with_filter(
                tracing_subscriber::filter::Targets::new()
                    .with_target(engine::timing::TARGET, tracing::Level::INFO),
            )
        });
    tracing_subscriber::registry().with(log).with(timings).init();
}

fn print_tools(json: bool) -> Result<()> {
    if json {
        let list: Vec<serde_json::Value> = tools::tools()
            .iter()
            .map(|t| serde_json::json!({"name": t.name, "description": t.description, "inputSchema": t.input_schema()}))
            .collect();
        cli::out(&serde_json::to_string_pretty(&list)?);
        return Ok(());
    }
    for tool in tools::tools() {
        cli::out(&format!(
            "{} ({})\n  {}",
            tool.name,
            tool.group.name(),
            tool.description
        ));
        let schema = tool.input_schema();
        let required: Vec<&str> = schema
            .get("required")
            .and_then(|r| r.as_array())
            .map(|r| r.iter().filter_map(|v| v.as_str()).collect())
            .unwrap_or_default();
        for (name, prop) in schema
            .get("properties")
            .and_then(|p| p.as_object())
            .into_iter()
            .flatten()
        {
            let kind = prop["type"].as_str().unwrap_or("value");
            let doc = prop["description"].as_str().unwrap_or("");
            let marker = if required.contains(&name.as_str()) {
                " (required)"
            } else {
                ""
            };
            cli::out(&format!("    {name}: {kind}{marker}  {doc}"));
        }
        cli::out("");
    }
    Ok(())
}
