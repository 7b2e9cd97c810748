#!/usr/bin/env python3
"""The peer benchmark (issue 24): cdpilot, Playwright MCP and agent-browser
timed in ONE run on the same pages served on loopback, each row's samples
interleaved (one call of each server in turn), so a load that changes during
the run weighs on all of them alike. Prints a Markdown table: the median and
the 90th percentile of each row, the load average while the row ran, and
the screenshot's size per server.

    cargo build --release -p cdpilot && scripts/bench-peers.py

cdpilot and Playwright MCP are driven over MCP stdio. agent-browser has no
MCP server: it is driven the way an agent drives it, one CLI process per
call (its daemon keeps the browser), so its figures include that process's
start (a few ms).

Environment:
  PEERS_RUNS=20             samples per row and server (at least 20)
  PEERS_ROWS="a;b"          only these rows (names as printed; ; between)
  PEERS_SERVERS=a,b         only these servers (cdpilot names included)
  CDPILOT_PEERS_BINS=before=/path,after=/path
                            cdpilot builds to time side by side (default:
                            this tree's release build, named "cdpilot")
  CDPILOT_CHROME            Chromium (default /usr/bin/chromium)

Playwright MCP 0.0.83 is installed with npm under ~/.cache/cdpilot (as
scripts/bench-widgets.py does); agent-browser (its npm package carries the
Linux binary) under ~/.cache/cdpilot/agent-browser. A server that cannot be
installed is left out and said so."""
import functools, http.server, json, math, os, re, shutil, subprocess, sys, tempfile, threading, time
from urllib.parse import urlparse

PLAYWRIGHT_MCP = "0.0.83"
AGENT_BROWSER = "0.27.0"
REF = re.compile(r"\[ref=([a-z0-9]+)\]")


def controls_page(count):
    """The page of `count` controls: the same HTML as
    testkit::site::controls_page (the figures bench's 5,000-control page)."""
    parts = ["<!doctype html><title>Controls</title><h1>Inventory</h1><p>Rows of items.</p><table>"]
    for i in range(count):
        if i % 3 == 0:
            parts.append("<tr>")
        if i % 3 == 0:
            parts.append(f'<td>Item {i}</td><td><a href="#item-{i}">Open {i}</a></td>')
        elif i % 3 == 1:
            parts.append(f'<td><button onclick="this.dataset.n=1">Buy {i}</button></td>')
        else:
            parts.append(f'<td><input aria-label="Qty {i}" value="{i % 7}"></td></tr>')
    parts.append("</table><footer>End</footer>")
    return "".join(parts).encode()


class Site(http.server.SimpleHTTPRequestHandler):
    """crates/testkit/site's files, and /controls/N."""
    def do_GET(self):
        path = urlparse(self.path).path
        m = re.fullmatch(r"/controls/(\d+)", path)
        if not m:
            return super().do_GET()
        body = controls_page(int(m.group(1)))
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


def load():
    return os.getloadavg()[0]


def rss_mib(pid):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


class Mcp:
    """One MCP server over stdio (newline-delimited JSON-RPC)."""
    def __init__(self, argv, env, cwd):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  env={**os.environ, **env}, text=True, bufsize=1, cwd=cwd)
        self.id = 0

    def req(self, method, params):
        self.id += 1
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params}) + "\n")
        self.p.stdin.flush()
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("server closed")
            m = json.loads(line)
            if m.get("id") == self.id:
                if "error" in m:
                    raise RuntimeError(m["error"])
                return m["result"]

    def start(self):
        self.req("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "bench-peers", "version": "0"}})
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized", "params": {}}) + "\n")
        self.p.stdin.flush()
        return self.req("tools/list", {})

    def call(self, tool, args):
        r = self.req("tools/call", {"name": tool, "arguments": args})
        text = "\n".join(b.get("text", "") for b in r.get("content", []) if b.get("type") == "text")
        images = [b for b in r.get("content", []) if b.get("type") == "image"]
        if r.get("isError"):
            raise RuntimeError(f"{tool}: {text[:200]}")
        return text, images

    def close(self):
        try:
            self.p.stdin.close()
            self.p.wait(timeout=10)
        except Exception:
            self.p.kill()
            self.p.wait()


class Cdpilot:
    kind = "cdpilot"

    def __init__(self, name, binary, chrome, cwd):
        self.name, self.binary, self.chrome, self.cwd = name, binary, chrome, cwd
        self.env = {"CDPILOT_CHROME": chrome, "CDPILOT_CONFIG": ""}

    def spawn(self):
        return Mcp([self.binary, "mcp"], self.env, self.cwd)

    def open(self):
        self.s = self.spawn()
        self.s.start()

    def navigate(self, url):
        return self.s.call("browser_navigate", {"url": url})[0]

    def snapshot(self):
        return self.s.call("browser_snapshot", {})[0]

    def click(self, ref):
        return self.s.call("browser_click", {"ref": ref})[0]

    def evaluate(self):
        return self.s.call("browser_evaluate", {"expression": "1+1"})[0]

    def screenshot(self):
        _, images = self.s.call("browser_screenshot", {})
        return images[0]["data"], images[0]["mimeType"]

    def close(self):
        self.s.close()


class PlaywrightMcp(Cdpilot):
    kind = "playwright"

    def __init__(self, name, cli, chrome, cwd):
        self.name, self.cwd = name, cwd
        self.argv = ["node", cli, "--headless", "--isolated", "--browser", "chromium", "--executable-path", chrome]

    def spawn(self):
        return Mcp(self.argv, {}, self.cwd)

    def click(self, ref):
        return self.s.call("browser_click", {"target": ref, "element": "the control"})[0]

    def evaluate(self):
        return self.s.call("browser_evaluate", {"function": "() => 1+1"})[0]

    def screenshot(self):
        _, images = self.s.call("browser_take_screenshot", {})
        return images[0]["data"], images[0]["mimeType"]


class AgentBrowser:
    """agent-browser: a CLI process per call, its daemon holding the browser."""
    kind = "agent-browser"

    def __init__(self, name, binary, chrome, cwd):
        self.name, self.binary, self.cwd = name, binary, cwd
        self.session = f"peers-{os.getpid()}"
        self.env = {**os.environ, "AGENT_BROWSER_EXECUTABLE_PATH": chrome}
        self.shot = os.path.join(cwd, "agent-browser-shot.png")

    def run(self, *args):
        p = subprocess.run([self.binary, "--session", self.session, *args], capture_output=True, text=True,
                           env=self.env, cwd=self.cwd, timeout=120)
        if p.returncode != 0:
            raise RuntimeError(f"agent-browser {args[0]}: {(p.stderr or p.stdout)[:200]}")
        return p.stdout

    def open(self):
        pass

    def navigate(self, url):
        return self.run("open", url)

    def snapshot(self):
        return self.run("snapshot")

    def click(self, ref):
        return self.run("click", "@" + ref)

    def evaluate(self):
        return self.run("eval", "1+1")

    def screenshot(self):
        self.run("screenshot", self.shot)
        import base64
        return base64.b64encode(open(self.shot, "rb").read()).decode(), "image/png"

    def close(self):
        try:
            self.run("close")
        except Exception as e:
            print(f"agent-browser close: {e}", file=sys.stderr)


def find_ref(snapshot, needle):
    for line in snapshot.splitlines():
        if needle in line:
            m = REF.search(line)
            if m:
                return m.group(1)
    raise LookupError(f"no ref on a line with {needle!r}")


def image_size(data_b64):
    import base64
    head = base64.b64decode(data_b64[:4096])
    if head.startswith(b"\x89PNG"):
        return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
    return None


def stats(samples):
    s = sorted(samples)
    return s[len(s) // 2], s[max(0, math.ceil(0.9 * len(s)) - 1)]


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    runs = max(20, int(os.environ.get("PEERS_RUNS", "20")))
    chrome = os.environ.get("CDPILOT_CHROME", "/usr/bin/chromium")
    cache = os.path.expanduser("~/.cache/cdpilot")
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(root, "target"))
    scratch = tempfile.mkdtemp(prefix="cdpilot-bench-peers-")

    servers = []
    bins = os.environ.get("CDPILOT_PEERS_BINS") or f"cdpilot={os.path.join(target, 'release', 'cdpilot')}"
    for entry in bins.split(","):
        name, path = entry.split("=", 1)
        if not os.access(path, os.X_OK):
            sys.exit(f"no cdpilot binary at {path}: cargo build --release -p cdpilot")
        servers.append(Cdpilot(name, path, chrome, scratch))
    pw_dir = os.path.join(cache, "playwright-mcp-" + PLAYWRIGHT_MCP)
    pw_cli = os.path.join(pw_dir, "node_modules", "@playwright", "mcp", "cli.js")
    if not os.path.exists(pw_cli):
        subprocess.run(["npm", "install", "--silent", "--prefix", pw_dir, "@playwright/mcp@" + PLAYWRIGHT_MCP])
    if os.path.exists(pw_cli):
        servers.append(PlaywrightMcp("Playwright MCP " + PLAYWRIGHT_MCP, pw_cli, chrome, scratch))
    else:
        print("Playwright MCP could not be installed: left out", file=sys.stderr)
    ab_dir = os.path.join(cache, "agent-browser")
    ab_bin = os.path.join(ab_dir, "node_modules", "agent-browser", "bin", "agent-browser-linux-x64")
    if not os.path.exists(ab_bin):
        # --ignore-scripts: the postinstall would download from GitHub; the
        # package already carries the binary.
        subprocess.run(["npm", "install", "--silent", "--ignore-scripts", "--prefix", ab_dir, "agent-browser@" + AGENT_BROWSER])
    if os.path.exists(ab_bin):
        os.chmod(ab_bin, 0o755)
        servers.append(AgentBrowser("agent-browser " + AGENT_BROWSER, ab_bin, chrome, scratch))
    else:
        print("agent-browser could not be installed: left out", file=sys.stderr)
    only = os.environ.get("PEERS_SERVERS")
    if only:
        servers = [s for s in servers if s.name in only.split(",") or s.kind in only.split(",")]

    handler = functools.partial(Site, directory=os.path.join(root, "crates", "testkit", "site"))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_port}"

    results = {}  # row -> server -> [ms]
    notes = {}    # row -> text
    loads = {}    # row -> (before, after)
    seq = [0]

    def url(path):
        seq[0] += 1
        return f"{base}{path}?n={seq[0]}"

    def timed(fn):
        t = time.perf_counter()
        own = fn()
        # A sample may time itself (a float: its ms), leaving out its clean-up.
        return own if isinstance(own, float) else (time.perf_counter() - t) * 1000

    def row(name, setup, sample, who=None):
        wanted = os.environ.get("PEERS_ROWS")
        if wanted and name not in wanted.split(";"):
            return
        group = [s for s in servers if who is None or who(s)]
        before = load()
        state = {s.name: setup(s) for s in group}
        for _ in range(runs):
            for s in group:
                results.setdefault(name, {}).setdefault(s.name, []).append(timed(lambda: sample(s, state[s.name])))
        loads[name] = (before, load())
        print(f"{name}: done (load {before:.1f} → {load():.1f})", file=sys.stderr)

    # Cold start: a new server process each sample (MCP servers only),
    # timed to its tools/list answer (not its exit).
    def cold(s, _):
        t = time.perf_counter()
        m = s.spawn()
        m.start()
        took = (time.perf_counter() - t) * 1000
        cold_rss.setdefault(s.name, []).append(rss_mib(m.p.pid))
        m.close()
        return took
    cold_rss = {}
    row("cold start: spawn → initialize → tools/list", lambda s: None, cold, who=lambda s: s.kind != "agent-browser")
    if cold_rss:
        notes["server RSS after initialize"] = ", ".join(
            f"{n} {stats(v)[0]:.0f} MiB" for n, v in cold_rss.items())

    for s in servers:
        s.open()
        s.navigate(url("/index.html"))  # the browser is up before anything is timed

    row("navigate, small page (index.html)", lambda s: None, lambda s, _: s.navigate(url("/index.html")))
    row("navigate, 5,000-control page", lambda s: None, lambda s, _: s.navigate(url("/controls/5000")))

    def on_5k(s):
        s.navigate(url("/controls/5000"))
        return None
    row("full snapshot, 5,000 controls", on_5k, lambda s, _: s.snapshot())

    def small_click(s):
        s.navigate(url("/index.html"))
        return find_ref(s.snapshot(), '"Trusted click"')
    row("click by ref, small page", small_click, lambda s, r: s.click(r))

    def big_click(s):
        s.navigate(url("/controls/5000"))
        return find_ref(s.snapshot(), '"Buy 1"')
    row("click by ref, 5,000-control page", big_click, lambda s, r: s.click(r))

    row("evaluate 1+1", lambda s: s.navigate(url("/index.html")), lambda s, _: s.evaluate())

    shots = {}
    def shot(s, _):
        data, mime = s.screenshot()
        shots[s.name] = (len(data) * 3 // 4, mime, image_size(data))
    row("viewport screenshot (index.html)", lambda s: s.navigate(url("/index.html")), shot)
    if shots:
        notes["viewport screenshot (index.html)"] = ", ".join(
            f"{n} {b:,} bytes {m[6:]} {sz[0]}x{sz[1]}" if sz else f"{n} {b:,} bytes {m[6:]}"
            for n, (b, m, sz) in shots.items())

    for s in servers:
        s.close()
    httpd.shutdown()
    shutil.rmtree(scratch, ignore_errors=True)

    names = [s.name for s in servers]
    print(f"{runs} samples per row and server, interleaved; median / p90 in ms; "
          f"load average (1 min) before → after the row; {os.cpu_count()} cores\n")
    print("| row | " + " | ".join(names) + " | load |")
    print("| --- |" + " --- |" * len(names) + " --- |")
    for name, by in results.items():
        cells = []
        for n in names:
            if n in by:
                med, p90 = stats(by[n])
                cells.append(f"{med:,.1f} / {p90:,.1f}")
            else:
                cells.append("—")
        b, a = loads[name]
        print(f"| {name} | " + " | ".join(cells) + f" | {b:.1f} → {a:.1f} |")
    for k, v in notes.items():
        print(f"\n{k}: {v}")


if __name__ == "__main__":
    main()
