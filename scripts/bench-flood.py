#!/usr/bin/env python3
"""A page that floods the server (issue 41): `cdpilot mcp` on a page that
logs N strings of M MiB; prints the server's VmHWM and VmRSS (/proc) before,
at the peak, right after and 10 s after.

  scripts/bench-flood.py path/to/cdpilot [count] [mib]
"""
import http.server, json, os, subprocess, sys, tempfile, threading, time

binary = sys.argv[1]
count = int(sys.argv[2]) if len(sys.argv) > 2 else 4
mib = int(sys.argv[3]) if len(sys.argv) > 3 else 256

class Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"<!doctype html><title>flood</title><p>flood</p>"
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass

server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
threading.Thread(target=server.serve_forever, daemon=True).start()
url = f"http://127.0.0.1:{server.server_address[1]}/"

tmp = tempfile.mkdtemp()
env = dict(os.environ, TMPDIR=tmp, CDPILOT_CONFIG="", CDPILOT_CHROME=os.environ.get("CDPILOT_CHROME", "/usr/bin/chromium"))
proc = subprocess.Popen([binary, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
ids = iter(range(1, 10**6))

def request(method, params):
    i = next(ids)
    proc.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n").encode())
    proc.stdin.flush()
    while True:
        line = proc.stdout.readline()
        if not line:
            sys.exit("the server stopped")
        message = json.loads(line)
        if message.get("id") == i:
            return message

def call(tool, args):
    return request("tools/call", {"name": tool, "arguments": args})["result"]

def memory():
    fields = {}
    with open(f"/proc/{proc.pid}/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("VmHWM", "VmRSS"):
                fields[key] = int(value.split()[0]) // 1024
    return fields

request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "flood", "version": "0"}})
proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
proc.stdin.flush()
call("browser_navigate", {"url": url})
print("before", memory())
started = time.time()
out = call("browser_evaluate", {"expression": f"for (let i = 0; i < {count}; i++) console.log('x'.repeat({mib} << 20) + i); 1", "timeout_ms": 120000})
for _ in range(600):
    shown = call("browser_console", {})
    text = shown["content"][0]["text"]
    if text.count("MiB was dropped") >= count or text.count("xxxxxxxx") >= count:
        break
    time.sleep(0.1)
print(f"flood of {count} x {mib} MiB read in {time.time() - started:.1f} s")
print("peak and right after", memory())
time.sleep(10)
print("10 s after", memory())
ok = call("browser_evaluate", {"expression": "6 * 7"})
print("the session goes on:", ok["content"][0]["text"][:60].replace("\n", " "))
proc.stdin.close()
proc.wait(timeout=30)
