"""The benchmark client's streaming reader (specdash.bench.stream) and the runner on it, against real loopback HTTP
servers: arrival stamps taken per event as the bytes come, token counts from the server's usage, a server that
drops the connection mid-stream, malformed responses and malformed SSE (never a traceback), and a cancelled run
that leaves no task, connection or 'Event loop is closed' warning behind."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.guard import guard

from specdash.bench.runner import BenchRunner, BenchSettings
from specdash.bench.stream import ProtocolError, ReadTimeout, ResponseParser, post_stream
from specdash.bench.workload import Workload

pytestmark = pytest.mark.timeout(guard(180))  # a hang guard, scaled like every wait

ROOT = Path(__file__).resolve().parent.parent
PROMPTS = Workload(name="t", prompts=("p0", "p1", "p2"))
SSE_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"


def chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def event(payload: dict | str) -> bytes:
    return b"data: " + (payload if isinstance(payload, str) else json.dumps(payload)).encode() + b"\n\n"


def gen_event(text: str, tokens: int) -> bytes:
    return event({"text": text, "meta_info": {"completion_tokens": tokens, "prompt_tokens": 3}})


Script = Callable[[asyncio.StreamWriter], Awaitable[None]]


class RawServer:
    """An HTTP server on 127.0.0.1 in the test's own event loop: every GET answers 404 (and closes); every POST
    runs ``script(writer)``, which writes the raw response bytes; the connection is closed after it."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.server: asyncio.base_events.Server | None = None
        self.url = ""
        self.posts = 0

    async def __aenter__(self) -> RawServer:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc) -> None:
        assert self.server is not None
        self.server.close()
        await self.server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            await reader.readexactly(length)
            if head.startswith(b"GET"):
                writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            else:
                self.posts += 1
                await self.script(writer)
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()


def bench(url: str, **kw) -> BenchSettings:
    base = dict(api="generate", num_requests=1, concurrency=1, output_len=8, warmup_requests=0, seed=1,
                model="m", read_timeout_s=30.0)
    base.update(kw)
    return BenchSettings(url=url, workload=PROMPTS, **base)


# -- the response parser ------------------------------------------------------------------------------------------


def feed_all(parser: ResponseParser, data: bytes, cuts: list[int]) -> bytes:
    out, last = [], 0
    for cut in sorted({c % (len(data) + 1) for c in cuts}) + [len(data)]:
        out.append(parser.feed(data[last:cut]))
        last = cut
    return b"".join(out)


@given(st.binary(max_size=400), st.lists(st.integers(0, 400), max_size=8))
@settings(max_examples=300, deadline=None)
def test_any_bytes_give_a_body_or_a_protocol_error_never_a_traceback(data, cuts):
    parser = ResponseParser()
    try:
        feed_all(parser, SSE_HEAD + data if cuts and cuts[0] % 2 else data, cuts)
        parser.eof()
    except ProtocolError as exc:
        assert str(exc)


@given(st.lists(st.binary(min_size=1, max_size=60), max_size=8), st.lists(st.integers(0, 2000), max_size=12))
@settings(max_examples=200, deadline=None)
def test_a_chunked_body_comes_out_whole_however_the_bytes_are_split(pieces, cuts):
    wire = SSE_HEAD + b"".join(chunk(p) for p in pieces) + b"0\r\n\r\n"
    parser = ResponseParser()
    assert feed_all(parser, wire, cuts) == b"".join(pieces)
    assert parser.status == 200 and parser.complete
    parser.eof()


def test_content_length_close_delimited_and_interim_responses():
    parser = ResponseParser()
    assert parser.feed(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 500 Internal\r\nContent-Length: 5\r\n\r\nerr") == b"err"
    assert (parser.status, parser.reason, parser.complete) == (500, "Internal", False)
    assert parser.feed(b"orEXTRA") == b"or" and parser.complete
    parser = ResponseParser()
    assert parser.feed(b"HTTP/1.0 200 OK\r\n\r\ndata: x") == b"data: x"
    assert not parser.complete
    parser.eof()
    assert parser.complete
    with pytest.raises(ProtocolError, match="closed in the middle of the response body"):
        bad = ResponseParser()
        bad.feed(SSE_HEAD + chunk(b"data: x\n\n"))
        bad.eof()
    with pytest.raises(ProtocolError, match="invalid chunk size"):
        ResponseParser().feed(SSE_HEAD + b"zz\r\n")
    with pytest.raises(ProtocolError, match="status line"):
        ResponseParser().feed(b"SSH-2.0-OpenSSH_9.6\r\n\r\n")


# -- arrival stamps -------------------------------------------------------------------------------------------------


async def test_each_event_is_stamped_when_its_bytes_arrive():
    """Server-controlled schedule: the server writes event k only after the client's callback has seen event k-1,
    and notes its clock just before each write. So event k's stamp lies between the server's write of k and the
    server's write of k+1: a stamp taken later (after a queue) or shared by several events breaks the order."""
    seen: list[tuple[float, bytes]] = []
    arrived = asyncio.Event()
    writes: list[float] = []

    async def script(writer: asyncio.StreamWriter) -> None:
        writer.write(SSE_HEAD)
        for k in range(1, 6):
            arrived.clear()
            writes.append(time.perf_counter())
            writer.write(chunk(gen_event("t" * k, k)))
            await writer.drain()
            await arrived.wait()
        writes.append(time.perf_counter())
        writer.write(b"0\r\n\r\n")

    def on_body(now: float, data: bytes) -> None:
        seen.append((now, data))
        arrived.set()

    async with RawServer(script) as server:
        outcome = await post_stream(server.url + "/generate", b"{}", on_body, read_timeout_s=30)
    assert outcome.status == 200 and outcome.complete and outcome.cut is None
    assert [data for _, data in seen] == [gen_event("t" * k, k) for k in range(1, 6)]
    stamps = [now for now, _ in seen]
    for k, stamp in enumerate(stamps):
        assert writes[k] <= stamp <= writes[k + 1]
    assert outcome.end_perf_s >= writes[-1]


async def test_runner_stamps_every_text_event_and_counts_the_servers_tokens():
    """Events carry 1, 3, 0 (a repeat), 2 and 2 new tokens: one stamp per event that brings tokens, in order, and
    output tokens from the server's cumulative count (8), not from the number of events (5)."""
    events = [gen_event("a", 1), gen_event("abcd", 4), gen_event("abcd", 4), gen_event("abcdef", 6),
              gen_event("abcdefgh", 8), event("[DONE]")]

    async def script(writer: asyncio.StreamWriter) -> None:
        writer.write(SSE_HEAD)
        for e in events:
            writer.write(chunk(e))
            await writer.drain()
            await asyncio.sleep(0.001)
        writer.write(b"0\r\n\r\n")

    async with RawServer(script) as server:
        result = await BenchRunner(bench(server.url)).run()
    (req,) = result.requests
    assert req.success and req.output_tokens == 8 and req.token_counts == "server"
    assert req.chunk_cumulative_tokens == [1, 4, 4, 6, 8]  # the repeat is stamped, and brings no ITL sample
    offsets = req.chunk_offsets_ms
    assert offsets == sorted(offsets) and req.ttft_ms == offsets[0]
    assert len(req.itl_ms) == 7  # one sample per token after the first chunk
    assert req.e2e_ms >= offsets[-1]


# -- a server that fails --------------------------------------------------------------------------------------------


async def test_a_server_that_drops_the_connection_mid_stream_gives_an_error_not_a_result():
    async def script(writer: asyncio.StreamWriter) -> None:
        writer.write(SSE_HEAD + chunk(gen_event("a", 1)) + chunk(gen_event("ab", 2)))
        await writer.drain()
        # no terminating chunk: the connection closes in the middle of the body

    async with RawServer(script) as server:
        result = await BenchRunner(bench(server.url, num_requests=2)).run()
    assert result.completed == 0 and result.errors == 2
    for req in result.requests:
        assert not req.success and not req.partial
        assert "connection closed in the middle of the response body" in req.error
        assert req.chunk_cumulative_tokens == [1, 2]  # what arrived is kept with the error
    assert result.ttft_ms.count == 0  # failed requests stay out of the figures


async def test_an_error_event_and_an_http_error_are_reported_in_one_line():
    answers = iter([
        SSE_HEAD + chunk(gen_event("a", 1) + event({"error": {"message": "CUDA out of\nmemory"}})) + b"0\r\n\r\n",
        b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 11\r\n\r\nnot ready\nx",
        b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 900\r\n\r\nupstream", # cut short: the status still counts
    ])

    async def script(writer: asyncio.StreamWriter) -> None:
        writer.write(next(answers))

    async with RawServer(script) as server:
        result = await BenchRunner(bench(server.url, num_requests=3)).run()
    errors = [r.error for r in result.requests]
    assert errors == ["CUDA out of memory", "HTTP 503: not ready x", "HTTP 502: upstream"]
    assert result.errors == 3


async def test_a_silent_server_gives_a_read_timeout():
    async def script(writer: asyncio.StreamWriter) -> None:
        writer.write(SSE_HEAD)
        await writer.drain()
        await asyncio.sleep(30)

    async with RawServer(script) as server:
        with pytest.raises(ReadTimeout):
            await post_stream(server.url + "/generate", b"{}", lambda now, data: None, read_timeout_s=0.2)


# -- malformed SSE: never a traceback -------------------------------------------------------------------------------

sse_lines = st.one_of(
    st.binary(max_size=40),
    st.builds(lambda s: b"data: " + s.encode("utf-8", "surrogatepass"), st.text(max_size=40)),
    st.builds(lambda n: gen_event("x" * abs(n), n), st.integers(-3, 10)),
    st.just(b"data: [DONE]\n\n"),
    st.just(b'data: {"text": "a", "meta_info": {"completion_tokens": "many"}}\n\n'),
    st.just(b'data: {"text": 5, "meta_info": []}\n\n'),
    st.just(b'data: {"choices": [{"text": "a"}], "usage": {"completion_tokens": null}}\n\n'),
    st.just(b": comment\n\nevent: ping\n\n"),
    st.just(b"data: " + b"[" * 100_000 + b"\n\n"),
    st.just(b'data: {"choices": "x", "usage": [1], "meta_info": [2]}\n\n'),
    st.just(b'data: {"choices": [{"delta": "x", "finish_reason": {"type": 1}}]}\n\n'),
)


@given(st.lists(sse_lines, max_size=12), st.sampled_from(["generate", "chat", "completions"]),
       st.booleans())
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_malformed_sse_gives_a_result_or_an_error_message_never_a_traceback(lines, api, chunked):
    body = b"".join(lines)

    async def script(writer: asyncio.StreamWriter) -> None:
        if chunked:
            writer.write(SSE_HEAD + b"".join(chunk(line) for line in lines if line) + b"0\r\n\r\n")
        else:
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n" + body)

    async def go():
        async with RawServer(script) as server:
            return await BenchRunner(bench(server.url, api=api)).run()

    result = asyncio.run(go())
    (req,) = result.requests
    assert req.success or (isinstance(req.error, str) and req.error and "\n" not in req.error)
    assert req.output_tokens >= 0


# -- cancellation ---------------------------------------------------------------------------------------------------

CANCEL_SCRIPT = textwrap.dedent("""
    import asyncio, gc, sys
    import psutil
    sys.path.insert(0, "tests")
    from bench_server import BenchServerProcess
    from specdash.bench.runner import BenchRunner, BenchSettings
    from specdash.bench.workload import Workload

    async def main(server):
        settings = BenchSettings(url=server.url, workload=Workload("t", ("a", "b", "c", "d")), api="chat",
                                 num_requests=8, concurrency=4, output_len=200, warmup_requests=0)
        runner = BenchRunner(settings)
        runner.on_progress = lambda p: runner.cancel() if p.phase == "running" and p.output_tokens > 0 else None
        result = await runner.run()
        await asyncio.sleep(0)  # connection_lost callbacks of aborted transports
        port = int(server.url.rsplit(":", 1)[1])
        conns = [c for c in psutil.Process().net_connections("tcp") if c.raddr and c.raddr.port == port]
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        print("partial", result.partial, "cancelled", sum(r.error == "cancelled" for r in result.requests))
        print("tasks", len(others), "connections", len(conns))

    with BenchServerProcess({"ttft_s": 0.01, "chunk_delay_s": 0.05}) as server:
        asyncio.run(main(server))
        gc.collect()
    print("end")
""")


def test_a_cancelled_run_leaves_no_task_connection_or_warning_behind():
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONWARNINGS": "default"}
    proc = subprocess.run([sys.executable, "-X", "dev", "-c", CANCEL_SCRIPT], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("partial True cancelled ") and int(lines[0].split()[-1]) >= 1
    assert lines[1:] == ["tasks 0 connections 0", "end"]
    assert "Event loop is closed" not in proc.stderr
    assert "unclosed" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
