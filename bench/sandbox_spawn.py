#!/usr/bin/env python3
"""The shell sandbox's cost per command: the round trip of pi's `bash` RPC command running
`true`, under each mechanism, beside an unconfined spawn (`--sandbox full-access`).

    python3 bench/sandbox_spawn.py [path/to/pith] [runs]

Each mechanism gets its own pith process (`PITH_SANDBOX_NAMESPACES=0` forces the Landlock
fallback); the median and the 90th percentile of `runs` commands are printed, and the
overhead over the unconfined median.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def measure(pith, extra_args, env_extra, runs):
    with tempfile.TemporaryDirectory() as root:
        work = os.path.join(root, "work")
        agent = os.path.join(root, "agent")
        os.makedirs(work)
        os.makedirs(agent)
        env = dict(os.environ)
        env.update({"PITH_AGENT_DIR": agent, "PITH_FAUX_SCRIPT": "[]"})
        env.update(env_extra)
        proc = subprocess.Popen(
            [pith, "--mode", "rpc", "--provider", "faux", "--model", "faux-model", "--no-session"]
            + extra_args,
            cwd=work,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )

        def call(n):
            proc.stdin.write(json.dumps({"id": str(n), "type": "bash", "command": "true"}) + "\n")
            proc.stdin.flush()
            while True:
                frame = json.loads(proc.stdout.readline())
                if frame.get("type") == "response" and frame.get("id") == str(n):
                    return frame

        call(-1)  # warm: the first command probes the mechanism
        times = []
        for n in range(runs):
            began = time.perf_counter()
            frame = call(n)
            times.append((time.perf_counter() - began) * 1000)
            assert frame["success"], frame
        proc.stdin.close()
        proc.wait()
        times.sort()
        return statistics.median(times), times[int(len(times) * 0.9)]


def main():
    pith = sys.argv[1] if len(sys.argv) > 1 else "target/release/pith"
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    rows = [
        ("unconfined (full-access)", ["--sandbox", "full-access"], {}),
        ("landlock (fallback)", [], {"PITH_SANDBOX_NAMESPACES": "0"}),
        ("namespace+landlock", [], {}),
    ]
    base = None
    print(f"{'mechanism':28} {'median ms':>10} {'p90 ms':>8} {'overhead ms':>12}")
    for name, args, env in rows:
        median, p90 = measure(pith, args, env, runs)
        base = median if base is None else base
        print(f"{name:28} {median:10.2f} {p90:8.2f} {median - base:12.2f}")


if __name__ == "__main__":
    main()
