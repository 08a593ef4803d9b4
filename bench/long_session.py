#!/usr/bin/env python3
"""pith beside pi 1.5.2 on long sessions: what reopening a session of N turns costs, and a
prompt and a run on top of it.

One pi-format session file of N turns is written per size (each turn a prompt, a `bash` call,
its 2 KB result and an answer: 4 entries). Compaction is off and the model's window is huge, so
both agents send the whole history, as a long-running user without compaction would. Each agent
reopens a copy with `--session FILE` in RPC mode over pipes, and the script measures:
  * open: spawn -> the `get_state` answer, wall time and the agent's own CPU (utime + stime);
  * the RSS after open (VmRSS);
  * the agent's CPU for one more prompt (a plain answer), prompt -> `agent_end`;
  * the agent's CPU for a run of 20 `bash` calls on top, and per turn;
  * the peak RSS of the whole (VmHWM);
  * the agent's CPU for one more prompt after the session is closed and reopened by a new
    process (pith takes the provider prefix it kept on disk; pi encodes it again).
The model is an Anthropic Messages server on loopback in this script: it answers a prompt
`run K` with K `bash` calls (`true`), one per turn, then a text; any other prompt with a text.
Its own parsing of the (large) requests is not the agent's CPU.

It prints one Markdown table with both agents' figures and the ratio (pi's / pith's).

Agents: pith (target/release/pith) and pi 1.5.2 (--pi15 EXE; default: the install the pi
1.5.2 RpcClient test or .ci/run makes in target/tmp/pi-client-1.5).

Usage: python3 bench/long_session.py [--turns 1000,10000,50000] [--calls 20] [--pi15 EXE]
                                      [--pith-only]
"""

import argparse
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agent_home import agent_env, pi15_command  # noqa: E402
from instant_llm import handler  # noqa: E402
from vs_pi import PITH, Output, status_kb  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")
COMPACT = (",", ":")  # pi writes its lines with JSON.stringify: no spaces
RESULT = ("x" * 79 + "\n") * 26  # about 2 KB of tool output


def sse(events):
    return "".join("event: %s\ndata: %s\n\n" % (name, json.dumps(data)) for name, data in events)


def answer(blocks, stop):
    """An Anthropic stream with these content blocks (text or tool_use)."""
    events = [("message_start", {"type": "message_start", "message": {
        "id": "msg_long", "type": "message", "role": "assistant", "model": "fake-model", "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}})]
    for i, block in enumerate(blocks):
        if block["type"] == "text":
            events.append(("content_block_start", {"type": "content_block_start", "index": i,
                                                   "content_block": {"type": "text", "text": ""}}))
            events.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                                   "delta": {"type": "text_delta", "text": block["text"]}}))
        else:
            events.append(("content_block_start", {"type": "content_block_start", "index": i,
                                                   "content_block": {"type": "tool_use", "id": block["id"],
                                                                     "name": block["name"], "input": {}}}))
            events.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {
                "type": "input_json_delta", "partial_json": json.dumps(block["input"])}}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop,
                                                                        "stop_sequence": None},
                                     "usage": {"output_tokens": 5}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return sse(events).encode()


def reply_for(request):
    """`run K`: a `bash` call until K results follow the prompt, then a text; else a text."""
    messages = request.get("messages", [])
    prompt, after = "", 0
    for message in reversed(messages):
        content = message.get("content")
        if message.get("role") != "user":
            continue
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        if any(b.get("type") == "tool_result" for b in blocks):
            after += sum(1 for b in blocks if b.get("type") == "tool_result")
            continue
        prompt = " ".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        break
    words = prompt.split()
    if len(words) == 2 and words[0] == "run" and after < int(words[1]):
        call = {"type": "tool_use", "id": "toolu_%s" % uuid.uuid4().hex[:20], "name": "bash",
                "input": {"command": "true"}}
        return answer([call], "tool_use")
    return answer([{"type": "text", "text": "Done."}], "end_turn")


def serve():
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), handler(lambda body: reply_for(json.loads(body))))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def write_session(path, turns, cwd):
    """A pi-format session of `turns` turns: prompt, `bash` call, its result, answer."""
    stamp = 1795312381000
    with open(path, "w") as f:
        ids = iter(range(1, 1 << 32))

        def entry(kind, parent, **fields):
            # pi's ids are 8 hex digits; counted, so that no two collide (a collision makes a cycle).
            eid = "%08x" % next(ids)
            f.write(json.dumps(dict({"type": kind, "id": eid, "parentId": parent,
                                     "timestamp": "2026-11-22T01:53:01.546Z"}, **fields),
                               separators=COMPACT) + "\n")
            return eid
        f.write(json.dumps({"type": "session", "version": 3, "id": str(uuid.uuid4()),
                            "timestamp": "2026-11-22T01:53:01.530Z", "cwd": cwd},
                           separators=COMPACT) + "\n")
        parent = entry("model_change", None, provider="fake", modelId="fake-model")
        usage = {"input": 1000, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1005,
                 "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}
        meta = {"api": "anthropic-messages", "provider": "fake", "model": "fake-model", "usage": usage}
        for turn in range(turns):
            call = "toolu_%08d" % turn
            parent = entry("message", parent, message={
                "role": "user", "content": [{"type": "text", "text": "question %d: what is in the file?" % turn}],
                "timestamp": stamp})
            parent = entry("message", parent, message=dict(meta, role="assistant", content=[
                {"type": "toolCall", "id": call, "name": "bash", "arguments": {"command": "cat notes.txt"}}],
                stopReason="toolUse", timestamp=stamp))
            parent = entry("message", parent, message={
                "role": "toolResult", "toolCallId": call, "toolName": "bash",
                "content": [{"type": "text", "text": RESULT}], "isError": False, "timestamp": stamp})
            parent = entry("message", parent, message=dict(meta, role="assistant", content=[
                {"type": "text", "text": "The file holds lines of x (turn %d)." % turn}],
                stopReason="stop", timestamp=stamp))


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


class Agent:
    """An agent reopening `session` in RPC mode over pipes, until closed."""

    def __init__(self, command, env, session, work):
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(command + ["--session", session], cwd=work, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self.out = Output(self.proc.stdout.fileno())
        self.proc.stdin.write(b'{"id":"s","type":"get_state"}\n')
        self.proc.stdin.flush()
        self.out.until(b'{"id":"s"')
        self.open_wall = time.perf_counter() - self.started

    def prompt(self, text):
        """The agent's CPU for one prompt, prompt -> `agent_end`."""
        before = cpu_s(self.proc.pid)
        self.proc.stdin.write((json.dumps({"type": "prompt", "message": text}) + "\n").encode())
        self.proc.stdin.flush()
        self.out.until(b'{"type":"agent_end"')
        return cpu_s(self.proc.pid) - before

    def close(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def measure(command, env, session, work, calls):
    """(open wall s, open CPU s, RSS after open KB, prompt CPU s, run CPU s, peak KB,
    prompt CPU s after reopening)."""
    agent = Agent(command, env, session, work)
    try:
        open_cpu = cpu_s(agent.proc.pid)
        rss = status_kb(agent.proc.pid, "VmRSS:")
        one = agent.prompt("one more question")
        run = agent.prompt("run %d" % calls)
        peak = status_kb(agent.proc.pid, "VmHWM:")
    finally:
        agent.close()
    # The same session reopened by a new process (pith keeps the provider prefix it learned).
    again = Agent(command, env, session, work)
    try:
        reopened = again.prompt("and one more")
    finally:
        again.close()
    return agent.open_wall, open_cpu, rss, one, run, peak, reopened


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", default="1000,10000,50000")
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--pi15", help="a pi 1.5.2 executable")
    ap.add_argument("--pith-only", action="store_true", help="measure pith alone")
    args = ap.parse_args()
    sizes = [int(n) for n in args.turns.split(",")]
    scratch = tempfile.mkdtemp()
    server = serve()
    port = server.server_address[1]
    env = agent_env(scratch, port, {"compaction": {"enabled": False}}, context_window=1000000000)
    base = ["--mode", "rpc", "--provider", "fake", "--model", "fake-model"]
    agents = [("pith", [PITH] + base)]
    pi15 = pi15_command(args.pi15)
    if args.pith_only:
        pass
    elif pi15:
        agents.append(("pi 1.5.2", pi15 + base + ["--no-extensions"]))
    else:
        print("pi 1.5.2 not found (give --pi15 EXE): pith alone", file=sys.stderr)
    work = os.path.join(scratch, "work")
    os.makedirs(work)
    rows = []
    for turns in sizes:
        original = os.path.join(scratch, "long-%d.jsonl" % turns)
        write_session(original, turns, work)
        size = os.path.getsize(original)
        figures = {}
        for name, command in agents:
            copy = os.path.join(scratch, "%s-%d.jsonl" % (name.replace(" ", "-"), turns))
            shutil.copyfile(original, copy)
            figures[name] = measure(command, env, copy, work, args.calls)
            print("%s, %d turns: %r" % (name, turns, figures[name]), file=sys.stderr)
        rows.append((turns, size, figures))
    server.shutdown()

    def ms(s):
        return "%.0f ms" % (s * 1000)

    def mb(kb):
        return "%.0f MB" % (kb / 1024)

    print("| turns (file) | agent | open: wall / CPU | RSS after open | one more prompt: CPU "
          "| run of %d calls: CPU (per turn) | peak RSS | reopened, one more prompt: CPU |"
          % args.calls)
    print("|---|---|---|---|---|---|---|---|")
    for turns, size, figures in rows:
        for i, (name, _) in enumerate(agents):
            f = figures[name]
            label = "%d (%.1f MB)" % (turns, size / 1e6) if i == 0 else ""
            print("| %s | %s | %s / %s | %s | %s | %s (%s) | %s | %s |" % (
                label, name, ms(f[0]), ms(f[1]), mb(f[2]), ms(f[3]), ms(f[4]),
                ms(f[4] / (args.calls + 1)), mb(f[5]), ms(f[6])))
        if len(agents) > 1:
            ours, theirs = figures["pith"], figures[agents[1][0]]

            def ratio(col):
                return "%.1f×" % (theirs[col] / ours[col]) if ours[col] else "–"
            print("| | pi / pith | %s / %s | %s | %s | %s | %s | %s |" % (
                ratio(0), ratio(1), ratio(2), ratio(3), ratio(4), ratio(5), ratio(6)))


if __name__ == "__main__":
    main()
