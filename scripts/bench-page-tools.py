#!/usr/bin/env python3
"""Page tools (WebMCP, issue 36): the same task through cdpilot's
`browser_page_tool` and through Playwright MCP's page tools (`webmcp_<name>`
MCP tools, announced with notifications/tools/list_changed), on the test
site's shop page (crates/testkit/site/page-tools.html: tools in the top
frame and in a cross-origin iframe). Per server: success, calls, characters
read (tool results), and the tool list's size before and after the page's
tools were seen. Prints a Markdown table.

    cargo build -p cdpilot && scripts/bench-page-tools.py

Task: find the price of ABC-1 (a read-only tool), add 2 of it to the cart
(a tool not marked read-only), ask the cross-origin frame's tool to echo a
word, and see the cart in a snapshot.

Needs node (Playwright MCP as scripts/bench-widgets.py installs it) and
Chromium at /usr/bin/chromium or $CDPILOT_CHROME."""
import http.server, json, os, subprocess, sys, tempfile, threading

PLAYWRIGHT_MCP = "0.0.83"


class Server:
    """One MCP server on stdio, counting calls and the characters of their
    text results (as scripts/bench-widgets.py does)."""
    def __init__(self, name, argv, env=None, cwd=None):
        self.name = name
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  env={**os.environ, **(env or {})}, text=True, bufsize=1, cwd=cwd)
        self.id = 0
        self.calls = 0
        self.chars = 0
        self.notes = 0
        self.req("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}})
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized", "params": {}}) + "\n")
    def req(self, method, params):
        self.id += 1
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params}) + "\n")
        self.p.stdin.flush()
        while True:
            line = self.p.stdout.readline()
            if not line: raise RuntimeError("server closed")
            m = json.loads(line)
            if m.get("method") == "notifications/tools/list_changed":
                self.notes += 1
            if m.get("id") == self.id:
                if "error" in m: raise RuntimeError(m["error"])
                return m["result"]
    def call(self, tool, args):
        self.calls += 1
        r = self.req("tools/call", {"name": tool, "arguments": args})
        text = "\n".join(b.get("text", "") for b in r.get("content", []) if b.get("type") == "text")
        self.chars += len(text)
        return text, bool(r.get("isError"))
    def close(self):
        self.p.kill()


def serve(root, a_port_holder):
    """Origin A (127.0.0.1) and origin B (localhost) serving the site's
    pages with {{A}} and {{B}} filled in, as the test site does."""
    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *a): pass
        def do_GET(self):
            path = os.path.join(root, self.path.split("?")[0].lstrip("/") or "index.html")
            if not os.path.isfile(path):
                self.send_error(404); return
            body = open(path).read().replace("{{A}}", a_port_holder["a"]).replace("{{B}}", a_port_holder["b"]).encode()
            self.send_response(200)
            self.send_header("content-type", "text/html; charset=utf-8")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
    servers = []
    for host in ["127.0.0.1", "127.0.0.1"]:
        s = http.server.ThreadingHTTPServer((host, 0), Handler)
        threading.Thread(target=s.serve_forever, daemon=True).start()
        servers.append(s)
    a_port_holder["a"] = f"http://127.0.0.1:{servers[0].server_port}"
    a_port_holder["b"] = f"http://localhost:{servers[1].server_port}"
    return servers


def tools_size(server):
    tools = server.req("tools/list", {})["tools"]
    return len(tools), len(json.dumps(tools, separators=(",", ":")))


def run_cdpilot(s, base):
    s.call("browser_navigate", {"url": base + "/page-tools.html"})
    snap, _ = s.call("browser_snapshot", {})
    if "frame_echo(" not in snap:  # the frame's tool registers as the frame loads
        snap, _ = s.call("browser_snapshot", {})
    price, e1 = s.call("browser_page_tool", {"name": "lookup", "arguments": {"q": "ABC-1"}})
    added, e2 = s.call("browser_page_tool", {"name": "add_to_cart", "arguments": {"sku": "ABC-1", "qty": 2}})
    echo, e3 = s.call("browser_page_tool", {"name": "frame_echo", "arguments": {"word": "hi"}})
    after, _ = s.call("browser_snapshot", {})
    return (not (e1 or e2 or e3)) and "12 EUR" in price and "says hi" in echo and "cart: 2 x ABC-1" in after


def run_playwright(s, base):
    nav, _ = s.call("browser_navigate", {"url": base + "/page-tools.html"})
    if "frame_echo" not in nav:
        s.call("browser_snapshot", {})
    price, e1 = s.call("webmcp_lookup", {"q": "ABC-1"})
    added, e2 = s.call("webmcp_add_to_cart", {"sku": "ABC-1", "qty": 2})
    echo, e3 = s.call("webmcp_frame_echo", {"word": "hi"})
    after, _ = s.call("browser_snapshot", {})
    return (not (e1 or e2 or e3)) and "12 EUR" in price and "says hi" in echo and "cart: 2 x ABC-1" in after


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    chrome = os.environ.get("CDPILOT_CHROME", "/usr/bin/chromium")
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(root, "target"))
    cdpilot = os.path.join(target, "debug", "cdpilot")
    cache = os.environ.get("CDPILOT_WIDGETS", os.path.expanduser("~/.cache/cdpilot/widgets"))
    pw_dir = os.path.join(os.path.dirname(cache), "playwright-mcp-" + PLAYWRIGHT_MCP)
    pw_cli = os.path.join(pw_dir, "node_modules", "@playwright", "mcp", "cli.js")
    origins = {}
    serve(os.path.join(root, "crates", "testkit", "site"), origins)
    base = origins["a"]
    work = tempfile.mkdtemp(prefix="bench-page-tools-")
    pw_config = os.path.join(work, "pw.json")
    with open(pw_config, "w") as f:
        json.dump({"browser": {"launchOptions": {"args": ["--enable-features=WebMCP", "--site-per-process"]}}}, f)
    cd_config = os.path.join(work, "cdpilot.toml")
    with open(cd_config, "w") as f:
        f.write('[browser]\nargs = ["--site-per-process"]\n[tools]\npage_tools = true\n')
    rows = []
    for name, argv, env, run in [
        ("cdpilot", [cdpilot, "mcp"], {"CDPILOT_CHROME": chrome, "CDPILOT_CONFIG": cd_config}, run_cdpilot),
        ("Playwright MCP " + PLAYWRIGHT_MCP, ["node", pw_cli, "--headless", "--isolated", "--browser", "chromium",
                                              "--executable-path", chrome, "--config", pw_config], {}, run_playwright),
    ]:
        s = Server(name, argv, env, cwd=work)
        before = tools_size(s)
        try:
            ok = run(s, base)
        except Exception as e:  # a failed task is a row, not a crash
            print(f"{name}: {e}", file=sys.stderr)
            ok = False
        after = tools_size(s)
        rows.append((name, ok, s.calls, s.chars, before, after, s.notes))
        s.close()
    print("| server | task done | calls | characters read | tool list before → after the page (tools, chars) | list_changed |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, ok, calls, chars, before, after, notes in rows:
        print(f"| {name} | {'yes' if ok else 'no'} | {calls} | {chars:,} | {before[0]}, {before[1]:,} → {after[0]}, {after[1]:,} | {notes} |")


if __name__ == "__main__":
    main()
