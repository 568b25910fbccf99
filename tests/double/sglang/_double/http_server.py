"""The double's HTTP server: SGLang's monitoring, OpenAI-compatible and native endpoints (SGLang's ``http_server.py``).

Stdlib ``ThreadingHTTPServer``, HTTP/1.1; streaming responses are chunked SSE (``data: {...}`` events, then
``data: [DONE]``), as SGLang's uvicorn sends them. Access lines are logged in uvicorn's format.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from sglang._double.engine import Engine, count_tokens, request_id
from sglang._double.logfmt import Log


class DoubleState:
    """What the handlers need: scenario, parsed args, log, engine, server_info payload, readiness."""

    def __init__(self, scenario: dict, args, log: Log, engine: Engine, server_info: dict) -> None:
        self.scenario, self.args, self.log, self.engine = scenario, args, log, engine
        self.server_info = server_info
        self.ready = threading.Event()
        self.model_name = args.served_model_name or args.model_path
        endpoints = scenario["endpoints"]
        has_server_info = endpoints.get("server_info")
        self.has_server_info = (scenario["era"] == "2026") if has_server_info is None else bool(has_server_info)
        self.has_get_server_info = bool(endpoints.get("get_server_info", True))


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state: DoubleState  # set on a subclass per server

    # -- plumbing -------------------------------------------------------------------------------
    def log_message(self, format, *args):  # noqa: A002 - BaseHTTPRequestHandler's signature
        return None

    def _access(self, status: int) -> None:
        self.state.log.access(f"{self.client_address[0]}:{self.client_address[1]}", self.command,
                              self.path, status)

    def _send_json(self, status: int, payload) -> None:
        body = json.dumps(payload).encode()
        self._send_bytes(status, body, "application/json")

    def _send_bytes(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self._access(status)

    def _read_json(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw or b"{}")
        except ValueError:
            return None

    def _start_sse(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _sse(self, payload) -> None:
        data = payload if isinstance(payload, str) else json.dumps(payload)
        chunk = f"data: {data}\n\n".encode()
        self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
        self.wfile.flush()

    def _end_sse(self) -> None:
        self._sse("[DONE]")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
        self._access(200)

    def _not_found(self) -> None:
        self._send_json(404, {"detail": "Not Found"})

    # -- routes ---------------------------------------------------------------------------------
    def do_GET(self):  # noqa: N802 - http.server naming
        st = self.state
        path = self.path.split("?", 1)[0]
        if path == "/health":
            self._send_bytes(200 if st.ready.is_set() else int(st.scenario["health_before_ready"]), b"", "text/plain")
        elif path == "/health_generate":
            self._send_bytes(200 if st.ready.is_set() else 503, b"", "text/plain")
        elif path == "/get_model_info":
            self._send_json(200, {"model_path": st.args.model_path, "tokenizer_path": st.args.tokenizer_path
                                  or st.args.model_path, "is_generation": True})
        elif path == "/server_info" and st.has_server_info:
            self._send_json(200, self._server_info())
        elif path == "/get_server_info" and st.has_get_server_info:
            if st.scenario["era"] == "2026":
                st.log.line("Endpoint '/get_server_info' is deprecated and will be removed in a future version. "
                            "Please use '/server_info' instead.")
            self._send_json(200, self._server_info())
        elif path == "/v1/models":
            cap = st.scenario["capacity"]
            self._send_json(200, {"object": "list", "data": [{
                "id": st.model_name, "object": "model", "created": int(time.time()), "owned_by": "sglang",
                "root": st.args.model_path, "max_model_len": cap["context_len"]}]})
        else:
            self._not_found()

    def do_POST(self):  # noqa: N802
        path = self.path.split("?", 1)[0]
        body = self._read_json()
        if body is None:
            self._send_json(400, {"object": "error", "message": "invalid JSON body", "code": 400})
            return
        if path == "/v1/completions":
            self._openai(body, chat=False)
        elif path == "/v1/chat/completions":
            self._openai(body, chat=True)
        elif path == "/generate":
            self._generate(body)
        elif path == "/flush_cache":
            self._send_bytes(200, b"Cache flushed.\nPlease check backend logs for more details. (When there are "
                                  b"running or waiting requests, the operation will not be performed.)", "text/plain")
        else:
            self._not_found()

    def _server_info(self) -> dict:
        st = self.state
        info = dict(st.server_info)
        internal = {"last_gen_throughput": st.engine.last_throughput}
        avg = st.engine.avg_spec_accept_length()
        if avg is not None:
            internal["avg_spec_accept_length"] = avg
        info["internal_states"] = [internal]
        return info

    # -- OpenAI-compatible ----------------------------------------------------------------------
    def _openai(self, body: dict, chat: bool) -> None:
        st = self.state
        if chat:
            messages = body.get("messages") or []
            prompt_tokens = sum(count_tokens(m.get("content") or "") for m in messages if isinstance(m, dict))
            max_tokens = body.get("max_completion_tokens") or body.get("max_tokens")
        else:
            prompt_tokens = count_tokens(body.get("prompt") or "")
            max_tokens = body.get("max_tokens")
        max_tokens = int(max_tokens or st.engine.default_max_tokens)
        rid = request_id()
        created = int(time.time())
        model = body.get("model") or st.model_name
        obj = "chat.completion" if chat else "text_completion"
        gen = st.engine.generate(prompt_tokens, max_tokens)
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            self._start_sse()
            if chat:
                self._sse(_chunk(rid, obj, created, model, {"role": "assistant", "content": ""}, None, chat))
            stats = yield_from(gen, lambda tokens: self._sse(
                _chunk(rid, obj, created, model, "".join(tokens), None, chat)))
            self._sse(_chunk(rid, obj, created, model, "", "length", chat))
            if include_usage:
                usage = _usage(prompt_tokens, stats["completion_tokens"])
                self._sse({"id": rid, "object": obj + ".chunk" if chat else obj, "created": created,
                           "model": model, "choices": [], "usage": usage})
            self._end_sse()
            return
        parts: list[str] = []
        stats = yield_from(gen, parts.extend)
        text = "".join(parts)
        choice = {"index": 0, "logprobs": None, "finish_reason": "length", "matched_stop": None}
        if chat:
            choice["message"] = {"role": "assistant", "content": text, "reasoning_content": None, "tool_calls": None}
        else:
            choice["text"] = text
        self._send_json(200, {"id": rid, "object": obj, "created": created, "model": model, "choices": [choice],
                              "usage": _usage(prompt_tokens, stats["completion_tokens"])})

    # -- native /generate -----------------------------------------------------------------------
    def _generate(self, body: dict) -> None:
        st = self.state
        text = body.get("text")
        if isinstance(text, list):
            results = [self._generate_one(body, t) for t in text]
            self._send_json(200, [r for r in results])
            return
        if body.get("stream"):
            sampling = body.get("sampling_params") or {}
            max_tokens = int(sampling.get("max_new_tokens") or 128)
            prompt_tokens = count_tokens(text or "")
            rid = request_id()
            gen = st.engine.generate(prompt_tokens, max_tokens)
            self._start_sse()
            acc: list[str] = []
            steps = 0

            def emit(tokens):
                nonlocal steps
                acc.extend(tokens)
                steps += 1
                meta = self._meta(rid, prompt_tokens, len(acc), steps, None, finished=False)
                self._sse({"text": "".join(acc), "meta_info": meta})

            stats = yield_from(gen, emit)
            meta = self._meta(rid, prompt_tokens, stats["completion_tokens"], stats["spec_verify_ct"],
                              stats["e2e_latency"], finished=True)
            self._sse({"text": "".join(acc), "meta_info": meta})
            self._end_sse()
            return
        self._send_json(200, self._generate_one(body, text))

    def _generate_one(self, body: dict, text) -> dict:
        sampling = body.get("sampling_params") or {}
        max_tokens = int(sampling.get("max_new_tokens") or 128)
        prompt_tokens = count_tokens(text or "")
        rid = request_id()
        parts: list[str] = []
        stats = yield_from(self.state.engine.generate(prompt_tokens, max_tokens), parts.extend)
        meta = self._meta(rid, prompt_tokens, stats["completion_tokens"], stats["spec_verify_ct"],
                          stats["e2e_latency"], finished=True)
        return {"text": "".join(parts), "meta_info": meta}

    def _meta(self, rid: str, prompt_tokens: int, completion_tokens: int, steps: int, e2e_s, finished: bool) -> dict:
        st = self.state
        meta = {
            "id": rid,
            "finish_reason": {"type": "length", "length": completion_tokens} if finished else None,
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "cached_tokens": 0,
        }
        if st.engine.speculative:
            meta["spec_verify_ct"] = steps
            if st.scenario["era"] in ("0.5.9", "2026") and steps:
                meta["spec_accept_length"] = completion_tokens / steps
                if st.engine.first_accept_rate is not None:
                    meta["spec_accept_rate"] = float(st.engine.first_accept_rate)
        if finished:
            meta["e2e_latency"] = e2e_s
        return meta


def yield_from(gen, consume) -> dict:
    """Drive an Engine.generate generator, passing each step's tokens to ``consume``; return its stats."""
    while True:
        try:
            tokens = next(gen)
        except StopIteration as stop:
            return stop.value
        consume(tokens)


def _usage(prompt_tokens: int, completion_tokens: int) -> dict:
    return {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens, "prompt_tokens_details": None}


def _chunk(rid, obj, created, model, content, finish_reason, chat: bool) -> dict:
    if chat:
        delta = content if isinstance(content, dict) else ({"content": content} if content else {})
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason, "matched_stop": None}
        return {"id": rid, "object": "chat.completion.chunk", "created": created, "model": model,
                "choices": [choice], "usage": None}
    choice = {"index": 0, "text": content, "logprobs": None, "finish_reason": finish_reason, "matched_stop": None}
    return {"id": rid, "object": obj, "created": created, "model": model, "choices": [choice], "usage": None}


def serve(state: DoubleState, host: str, port: int) -> ThreadingHTTPServer:
    """Bind ``host:port`` and serve in a daemon thread; raises OSError when the port is taken."""
    handler = type("BoundHandler", (Handler,), {"state": state})
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="http",
                     daemon=True).start()
    return server
