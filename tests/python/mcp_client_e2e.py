"""An MCP client built on the official `mcp` package drives cdpilot.

Spawns `cdpilot mcp` over stdio, serves a local page on loopback, and runs
navigate -> snapshot -> click (a ref from that snapshot) -> type ->
screenshot, checking that the page saw a trusted click. Exits non-zero on
any failure. Usage: python3 mcp_client_e2e.py /path/to/cdpilot
"""

import asyncio
import http.server
import re
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


async def main(binary):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"

    params = StdioServerParameters(command=binary, args=["mcp"])
    async with stdio_client(params) as (read, write):
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
    print("python mcp client: navigate, snapshot, trusted click, type, screenshot all ok")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
