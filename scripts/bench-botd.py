#!/usr/bin/env python3
"""The identity bench (issue 45): what a page can read of the browser's
identity, and what an open-source bot detector makes of it, through each
server an agent would use, as the agent would drive it (MCP tools; a CLI
process per call for agent-browser).

    cargo build -p cdpilot && scripts/bench-botd.py          # debug build
    CDPILOT_BIN=target/release/cdpilot scripts/bench-botd.py

For each browser: the signal table of crates/testkit/site/identity.html
(the user agent in the page, a cross-origin iframe, a dedicated, a shared
and a service worker and a popup; `userAgentData` brands; the `sec-ch-ua`
header the page's request carried; `navigator.webdriver` and whether its
getter is native; screen, window and inner sizes; `document.hasFocus()`),
then BotD's verdict: FingerprintJS's `@fingerprintjs/botd` 2.0.0 (`npm
pack`, its ESM build, nothing of it in the repository) loaded by a page on
loopback that calls `load()` then `detect()`.

Browsers: cdpilot launching Chromium; cdpilot attached (`--cdp-url`) to a
Chromium started as a user starts one (`--headless=new
--remote-debugging-port=0`); Playwright MCP and agent-browser (installed from
npm as scripts/bench-peers.py does; left out, and said so, when they cannot
be); a bare headless Chromium (`--dump-dom`, BotD only). Prints Markdown.

Environment:
  CDPILOT_BIN               the cdpilot binary (default: this tree's debug build)
  CDPILOT_CHROME            Chromium (default /usr/bin/chromium)
  CDPILOT_LABEL             cdpilot's column name (default "cdpilot"; e.g. "cdpilot main")
  BOTD_JSON=1               also print every value read, as JSON
  BOTD_SERVERS=a,b          only these (cdpilot, cdpilot-attached, playwright, agent-browser, bare)
"""
import functools, http.server, importlib.util, json, os, re, shutil, subprocess, sys, tempfile, threading, time

BOTD = "2.0.0"
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
spec = importlib.util.spec_from_file_location("peers", os.path.join(HERE, "bench-peers.py"))
peers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(peers)

BOTD_PAGE = b"""<!doctype html><title>botd</title><p id=verdict>pending</p>
<script type=module>
import { load } from '/botd/botd.esm.js';
window.verdict = load().then(botd => botd.detect()).then(v => {
  document.getElementById('verdict').textContent = 'VERDICT ' + JSON.stringify(v);
  return v;
}, e => ({ error: String(e) }));
window.botd = async () => JSON.stringify(await window.verdict);
</script>"""


def handler_for(site_dir, botd_dir, log, other):
    class Site(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **k):
            super().__init__(*a, directory=site_dir, **k)

        def do_GET(self):
            log.append({"host": self.headers.get("Host"), "path": self.path,
                        "ua": self.headers.get("User-Agent"), "ch": self.headers.get("sec-ch-ua")})
            path = self.path.split("?")[0]
            if path == "/botd.html":
                return self.send(BOTD_PAGE, "text/html")
            if path.startswith("/botd/"):
                with open(os.path.join(botd_dir, os.path.basename(path)), "rb") as f:
                    return self.send(f.read(), "text/javascript")
            if path.endswith(".html"):
                with open(os.path.join(site_dir, path.lstrip("/")), "rb") as f:
                    return self.send(f.read().replace(b"{{B}}", other[0].encode()), "text/html")
            return super().do_GET()

        def send(self, body, kind):
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            # Asks for the high-entropy hints too, as a site that reads them.
            self.send_header("Accept-CH", "Sec-CH-UA-Full-Version-List")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass
    return Site


def serve(host, handler):
    httpd = http.server.ThreadingHTTPServer((host, 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd.server_port


def json_in(text):
    """The JSON value a tool's text answer carries (a JSON string is read
    again: `botd()` and `identity()` answer a string)."""
    for m in re.finditer(r'"(?:[^"\\]|\\.)*"|\{', text):
        try:
            value, _ = json.JSONDecoder().raw_decode(text[m.start():])
        except ValueError:
            continue
        if isinstance(value, str):
            try:
                return json.loads(value)
            except ValueError:
                continue
        return value
    raise ValueError(f"no JSON in {text[:300]!r}")


class Mcp:
    def __init__(self, name, argv, env, evaluate, cwd):
        self.name, self.argv, self.env, self.evaluate_args, self.cwd = name, argv, env, evaluate, cwd

    def open(self):
        self.s = peers.Mcp(self.argv, self.env, self.cwd)
        self.s.start()

    def navigate(self, url):
        self.s.call("browser_navigate", {"url": url})

    def evaluate(self, expression):
        return json_in(self.s.call("browser_evaluate", self.evaluate_args(expression))[0])

    def close(self):
        self.s.close()


class AgentBrowserCli(peers.AgentBrowser):
    def navigate(self, url):
        self.run("open", url)

    def evaluate(self, expression):
        return json_in(self.run("eval", expression))


def users_chrome(chrome, scratch):
    """A Chromium started as a user starts one with remote debugging."""
    profile = tempfile.mkdtemp(prefix="botd-users-chrome-", dir=scratch)
    p = subprocess.Popen([chrome, "--headless=new", "--no-sandbox", "--no-first-run", "--disable-gpu",
                          "--remote-debugging-port=0", f"--user-data-dir={profile}", "about:blank"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    port_file = os.path.join(profile, "DevToolsActivePort")
    for _ in range(600):
        if os.path.exists(port_file):
            lines = open(port_file).read().split("\n")
            if len(lines) > 1 and lines[1]:
                return p, f"ws://127.0.0.1:{lines[0]}{lines[1]}"
        time.sleep(0.05)
    p.kill()
    raise RuntimeError("the user's Chromium wrote no DevToolsActivePort")


SIGNALS = "identity().then(s => JSON.stringify(s))"
PLACES = ["page", "frame", "dedicated", "shared", "service", "popup"]


def table(results):
    rows = []
    names = list(results)
    rows.append("| signal | " + " | ".join(names) + " |")
    rows.append("| --- |" + " --- |" * len(names))

    def cell(name, fn):
        r = results[name]
        if "error" in r:
            return "—"
        try:
            return fn(r)
        except Exception:
            return "—"

    def token(ua):
        return (ua or "-").split(" ")[-2] if ua else "-"

    def line(label, fn):
        rows.append(f"| {label} | " + " | ".join(cell(n, fn) for n in names) + " |")

    for place in PLACES:
        line(f"{place} UA", lambda r, p=place: f"`{token(r['signals'][p]['ua'])}`")
    line("page brands (JS)", lambda r: f"`{r['signals']['page']['brands'] or 'empty'}`")
    line("page full version list (JS)", lambda r: f"`{r['signals']['page']['full'] or 'empty'}`")
    line("brands equal in every realm", lambda r: "yes" if len({r['signals'][p]['brands'] for p in PLACES if p in r['signals']}) == 1 else "**no**")
    line("`sec-ch-ua` (page request)", lambda r: f"`{r['header'] or 'not sent'}`")
    line("`sec-ch-ua` (cross-origin frame)", lambda r: f"`{r['frame_header'] or 'not sent'}`")
    line("`navigator.webdriver` / native getter", lambda r: f"{json.dumps(r['signals']['page']['webdriver'])} / {'yes' if r['signals']['page']['native'] else 'no'}")
    line("screen / outer / inner", lambda r: "{}x{} / {}x{} / {}x{}".format(*r['signals']['page']['screen'], *r['signals']['page']['outer'], *r['signals']['page']['inner']))
    line("`document.hasFocus()`", lambda r: str(r['signals']['page']['focus']).lower())
    line("BotD 2.0.0", lambda r: f"`{json.dumps(r['botd'])}`")
    return "\n".join(rows)


def main():
    chrome = os.environ.get("CDPILOT_CHROME", "/usr/bin/chromium")
    cache = os.path.expanduser("~/.cache/cdpilot")
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    binary = os.environ.get("CDPILOT_BIN", os.path.join(target, "debug", "cdpilot"))
    scratch = tempfile.mkdtemp(prefix="cdpilot-bench-botd-")
    only = [s for s in os.environ.get("BOTD_SERVERS", "").split(",") if s]
    label = os.environ.get("CDPILOT_LABEL", "cdpilot")

    botd_dir = os.path.join(cache, f"botd-{BOTD}", "package", "dist")
    if not os.path.exists(os.path.join(botd_dir, "botd.esm.js")):
        pack_dir = os.path.dirname(os.path.dirname(botd_dir))
        os.makedirs(pack_dir, exist_ok=True)
        subprocess.run(["npm", "pack", "--silent", f"@fingerprintjs/botd@{BOTD}"], cwd=pack_dir, check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run(["tar", "xzf", f"fingerprintjs-botd-{BOTD}.tgz"], cwd=pack_dir, check=True)

    log = []
    other = [""]
    site_dir = os.path.join(ROOT, "crates", "testkit", "site")
    handler = handler_for(site_dir, botd_dir, log, other)
    port_a = serve("127.0.0.1", handler)
    port_b = serve("localhost", handler)
    other[0] = f"http://localhost:{port_b}"
    base = f"http://127.0.0.1:{port_a}"

    servers = []
    cdpilot_eval = lambda e: {"expression": e, "timeout_ms": 20000}
    env = {"CDPILOT_CHROME": chrome, "CDPILOT_CONFIG": ""}
    if os.access(binary, os.X_OK):
        servers.append(("cdpilot", lambda: Mcp(label, [binary, "mcp"], env, cdpilot_eval, scratch)))
        servers.append(("cdpilot-attached", None))
    else:
        print(f"no cdpilot binary at {binary}: cargo build -p cdpilot", file=sys.stderr)
    pw_dir = os.path.join(cache, "playwright-mcp-" + peers.PLAYWRIGHT_MCP)
    pw_cli = os.path.join(pw_dir, "node_modules", "@playwright", "mcp", "cli.js")
    if not os.path.exists(pw_cli):
        subprocess.run(["npm", "install", "--silent", "--prefix", pw_dir, "@playwright/mcp@" + peers.PLAYWRIGHT_MCP])
    if os.path.exists(pw_cli):
        argv = ["node", pw_cli, "--headless", "--isolated", "--browser", "chromium", "--executable-path", chrome]
        pw_eval = lambda e: {"function": f"async () => {e}"}
        servers.append(("playwright", lambda: Mcp("Playwright MCP " + peers.PLAYWRIGHT_MCP, argv, {}, pw_eval, scratch)))
    else:
        print("Playwright MCP could not be installed: left out", file=sys.stderr)
    ab_dir = os.path.join(cache, "agent-browser")
    ab_bin = os.path.join(ab_dir, "node_modules", "agent-browser", "bin", "agent-browser-linux-x64")
    if not os.path.exists(ab_bin):
        subprocess.run(["npm", "install", "--silent", "--ignore-scripts", "--prefix", ab_dir, "agent-browser@" + peers.AGENT_BROWSER])
    if os.path.exists(ab_bin):
        os.chmod(ab_bin, 0o755)
        servers.append(("agent-browser", lambda: AgentBrowserCli("agent-browser " + peers.AGENT_BROWSER, ab_bin, chrome, scratch)))
    else:
        print("agent-browser could not be installed: left out", file=sys.stderr)
    servers.append(("bare", None))

    results = {}
    for key, make in servers:
        if only and key not in only:
            continue
        if key == "bare":
            out = subprocess.run([chrome, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=10000",
                                  f"--user-data-dir={tempfile.mkdtemp(dir=scratch)}", "--dump-dom", f"{base}/botd.html"],
                                 capture_output=True, text=True, timeout=120).stdout
            m = re.search(r"VERDICT (\{.*?\})<", out)
            results["bare headless Chromium"] = {"error": "signals not read", "botd": json.loads(m.group(1)) if m else None}
            continue
        users = None
        if key == "cdpilot-attached":
            users, ws = users_chrome(chrome, scratch)
            s = Mcp(label + " attached", [binary, "mcp", "--cdp-url", ws], env, cdpilot_eval, scratch)
        else:
            s = make()
        try:
            s.open()
            run = f"run-{len(results)}"
            s.navigate(f"{base}/identity.html?{run}")
            signals = s.evaluate(SIGNALS)
            header = next((r["ch"] for r in log if r["path"] == f"/identity.html?{run}"), None)
            frame_header = next((r["ch"] for r in reversed(log) if r["path"] == "/identity.html?frame"), None)
            s.navigate(f"{base}/botd.html?{run}")
            verdict = s.evaluate("window.botd()")
            results[s.name] = {"signals": signals, "header": header, "frame_header": frame_header, "botd": verdict}
        except Exception as e:
            print(f"{s.name}: {e}", file=sys.stderr)
            results[s.name] = {"error": str(e), "botd": None}
        finally:
            try:
                s.close()
            except Exception:
                pass
            if users:
                users.kill()
                users.wait()
        print(f"{s.name}: done", file=sys.stderr)
    print(table(results))
    if os.environ.get("BOTD_JSON"):
        print(json.dumps(results, indent=1))
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
