"""The benchmark client against hostile servers (real HTTP servers on 127.0.0.1): a stalled server gives a notice
after the read timeout, an endless stream (valid events or bytes without an end) is cut at a bound, an error body
full of terminal escapes and a token is shown cleaned and redacted by `specdash bench`."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from support.guard import guard

from specdash.bench.runner import BenchRunner, BenchSettings
from specdash.bench.workload import Workload

pytestmark = pytest.mark.timeout(guard(120))  # a hang guard, scaled like every wait

PROMPTS = Workload(name="t", prompts=("p",))
EVIL = "\x1b]0;pwned\x07\x1b[2J\x9b31m\u202egnp.exe hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"


class Handler(BaseHTTPRequestHandler):
    mode = "stall"

    def log_message(self, *args):  # quiet
        pass

    def do_GET(self):
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        stop = self.server.stop_event  # type: ignore[attr-defined]
        if self.mode == "error":
            body = f"Internal error {EVIL}".encode()
            self.send_response(500)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        try:
            if self.mode == "stall":
                self.wfile.write(b'data: {"text": "a", "meta_info": {"completion_tokens": 1}}\n\n')
                self.wfile.flush()
                stop.wait(60)
            elif self.mode == "endless":
                n = 0
                while not stop.is_set():
                    n += 1
                    event = {"text": "a" * n, "meta_info": {"completion_tokens": n}}
                    self.wfile.write(b"data: " + json.dumps(event).encode() + b"\n\n")
            elif self.mode == "endless-bytes":
                while not stop.is_set():
                    self.wfile.write(b"x" * 65536)
        except OSError:
            pass


@pytest.fixture
def server(request):
    handler = type("H", (Handler,), {"mode": request.param})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    httpd.stop_event = threading.Event()
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.stop_event.set()
    httpd.shutdown()
    httpd.server_close()


def _settings(url, **kw):
    base = dict(api="generate", num_requests=1, concurrency=1, output_len=8, warmup_requests=0, model="m")
    base.update(kw)
    return BenchSettings(url=url, workload=PROMPTS, **base)


@pytest.mark.parametrize("server", ["stall"], indirect=True)
async def test_stalled_server_gives_a_read_timeout_notice(server):
    result = await BenchRunner(_settings(server, read_timeout_s=1.0)).run()
    (req,) = result.requests
    assert not req.success
    assert req.error.startswith("no data from the server for 1 s (read timeout)")


@pytest.mark.parametrize("server", ["endless"], indirect=True)
async def test_endless_event_stream_is_cut(server):
    result = await BenchRunner(_settings(server)).run()
    (req,) = result.requests
    assert not req.success
    assert "text events for 8 max tokens (limit 96): cut" in req.error


@pytest.mark.parametrize("server", ["endless-bytes"], indirect=True)
async def test_endless_bytes_without_events_are_cut(server):
    result = await BenchRunner(_settings(server, max_response_bytes=2 * 1024 * 1024)).run()
    (req,) = result.requests
    assert not req.success
    assert "response longer than 2 MiB without ending (limit): cut" in req.error


@pytest.mark.parametrize("server", ["error"], indirect=True)
def test_error_body_is_printed_clean_and_redacted(server, tmp_path):
    out = subprocess.run([sys.executable, "-m", "specdash", "bench", "--url", server, "--api", "generate",
                          "--num-requests", "1", "--warmup", "0", "--model", "m", "--no-save"],
                         capture_output=True, text=True, timeout=60)
    text = out.stdout + out.stderr
    assert "HTTP 500: Internal error" in text
    for bad in ("\x1b", "\x07", "\x9b", "\u202e", "hf_AbCdEf"):
        assert bad not in text
    assert "<redacted>" in text


class InfoHandler(Handler):
    """GET /server_info answers with an endless JSON body; the generate stream is an ordinary short one."""

    def do_GET(self):
        if self.path in ("/server_info", "/get_server_info", "/v1/models", "/metrics"):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            try:
                self.wfile.write(b'{"x": "')
                while not self.server.stop_event.is_set():  # type: ignore[attr-defined]
                    self.wfile.write(b"a" * 65536)
            except OSError:
                pass
            return
        super().do_GET()

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for n in range(1, 4):
            event = {"text": "a" * n, "meta_info": {"completion_tokens": n}}
            self.wfile.write(b"data: " + json.dumps(event).encode() + b"\n\n")
        self.wfile.write(b"data: [DONE]\n\n")


async def test_endless_info_answers_are_not_kept():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), InfoHandler)
    httpd.daemon_threads = True
    httpd.stop_event = threading.Event()
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        result = await BenchRunner(_settings(f"http://127.0.0.1:{httpd.server_address[1]}", model=None)).run()
    finally:
        httpd.stop_event.set()
        httpd.shutdown()
        httpd.server_close()
    (req,) = result.requests
    assert req.success, req.error
    assert result.accept_length is None or result.accept_length > 0
