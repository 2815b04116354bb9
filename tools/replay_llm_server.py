"""Serve a recorded coder conversation as an OpenAI-compatible endpoint on 127.0.0.1.

    python tools/replay_llm_server.py tests/fixtures/llm/silu_rewrite.json --url-file URL &
    PRAGMA_NCU_LLM_BASE_URL=$(cat URL) PRAGMA_NCU_LLM_MODEL=replayed-coder pragma-ncu tune ...

Each POST to /v1/chat/completions takes the next recorded reply (the last one repeats). Token
counts are whitespace-separated words of the request's messages and of the reply: this server
has no model tokenizer, so they are word counts, not a model's token counts. Every request body
is appended to --log (JSON lines) so the conversation that took place can be kept.
"""

from __future__ import annotations

import argparse
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


def make_handler(replies: list[dict[str, Any]], model: str, log: Path | None) -> type:
    lock = threading.Lock()
    served = [0]

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            with lock:
                reply = replies[min(served[0], len(replies) - 1)]
                served[0] += 1
                if log is not None:
                    with log.open("a") as fh:
                        fh.write(json.dumps({"request": body, "reply": reply["content"]}) + "\n")
            prompt = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
            answer = {"id": f"replay-{served[0]}", "object": "chat.completion", "created": 0,
                      "model": model, "choices": [{"index": 0, "finish_reason": "stop",
                                                   "message": {"role": "assistant",
                                                               "content": reply["content"]}}],
                      "usage": {"prompt_tokens": prompt,
                                "completion_tokens": len(reply["content"].split()),
                                "total_tokens": 0}}
            data = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("conversation", type=Path)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--url-file", type=Path, help="Write the base URL here once listening.")
    ap.add_argument("--log", type=Path, help="Append each request and reply here (JSON lines).")
    args = ap.parse_args()
    conv = json.loads(args.conversation.read_text())
    server = ThreadingHTTPServer(("127.0.0.1", args.port),
                                 make_handler(conv["replies"], conv.get("model", "replayed"),
                                              args.log))
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    if args.url_file:
        args.url_file.write_text(url)
    print(f"replaying {len(conv['replies'])} replies at {url}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
