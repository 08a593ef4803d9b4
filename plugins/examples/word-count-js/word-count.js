// An example third-party tool in JavaScript: counts the lines, words and bytes of a workspace
// file. Built with componentize-js against the `tool-plugin-wasi-fs` world (see README.md).

import { workspaceDir } from "pith:plugin/host@0.1.0";
import { getDirectories } from "wasi:filesystem/preopens@0.2.12";

const NAME = "word_count_js";

// A tool error: componentize-js turns a thrown value into the `err` of the export's result.
class ToolError extends Error {
  constructor(message) {
    super(message);
    this.payload = { message, details: undefined };
  }
}

// Joins `path` onto `base` and removes `.` and `..` lexically, as the Rust SDK does.
function resolve(base, path) {
  const parts = [];
  for (const part of (path.startsWith("/") ? path : `${base}/${path}`).split("/")) {
    if (part === "..") parts.pop();
    else if (part && part !== ".") parts.push(part);
  }
  return `/${parts.join("/")}`;
}

const inside = (path, root) => path === root || path.startsWith(`${root.replace(/\/$/, "")}/`);

// Reads a file through the directory pith preopened around it (the workspace, at its own path).
function readFile(path) {
  const preopens = getDirectories()
    .filter(([, dir]) => inside(path, dir))
    .sort(([, a], [, b]) => b.length - a.length);
  if (preopens.length === 0) throw new Error("no preopened directory holds it");
  const [dir, dirPath] = preopens[0];
  const relative = path.slice(dirPath.replace(/\/$/, "").length + 1) || ".";
  const file = dir.openAt({ symlinkFollow: true }, relative, {}, { read: true });
  if (file.getType() === "directory") throw new Error("Is a directory");
  const chunks = [];
  let offset = 0n;
  for (;;) {
    const [chunk, end] = file.read(65536n, offset);
    chunks.push(chunk);
    offset += BigInt(chunk.length);
    if (end || chunk.length === 0) break;
  }
  const bytes = new Uint8Array(Number(offset));
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return bytes;
}

export const tool = {
  describe() {
    const parameters = {
      type: "object",
      properties: { path: { type: "string", description: "Path of the file (relative or absolute)" } },
      required: ["path"],
    };
    return [
      {
        name: NAME,
        label: NAME,
        description: "Count the lines, words and bytes of a file in the workspace.",
        parameters: JSON.stringify(parameters),
        promptSnippet: undefined,
        promptGuidelines: [],
      },
    ];
  },

  execute(name, callId, args) {
    if (name !== NAME) throw new ToolError(`Unknown tool ${name}`);
    const given = JSON.parse(args).path;
    if (typeof given !== "string") throw new ToolError("Invalid arguments: `path` must be a string");
    const workspace = workspaceDir();
    if (workspace === undefined) throw new ToolError("This tool was granted no workspace");
    const path = resolve(workspace, given.replace(/^@/, ""));
    let bytes;
    try {
      bytes = readFile(path);
    } catch (err) {
      // The sandbox reaches only the workspace: a path outside it, or a link inside it that
      // leads out, fails with `not-permitted`.
      if (!inside(path, workspace)) {
        throw new ToolError(`Cannot read ${given}: ${path} is outside the workspace ${workspace}`);
      }
      if (err.payload === "not-permitted") {
        throw new ToolError(`Cannot read ${given}: it leads outside the workspace ${workspace}`);
      }
      // Otherwise a WASI error code, such as `no-entry` or `access`.
      const reason = err.payload === "no-entry" ? "No such file or directory" : err.payload;
      throw new ToolError(`Cannot read ${given}: ${reason ?? err.message}`);
    }
    let text;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      throw new ToolError(`Cannot read ${given}: not UTF-8 text`);
    }
    // As Rust's `lines()`: a final line needs no newline, and no text has no lines.
    const lines = (text.match(/\n/g) ?? []).length + (text && !text.endsWith("\n") ? 1 : 0);
    const words = text.split(/\s+/).filter(Boolean).length;
    return {
      content: [{ tag: "text", val: `${lines} lines, ${words} words, ${bytes.length} bytes` }],
      details: JSON.stringify({ lines, words, bytes: bytes.length }),
    };
  },
};
