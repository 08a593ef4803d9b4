#!/usr/bin/env python3
"""Regenerates runtime/startup-order.txt: the functions of the release binary that a start runs
(spawn, `get_state` in RPC mode or `initialize` in ACP mode, idle, stdin closed), in the linker's (mangled) names. The build passes the
list to LLD (`--symbol-ordering-file`) so those functions sit next to each other: the kernel maps
64 KB of the binary around each page a process touches, and the start-up code scattered through
20 MB of code kept about 4 MB more resident than it runs.

Needs valgrind (Debian's `valgrind`) and a release build: `cargo build --release`, then
`python3 bench/startup_order.py`, then build again. A list that has gone stale only costs memory
(names the binary no longer has are skipped)."""

import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PITH = os.path.join(ROOT, "target", "release", "pith")
OUT = os.path.join(ROOT, "runtime", "startup-order.txt")


# Each start recorded: the mode, and the first line a client sends (its answer is awaited).
STARTS = [
    ("rpc", b'{"id":"1","type":"get_state"}\n'),
    ("acp", b'{"jsonrpc":"2.0","id":1,"method":"initialize",'
            b'"params":{"protocolVersion":1,"clientCapabilities":{}}}\n'),
]


def record(trace, mode, first):
    """Runs pith under callgrind through one start and returns the callgrind file's text."""
    scratch = tempfile.mkdtemp()
    env = dict(os.environ, PITH_CACHE_DIR=os.path.join(scratch, "cache"),
               PITH_AGENT_DIR=os.path.join(scratch, "agent"))
    command = ["valgrind", "--tool=callgrind", "--demangle=no", "--dump-instr=no",
               "--callgrind-out-file=" + trace, PITH, "--mode", mode, "--provider", "faux",
               "--model", "faux-model", "--no-session"]
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env, cwd=scratch)
    proc.stdin.write(first)
    proc.stdin.flush()
    proc.stdout.readline()
    time.sleep(1)
    proc.stdin.close()
    proc.wait(timeout=120)
    with open(trace, errors="replace") as f:
        return f.read()


def functions(text):
    """The names of the functions of pith's own object that ran, sorted."""
    objects, names, found, current = {}, {}, set(), None
    for line in text.splitlines():
        m = re.match(r"^(ob|fn|cfn|cob)=\((\d+)\)(?: (.*))?$", line)
        if not m:
            continue
        kind, index, name = m.groups()
        if kind in ("ob", "cob"):
            if name:
                objects[index] = name
            if kind == "ob":
                current = objects.get(index)
        else:
            if name:
                names[index] = name
            if kind == "fn" and current and current.endswith("/pith"):
                found.add(names[index])
    # Neither valgrind's placeholders nor bare addresses are linker names.
    return sorted(n for n in found if not n.startswith(("(", "0x")))


def main():
    if not os.path.exists(PITH):
        sys.exit("build the release binary first: cargo build --release")
    names = set()
    with tempfile.TemporaryDirectory() as scratch:
        for mode, first in STARTS:
            names.update(functions(record(os.path.join(scratch, mode + ".out"), mode, first)))
    names = sorted(names)
    with open(OUT, "w") as f:
        f.write("\n".join(names) + "\n")
    print(f"{len(names)} functions written to {os.path.relpath(OUT, ROOT)}")


if __name__ == "__main__":
    main()
