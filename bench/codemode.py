#!/usr/bin/env python3
"""codemode figures for the README, pith beside pi 1.5.2 in one run (release build; run after
`cargo build --release` and `../shared/reference-pi-1.5/setup.sh`):

  - a trivial script (`return 1`): the codemode call's `tool_execution_start` -> its
    `tool_execution_end` as a host reads the frames, the first call of a process and the later
    ones (medians);
  - a script making 100 `read` calls with `Promise.all`: start -> end.

Both agents get the same scripted model (the reference's fake_llm.py, Anthropic Messages) and
the same workspace. Usage: python3 bench/codemode.py [--runs 20] [--no-pi]
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
SHARED = os.path.join(os.path.dirname(ROOT), "shared")
FAKE_LLM = os.path.join(SHARED, "reference-pi", "fake_llm.py")
PI = os.path.join(SHARED, "reference-pi-1.5", "pi")
PITH = os.path.join(ROOT, "target/release/pith")
HUNDRED = "const texts = await Promise.all(Array.from({length: 100}, () => tools.read({path: 'a.txt'})));\nreturn texts.length;"


def models_json(port):
    return {"providers": {"fake": {
        "baseUrl": "http://127.0.0.1:%d" % port, "api": "anthropic-messages", "apiKey": "fake-key",
        "models": [{"id": "fake-model", "name": "Fake Model", "contextWindow": 200000, "maxTokens": 8192}]}}}


def script(runs):
    turns = []
    for i in range(runs):
        turns.append({"tool_calls": [{"id": "t%d" % i, "name": "codemode", "arguments": {"code": "return 1;"}}]})
        turns.append({"text": "ok"})
    turns.append({"tool_calls": [{"id": "h", "name": "codemode", "arguments": {"code": HUNDRED}}]})
    turns.append({"text": "ok"})
    return turns


def measure(command, runs, env_extra):
    with tempfile.TemporaryDirectory() as root:
        work, agent = os.path.join(root, "work"), os.path.join(root, "agent")
        os.makedirs(work)
        os.makedirs(agent)
        with open(os.path.join(work, "a.txt"), "w") as f:
            f.write("text\n")
        script_path = os.path.join(root, "script.json")
        with open(script_path, "w") as f:
            json.dump(script(runs), f)
        fake = subprocess.Popen([sys.executable, FAKE_LLM, script_path, "--port", "0"],
                                stdout=subprocess.PIPE, text=True)
        port = None
        while port is None:
            line = fake.stdout.readline()
            for word in line.split():
                if word.isdigit():
                    port = int(word)
        with open(os.path.join(agent, "models.json"), "w") as f:
            json.dump(models_json(port), f)
        with open(os.path.join(agent, "settings.json"), "w") as f:
            json.dump({"defaultTools": ["+codemode"]}, f)
        env = dict(os.environ, PI_CODING_AGENT_DIR=agent, PITH_AGENT_DIR=agent, HOME=root,
                   PI_OFFLINE="1", PI_SKIP_VERSION_CHECK="1", PI_TELEMETRY="0", **env_extra)
        agent_proc = subprocess.Popen(command + ["--mode", "rpc", "--provider", "fake", "--model", "fake-model",
                                                 "--no-session"],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                      text=True, env=env, cwd=work)
        starts, took = {}, {}
        for i in range(runs + 1):
            agent_proc.stdin.write(json.dumps({"id": "p%d" % i, "type": "prompt", "message": "go"}) + "\n")
            agent_proc.stdin.flush()
            while True:
                line = agent_proc.stdout.readline()
                if not line:
                    raise SystemExit("the agent ended early: %s" % command)
                frame = json.loads(line)
                kind = frame.get("type")
                if kind == "tool_execution_start" and frame["toolName"] == "codemode":
                    starts[frame["toolCallId"]] = time.perf_counter()
                elif kind == "tool_execution_end" and frame["toolName"] == "codemode":
                    took[frame["toolCallId"]] = time.perf_counter() - starts[frame["toolCallId"]]
                    text = "".join(b.get("text", "") for b in frame["result"]["content"])
                    if "Script completed" not in text:
                        raise SystemExit("the script failed: %s" % text)
                elif kind == "agent_end":
                    break
        agent_proc.kill()
        fake.kill()
        trivial = [took["t%d" % i] * 1000 for i in range(runs)]
        return trivial[0], statistics.median(trivial[1:]), took["h"] * 1000


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--no-pi", action="store_true")
    args = parser.parse_args()
    rows = [("pith", measure([PITH], args.runs, {}))]
    if not args.no_pi:
        rows.append(("pi 1.5.2", measure([PI], args.runs, {})))
    print("| agent | trivial script, first call | trivial script, later calls (median) | 100 `read` calls in one script |")
    print("|---|---|---|---|")
    for name, (first, later, hundred) in rows:
        print("| %s | %.1f ms | %.1f ms | %.1f ms |" % (name, first, later, hundred))


if __name__ == "__main__":
    main()
