"""A scripted model on 127.0.0.1 for running the real host CLIs offline (stdlib only).

    python mock_model.py CONFIG.json [LIFETIME_SECONDS]

CONFIG holds ``log`` (a JSON-lines file: one line per request, with its parsed
body), ``port_file`` (written once the server listens), ``scripts`` and
optionally ``prompt_tokens`` (the usage reported back, 10 by default) and
``result_delay`` (seconds to wait before answering a tool result, as a real
model would: hosts run some hooks in the background meanwhile). The
config is read again on every request, so a test can change it between runs.

It speaks the Anthropic Messages API (Claude Code), the OpenAI Responses API
(Codex) and the Gemini API (generateContent, streamGenerateContent, countTokens),
streaming when the request asks. A script is a list of tool calls keyed by a
marker word: while the newest prompt holds a marker whose steps are not all
answered, the answer is its next tool call (when the request offers that tool);
otherwise it is the text ``MOCK-REPLY <n>``. A step is ``{"tool": name, "input": arguments}``, with
a string input for a freeform tool (Codex's apply_patch). The server stops by
itself after LIFETIME_SECONDS (default 1800).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
COUNT = [0]
ISSUED: dict[str, int] = {}  # marker -> how many of its steps were answered
CONFIG_PATH = ""


def config() -> dict:
    with open(CONFIG_PATH, encoding="utf-8") as handle:
        return json.load(handle)


def texts(value: object) -> list[str]:
    """Every string under a message's content (blocks, parts, nested lists)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [text for item in value for text in texts(item)]
    if isinstance(value, dict):
        return [text for key in ("text", "content") if key in value for text in texts(value[key])]
    return []


def due_step(turns: list[tuple[str, object]], scripts: dict[str, list[dict]]) -> tuple[str, dict] | None:
    """The marker of the newest prompt and its next step not yet answered, if any.

    Each step is answered once per server: a host that compacts its history and
    asks again with the same prompt gets text, not the same tool call forever.
    """
    prompts = [content for kind, content in turns if kind == "prompt"]
    words = " ".join(texts(prompts[-1])) if prompts else ""
    for marker, steps in scripts.items():
        if marker in words and ISSUED.get(marker, 0) < len(steps):
            return marker, steps[ISSUED.get(marker, 0)]
    return None


def take_step(turns: list[tuple[str, object]], scripts: dict[str, list[dict]], offered: set[str]) -> dict | None:
    """The step to answer with, counted as answered; None when the tool it names is not offered."""
    with LOCK:
        due = due_step(turns, scripts)
        if due is None or due[1]["tool"] not in offered:
            return None
        ISSUED[due[0]] = ISSUED.get(due[0], 0) + 1
        return due[1]


# --- the three APIs: turns of a request, and an answer (a step or text) ----------------------------


def anthropic_turns(body: dict) -> list[tuple[str, object]]:
    turns = []
    for message in body.get("messages") or []:
        content = message.get("content")
        if message.get("role") != "user":
            continue
        results = isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in content
        )
        turns.append(("result", None) if results else ("prompt", content))
    return turns


def anthropic_answer(http: Handler, body: dict, scripts: dict, n: int, tokens: int) -> None:
    offered = {tool.get("name") for tool in body.get("tools") or [] if isinstance(tool, dict)}
    turns = anthropic_turns(body)
    step = take_step(turns, scripts, offered)
    if turns and turns[-1][0] == "result":
        time.sleep(config().get("result_delay", 0))
    if step is not None:
        block = {"type": "tool_use", "id": f"toolu_mock_{n}", "name": step["tool"], "input": step["input"]}
        stop = "tool_use"
    else:
        block = {"type": "text", "text": f"MOCK-REPLY {n}"}
        stop = "end_turn"
    usage = {"input_tokens": tokens, "output_tokens": 5}
    message = {
        "id": f"msg_mock_{n}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "mock"),
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage,
    }
    if not body.get("stream"):
        http.send_json({**message, "content": [block]})
        return
    start_block = {**block, "input": {}} if stop == "tool_use" else {**block, "text": ""}
    delta = ({"type": "input_json_delta", "partial_json": json.dumps(step["input"])} if stop == "tool_use"
             else {"type": "text_delta", "text": block["text"]})  # fmt: skip
    http.events([
        ("message_start", {"type": "message_start", "message": {**message, "content": [], "stop_reason": None}}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": start_block}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                           "usage": {"output_tokens": 5}}),
        ("message_stop", {"type": "message_stop"}),
    ])  # fmt: skip


def responses_turns(body: dict) -> list[tuple[str, object]]:
    items = body.get("input")
    if isinstance(items, str):
        return [("prompt", items)]
    turns = []
    for item in items or []:
        if not isinstance(item, dict):
            continue
        if item.get("type", "").endswith("_call_output"):
            turns.append(("result", None))
        elif item.get("role") == "user":
            turns.append(("prompt", item.get("content")))
    return turns


def responses_answer(http: Handler, body: dict, scripts: dict, n: int, tokens: int) -> None:
    offered = {}
    for tool in body.get("tools") or []:
        if isinstance(tool, dict):
            offered[tool.get("name") or (tool.get("function") or {}).get("name")] = tool.get("type")
    step = take_step(responses_turns(body), scripts, set(offered))
    if step is not None:
        call = {"status": "completed", "call_id": f"call_mock_{n}", "name": step["tool"]}
        if offered[step["tool"]] == "custom":
            item = {**call, "type": "custom_tool_call", "id": f"ctc_mock_{n}", "input": step["input"]}
        else:
            arguments = step["input"] if isinstance(step["input"], dict) else {"input": step["input"]}
            item = {**call, "type": "function_call", "id": f"fc_mock_{n}", "arguments": json.dumps(arguments)}
    else:
        item = {
            "type": "message",
            "id": f"msg_mock_{n}",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": f"MOCK-REPLY {n}", "annotations": []}],
        }
    usage = {
        "input_tokens": tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": tokens + 5,
    }
    response = {
        "id": f"resp_mock_{n}",
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": body.get("model", "mock"),
        "output": [item],
        "usage": usage,
    }
    if not body.get("stream"):
        http.send_json(response)
        return
    http.events([
        ("response.created", {"type": "response.created", "response": {**response, "status": "in_progress", "output": []}}),
        ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item}),
        ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
        ("response.completed", {"type": "response.completed", "response": response}),
    ])  # fmt: skip


def gemini_turns(body: dict) -> list[tuple[str, object]]:
    turns = []
    for content in body.get("contents") or []:
        if not isinstance(content, dict) or content.get("role", "user") != "user":
            continue
        parts = [p for p in content.get("parts") or [] if isinstance(p, dict)]
        turns.append(("result", None) if any("functionResponse" in p for p in parts) else ("prompt", parts))
    return turns


def gemini_answer(http: Handler, body: dict, scripts: dict, n: int, tokens: int, stream: bool) -> None:
    settings = body.get("generationConfig") or {}
    offered = {
        d.get("name") for tool in body.get("tools") or [] for d in (tool or {}).get("functionDeclarations") or []
    }
    json_mode = settings.get("responseMimeType") == "application/json"  # the CLI's own side questions
    step = None if json_mode else take_step(gemini_turns(body), scripts, offered)
    if json_mode:
        parts = [
            {"text": json.dumps(fill_schema(settings.get("responseJsonSchema") or settings.get("responseSchema")))}
        ]
    elif step is not None:
        parts = [{"functionCall": {"name": step["tool"], "args": step["input"]}}]
    else:
        parts = [{"text": f"MOCK-REPLY {n}"}]
    answer = {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": tokens, "candidatesTokenCount": 5, "totalTokenCount": tokens + 5},
        "modelVersion": "mock",
        "responseId": f"mock-{n}",
    }
    if stream:
        http.events([(None, answer)])
    else:
        http.send_json(answer)


SCHEMA_ANSWERS = {"next_speaker": "user", "model_choice": "flash"}  # keep the CLI's own questions short


def fill_schema(schema: object) -> object:
    """The smallest value a JSON schema accepts (enums take their first value)."""
    if not isinstance(schema, dict):
        return {}
    if schema.get("enum"):
        return schema["enum"][0]
    kind = str(schema.get("type", "object")).lower()
    if kind == "object":
        props = schema.get("properties") or {}
        return {key: SCHEMA_ANSWERS.get(key, fill_schema(sub)) for key, sub in props.items()}
    return {"array": [], "number": 0, "integer": 0, "boolean": False}.get(kind, "mock")


# --- HTTP ---------------------------------------------------------------------------------------


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:  # the request log is the record
        pass

    def send_json(self, data: object) -> None:
        raw = json.dumps(data).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def events(self, events: list[tuple[str | None, object]]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        for name, data in events:
            head = f"event: {name}\n" if name else ""
            self.wfile.write(f"{head}data: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()

    def do_GET(self) -> None:
        self.answer(None)

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        self.answer(body if isinstance(body, dict) else None)

    def answer(self, body: dict | None) -> None:
        with LOCK:
            COUNT[0] += 1
            n = COUNT[0]
        settings = config()
        route, scripts, tokens = self.path.split("?")[0], settings.get("scripts", {}), settings.get("prompt_tokens", 10)
        kind = "other"
        if body is None:
            self.send_json({"object": "list", "data": [], "models": []})
        elif route.endswith("/messages/count_tokens"):
            self.send_json({"input_tokens": tokens})
        elif route.endswith("/messages"):
            kind = "anthropic"
            anthropic_answer(self, body, scripts, n, tokens)
        elif route.endswith("/responses"):
            kind = "responses"
            responses_answer(self, body, scripts, n, tokens)
        elif ":countTokens" in route:
            self.send_json({"totalTokens": tokens})
        elif ":streamGenerateContent" in route or ":generateContent" in route:
            kind = "gemini"
            gemini_answer(self, body, scripts, n, tokens, stream=":stream" in route)
        else:
            self.send_json({})
        line = json.dumps({"n": n, "api": kind, "path": self.path, "body": body}, ensure_ascii=False)
        with LOCK, open(settings["log"], "a", encoding="utf-8") as log:
            log.write(line + "\n")


def main() -> int:
    global CONFIG_PATH
    CONFIG_PATH = sys.argv[1]
    lifetime = float(sys.argv[2]) if len(sys.argv) > 2 else 1800
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    port_file = config()["port_file"]
    with open(port_file + ".tmp", "w", encoding="utf-8") as handle:
        handle.write(str(server.server_address[1]))
    os.replace(port_file + ".tmp", port_file)
    stop = threading.Timer(lifetime, server.shutdown)
    stop.daemon = True
    stop.start()
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
