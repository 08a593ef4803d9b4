"""An MCP server written with the official Python SDK (`mcp` on PyPI, pinned in
requirements.txt beside this file), for pith's tests: file tools that show what the sandbox
lets a server do, a slow tool that reports progress (for timeouts and aborts), one that
crashes mid-call, one that adds a tool (`notifications/tools/list_changed`), an image.

Run: `python pith_test_server.py [stdio|http <port>]`.
"""

import os
import sys
import time

import anyio

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image

server = MCPServer("pith-test", instructions="A test server for pith.")

# A 1x1 PNG.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c63f8cf000004000300010a2db4d20000000049454e44ae426082"
)


@server.tool()
def write_file(path: str, content: str) -> str:
    """Writes content to a file."""
    try:
        with open(path, "w") as f:
            f.write(content)
    except OSError as err:
        raise ToolError(str(err)) from err
    return f"wrote {path}"


@server.tool()
def read_file(path: str) -> str:
    """Reads a file."""
    try:
        with open(path) as f:
            return f.read()
    except OSError as err:
        raise ToolError(str(err)) from err


@server.tool()
def get_env(name: str) -> str:
    """The value of an environment variable, or (unset)."""
    return os.environ.get(name, "(unset)")


@server.tool()
async def slow(seconds: float, ctx: Context) -> str:
    """Waits, reporting progress every 0.1 s. A cancelled call leaves the file `cancelled` in
    the directory named by PITH_TEST_MARKS, when set."""
    started = time.monotonic()
    step = 0
    try:
        while time.monotonic() - started < seconds:
            step += 1
            await ctx.report_progress(step, None, f"step {step}")
            await anyio.sleep(0.1)
    except BaseException:
        marks = os.environ.get("PITH_TEST_MARKS")
        if marks:
            with open(os.path.join(marks, "cancelled"), "w") as f:
                f.write("cancelled")
        raise
    return "slept"


@server.tool()
def crash() -> str:
    """Exits the server in the middle of the call."""
    sys.stderr.write("crashing on purpose\n")
    sys.stderr.flush()
    os._exit(3)


@server.tool()
async def add_tool(ctx: Context) -> str:
    """Adds the tool `late_tool` and tells the client."""

    def late_tool() -> str:
        """A tool added after start."""
        return "late"

    server.add_tool(late_tool)
    await ctx.request_context.session.send_tool_list_changed()
    return "added"


@server.tool()
def image() -> Image:
    """A tiny image."""
    return Image(data=PNG, format="png")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "http":
        server.settings.port = int(sys.argv[2])
        server.run("streamable-http")
    else:
        server.run()
