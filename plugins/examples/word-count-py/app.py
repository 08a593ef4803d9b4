"""An example third-party tool in Python: counts the lines, words and bytes of a workspace file.

Built with componentize-py against the `tool-plugin` world of pith's WIT package (see README.md).
"""

import errno
import json
import os

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import host
from wit_world.imports.types import Content_Text, ToolError, ToolResult, ToolSpec

NAME = "word_count_py"


def fail(message: str) -> Err:
    return Err(ToolError(message=message, details=None))


def inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


class Tool(exports.Tool):
    def describe(self) -> list[ToolSpec]:
        parameters = {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Path of the file (relative or absolute)"}
            },
            "required": ["path"],
        }
        return [
            ToolSpec(
                name=NAME,
                label=NAME,
                description="Count the lines, words and bytes of a file in the workspace.",
                parameters=json.dumps(parameters),
                prompt_snippet=None,
                prompt_guidelines=[],
            )
        ]

    def execute(self, name: str, call_id: str, arguments: str) -> ToolResult:
        if name != NAME:
            raise fail(f"Unknown tool {name}")
        args = json.loads(arguments)
        given = args.get("path")
        if not isinstance(given, str):
            raise fail("Invalid arguments: `path` must be a string")
        workspace = host.workspace_dir()
        if workspace is None:
            raise fail("This tool was granted no workspace")
        # Relative paths are taken from the workspace, which pith preopens at its own path.
        path = os.path.normpath(os.path.join(workspace, given.removeprefix("@")))
        try:
            with open(path, "rb") as file:
                data = file.read()
            text = data.decode("utf-8")
        except OSError as err:
            # The sandbox reaches only the workspace: a path outside it, or a link inside it
            # that leads out, fails with EPERM (or ENOENT where nothing is preopened).
            if not inside(path, workspace):
                raise fail(f"Cannot read {given}: {path} is outside the workspace {workspace}")
            if err.errno == errno.EPERM:
                raise fail(f"Cannot read {given}: it leads outside the workspace {workspace}")
            raise fail(f"Cannot read {given}: {err.strerror}")
        except UnicodeDecodeError:
            raise fail(f"Cannot read {given}: not UTF-8 text")
        # As Rust's `lines()`: a final line needs no newline, and no text has no lines.
        lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
        words = len(text.split())
        counts = {"lines": lines, "words": words, "bytes": len(data)}
        return ToolResult(
            content=[Content_Text(f"{lines} lines, {words} words, {len(data)} bytes")],
            details=json.dumps(counts),
        )
