"""An MCP client built on the official `mcp` package drives cdpilot.

Spawns `cdpilot mcp` over stdio (or, with --http, `cdpilot serve` and its
streamable HTTP endpoint), serves a local page on loopback, and runs
navigate -> snapshot -> click (a ref from that snapshot) -> type ->
screenshot, checking that the page saw a trusted click. Exits non-zero on
any failure. Usage: python3 mcp_client_e2e.py /path/to/cdpilot [--http]
"""

import asyncio
import contextlib
import http.server
import re
import subprocess
import sys
import threading

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

PAGE = b"""<!doctype html><title>py e2e</title>
<button onclick="document.getElementById('r').textContent='trusted=' + event.isTrusted">Press me</button>
<p id="r">not pressed</p>
<label>Name <input id="name" value="old"></label>
"""


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, *args):
        pass


def attr(obj, snake, camel):
    """mcp 2.x names fields in snake_case, 1.x in camelCase."""
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


def text(result):
    return "".join(c.text for c in result.content if c.type == "text")


def ref_of(snapshot, needle):
    line = next(l for l in snapshot.splitlines() if needle in l)
    return re.search(r"\[ref=([^\]]+)\]", line).group(1)


@contextlib.asynccontextmanager
async def over_stdio(binary):
    params = StdioServerParameters(command=binary, args=["mcp"])
    async with stdio_client(params) as (read, write):
        yield read, write


@contextlib.asynccontextmanager
async def over_http(binary):
    """`cdpilot serve` on a free loopback port; its MCP endpoint with the token."""
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    token = "py-e2e-token"
    serve = subprocess.Popen(
        [binary, "serve", "--listen", "127.0.0.1:0", "--token", token],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        address = None
        for line in serve.stderr:
            sys.stderr.write(line)
            found = re.search(r"listening on http://(\S+)", line)
            if found:
                address = found.group(1)
                break
        assert address, "cdpilot serve did not start"
        threading.Thread(target=lambda: [sys.stderr.write(l) for l in serve.stderr], daemon=True).start()
        client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        async with client:
            async with streamable_http_client(f"http://{address}/mcp", http_client=client) as streams:
                yield streams[0], streams[1]
    finally:
        serve.terminate()
        assert serve.wait(timeout=60) == 0, "cdpilot serve did not exit cleanly on SIGTERM"


async def main(binary, transport):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"

    connect = over_http if transport == "http" else over_stdio
    async with connect(binary) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            assert attr(init, "server_info", "serverInfo").name == "cdpilot", init
            tools = {t.name for t in (await session.list_tools()).tools}
            assert {"browser_navigate", "browser_snapshot", "browser_click", "browser_type", "browser_screenshot"} <= tools, tools

            nav = await session.call_tool("browser_navigate", {"url": url})
            assert not attr(nav, "is_error", "isError"), text(nav)
            assert attr(nav, "structured_content", "structuredContent")["title"] == "py e2e", nav

            snap = text(await session.call_tool("browser_snapshot", {}))
            click = await session.call_tool("browser_click", {"ref": ref_of(snap, 'button "Press me"')})
            assert not attr(click, "is_error", "isError"), text(click)
            after = text(await session.call_tool("browser_snapshot", {}))
            assert "trusted=true" in after, after

            typed = await session.call_tool("browser_type", {"ref": ref_of(snap, 'textbox "Name"'), "text": "Ada"})
            assert attr(typed, "structured_content", "structuredContent")["value"] == "Ada", typed

            shot = await session.call_tool("browser_screenshot", {})
            images = [c for c in shot.content if c.type == "image"]
            assert images and attr(images[0], "mime_type", "mimeType") == "image/png", shot.content

            bad = await session.call_tool("browser_navigate", {"url": "javascript:alert(1)"})
            assert attr(bad, "is_error", "isError") and text(bad).startswith("invalid_argument:"), text(bad)
    server.shutdown()
    print(f"python mcp client over {transport}: navigate, snapshot, trusted click, type, screenshot all ok")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], "http" if "--http" in sys.argv[2:] else "stdio"))
