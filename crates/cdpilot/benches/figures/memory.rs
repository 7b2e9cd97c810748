//! The memory of the process tree a bench run starts: PSS per process,
//! sampled for the peak.

use std::time::Duration;

/// Samples the PSS of a process and all its descendants (the server and
/// the Chromium it started) every 200 ms, keeping the peak and what each
/// process held at that moment.
pub struct PeakPss {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    sampler: std::thread::JoinHandle<(u64, Vec<(String, u64)>)>,
}

impl PeakPss {
    pub fn watch(root: u32) -> PeakPss {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stopping = stop.clone();
        let sampler = std::thread::spawn(move || {
            let mut peak = (0, Vec::new());
            while !stopping.load(std::sync::atomic::Ordering::Relaxed) {
                let parts = tree_pss_kib(root);
                let total = parts.iter().map(|(_, kib)| kib).sum::<u64>();
                if total > peak.0 {
                    peak = (total, parts);
                }
                std::thread::sleep(Duration::from_millis(200));
            }
            peak.1.sort_by_key(|part| std::cmp::Reverse(part.1));
            peak
        });
        PeakPss { stop, sampler }
    }

    /// The peak (KiB), and each process's PSS then, largest first.
    pub fn stop(self) -> (u64, Vec<(String, u64)>) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.sampler.join().unwrap_or_default()
    }
}

/// PSS (KiB) of `root` and each of its descendants, named by kind
/// (`cdpilot`, Chromium's `browser`, `renderer`, `gpu-process`, …).
pub fn tree_pss_kib(root: u32) -> Vec<(String, u64)> {
    tree_kib(root, &["Pss:"])
}

/// Private memory (KiB: `Private_Clean` + `Private_Dirty`) of `root` and
/// each of its descendants, named by kind: unlike PSS, it does not move
/// with the other programs that share the same code pages (other
/// Chromiums on a shared machine). (The sessions bench's; not the figures'.)
#[allow(dead_code)]
pub fn tree_private_kib(root: u32) -> Vec<(String, u64)> {
    tree_kib(root, &["Private_Clean:", "Private_Dirty:"])
}

/// The kind of `root` and of each of its descendants, read from their
/// command lines only (cheap enough to poll: no `smaps_rollup`). (The
/// sessions bench's; not the figures'.)
#[allow(dead_code)]
pub fn tree_kinds(root: u32) -> Vec<String> {
    tree_pids(root).into_iter().map(process_kind).collect()
}

/// The sum of `fields` of `smaps_rollup` (KiB) for `root` and each of its
/// descendants, named by kind.
fn tree_kib(root: u32, fields: &[&str]) -> Vec<(String, u64)> {
    tree_pids(root)
        .iter()
        .map(|pid| {
            let kib = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))
                .unwrap_or_default()
                .lines()
                .filter(|l| fields.iter().any(|f| l.starts_with(f)))
                .filter_map(|l| l.split_whitespace().nth(1))
                .filter_map(|v| v.parse::<u64>().ok())
                .sum();
            (process_kind(*pid), kib)
        })
        .collect()
}

/// `root` and its descendants, parents first.
fn tree_pids(root: u32) -> Vec<u32> {
    let mut parents = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // The fields after the command's closing parenthesis: state, ppid.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if let Some(ppid) = ppid {
            parents.push((pid, ppid));
        }
    }
    let mut tree = vec![root];
    let mut i = 0;
    while i < tree.len() {
        let parent = tree[i];
        tree.extend(parents.iter().filter(|(_, p)| *p == parent).map(|(c, _)| *c));
        i += 1;
    }
    tree
}

/// What a process of the tree is: Chromium's `--type=` (a utility's
/// sub-type), else its program's name.
fn process_kind(pid: u32) -> String {
    let cmdline = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let args: Vec<&str> = cmdline.split(['\0', ' ']).filter(|a| !a.is_empty()).collect();
    let flag = |name: &str| args.iter().find_map(|a| a.strip_prefix(name));
    match flag("--type=") {
        Some("utility") => flag("--utility-sub-type=").unwrap_or("utility").to_owned(),
        Some(kind) => kind.to_owned(),
        // The program's name, not its path: a checkout under a directory
        // named after Chromium would count the server as the browser.
        None => {
            let program = args
                .first()
                .map(|a| a.rsplit('/').next().unwrap_or(a))
                .unwrap_or_default();
            match program.contains("chrom") {
                true => "browser".to_owned(),
                false => program.to_owned(),
            }
        }
    }
}
