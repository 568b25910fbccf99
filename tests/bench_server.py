"""A real HTTP server on 127.0.0.1 with exactly known timings, for benchmark tests and benchmarks/.

It speaks what SGLang speaks (SGLang's ``http_server.py``): streaming ``POST /v1/chat/completions``, ``POST /v1/completions``
(SSE ``data: {...}\\n\\n`` events, ``data: [DONE]``, usage in the last chunk and - when the client asks with
``stream_options.continuous_usage_stats`` - in every chunk), streaming ``POST /generate`` (cumulative ``text`` and
``meta_info`` with ``completion_tokens`` and ``spec_verify_ct``), ``GET /health``, ``GET /server_info`` and
``/get_server_info`` (``internal_states[0].avg_spec_accept_length`` once a verify step happened), ``GET /v1/models``
and, when enabled, ``GET /metrics`` with ``sglang:generation_tokens_total`` and ``sglang:spec_verify_calls_total``.
Test-only ``GET /bench/log``: per finished request, its prompt, receipt time (``t_recv``: the request's body read;
``t_accept``: its connection accepted; ``t_arrive``: the kernel's receive stamp of its first bytes, before they
waited in the accept queue; both for the first request of a connection, else null), and for every chunk the
time just before its write (``t_send``) and just after the write returned (``t_written``: the bytes are in the
socket, the server's side of the wire), as ``time.perf_counter()`` readings (CLOCK_MONOTONIC, the same clock in
every process on Linux), so a test can compare
the client's figures with what the server actually did even when the machine is loaded.

Timing model of one request (times from the moment its body has been read):
the first chunk carries ``first_chunk_tokens`` tokens at ``ttft_s`` (prefill); then chunk ``j`` (j = 1..m) carries
``tokens_per_chunk`` tokens (one verify step; the last may carry fewer) at ``ttft_s + j * chunk_delay_s``; the
closing events and ``[DONE]`` follow the last chunk in the same write. Deadlines are absolute (no drift). So for N
output tokens: TTFT = ttft_s, ITL per token = chunk_delay_s / tokens_per_chunk, E2E = ttft_s + m * chunk_delay_s,
spec_verify_ct = m, accept length (completion / verify) = N / m.

Run as a process: ``python tests/bench_server.py '{"ttft_s": 0.05, ...}'`` prints ``PORT <n>`` and serves until
SIGTERM. :class:`BenchServerProcess` does that for tests (start, url, stop by its own PID).
"""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DEFAULTS = {
    "ttft_s": 0.05,
    "chunk_delay_s": 0.01,
    "tokens_per_chunk": 1,
    "first_chunk_tokens": 1,
    "default_output_tokens": 16,
    "speculative": True,  # meta_info spec_verify_ct and /server_info avg_spec_accept_length
    "metrics": False,  # /metrics with Prometheus counters
    "usage": "continuous",  # "continuous": honour continuous_usage_stats; "final": only the last chunk; "none"
    "fail_every": 0,  # every n-th request (1-based count) answers HTTP 500
    "ready_delay_s": 0.0,  # /health answers 503 until this long after start
    "model": "bench-model",
    "server_args": {},  # extra /server_info fields (ServerArgs names)
    "tag_text": False,  # the first text piece starts with the request id (" req-N"): matches any client's output
}


class _State:
    def __init__(self, config: dict) -> None:
        self.config = {**DEFAULTS, **config}
        self.lock = threading.Lock()
        self.requests = 0
        self.decode_tokens = 0  # tokens produced by verify steps (SGLang's accept-length numerator)
        self.verify_steps = 0
        self.generation_tokens = 0  # all completion tokens (prefill token included)
        self.started = time.monotonic()
        self.log: list[dict] = []  # per finished request: prompt, t_recv, t_send per chunk (time.perf_counter)


def plan(output_tokens: int, config: dict) -> list[int]:
    """Tokens per chunk for a request of ``output_tokens`` tokens (first chunk = prefill, rest = verify steps)."""
    first = min(config["first_chunk_tokens"], output_tokens)
    rest = output_tokens - first
    k = config["tokens_per_chunk"]
    chunks = [first]
    while rest > 0:
        chunks.append(min(k, rest))
        rest -= chunks[-1]
    return chunks


def _prompt(api: str, body: dict) -> str:
    if api == "chat":
        return body["messages"][-1]["content"]
    return body.get("prompt") if api == "completions" else body.get("text")


#: Linux's SO_TIMESTAMPNS (asm-generic/socket.h; Python's socket module does not export it); None elsewhere.
SO_TIMESTAMPNS: int | None = getattr(socket, "SO_TIMESTAMPNS", 35 if sys.platform == "linux" else None)


def _arrival(sock: socket.socket) -> float | None:
    """When the kernel received the first bytes waiting on ``sock`` (``SO_TIMESTAMPNS``, inherited from the listening
    socket), on the ``time.perf_counter()`` clock; peeked, not consumed. None where the platform gives no stamp."""
    if SO_TIMESTAMPNS is None:
        return None
    try:
        _, ancillary, _, _ = sock.recvmsg(1, socket.CMSG_SPACE(16), socket.MSG_PEEK)
    except OSError:
        return None
    offset = time.time() - time.perf_counter()
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(data) >= 16:
            seconds, nanoseconds = struct.unpack("qq", data[:16])
            return seconds + nanoseconds / 1e9 - offset
    return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: BenchHTTPServer

    def log_message(self, *args) -> None:  # quiet
        pass

    def setup(self) -> None:
        super().setup()
        with self.server.state.lock:
            self.t_accept: float | None = self.server.accepted.pop(self.connection.fileno(), None)
        self.t_arrive = _arrival(self.connection)

    # -- helpers
    def _json(self, status: int, payload: object) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _text(self, status: int, text: str) -> None:
        body = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _chunk(self, events: list[str]) -> None:
        data = "".join(f"data: {e}\n\n" for e in events).encode()
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")

    # -- GET
    def do_GET(self) -> None:  # noqa: N802
        state = self.server.state
        cfg = state.config
        path = self.path.split("?", 1)[0]  # FastAPI routes ignore query parameters a route does not declare
        if path == "/health":
            ready = time.monotonic() - state.started >= cfg["ready_delay_s"]
            self._text(200 if ready else 503, "")
        elif path in ("/server_info", "/get_server_info"):
            internal: dict = {"last_gen_throughput": 0.0}
            with state.lock:
                if cfg["speculative"] and state.verify_steps:
                    internal["avg_spec_accept_length"] = state.decode_tokens / state.verify_steps
            self._json(200, {**cfg["server_args"], "version": "0.0.test", "internal_states": [internal]})
        elif path == "/bench/log":  # test-only: what the server really did, on the shared monotonic clock
            with state.lock:
                self._json(200, list(state.log))
        elif path == "/v1/models":
            self._json(200, {"object": "list", "data": [{"id": cfg["model"], "object": "model"}]})
        elif path == "/metrics" and cfg["metrics"]:
            with state.lock:
                text = (
                    "# TYPE sglang:generation_tokens_total counter\n"
                    f'sglang:generation_tokens_total{{model_name="{cfg["model"]}"}} {float(state.generation_tokens)}\n'
                    "# TYPE sglang:spec_verify_calls_total counter\n"
                    f'sglang:spec_verify_calls_total{{model_name="{cfg["model"]}"}} {float(state.verify_steps)}\n'
                )
            self._text(200, text)
        else:
            self._json(404, {"detail": "Not Found"})

    # -- POST
    def do_POST(self) -> None:  # noqa: N802
        try:
            self._post()
        except (BrokenPipeError, ConnectionResetError):  # the client went away (a cancelled benchmark): normal
            self.close_connection = True

    def _post(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        t0 = time.perf_counter()
        t_accept, self.t_accept = self.t_accept, None  # only the first request of a connection was just accepted
        t_arrive, self.t_arrive = self.t_arrive, None
        state = self.server.state
        cfg = state.config
        api = {"/v1/chat/completions": "chat", "/v1/completions": "completions", "/generate": "generate"}.get(
            self.path
        )
        if api is None:
            self._json(404, {"detail": "Not Found"})
            return
        with state.lock:
            state.requests += 1
            number = state.requests
        if cfg["fail_every"] and number % cfg["fail_every"] == 0:
            self._json(500, {"object": "error", "message": "injected failure", "code": 500})
            return
        if api == "generate":
            n = int((body.get("sampling_params") or {}).get("max_new_tokens") or cfg["default_output_tokens"])
        else:
            n = int(body.get("max_tokens") or cfg["default_output_tokens"])
        chunks = plan(n, cfg)
        continuous = bool((body.get("stream_options") or {}).get("continuous_usage_stats"))
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        prompt_tokens = 7
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        rid = f"req-{number}"
        created = int(time.time())
        if api == "chat":  # SGLang opens a chat stream with an empty role delta
            self._chunk([json.dumps(self._chat(rid, created, {"role": "assistant", "content": ""}, None, None))])
        cum = 0
        text = ""
        sends: list[float] = []
        written: list[float] = []
        for j, tokens in enumerate(chunks):
            deadline = t0 + cfg["ttft_s"] + j * cfg["chunk_delay_s"]
            delay = deadline - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            cum += tokens
            piece = "".join(f" t{cum - tokens + i + 1}" for i in range(tokens))
            if j == 0 and cfg["tag_text"]:
                piece = f" {rid}{piece}"
            text += piece
            verify = j  # verify steps so far (the first chunk comes from prefill)
            last = j == len(chunks) - 1
            usage = None
            if cfg["usage"] == "continuous" and continuous:
                usage = {"prompt_tokens": prompt_tokens, "completion_tokens": cum, "total_tokens": prompt_tokens + cum}
            events = []
            if api == "chat":
                events.append(json.dumps(self._chat(rid, created, {"content": piece}, None, usage)))
            elif api == "completions":
                events.append(json.dumps(self._completion(rid, created, piece, None, usage)))
            else:
                meta = {
                    "id": rid,
                    "finish_reason": {"type": "length", "length": cum} if last else None,
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": cum,
                    "cached_tokens": 0,
                }
                if cfg["speculative"]:
                    meta["spec_verify_ct"] = verify
                if last:
                    meta["e2e_latency"] = time.perf_counter() - t0
                events.append(json.dumps({"text": text, "meta_info": meta}))
            if last:
                final_usage = {"prompt_tokens": prompt_tokens, "completion_tokens": cum, "total_tokens": prompt_tokens + cum}
                if api == "chat":
                    events.append(json.dumps(self._chat(rid, created, {}, "length", usage)))
                elif api == "completions":
                    events.append(json.dumps(self._completion(rid, created, "", "length", usage)))
                if api != "generate" and include_usage and cfg["usage"] != "none":
                    obj = "chat.completion.chunk" if api == "chat" else "text_completion"
                    events.append(json.dumps({"id": rid, "object": obj, "created": created, "model": cfg["model"],
                                              "choices": [], "usage": final_usage}))
                events.append("[DONE]")
            if last:  # counted before the last chunk goes out: a client that asks /server_info right after sees it
                with state.lock:
                    state.generation_tokens += sum(chunks)
                    state.decode_tokens += sum(chunks) - chunks[0]
                    state.verify_steps += len(chunks) - 1
            sends.append(time.perf_counter())  # just before the write: a client cannot see the chunk earlier
            self._chunk(events)
            written.append(time.perf_counter())  # the write returned: the bytes are on the wire (unbuffered wfile)
        with state.lock:
            state.log.append({"prompt": _prompt(api, body), "api": api, "rid": rid, "t_recv": t0, "t_accept": t_accept, "t_arrive": t_arrive, "t_send": sends,
                              "t_written": written, "chunks": chunks})
        self.wfile.write(b"0\r\n\r\n")

    def _chat(self, rid: str, created: int, delta: dict, finish: str | None, usage: dict | None) -> dict:
        return {"id": rid, "object": "chat.completion.chunk", "created": created, "model": self.server.state.config["model"],
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}], "usage": usage}

    def _completion(self, rid: str, created: int, text: str, finish: str | None, usage: dict | None) -> dict:
        return {"id": rid, "object": "text_completion", "created": created, "model": self.server.state.config["model"],
                "choices": [{"index": 0, "text": text, "logprobs": None, "finish_reason": finish}], "usage": usage}


class BenchHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    # listen backlog: socketserver's default of 5 drops the SYNs of a burst of connections (32 streams opening at
    # once), and a dropped SYN is retried after 1 s - a TTFT the server never caused
    request_queue_size = 256

    def __init__(self, config: dict, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), Handler)
        self.state = _State(config)
        if SO_TIMESTAMPNS is not None:  # accepted sockets inherit it: the kernel stamps each request's arrival
            try:
                self.socket.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            except OSError:
                pass
        self.accepted: dict[int, float] = {}  # socket fileno -> time.perf_counter() right after accept()

    def get_request(self):  # type: ignore[no-untyped-def]
        sock, addr = super().get_request()
        with self.state.lock:
            self.accepted[sock.fileno()] = time.perf_counter()
        return sock, addr


def main(argv: list[str]) -> int:
    config = json.loads(argv[1]) if len(argv) > 1 else {}
    # many streams = many threads: hand the GIL over quickly so a thread whose deadline came does not wait up to
    # the default 5 ms for it (that would delay its write behind its own send stamp)
    sys.setswitchinterval(0.0002)
    server = BenchHTTPServer(config)
    print(f"PORT {server.server_address[1]}", flush=True)
    try:
        server.serve_forever(poll_interval=0.05)
    except KeyboardInterrupt:
        pass
    return 0


class BenchServerProcess:
    """The server in its own process (so its timing is not disturbed by the client's event loop).

    ``BenchServerProcess(config)``: config keys as :data:`DEFAULTS`; ``start()`` returns self with ``url`` set;
    ``stop()`` terminates this process by its PID (and waits); usable as a context manager.
    """

    def __init__(self, config: dict | None = None) -> None:
        self.config = dict(config or {})
        self.proc: subprocess.Popen | None = None
        self.url = ""

    def start(self) -> BenchServerProcess:
        self.proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), json.dumps(self.config)],
            stdout=subprocess.PIPE,
            text=True,
        )
        line = self.proc.stdout.readline()  # type: ignore[union-attr]
        if not line.startswith("PORT "):
            self.stop()
            raise RuntimeError(f"bench server did not start: {line!r}")
        self.url = f"http://127.0.0.1:{int(line.split()[1])}"
        return self

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc and self.proc.stdout:
            self.proc.stdout.close()

    def __enter__(self) -> BenchServerProcess:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def expected(config: dict, output_tokens: int) -> dict:
    """The exact figures of one request under ``config`` (seconds): ttft_s, itl_s (per token, full chunks),
    e2e_s, tpot_s, spec_verify_ct, accept_length (completion / verify)."""
    cfg = {**DEFAULTS, **config}
    chunks = plan(output_tokens, cfg)
    m = len(chunks) - 1
    e2e = cfg["ttft_s"] + m * cfg["chunk_delay_s"]
    return {
        "ttft_s": cfg["ttft_s"],
        "itl_s": cfg["chunk_delay_s"] / cfg["tokens_per_chunk"],
        "e2e_s": e2e,
        "tpot_s": (e2e - cfg["ttft_s"]) / (output_tokens - 1) if output_tokens > 1 else None,
        "spec_verify_ct": m,
        "accept_length": output_tokens / m if m else None,
        "chunks": chunks,
    }


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
