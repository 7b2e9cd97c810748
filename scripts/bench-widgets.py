#!/usr/bin/env python3
"""The widget gallery benchmark (issue 21): one scripted agent, the same
logic for cdpilot and for Playwright MCP. It reads only the text results
(snapshot lines), finds refs by the words on a line, acts through the
tools, and checks the outcome in the next snapshot. Per task: success,
calls, characters read. Prints a Markdown table.

    scripts/widgets && cargo build -p cdpilot && scripts/bench-widgets.py

Needs node/npm (Playwright MCP is installed next to the widget cache) and
Chromium at /usr/bin/chromium or $CDPILOT_CHROME."""
import json, subprocess, sys, os, re, time, threading, http.server, functools, shutil, tempfile

class Server:
    def __init__(self, name, argv, env=None, cwd=None):
        self.name = name
        # cwd: Playwright MCP writes its console logs under the working directory.
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  env={**os.environ, **(env or {})}, text=True, bufsize=1, cwd=cwd)
        self.id = 0
        self.calls = 0
        self.chars = 0
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

REF = re.compile(r"\[ref=([a-z0-9]+)\]")

def find_ref(snapshot, needles):
    """The ref on the first line with any needle; or, for a text line, of the
    nearest less-indented line above with a ref."""
    lines = snapshot.splitlines()
    for needle in needles:
        for i, line in enumerate(lines):
            if needle not in line: continue
            m = REF.search(line)
            if m: return m.group(1)
            if not line.strip().lstrip("- ").startswith("text:"): continue
            ind = len(line) - len(line.lstrip())
            for above in reversed(lines[:i]):
                if len(above) - len(above.lstrip()) < ind:
                    m = REF.search(above)
                    if m: return m.group(1)
                    break
    return None

class Agent:
    def __init__(self, server, pw):
        self.s, self.pw = server, pw
        self.last = ""
    def nav(self, url):
        self.s.call("browser_navigate", {"url": url})
    def snap(self):
        self.last, _ = self.s.call("browser_snapshot", {})
        return self.last
    def ref(self, *needles):
        r = find_ref(self.last, needles)
        if r is None: raise LookupError(f"no ref for {needles}")
        return r
    def ref_after(self, anchor, *needles):
        """The ref for a needle on the lines after the first with `anchor`
        (one post's icon, one row's button)."""
        lines = self.last.splitlines()
        at = next((i for i, l in enumerate(lines) if anchor in l), None)
        if at is None: raise LookupError(f"no line with {anchor}")
        r = find_ref("\n".join(lines[at:]), needles)
        if r is None: raise LookupError(f"no ref for {needles} after {anchor}")
        return r
    def click(self, *needles, after=None, double=False):
        r = self.ref_after(after, *needles) if after else self.ref(*needles)
        args = {"target": r, "element": needles[0]} if self.pw else {"ref": r}
        if double: args.update({"doubleClick": True} if self.pw else {"click_count": 2})
        text, err = self.s.call("browser_click", args)
        if err: raise RuntimeError(text[:100])
        return text
    def type(self, needles, text, **extra):
        args = {"target": self.ref(*needles), "text": text, "element": needles[0]} if self.pw else {"ref": self.ref(*needles), "text": text, **extra}
        text, err = self.s.call("browser_type", args)
        if err: raise RuntimeError(text[:100])
        return text
    def key(self, k):
        return self.s.call("browser_press_key", {"key": k})
    def drag(self, a, b):
        ra, rb = self.ref(*a), self.ref(*b)
        if self.pw:
            return self.s.call("browser_drag", {"startTarget": ra, "startElement": a[0], "endTarget": rb, "endElement": b[0]})
        return self.s.call("browser_drag", {"ref": ra, "to_ref": rb})
    def fill_number(self, needles, value, steps_right, key_step="ArrowRight"):
        """Sets a slider: fill_form with the number; if refused, click it and
        press keys (the fallback an agent would try)."""
        r = self.ref(*needles)
        if self.pw:
            _, err = self.s.call("browser_fill_form", {"fields": [{"name": needles[0], "element": needles[0], "type": "slider", "target": r, "value": str(value)}]})
        else:
            _, err = self.s.call("browser_fill_form", {"fields": [{"ref": r, "value": str(value)}]})
        if err:
            self.s.call("browser_click", {"target": r, "element": needles[0]} if self.pw else {"ref": r})
            for _ in range(steps_right): self.key(key_step)

def tasks(base):
    def datepicker(a):
        a.nav(base + "/widget-jqueryui.html"); a.snap(); a.click('"Trip date"'); a.snap()
        a.click('"Next"', "Next"); a.snap(); a.click('"2024-04-02"', 'link "2"'); return "Trip on: 2024-04-02" in a.snap()
    def flatpickr(a):
        a.nav(base + "/widget-flatpickr.html"); a.snap(); a.click('"Check-in"'); a.snap()
        a.click("next-month", "Next month"); a.snap(); a.click('"April 2, 2024"'); return "Check-in on: 2024-04-02" in a.snap()
    def jq_slider(a):
        a.nav(base + "/widget-jqueryui.html"); a.snap()
        a.fill_number(["ui-slider-handle", 'heading "Slider"'], 60, 8); return "Volume: 60" in a.snap()
    def jq_sortable(a):
        a.nav(base + "/widget-jqueryui.html"); a.snap(); a.drag(["Alpha"], ["Gamma"])
        s = a.snap(); return "Order: Alpha, Beta" not in s and "Order:" in s
    def autocomplete(a):
        a.nav(base + "/widget-jqueryui.html"); a.snap(); a.type(['"Language"'], "Ja"); a.snap()
        a.click("JavaScript"); return "Language chosen: JavaScript" in a.snap()
    def tomselect(a):
        a.nav(base + "/widget-tomselect.html"); a.snap(); a.type(['combobox "City"'], "Par"); a.snap()
        a.click('option "Paris"'); return "City chosen: Paris" in a.snap()
    def nouislider(a):
        a.nav(base + "/widget-nouislider.html"); a.snap()
        a.fill_number(['"Lowest price"'], 35, 15); return "Price from 35 to 80" in a.snap()
    def sortable_pointer(a):
        a.nav(base + "/widget-sortablejs.html"); a.snap(); a.drag(["Write report"], ["Deploy"])
        return "Tasks order: Review code, Deploy, Write report, Celebrate" in a.snap()
    def sortable_html5(a):
        a.nav(base + "/widget-sortablejs.html"); a.snap(); a.drag(["Apple"], ["Cherry"])
        return "Fruits order: Banana, Cherry, Apple" in a.snap()
    def quill(a):
        a.nav(base + "/widget-quill.html"); a.snap(); a.click("textbox", "Hello world"); a.key("End")
        a.type(["textbox", "Hello world"], " again", clear=False); a.key("Control+a"); a.key("Control+b")
        return "<strong>Hello world again</strong>" in a.snap()
    def jstree(a):
        a.nav(base + "/widget-jstree.html"); a.snap(); a.click('treeitem "Documents"', "Documents"); a.key("ArrowRight"); a.snap()
        a.click('treeitem "Invoices"', "Invoices"); a.key("ArrowRight"); a.snap(); a.click("invoice-2024-04.pdf")
        return "Opened file: invoice-2024-04.pdf" in a.snap()
    def native_date(a):
        a.nav(base + "/widget-native.html"); a.snap(); a.type(['"Start date"'], "2024-03-20")
        s = a.snap(); return "start:change" in s
    def select_text(a):
        a.nav(base + "/widget-quill.html"); a.snap()
        _, err = a.s.call("browser_select_option", {"text": "brown fox"}) if not a.pw else ("", True)
        return not err and "Selected text: brown fox" in a.snap()
    def clipboard(a):
        a.nav(base + "/widget-native.html"); a.snap(); a.click('"From"'); a.key("Control+a"); a.key("Control+c")
        a.click('"To"'); a.key("Control+v"); s = a.snap()
        return any('"To"' in l and "copy me" in l for l in s.splitlines()) or bool(re.search(r'textbox "To".*\n\s*- text: copy me|textbox "To"[^\n]*: copy me', s))
    # Issue 35: what the cheap signals missed, and drags in every direction.
    def heading_dblclick(a):
        a.nav(base + "/widget-native.html"); a.snap(); a.click("Double-click this heading", double=True)
        return "Heading double-clicked: yes" in a.snap()
    def feed_retweet(a):
        a.nav(base + "/widget-feed.html"); a.snap(); a.click("retweet", after="Bob")
        return "Last action: retweet of Bob" in a.snap()
    def feed_menu(a):
        a.nav(base + "/widget-feed.html"); a.snap(); a.click("more", after="Carol"); a.snap(); a.click("Mute Carol")
        return "Last action: Mute Carol (Carol)" in a.snap()
    def mail_forward(a):
        a.nav(base + "/widget-mail.html"); a.snap(); a.click("Dave"); a.snap(); a.click("Forward")
        return "Composer: Fwd: Lunch on Friday" in a.snap()
    def folder_tree(a):
        a.nav(base + "/widget-foldertree.html"); a.snap(); a.click("Documents"); a.snap(); a.click("Invoices"); a.snap()
        a.click("invoice-2024-04.pdf"); return "Opened file: invoice-2024-04.pdf" in a.snap()
    def virtual_reply(a):
        a.nav(base + "/widget-virtual.html"); a.snap(); a.click("Reply", after="Contact 3")
        return "Replying to: Contact 3" in a.snap()
    def feed_follow(a):
        a.nav(base + "/widget-feed.html"); a.snap(); a.click("follow", after="Erin")
        return "Last action: followed Erin" in a.snap()
    def virtual_scroll(a):
        """Scrolls the list to reach a row that is not rendered yet: cdpilot
        with browser_scroll on the list, Playwright MCP (no scroll tool) by
        focusing the list and pressing PageDown until the row shows."""
        a.nav(base + "/widget-virtual.html"); a.snap()
        if a.pw:
            a.click("Contact 1")
            for _ in range(10):
                a.key("PageDown")
                if '"Reply to Contact 40"' in a.snap(): break
        else:
            a.s.call("browser_scroll", {"ref": a.ref("Contact 1"), "direction": "down", "amount": 1110})
            a.snap()
        a.click('"Reply to Contact 40"')
        return "Replying to: Contact 40" in a.snap()
    def jq_sortable_up(a):
        a.nav(base + "/widget-jqueryui.html"); a.snap(); a.drag(["Delta"], ["Alpha"])
        return "Order: Delta, Alpha, Beta, Gamma" in a.snap()
    def html5_list(a):
        a.nav(base + "/widget-html5list.html"); a.snap(); a.drag(["Five"], ["One"]); a.snap(); a.drag(["Two"], ["Four"])
        return "Queue order: Five, One, Three, Four, Two" in a.snap()
    return [datepicker, flatpickr, jq_slider, jq_sortable, autocomplete, tomselect, nouislider,
            sortable_pointer, sortable_html5, quill, jstree, native_date, select_text, clipboard,
            heading_dblclick, feed_retweet, feed_menu, mail_forward, folder_tree, virtual_reply,
            jq_sortable_up, html5_list, feed_follow, virtual_scroll]

PLAYWRIGHT_MCP = "0.0.83"

def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cache = os.environ.get("CDPILOT_WIDGETS", os.path.expanduser("~/.cache/cdpilot/widgets"))
    chrome = os.environ.get("CDPILOT_CHROME", "/usr/bin/chromium")
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(root, "target"))
    cdpilot = os.path.join(target, "debug", "cdpilot")
    pw_dir = os.path.join(os.path.dirname(cache), "playwright-mcp-" + PLAYWRIGHT_MCP)
    pw_cli = os.path.join(pw_dir, "node_modules", "@playwright", "mcp", "cli.js")
    if not os.path.exists(pw_cli):
        os.makedirs(pw_dir, exist_ok=True)
        subprocess.run(["npm", "install", "--silent", "--prefix", pw_dir, "@playwright/mcp@" + PLAYWRIGHT_MCP], check=True)
    # The gallery pages and their libraries, served from one folder.
    site = tempfile.mkdtemp(prefix="cdpilot-bench-widgets-")
    pages = os.path.join(root, "crates", "testkit", "site")
    for name in os.listdir(pages):
        if name.startswith("widget-"):
            shutil.copy(os.path.join(pages, name), site)
    os.symlink(cache, os.path.join(site, "vendor"))
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=site)
    http.server.SimpleHTTPRequestHandler.log_message = lambda *a: None
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_port}"
    servers = {
        "cdpilot": ([cdpilot, "mcp"], {"CDPILOT_CHROME": chrome, "CDPILOT_CONFIG": ""}, False),
        "playwright-mcp": (["node", pw_cli, "--headless", "--isolated", "--browser", "chromium", "--executable-path", chrome], {}, True),
    }
    scratch = tempfile.mkdtemp(prefix="cdpilot-bench-cwd-")
    rows = {}
    # BENCH_WIDGETS_TASKS=a,b runs only those tasks.
    only = [t for t in os.environ.get("BENCH_WIDGETS_TASKS", "").split(",") if t]
    for name, (argv, env, pw) in servers.items():
        for t in tasks(base):
            if only and t.__name__ not in only: continue
            s = Server(name, argv, env, cwd=scratch)
            a = Agent(s, pw)
            started = time.time()
            try:
                ok = bool(t(a))
                why = ""
            except Exception as e:
                ok, why = False, str(e)[:80]
            if not ok and not why: why = "end state not reached"
            rows.setdefault(t.__name__, {})[name] = (ok, s.calls, s.chars, time.time() - started, why)
            s.close()
            print(name, t.__name__, ok, s.calls, s.chars, why, file=sys.stderr)
    shutil.rmtree(site, ignore_errors=True)
    shutil.rmtree(scratch, ignore_errors=True)
    print(f"| task | cdpilot: ok, calls, chars | Playwright MCP {PLAYWRIGHT_MCP}: ok, calls, chars |")
    print("| --- | --- | --- |")
    tot = {n: [0, 0, 0] for n in servers}
    for task, r in rows.items():
        cells = []
        for n in servers:
            ok, calls, chars, secs, why = r[n]
            tot[n][0] += ok; tot[n][1] += calls; tot[n][2] += chars
            why = why.replace("\n", " ").replace("|", "/")
            cells.append(f"{'yes' if ok else 'no'}, {calls}, {chars}" + (f" ({why})" if why and not ok else ""))
        print(f"| {task} | {cells[0]} | {cells[1]} |")
    print(f"| total | {tot['cdpilot'][0]}/{len(rows)}, {tot['cdpilot'][1]}, {tot['cdpilot'][2]} | {tot['playwright-mcp'][0]}/{len(rows)}, {tot['playwright-mcp'][1]}, {tot['playwright-mcp'][2]} |")

main()
