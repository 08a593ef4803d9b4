#!/usr/bin/env python3
"""The multi-session host beside pi 1.5.2's one process per session.

pith: one `pith --mode rpc` process opens N sessions (`open_session`, spread over 10 folders)
and the script measures:
  * the time to open one (command written -> its answer), median and 95th percentile;
  * the RSS per idle session ((VmRSS with N open - VmRSS before) / N);
  * the first-delta latency when S sessions are prompted at once (prompt written -> that
    session's first `text_delta`), median and 95th percentile;
  * the threads, file descriptors and child processes before the sessions and after closing
    them all (`close_session`): nothing may be left.
pi 1.5.2: K `pi --mode rpc` processes (one per session, as hosts pool them; K as the machine
can hold them), with the same figures: spawn -> `get_state` answer, RSS per process, first
delta with all K prompted at once, processes left after closing their stdin.

The model is an Anthropic Messages server on loopback answering every request with a short
text stream (5 deltas).

Usage: python3 bench/session_host.py [--sessions 1000] [--streaming 100] [--pi-processes 20]
                                     [--pi15 EXE] [--pith-only]
"""

import argparse
import http.server
import json
import os
import select
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agent_home import agent_env, pi15_command  # noqa: E402
from instant_llm import handler, stream_body  # noqa: E402
from vs_pi import PITH, status_kb  # noqa: E402

FOLDERS = 10


def children(pid):
    """Processes whose parent is `pid`."""
    count = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                    count += 1
        except OSError:
            pass
    return count


def resources(pid):
    """(threads, file descriptors, child processes) of `pid`."""
    return (len(os.listdir("/proc/%d/task" % pid)), len(os.listdir("/proc/%d/fd" % pid)),
            children(pid))


def thread_names(pid):
    """`pid`'s threads, as (id, name)."""
    names = []
    for task in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, task)) as f:
                names.append((task, f.read().strip()))
        except OSError:
            pass
    return names


def fd_kinds(pid):
    """The kinds of `pid`'s file descriptors (socket, pipe, anon_inode:…, file), counted."""
    kinds = {}
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            target = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        kind = target.split(":[")[0] if ":[" in target else (
            "file " + target if target.startswith("/") else target)
        kinds[kind] = kinds.get(kind, 0) + 1
    return kinds


class Lines:
    """An agent's stdout read as JSON frames."""

    def __init__(self, proc):
        self.proc, self.pending = proc, b""

    def next(self, timeout=60):
        while b"\n" not in self.pending:
            ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
            if not ready:
                raise RuntimeError("no frame within %ds" % timeout)
            chunk = os.read(self.proc.stdout.fileno(), 1 << 20)
            if not chunk:
                raise RuntimeError("the agent closed stdout")
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return json.loads(line)

    def until(self, pred):
        while True:
            frame = self.next()
            if pred(frame):
                return frame


def send(proc, frame):
    proc.stdin.write((json.dumps(frame) + "\n").encode())
    proc.stdin.flush()


def percentiles(values):
    values = sorted(values)
    return statistics.median(values), values[min(len(values) - 1, int(len(values) * 0.95))]


def is_delta(frame):
    event = frame.get("assistantMessageEvent") or {}
    return frame.get("type") == "message_update" and event.get("type") == "text_delta"


def measure_pith(env, work, sessions, streaming, idle_wait):
    proc = subprocess.Popen([PITH, "--mode", "rpc", "--provider", "fake", "--model", "fake-model",
                             "--session-dir", os.path.join(work, "sessions")],
                            cwd=work, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    out = Lines(proc)
    send(proc, {"id": "s", "type": "get_state"})
    out.until(lambda f: f.get("id") == "s")
    before = resources(proc.pid)
    print("pith fds before the sessions: %r" % fd_kinds(proc.pid), file=sys.stderr)
    threads_before = thread_names(proc.pid)
    rss_before = status_kb(proc.pid, "VmRSS:")
    opens = []
    for n in range(sessions):
        folder = os.path.join(work, "folder-%d" % (n % FOLDERS))
        began = time.perf_counter()
        send(proc, {"id": "o%d" % n, "type": "open_session", "sessionId": "s%d" % n, "cwd": folder})
        answer = out.until(lambda f: f.get("id") == "o%d" % n)
        opens.append(time.perf_counter() - began)
        if not answer.get("success"):
            raise RuntimeError(answer)
    time.sleep(1)
    rss_open = status_kb(proc.pid, "VmRSS:")
    # S sessions prompted at once.
    began = time.perf_counter()
    for n in range(streaming):
        send(proc, {"type": "prompt", "sessionId": "s%d" % n, "message": "hello"})
    first, ended = {}, set()
    while len(ended) < streaming:
        frame = out.next()
        sid = frame.get("sessionId")
        if is_delta(frame) and sid not in first:
            first[sid] = time.perf_counter() - began
        if frame.get("type") == "agent_end":
            ended.add(sid)
    for n in range(sessions):
        send(proc, {"id": "c%d" % n, "type": "close_session", "sessionId": "s%d" % n})
    for n in range(sessions):
        out.until(lambda f: f.get("id", "").startswith("c"))
    # Idle worker threads of the blocking pool end after 10 s; idle HTTP connections stay
    # pooled for the next request (16 at most, each closed after 90 s idle: --idle-wait 95
    # sees them go).
    time.sleep(idle_wait)
    after = resources(proc.pid)
    print("pith fds after closing: %r" % fd_kinds(proc.pid), file=sys.stderr)
    print("pith threads started meanwhile and still there: %r" % sorted(
        set(thread_names(proc.pid)) - set(threads_before)), file=sys.stderr)
    rss_closed = status_kb(proc.pid, "VmRSS:")
    proc.stdin.close()
    proc.wait(timeout=60)
    return {
        "open": percentiles(opens),
        "rss_per_session_kb": (rss_open - rss_before) / sessions,
        "rss": (rss_before, rss_open, rss_closed),
        "first_delta": percentiles(list(first.values())),
        "before": before,
        "after": after,
    }


def measure_pi(command, env, work, processes):
    agents, spawns = [], []
    for n in range(processes):
        folder = os.path.join(work, "folder-%d" % (n % FOLDERS))
        began = time.perf_counter()
        proc = subprocess.Popen(command, cwd=folder, env=env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        out = Lines(proc)
        send(proc, {"id": "s", "type": "get_state"})
        out.until(lambda f: f.get("id") == "s")
        spawns.append(time.perf_counter() - began)
        agents.append((proc, out))
    time.sleep(1)
    rss = [status_kb(proc.pid, "VmRSS:") for proc, _ in agents]
    began = time.perf_counter()
    for proc, _ in agents:
        send(proc, {"type": "prompt", "message": "hello"})
    first = []
    for proc, out in agents:
        out.until(is_delta)
        first.append(time.perf_counter() - began)
    for proc, out in agents:
        out.until(lambda f: f.get("type") == "agent_end")
    left = 0
    for proc, _ in agents:
        proc.stdin.close()
    for proc, _ in agents:
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            left += 1
            proc.kill()
    return {
        "open": percentiles(spawns),
        "rss_per_session_kb": statistics.mean(rss),
        "first_delta": percentiles(first),
        "left": left,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--streaming", type=int, default=100)
    ap.add_argument("--pi-processes", type=int, default=20)
    ap.add_argument("--pi15", help="a pi 1.5.2 executable")
    ap.add_argument("--pith-only", action="store_true")
    ap.add_argument("--idle-wait", type=float, default=12,
                    help="seconds to wait after closing the sessions before counting")
    args = ap.parse_args()
    scratch = tempfile.mkdtemp()
    body = stream_body(5)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler(lambda _request: body))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    env = agent_env(scratch, port, {"sessionHost": {"maxOpenSessions": args.sessions,
                                                    "maxConcurrentRuns": args.streaming}})
    work = os.path.join(scratch, "work")
    for n in range(FOLDERS):
        os.makedirs(os.path.join(work, "folder-%d" % n))
    pith = measure_pith(env, work, args.sessions, args.streaming, args.idle_wait)
    print("pith: %r" % pith, file=sys.stderr)
    pi = None
    pi15 = pi15_command(args.pi15)
    if pi15 and not args.pith_only:
        command = pi15 + ["--mode", "rpc", "--provider", "fake", "--model", "fake-model",
                          "--no-extensions", "--session-dir", os.path.join(work, "pi-sessions")]
        pi = measure_pi(command, env, work, args.pi_processes)
        print("pi: %r" % pi, file=sys.stderr)
    server.shutdown()

    def ms(pair):
        return "%.1f / %.1f ms" % (pair[0] * 1000, pair[1] * 1000)

    print("| | pith: 1 process, %d sessions | pi 1.5.2: %s |" % (
        args.sessions, "%d processes" % args.pi_processes if pi else "not run"))
    print("|---|---|---|")
    print("| open one session (median / p95) | %s | %s (spawn -> get_state) |" % (
        ms(pith["open"]), ms(pi["open"]) if pi else "-"))
    print("| RSS per idle session | %.0f KB | %.0f KB |" % (
        pith["rss_per_session_kb"], pi["rss_per_session_kb"] if pi else 0))
    print("| first delta, sessions prompted at once (median / p95) | %s (%d at once) | %s (%d at once) |" % (
        ms(pith["first_delta"]), args.streaming, ms(pi["first_delta"]) if pi else "-",
        args.pi_processes))
    print("| threads / fds / children: before -> after closing all | %d/%d/%d -> %d/%d/%d | %s |" % (
        *pith["before"], *pith["after"], "%d processes left" % pi["left"] if pi else "-"))
    print("| RSS: before / %d open / all closed | %.0f / %.0f / %.0f MB | |" % (
        args.sessions, *(kb / 1024 for kb in pith["rss"])))


if __name__ == "__main__":
    main()
