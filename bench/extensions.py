#!/usr/bin/env python3
"""What extensions cost: the time ten extensions that hear `tool_call` (and `tool_result`) add
to a tool call, and the time of an extension's model call through the host beside a prompt's.

pith (target/release/pith) runs in RPC mode over pipes with the `faux` provider, whose scripted
answers cost nothing, so the figures are the agent's own work:
  * N `read` calls in runs of 5 (one per turn, then a text; each run in a new session, so the
    history stays short), with 0 and with 10 copies of the
    test extension `ext-probe` (each hears `tool_call`, `tool_result` and the observed events);
    each call is timed from its `tool_execution_start` frame to its `tool_execution_end` (the
    hooks run between them), and the median over the calls is taken; the difference is what the
    extensions add (warm: the instances are made by a first run, not timed);
  * N model calls made by an extension (`/ask-model`, the host's `completion.complete` to the
    faux model) beside N prompts answered with a text: a prompt is the session asking the same
    provider, with its events and session file on top.

Usage: python3 bench/extensions.py [--calls 200] [--asks 200]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PITH = os.path.join(ROOT, "target", "release", "pith")
PROBE = os.path.join(ROOT, "target", "wasm-plugins", "wasm32-wasip2", "release", "ext_probe.wasm")
PROBE_MANIFEST = os.path.join(ROOT, "plugins", "testing", "ext-probe", "pith.toml")
# pi's permission-gate example, ported: it hears `tool_call` only (and passes a `read` at once).
GATE = os.path.join(ROOT, "target", "wasm-plugins", "wasm32-wasip2", "release", "permission_gate.wasm")
GATE_MANIFEST = os.path.join(ROOT, "plugins", "examples", "permission-gate", "pith.toml")


class Agent:
    """pith over pipes; `call` sends a command and waits for its response."""

    def __init__(self, work, agent_dir, plugins, script):
        env = dict(os.environ, PITH_AGENT_DIR=agent_dir, PITH_FAUX_SCRIPT=json.dumps(script))
        command = [PITH, "--mode", "rpc", "--provider", "faux", "--model", "faux-model",
                   "--no-session", "--plugins-dir", plugins]
        self.process = subprocess.Popen(command, cwd=work, env=env, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next_id = 0

    def send(self, frame):
        self.process.stdin.write((json.dumps(frame) + "\n").encode())
        self.process.stdin.flush()

    def until(self, done):
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise SystemExit("pith ended early")
            frame = json.loads(line)
            if done(frame):
                return frame

    def call(self, frame):
        self.next_id += 1
        frame["id"] = str(self.next_id)
        self.send(frame)
        return self.until(lambda f: f.get("type") == "response" and f.get("id") == frame["id"])

    def run(self, message, calls=None):
        """Sends a prompt and waits for its run to end; the wall time in seconds. With `calls`
        (a dict), each tool call's start-to-end time as the frames arrive is put in it."""
        began = time.perf_counter()
        started = {}

        def seen(frame):
            kind = frame.get("type")
            if calls is not None and kind == "tool_execution_start":
                started[frame["toolCallId"]] = time.perf_counter()
            elif calls is not None and kind == "tool_execution_end":
                calls[frame["toolCallId"]] = time.perf_counter() - started[frame["toolCallId"]]
            return kind == "agent_end"

        self.call({"type": "prompt", "message": message})
        self.until(seen)
        return time.perf_counter() - began

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=30)


def tool_run_script(calls, prefix="r"):
    turns = [{"tool_calls": [{"id": "%s%d" % (prefix, i), "name": "read", "arguments": {"path": "small.txt"}}]}
             for i in range(calls)]
    return turns + [{"text": "done"}]


# Calls per run: each run starts a new session, so the history stays short. In one long run the
# faux provider's instance, which holds the whole context, is torn down beside the next tool
# call on these two cores, and that cost (which grows with the history and has nothing to do
# with extensions) would land in the timed window.
BATCH = 5


def per_call_ms(extensions, calls, scratch, plugin=(PROBE, PROBE_MANIFEST, "ext-probe")):
    """The median start-to-end time of a tool call in a warm run of `calls` reads with
    `extensions` copies of `plugin` (its component, manifest and id), in milliseconds."""
    wasm, manifest_path, plugin_id = plugin
    work = tempfile.mkdtemp(dir=scratch)
    agent_dir = tempfile.mkdtemp(dir=scratch)
    plugins = tempfile.mkdtemp(dir=scratch)
    with open(os.path.join(work, "small.txt"), "w") as f:
        f.write("a small file\n")
    manifest = open(manifest_path).read()
    for n in range(extensions):
        shutil.copy(wasm, os.path.join(plugins, "probe%d.wasm" % n))
        with open(os.path.join(plugins, "probe%d.toml" % n), "w") as f:
            f.write(manifest.replace('id = "%s"' % plugin_id, 'id = "%s-%d"' % (plugin_id, n))
                    .replace("\n[capabilities]", 'component = "probe%d.wasm"\n\n[capabilities]' % n))
    # The first runs make the instances (and compile nothing later); the next ones are timed.
    runs = max(1, calls // BATCH)
    script = []
    for n in range(2 * runs):
        script += tool_run_script(BATCH, prefix="b%d-" % n)
    agent = Agent(work, agent_dir, plugins, script)
    for _ in range(runs):
        agent.call({"type": "new_session"})
        agent.run("warm up")
    timed = {}
    for _ in range(runs):
        agent.call({"type": "new_session"})
        agent.run("timed", timed)
    agent.close()
    return statistics.median(timed.values()) * 1000


def asks_ms(asks, scratch):
    """Per call: an extension's model call through the host, and a prompt answered by text."""
    work = tempfile.mkdtemp(dir=scratch)
    agent_dir = tempfile.mkdtemp(dir=scratch)
    plugins = tempfile.mkdtemp(dir=scratch)
    shutil.copy(PROBE, os.path.join(plugins, "ext-probe.wasm"))
    shutil.copy(PROBE_MANIFEST, os.path.join(plugins, "ext-probe.toml"))
    with open(os.path.join(agent_dir, "settings.json"), "w") as f:
        json.dump({"plugins": {"ext-probe": {"grant": {"models": True}}}}, f)
    agent = Agent(work, agent_dir, plugins, [{"text": "an answer"}] * (2 * asks + 2))
    agent.run("warm up")

    def ask():
        # The command is answered once it has returned: its notice comes first.
        agent.next_id += 1
        agent.send({"id": str(agent.next_id), "type": "prompt", "message": "/ask-model hi"})
        agent.until(lambda f: f.get("method") == "notify" and
                    f.get("message", "").startswith("model said"))
        agent.until(lambda f: f.get("type") == "response" and f.get("id") == str(agent.next_id))

    ask()
    began = time.perf_counter()
    for _ in range(asks):
        ask()
    through_host = (time.perf_counter() - began) / asks * 1000
    began = time.perf_counter()
    for _ in range(asks):
        agent.run("hello")
    prompts = (time.perf_counter() - began) / asks * 1000
    agent.close()
    return through_host, prompts


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--asks", type=int, default=200)
    args = parser.parse_args()
    for needed in (PITH, PROBE, GATE):
        if not os.path.exists(needed):
            sys.exit("missing %s: build with `cargo build --release -p pith`" % needed)
    scratch = tempfile.mkdtemp()
    try:
        bare = per_call_ms(0, args.calls, scratch)
        ten = per_call_ms(10, args.calls, scratch)
        gates = per_call_ms(10, args.calls, scratch, (GATE, GATE_MANIFEST, "permission-gate"))
        host, prompt = asks_ms(args.asks, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print("| measure | per call |")
    print("|---|---|")
    print("| a `read` call (start to end, median), no extension | %.3f ms |" % bare)
    print("| the same, 10 extensions hearing `tool_call` only (permission-gate) | %.3f ms |" % gates)
    print("| added by those 10 extensions | %.1f µs |" % ((gates - bare) * 1000))
    print("| the same, 10 extensions hearing `tool_call` and `tool_result` (ext-probe) | %.3f ms |" % ten)
    print("| added by those 10 extensions | %.1f µs |" % ((ten - bare) * 1000))
    print("| an extension's model call through the host (`/ask-model`) | %.3f ms |" % host)
    print("| a prompt answered by the same model | %.3f ms |" % prompt)


if __name__ == "__main__":
    main()
