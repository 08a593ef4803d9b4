#!/usr/bin/env python3
"""An LLM server for benchmarks that costs nothing: every POST to `/v1/messages` gets the same
Anthropic Messages stream (`--deltas` text deltas of "word "), rendered once at start-up and
sent in one write, so what a benchmark times is the agent's own work (parsing the stream,
building and writing its events), not the server's pace.

Prints `LISTENING <port>` on stdout once it accepts connections (loopback only).
Usage: python3 bench/instant_llm.py [--deltas 5000]
"""

import argparse
import http.server
import json
import socket
import sys


def stream_body(deltas):
    def event(name, data):
        return "event: %s\ndata: %s\n\n" % (name, json.dumps(data))

    parts = [event("message_start", {"type": "message_start", "message": {
        "id": "msg_bench", "type": "message", "role": "assistant", "model": "fake-model",
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        event("content_block_start", {"type": "content_block_start", "index": 0,
                                      "content_block": {"type": "text", "text": ""}})]
    delta = event("content_block_delta", {"type": "content_block_delta", "index": 0,
                                          "delta": {"type": "text_delta", "text": "word "}})
    parts.extend([delta] * deltas)
    parts.append(event("content_block_stop", {"type": "content_block_stop", "index": 0}))
    parts.append(event("message_delta", {"type": "message_delta",
                                         "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                                         "usage": {"output_tokens": deltas}}))
    parts.append(event("message_stop", {"type": "message_stop"}))
    return "".join(parts).encode()


def handler(reply_for):
    """A request handler that answers each POST with `reply_for(request body bytes)`, an SSE
    stream sent in one write."""

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_):
            pass

        def setup(self):
            super().setup()
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def do_POST(self):
            reply = reply_for(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)
            self.wfile.flush()

    return Handler


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--deltas", type=int, default=5000)
    args = ap.parse_args()
    body = stream_body(args.deltas)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler(lambda _request: body))
    print("LISTENING %d" % server.server_address[1], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
