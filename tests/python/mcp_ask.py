"""`ask` URL rules through MCP elicitation, with the official `mcp` client
(issue 9). Spawns `cdpilot mcp` with ask rules on two origins of one local
server (127.0.0.1 and localhost) and a deny on one path, and answers each
elicitation from a scripted list:

- a client without elicitation: refused, saying an ask rule needs a client
  that can ask;
- decline: refused, nothing sent;
- once: allowed once, asked again by the next call;
- always: that origin is not asked again; the other origin still is;
- a configured deny wins over the always-grant on the same origin.

Exits non-zero on any failure. Usage: python3 mcp_ask.py /path/to/cdpilot
"""

import asyncio
import http.server
import sys
import threading

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

SEEN = []


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        SEEN.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(b"<!doctype html><title>ask</title><p>page " + self.path.encode() + b"</p>")

    def log_message(self, *args):
        pass


def attr(obj, snake, camel):
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


def text(result):
    return "".join(c.text for c in result.content if c.type == "text")


def is_error(result):
    return attr(result, "is_error", "isError")


class Scripted:
    """Answers elicitations from a list: "decline", "once" or "always"."""

    def __init__(self):
        self.answers = []
        self.asked = []

    async def __call__(self, context, params):
        self.asked.append(params.message)
        assert self.answers, f"asked with no answer scripted: {params.message}"
        answer = self.answers.pop(0)
        if answer == "decline":
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content={"allow": answer})


async def main(binary):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    a = f"http://127.0.0.1:{port}"
    b = f"http://localhost:{port}"
    params = StdioServerParameters(
        command=binary,
        args=["mcp", "--ask", "http://127.0.0.1:*/*", "--ask", "http://localhost:*/*", "--deny", "http://127.0.0.1:*/secret"],
    )

    # A client that cannot ask.
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            r = await session.call_tool("browser_navigate", {"url": a + "/mute"})
            assert is_error(r) and text(r).startswith("permission_denied:"), text(r)
            assert "an ask rule needs a client that can ask" in text(r), text(r)
            assert "/mute" not in SEEN, SEEN

    ask = Scripted()
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, elicitation_callback=ask) as session:
            await session.initialize()

            ask.answers = ["decline"]
            r = await session.call_tool("browser_navigate", {"url": a + "/declined"})
            assert is_error(r) and text(r).startswith("permission_denied:"), text(r)
            assert "refused by the user" in text(r), text(r)
            assert len(ask.asked) == 1 and a + "/declined" in ask.asked[0], ask.asked
            assert "/declined" not in SEEN, SEEN

            ask.answers = ["once"]
            r = await session.call_tool("browser_navigate", {"url": a + "/once"})
            assert not is_error(r), text(r)
            assert len(ask.asked) == 2 and "/once" in SEEN, (ask.asked, SEEN)
            # Once is once: the next call on that page asks again.
            ask.answers = ["once"]
            r = await session.call_tool("browser_snapshot", {})
            assert not is_error(r) and "page /once" in text(r), text(r)
            assert len(ask.asked) == 3, ask.asked

            ask.answers = ["always"]
            r = await session.call_tool("browser_navigate", {"url": a + "/always"})
            assert not is_error(r), text(r)
            assert len(ask.asked) == 4, ask.asked
            r = await session.call_tool("browser_navigate", {"url": a + "/again"})
            assert not is_error(r), text(r)
            r = await session.call_tool("browser_snapshot", {})
            assert not is_error(r) and "page /again" in text(r), text(r)
            assert len(ask.asked) == 4, f"the granted origin was asked again: {ask.asked}"

            # The grant is the origin's only: the other origin is asked.
            ask.answers = ["decline"]
            r = await session.call_tool("browser_navigate", {"url": b + "/other"})
            assert is_error(r) and "refused by the user" in text(r), text(r)
            assert len(ask.asked) == 5 and b + "/other" in ask.asked[4], ask.asked
            assert "/other" not in SEEN, SEEN

            # A configured deny wins over the always-grant, without asking.
            r = await session.call_tool("browser_navigate", {"url": a + "/secret"})
            assert is_error(r) and text(r).startswith("permission_denied:") and "is denied" in text(r), text(r)
            assert len(ask.asked) == 5, ask.asked
            assert "/secret" not in SEEN, SEEN

            # A new tab's URL is asked too, and "once" lets it load there.
            ask.answers = ["once"]
            r = await session.call_tool("browser_tabs", {"action": "new", "url": b + "/tab"})
            assert not is_error(r), text(r)
            assert len(ask.asked) == 6 and "/tab" in SEEN, (ask.asked, SEEN)
    server.shutdown()
    print("python mcp client: ask through elicitation all ok")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
