"""A streaming HTTP/1.1 POST over an asyncio protocol that timestamps response bytes as they arrive.

Why not a general HTTP client: the benchmark measures when tokens reach the client. A client that stamps arrivals
after its HTTP stack (httpx/httpcore/h11/anyio, or aiohttp's stream reader as SGLang's
``python/sglang/bench_serving.py`` does) stamps them late when the event loop is busy with other streams. Here the
reading of the clock happens in :meth:`asyncio.Protocol.data_received`, the first Python code that sees the bytes,
and the body is handed to the caller in that same callback (no task switch per chunk).

One request per connection (``Connection: close``), as ``bench_serving`` opens one aiohttp session per request.
Body framing: ``Transfer-Encoding: chunked``, ``Content-Length``, or up to the close of the connection
(RFC 9112 section 6). ``http`` and ``https`` URLs.

Entry point: :func:`post_stream`. :class:`ResponseParser` is the pure, incremental response parser it uses.
"""

from __future__ import annotations

import asyncio
import dataclasses
import ssl
import time
from collections.abc import Callable
from urllib.parse import urlsplit

#: Longest status line + header block accepted (bytes); a longer one is a malformed response.
MAX_HEADER_BYTES = 64 * 1024
#: Longest chunk-size line or trailer line accepted (bytes).
MAX_LINE_BYTES = 4 * 1024


class StreamError(Exception):
    """The request failed on the wire; the message is one line for the user."""


class ConnectFailed(StreamError):
    """No TCP (or TLS) connection to the server could be made within the connect timeout."""


class ReadTimeout(StreamError):
    """No bytes arrived for longer than the read timeout."""


class ProtocolError(StreamError):
    """The server's bytes are not a valid HTTP/1.1 response (or it ended before its body was complete)."""


class ResponseParser:
    """Incremental parser of one HTTP/1.1 response: status line, headers, then the body without its framing.

    ``feed(data)`` returns the body bytes that ``data`` completed (``b""`` while in the headers); after the status
    and headers are read, ``status`` (int) and ``headers`` (lower-cased name -> last value) are set. ``complete``
    is True once the body ended by its framing. ``eof()`` tells that the connection closed. Interim ``1xx``
    responses are skipped. Raises :class:`ProtocolError` for anything malformed (never another exception).
    """

    def __init__(self) -> None:
        self.status: int | None = None
        self.reason = ""
        self.headers: dict[str, str] = {}
        self.complete = False
        self._buf = bytearray()
        self._state = "head"  # head, chunk_size, chunk_data, chunk_crlf, trailer, length, close, done
        self._remaining = 0

    @property
    def headers_done(self) -> bool:
        """True once the status line and headers have been read."""
        return self._state != "head"

    def feed(self, data: bytes) -> bytes:
        """Consume ``data``; return the body bytes it completes. Raises :class:`ProtocolError`."""
        if self._state == "done":
            return b""  # bytes after the end of the response (Connection: close): ignored
        if self._state == "close":
            return data
        if self._state == "length":
            return self._length(data)
        self._buf += data
        if self._state == "head" and not self._head():
            return b""
        if self._state == "length":
            rest, self._buf = bytes(self._buf), bytearray()
            return self._length(rest)
        if self._state == "close":
            rest, self._buf = bytes(self._buf), bytearray()
            return rest
        return self._chunked()

    def eof(self) -> None:
        """The connection closed. Raises :class:`ProtocolError` when the response was not complete."""
        if self._state == "close":
            self._state, self.complete = "done", True
            return
        if self._state != "done":
            where = "headers" if self._state == "head" else "body"
            raise ProtocolError(f"connection closed in the middle of the response {where}")

    # -- internals ------------------------------------------------------------------------------------------------

    def _length(self, data: bytes) -> bytes:
        if len(data) >= self._remaining:
            out = data[: self._remaining]
            self._remaining = 0
            self._state, self.complete = "done", True
            return out
        self._remaining -= len(data)
        return data

    def _head(self) -> bool:
        while True:
            end = self._buf.find(b"\r\n\r\n")
            if end < 0:
                if len(self._buf) > MAX_HEADER_BYTES:
                    raise ProtocolError(f"response headers longer than {MAX_HEADER_BYTES} bytes")
                return False
            if end > MAX_HEADER_BYTES:
                raise ProtocolError(f"response headers longer than {MAX_HEADER_BYTES} bytes")
            block = bytes(self._buf[:end]).decode("latin-1")
            del self._buf[: end + 4]
            lines = block.split("\r\n")
            parts = lines[0].split(" ", 2)
            if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not (parts[1].isascii() and parts[1].isdigit()):
                raise ProtocolError(f"not an HTTP/1.x status line: {lines[0][:80]!r}")
            status = int(parts[1])
            if not 100 <= status <= 999:
                raise ProtocolError(f"invalid HTTP status {parts[1][:10]!r}")
            headers: dict[str, str] = {}
            for line in lines[1:]:
                name, sep, value = line.partition(":")
                if not sep or not name or name != name.strip():
                    raise ProtocolError(f"malformed response header line: {line[:80]!r}")
                headers[name.lower()] = value.strip()
            if 100 <= status < 200:
                continue  # interim response (100 Continue, 103 Early Hints): the real one follows
            self.status, self.reason, self.headers = status, parts[2] if len(parts) > 2 else "", headers
            break
        coding = self.headers.get("transfer-encoding", "").lower()
        if status in (204, 304):
            self._state, self.complete = "done", True
        elif coding:
            if coding.rsplit(",", 1)[-1].strip() != "chunked":
                self._state = "close"  # a non-chunked final coding: the body runs to the close (RFC 9112 6.3)
            else:
                self._state = "chunk_size"
        elif "content-length" in self.headers:
            value = self.headers["content-length"]
            if not (value.isascii() and value.isdigit()) or len(value) > 18:
                raise ProtocolError(f"invalid Content-Length {value[:40]!r}")
            self._remaining = int(value)
            self._state = "length"
            if self._remaining == 0:
                self._state, self.complete = "done", True
        else:
            self._state = "close"
        return True

    def _line(self) -> bytes | None:
        end = self._buf.find(b"\r\n")
        if end < 0:
            if len(self._buf) > MAX_LINE_BYTES:
                raise ProtocolError(f"chunk framing line longer than {MAX_LINE_BYTES} bytes")
            return None
        if end > MAX_LINE_BYTES:
            raise ProtocolError(f"chunk framing line longer than {MAX_LINE_BYTES} bytes")
        line = bytes(self._buf[:end])
        del self._buf[: end + 2]
        return line

    def _chunked(self) -> bytes:
        out: list[bytes] = []
        buf = self._buf
        while True:
            state = self._state
            if state == "chunk_size":
                line = self._line()
                if line is None:
                    break
                size_text = line.split(b";", 1)[0].strip()
                try:
                    size = int(size_text, 16) if size_text and len(size_text) <= 16 else -1
                except ValueError:
                    size = -1
                if size < 0 or not size_text.isalnum():
                    raise ProtocolError(f"invalid chunk size {line[:40]!r}")
                if size == 0:
                    self._state = "trailer"
                else:
                    self._remaining, self._state = size, "chunk_data"
            elif state == "chunk_data":
                if not buf:
                    break
                take = min(self._remaining, len(buf))
                out.append(bytes(buf[:take]))
                del buf[:take]
                self._remaining -= take
                if self._remaining:
                    break
                self._state = "chunk_crlf"
            elif state == "chunk_crlf":
                if len(buf) < 2:
                    break
                if buf[:2] != b"\r\n":
                    raise ProtocolError("chunk not followed by CRLF")
                del buf[:2]
                self._state = "chunk_size"
            elif state == "trailer":
                line = self._line()
                if line is None:
                    break
                if not line:
                    self._state, self.complete = "done", True
                    buf.clear()
                    break
            else:
                break
        return b"".join(out)


@dataclasses.dataclass
class StreamOutcome:
    """How one streamed POST ended.

    ``status``: the HTTP status; ``reason``: its reason phrase; ``error_body``: the first ``error_body_limit``
    bytes of the body of a non-200 answer (``b""`` for 200: its body went to ``on_body``); ``complete``: the body
    ended by its framing (or by the close when it has none); ``cut``: the reason ``on_body`` gave to stop reading
    (then ``complete`` is False); ``end_perf_s``: ``time.perf_counter()`` when the last body bytes arrived (or when
    the stream was cut / the connection closed).
    """

    status: int
    reason: str = ""
    error_body: bytes = b""
    complete: bool = False
    cut: str | None = None
    end_perf_s: float = 0.0


#: ``on_body(arrival_perf_s, body_bytes)``: called in the protocol callback for each piece of a 200 answer's body;
#: returns a non-empty reason to stop reading (the connection is closed), else None or "".
BodyCallback = Callable[[float, bytes], "str | None"]


class _Protocol(asyncio.Protocol):
    def __init__(self, on_body: BodyCallback, done: asyncio.Future, error_body_limit: int) -> None:
        self.on_body = on_body
        self.done = done
        self.error_body_limit = error_body_limit
        self.parser = ResponseParser()
        self.transport: asyncio.Transport | None = None
        self.error_body = bytearray()
        self.last_arrival = time.perf_counter()
        self.outcome: StreamOutcome | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        now = time.perf_counter()  # the arrival stamp: before any parsing
        self.last_arrival = now
        if self.done.done():
            return
        try:
            body = self.parser.feed(data)
            status = self.parser.status
            if status is None:
                return
            if status == 200:
                cut = self.on_body(now, body) if body else None
                if cut:
                    self._finish(StreamOutcome(200, self.parser.reason, cut=cut, end_perf_s=now))
                    return
            elif body:
                self.error_body += body[: self.error_body_limit - len(self.error_body)]
                if len(self.error_body) >= self.error_body_limit:
                    self._finish(self._outcome(now))
                    return
            if self.parser.complete:
                self._finish(self._outcome(now))
        except Exception as exc:  # a ProtocolError, or the caller's callback failing: reported, not lost
            self._fail(exc)

    def eof_received(self) -> bool | None:
        return None  # let the transport close: connection_lost follows

    def connection_lost(self, exc: Exception | None) -> None:
        if self.done.done():
            return
        if self.parser.status not in (None, 200):  # an error answer cut short: its status is what matters
            self._finish(self._outcome(time.perf_counter()))
            return
        try:
            self.parser.eof()
        except ProtocolError as error:
            self._fail(ProtocolError(f"connection lost: {_one_line(exc)}") if exc is not None else error)
            return
        self._finish(self._outcome(time.perf_counter()))

    def _outcome(self, now: float) -> StreamOutcome:
        return StreamOutcome(self.parser.status or 0, self.parser.reason, bytes(self.error_body),
                             complete=self.parser.complete, end_perf_s=now)

    def _finish(self, outcome: StreamOutcome) -> None:
        if not self.done.done():
            self.done.set_result(outcome)
        self._close()

    def _fail(self, exc: BaseException) -> None:
        if not self.done.done():
            self.done.set_exception(exc)
        self._close()

    def _close(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.abort()


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


_SSL_CONTEXT: ssl.SSLContext | None = None


def _ssl_context() -> ssl.SSLContext:
    global _SSL_CONTEXT
    if _SSL_CONTEXT is None:  # loading the CA store costs ~0.1 s of CPU: once, and only for https
        _SSL_CONTEXT = ssl.create_default_context()
    return _SSL_CONTEXT


def request_bytes(url: str, body: bytes, content_type: str = "application/json") -> tuple[str, int, bool, bytes]:
    """``(host, port, tls, request)`` for ``POST url`` with ``body``. Raises ``ValueError`` for a URL that is not
    ``http(s)://host[:port]/path``."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) URL: {url[:120]!r}")
    tls = parts.scheme == "https"
    port = parts.port or (443 if tls else 80)
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    netloc = parts.netloc.rpartition("@")[2]
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {netloc}\r\nUser-Agent: specdash\r\nAccept: text/event-stream\r\n"
        f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return parts.hostname, port, tls, head.encode("latin-1") + body


async def post_stream(
    url: str,
    body: bytes,
    on_body: BodyCallback,
    *,
    connect_timeout_s: float = 5.0,
    read_timeout_s: float = 60.0,
    error_body_limit: int = 64 * 1024,
) -> StreamOutcome:
    """POST ``body`` (JSON bytes) to ``url`` and hand the answer's body to ``on_body`` as it arrives.

    ``on_body(arrival_perf_s, body_bytes)`` runs inside the protocol callback for a 200 answer (body already
    de-chunked; pieces are not aligned to events); a non-empty string it returns stops the stream
    (:attr:`StreamOutcome.cut`). Timeouts in seconds: ``connect_timeout_s`` for the TCP/TLS
    connection, ``read_timeout_s`` the longest silence of the server. Raises :class:`ConnectFailed`,
    :class:`ReadTimeout`, :class:`ProtocolError` (malformed answer, or connection lost before its end), and
    ``ValueError`` for a bad URL. On cancellation the connection is closed at once and ``CancelledError`` raised.
    """
    host, port, tls, request = request_bytes(url, body)
    loop = asyncio.get_running_loop()
    done: asyncio.Future[StreamOutcome] = loop.create_future()
    protocol = _Protocol(on_body, done, error_body_limit)
    # the connect timeout cancels this task (asyncio.wait_for would run the connection in a task of its own: a
    # loop iteration later, which delays the send of every request of a burst)
    task = asyncio.current_task()
    expired = False

    def expire() -> None:
        nonlocal expired
        expired = True
        if task is not None:
            task.cancel()

    deadline = loop.call_later(connect_timeout_s, expire)
    try:
        await loop.create_connection(lambda: protocol, host, port, ssl=_ssl_context() if tls else None,
                                     server_hostname=host if tls else None)
    except asyncio.CancelledError:
        if expired:
            raise ConnectFailed(f"no connection to {host}:{port} within {connect_timeout_s:g} s") from None
        raise
    except (OSError, ssl.SSLError) as exc:
        raise ConnectFailed(f"cannot connect to {host}:{port}: {_one_line(exc)}") from None
    finally:
        deadline.cancel()
    transport = protocol.transport
    assert transport is not None
    timer: asyncio.TimerHandle | None = None

    def check_silence() -> None:
        nonlocal timer
        silent = time.perf_counter() - protocol.last_arrival
        if silent >= read_timeout_s:
            protocol._fail(ReadTimeout(f"no data from the server for {read_timeout_s:g} s"))
        else:
            timer = loop.call_later(read_timeout_s - silent, check_silence)

    try:
        transport.write(request)
        protocol.last_arrival = time.perf_counter()
        timer = loop.call_later(read_timeout_s, check_silence)
        return await done
    finally:
        if timer is not None:
            timer.cancel()
        if not transport.is_closing():
            transport.abort()
