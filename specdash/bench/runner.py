"""Benchmark runner: streams a workload to an OpenAI-compatible or SGLang-native endpoint and measures it.

Core module (no Textual): asyncio. The streamed requests go through :mod:`specdash.bench.stream` (an asyncio
protocol that stamps each chunk's arrival in the socket callback); the small GETs (/server_info, /v1/models,
/metrics, /health) through httpx. Entry points: :class:`BenchRunner` (``await runner.run()``, ``runner.cancel()``)
and :func:`run_benchmark`. Timing definitions: :mod:`specdash.bench.timing`; accept length sources:
:mod:`specdash.bench.accept_length`.

Arrivals follow SGLang ``bench_serving`` (``python/sglang/bench_serving.py``): with a request rate, gaps between
request arrivals are exponential with mean 1/rate (a Poisson process, seeded); without one all requests arrive at
once; a concurrency limit caps the requests in flight (a request's timing starts when it is actually sent).
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as _dt
import json
import random
import ssl
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import httpx

from specdash.bench import accept_length as _accept
from specdash.bench.protocol import ENDPOINTS, SSESplitter, parse_event, request_body
from specdash.bench.results import RequestResult, RunResult
from specdash.bench.stats import Distribution, standard_error_of_rate
from specdash.bench.stream import ReadTimeout, StreamError, post_stream
from specdash.bench.timing import request_timings
from specdash.bench.workload import APIS, Workload
from specdash.logs.own_traffic import marked
from specdash.text.display import clean
from specdash.text.redaction import redact_text

#: Output length used for warm-up requests (at most the run's own output length).
WARMUP_OUTPUT_LEN = 32


class BenchError(Exception):
    """The benchmark cannot run (one-line message for the user), e.g. the server is unreachable."""


class ServerUnreachable(BenchError):
    """No TCP connection to the server URL."""


@dataclasses.dataclass(frozen=True)
class BenchSettings:
    """What to run.

    ``url``: server base URL (``http://host:port``); ``workload``; ``api``: "chat", "completions" or "generate";
    ``num_requests``; ``concurrency``: max requests in flight (None = unlimited); ``request_rate``: requests/s
    (None = all at once); ``output_len``: max tokens per request; ``ignore_eos``; ``temperature``; ``seed``
    (prompt order, arrival times, and the OpenAI ``seed`` field); ``warmup_requests``: sent before the measured
    run and not recorded; ``model``: OpenAI model name (None = first of ``/v1/models``, else "default");
    ``timeout_s``: the longest one request may take (s) before it is cut; ``read_timeout_s``: the longest wait
    for the next bytes of a response (s) before the request is abandoned with a notice (a stalled server);
    ``connect_timeout_s``; ``max_response_bytes``: a response longer than this is cut (an endless stream), as is
    a stream with more than ``4 * output_len + 64`` text events (a server honouring ``max_tokens`` sends at most
    ``output_len``).
    """

    url: str
    workload: Workload
    api: str = "chat"
    num_requests: int = 16
    concurrency: int | None = 4
    request_rate: float | None = None
    output_len: int = 256
    ignore_eos: bool = True
    temperature: float = 0.0
    seed: int = 1
    warmup_requests: int = 1
    model: str | None = None
    timeout_s: float = 600.0
    read_timeout_s: float = 60.0
    connect_timeout_s: float = 5.0
    max_response_bytes: int = 32 * 1024 * 1024

    @classmethod
    def from_workload(cls, url: str, workload: Workload, **overrides: Any) -> BenchSettings:
        """Settings taking the workload's defaults, then ``overrides`` (``None`` values are ignored)."""
        base: dict[str, Any] = dict(
            api=workload.api,
            num_requests=workload.num_requests,
            concurrency=workload.concurrency,
            request_rate=workload.request_rate,
            output_len=workload.output_len,
            ignore_eos=workload.ignore_eos,
            temperature=workload.temperature,
            warmup_requests=workload.warmup_requests,
        )
        base.update({k: v for k, v in overrides.items() if v is not None})
        return cls(url=url, workload=workload, **base)

    def __post_init__(self) -> None:
        if self.api not in APIS:
            raise ValueError(f"api must be one of {', '.join(APIS)}, got {self.api!r}")
        if self.num_requests < 1:
            raise ValueError("num_requests must be >= 1")
        if self.concurrency is not None and self.concurrency < 1:
            raise ValueError("concurrency must be >= 1")
        if self.request_rate is not None and self.request_rate <= 0:
            raise ValueError("request_rate must be > 0 requests/s")
        if self.output_len < 1:
            raise ValueError("output_len must be >= 1")

    def to_dict(self) -> dict:
        """JSON-ready dict (workload by name; the full workload is stored separately in the result)."""
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "workload"}
        data["workload"] = self.workload.name
        return data


@dataclasses.dataclass(frozen=True)
class BenchProgress:
    """Live figures for a progress display. ``phase``: "warmup", "running", "finished" or "cancelled";
    ``done``/``total``: finished (ok or failed) / planned requests; ``errors``; ``output_tokens``: tokens (never
    streamed chunks: a verify step sends several tokens in one chunk) of the successful finished requests, counted
    as the result counts them, plus the server-reported counts of requests still streaming; ``elapsed_s``;
    ``output_tokens_per_s``: output_tokens / elapsed_s; ``ttft_p50_ms``: median TTFT of requests finished so far
    (None before the first). The last progress (``finished``/``cancelled``) is :meth:`of_result`: the very figures
    of the table, the saved JSON and the session."""

    phase: str
    done: int
    total: int
    errors: int
    output_tokens: int
    elapsed_s: float
    output_tokens_per_s: float
    ttft_p50_ms: float | None

    @classmethod
    def of_result(cls, phase: str, total: int, result: RunResult) -> BenchProgress:
        """The final progress of a run: finished requests (completed + failed: a cancelled run's requests cut short
        are not among them), tokens, rate, duration and TTFT p50, all read from its :class:`RunResult`."""
        return cls(phase=phase, done=result.completed + result.errors, total=total, errors=result.errors,
                   output_tokens=result.total_output_tokens, elapsed_s=result.duration_s,
                   output_tokens_per_s=result.output_tokens_per_s, ttft_p50_ms=result.ttft_ms.p50)


ProgressCallback = Callable[[BenchProgress], None]


#: Bytes of an error response's body read for its message (the rest is not read).
_ERROR_BODY_BYTES = 64 * 1024


#: Bytes read of a GET answer (/health, /server_info, /v1/models, /metrics: KiBs, at most ~1 MiB of metrics); a
#: longer answer is not kept (an endless body).
_GET_BODY_BYTES = 8 * 1024 * 1024


async def _read_some(resp: httpx.Response, limit: int) -> bytes:
    """At most ``limit`` bytes of ``resp``'s (decoded for transfer) body: an endless body is not read to its end."""
    chunks: list[bytes] = []
    size = 0
    async for data in resp.aiter_bytes():
        chunks.append(data)
        size += len(data)
        if size >= limit:
            break
    return b"".join(chunks)[:limit]


async def _get(client: httpx.AsyncClient, url: str) -> tuple[int, str | None]:
    """Status and body text of ``GET url``; the body is None when longer than :data:`_GET_BODY_BYTES`.
    Raises httpx.HTTPError."""
    async with client.stream("GET", url) as resp:
        body = await _read_some(resp, _GET_BODY_BYTES + 1)
        text = None if len(body) > _GET_BODY_BYTES else body.decode("utf-8", errors="replace")
        return resp.status_code, text


def _outside_text(text: str, max_chars: int) -> str:
    """Text from the server, safe to store and show: secrets redacted, escapes/controls removed, one line, cut."""
    return clean(redact_text(text.strip()), max_chars=max_chars)


def _cut_reason(received: int, text_events: int, elapsed_s: float, s: BenchSettings, output_len: int) -> str:
    """Why a stream must be cut now ("" when it may go on): too many bytes, text events, or seconds."""
    if received > s.max_response_bytes:
        return (f"response longer than {s.max_response_bytes / 2**20:g} MiB without ending (limit): cut "
                "(an endless stream?)")
    max_events = 4 * output_len + 64
    if text_events > max_events:
        return (f"stream still going after {text_events} text events for {output_len} max tokens (limit "
                f"{max_events}): cut (an endless stream?)")
    if elapsed_s > s.timeout_s:
        return f"request still streaming after {s.timeout_s:g} s (limit): cut"
    return ""


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


class BenchRunner:
    """Runs one benchmark; ``await run()`` once, ``cancel()`` from anywhere on the same loop.

    ``effective_config``: the caller's description of the server configuration (GPU name, CUDA graph, ...); stored
    with the result under what /server_info reports (the server's post-rewrite values win; the caller's differing
    values are kept under ``"requested"``); ``log_accept_samples``: an iterable (or a zero-argument callable
    returning one) of "accept len" values the log parser saw - read after the run, used only when better sources
    are missing; ``on_progress``: called with :class:`BenchProgress` after each request and at most every 0.2 s
    while tokens stream; ``transport``: optional httpx transport for the GETs (tests; the streamed requests use
    :mod:`specdash.bench.stream`); ``sleep``: the coroutine function that waits out the gaps between arrivals,
    seconds (default :func:`asyncio.sleep`; tests pass one that records the schedule).
    """

    def __init__(
        self,
        settings: BenchSettings,
        *,
        effective_config: dict[str, Any] | None = None,
        log_accept_samples: Iterable[float] | Callable[[], Iterable[float]] | None = None,
        on_progress: ProgressCallback | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.settings = settings
        self._sleep = sleep
        self.effective_config = dict(effective_config or {})
        self.log_accept_samples = log_accept_samples
        self.on_progress = on_progress
        self._transport = transport
        self._cancel = asyncio.Event()
        self._phase = "warmup"
        self._done = 0
        self._errors = 0
        self._finished_tokens = 0  # output tokens of successful finished measured requests (RequestResult)
        self._streaming_tokens: dict[int, int] = {}  # request index -> server-reported tokens so far
        self._ttfts: list[float] = []
        self._run_start = 0.0
        self._last_progress = 0.0

    # -- public -------------------------------------------------------------------------------------------------

    def cancel(self) -> None:
        """Stop issuing requests and abort those in flight; ``run()`` then returns a result with ``partial=True``."""
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        """True once :meth:`cancel` was called."""
        return self._cancel.is_set()

    async def run(self) -> RunResult:
        """Warm up, run the measured requests, and return the :class:`RunResult`.

        Raises :class:`ServerUnreachable` when no connection to ``settings.url`` can be made at all.
        Individual request failures do not raise: they are counted in ``errors`` with a message per request.
        """
        s = self.settings
        base = s.url.rstrip("/")
        if base.endswith("/v1"):  # an OpenAI "base_url" was given: endpoints below carry /v1 themselves
            base = base[: -len("/v1")]
        timeout = httpx.Timeout(s.timeout_s, connect=s.connect_timeout_s, read=s.read_timeout_s)
        limit = s.concurrency or s.num_requests
        limits = httpx.Limits(max_connections=limit + 2, max_keepalive_connections=limit + 2)
        # certificates are loaded only for https (building a verifying SSL context costs ~0.1 s of CPU; httpx's
        # verify=False builds a default context too, so plain http gets a bare one it never uses)
        async with httpx.AsyncClient(
            timeout=timeout,
            limits=limits,
            trust_env=False,
            transport=self._transport,
            verify=True if base.startswith("https://") else ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT),
        ) as client:
            info = await self._server_info(client, base)
            model = s.model or ("default" if s.api == "generate" else await self._model_name(client, base))
            if info is None and model is None:
                await self._probe(client, base)
                model = "default"
            model = model or "default"
            self._emit(force=True)
            await self._warmup(client, base, model)
            before = await self._counters(client, base) if not self.cancelled else None
            self._phase = "running"
            started_at = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
            requests, duration_s = await self._measured(client, base, model)
            after = await self._counters(client, base)
        self._phase = "cancelled" if self.cancelled else "finished"
        pre_warmup = _accept.ServerCounters(_accept.avg_accept_length_of(info), server_info=info)
        result = self._result(requests, duration_s, started_at, model, info, before, after, pre_warmup)
        if self.on_progress is not None:
            self.on_progress(BenchProgress.of_result(self._phase, self.settings.num_requests, result))
        return result

    # -- phases ---------------------------------------------------------------------------------------------------

    async def _probe(self, client: httpx.AsyncClient, base: str) -> None:
        try:
            await _get(client, base + marked("/health"))
        except httpx.ConnectError as exc:
            raise ServerUnreachable(f"cannot connect to {self.settings.url}: {_one_line(exc)}") from None
        except httpx.HTTPError:
            pass

    async def _server_info(self, client: httpx.AsyncClient, base: str) -> dict | None:
        for path in ("/server_info", "/get_server_info"):
            try:
                status, text = await _get(client, base + marked(path))
            except httpx.ConnectError as exc:
                raise ServerUnreachable(f"cannot connect to {self.settings.url}: {_one_line(exc)}") from None
            except httpx.HTTPError:
                return None
            if status == 200:
                try:
                    data = json.loads(text) if text is not None else None
                except (ValueError, RecursionError):
                    return None
                return data if isinstance(data, dict) else None
        return None

    async def _model_name(self, client: httpx.AsyncClient, base: str) -> str | None:
        try:
            _, text = await _get(client, base + marked("/v1/models"))
            data = json.loads(text or "null").get("data") or []
            return str(data[0]["id"]) if data else None
        except (httpx.HTTPError, ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError):
            return None

    async def _counters(self, client: httpx.AsyncClient, base: str) -> _accept.ServerCounters:
        info = await self._server_info_quiet(client, base)
        gen = verify = None
        try:
            status, text = await _get(client, base + marked("/metrics"))
            if status == 200 and text is not None:
                gen, verify = _accept.parse_prometheus_counters(text)
        except httpx.HTTPError:
            pass
        return _accept.ServerCounters(_accept.avg_accept_length_of(info), gen, verify, info)

    async def _server_info_quiet(self, client: httpx.AsyncClient, base: str) -> dict | None:
        try:
            return await self._server_info(client, base)
        except ServerUnreachable:
            return None

    async def _warmup(self, client: httpx.AsyncClient, base: str, model: str) -> None:
        s = self.settings
        if s.warmup_requests <= 0:
            return
        prompts = s.workload.prompt_order(s.warmup_requests, s.seed + 1)
        out_len = min(s.output_len, WARMUP_OUTPUT_LEN)
        sem = asyncio.Semaphore(s.concurrency or s.warmup_requests)

        async def one(i: int, prompt: str) -> None:
            async with sem:
                await self._request(client, base, model, i, prompt, out_len, time.perf_counter(), count=False)

        await self._until_cancel([asyncio.ensure_future(one(i, p)) for i, p in enumerate(prompts)])

    async def _measured(
        self, client: httpx.AsyncClient, base: str, model: str
    ) -> tuple[list[RequestResult], float]:
        s = self.settings
        prompts = s.workload.prompt_order(s.num_requests, s.seed)
        rng = random.Random(s.seed)
        sem = asyncio.Semaphore(s.concurrency or s.num_requests)
        self._run_start = start = time.perf_counter()
        tasks: list[asyncio.Future] = []

        async def one(i: int, prompt: str) -> RequestResult:
            async with sem:
                if self.cancelled:
                    return RequestResult(i, prompt, error="cancelled before sending", partial=True)
                return await self._request(client, base, model, i, prompt, s.output_len, start, count=True)

        async def schedule() -> None:
            for i, prompt in enumerate(prompts):
                if self.cancelled:
                    return
                tasks.append(asyncio.ensure_future(one(i, prompt)))
                if s.request_rate is not None and i < len(prompts) - 1:
                    await self._sleep(rng.expovariate(s.request_rate))

        scheduler = asyncio.ensure_future(schedule())
        await self._until_cancel([scheduler])
        await self._until_cancel(tasks)
        end = time.perf_counter()
        results = [t.result() for t in tasks if t.done() and not t.cancelled()]
        sent = [r for r in results if r.error != "cancelled before sending"]
        return sorted(sent, key=lambda r: r.index), end - start

    async def _until_cancel(self, tasks: list[asyncio.Future]) -> None:
        """Wait for ``tasks``; on cancel(), cancel them and wait until they have recorded their partial state."""
        if not tasks:
            return
        stopper = asyncio.ensure_future(self._cancel.wait())
        try:
            pending = set(tasks)
            while pending:
                done, pending = await asyncio.wait(pending | {stopper}, return_when=asyncio.FIRST_COMPLETED)
                pending.discard(stopper)
                if stopper in done:
                    for task in pending:
                        task.cancel()
                    if pending:
                        await asyncio.wait(pending)
                    return
        except asyncio.CancelledError:
            for task in tasks:
                task.cancel()
            raise
        finally:
            stopper.cancel()

    # -- one request ---------------------------------------------------------------------------------------------

    async def _request(
        self,
        client: httpx.AsyncClient,
        base: str,
        model: str,
        index: int,
        prompt: str,
        output_len: int,
        run_start: float,
        count: bool,
    ) -> RequestResult:
        s = self.settings
        body = request_body(
            s.api,
            prompt,
            model=model,
            max_tokens=output_len,
            temperature=s.temperature,
            ignore_eos=s.ignore_eos,
            seed=s.seed,
        )
        payload = json.dumps(body).encode()  # encoding is not sending: before the clock starts
        result = RequestResult(index, prompt)
        times: list[float] = []
        cumulative: list[int | None] = []
        total_tokens: int | None = None
        st = time.perf_counter()
        result.start_s = st - run_start
        result.sent_perf_s = st
        end = st
        splitter = SSESplitter()
        api = s.api
        received = 0
        last_event = st

        def events(now: float, payloads: list[str]) -> None:
            nonlocal last_event, total_tokens
            for payload in payloads:
                event = parse_event(api, payload)
                last_event = now
                if event.error:
                    result.error = _outside_text(event.error, 300)
                    continue
                if event.done:
                    continue
                if event.prompt_tokens is not None:
                    result.prompt_tokens = event.prompt_tokens
                if event.spec_verify_ct is not None:
                    result.spec_verify_ct = event.spec_verify_ct
                if event.completion_tokens is not None:
                    total_tokens = event.completion_tokens
                if event.has_text:
                    times.append(now - st)
                    cumulative.append(event.completion_tokens)
                    if count and event.completion_tokens is not None:
                        # the server's count; a chunk without one adds nothing until the request
                        # ends and its tokens are counted as the result counts them
                        self._streaming_tokens[index] = event.completion_tokens
                        self._emit()

        def on_body(now: float, data: bytes) -> str | None:
            # runs in the socket's data_received callback: ``now`` is when these bytes arrived
            nonlocal received
            received += len(data)
            cut = _cut_reason(received, len(times), now - st, s, output_len)
            if cut:
                return cut
            events(now, splitter.feed(data))
            return None

        try:
            outcome = await post_stream(
                base + ENDPOINTS[api],
                payload,
                on_body,
                connect_timeout_s=s.connect_timeout_s,
                read_timeout_s=s.read_timeout_s,
                error_body_limit=_ERROR_BODY_BYTES,
            )
            if outcome.status != 200:
                text = outcome.error_body.decode("utf-8", errors="replace")
                result.error = f"HTTP {outcome.status}: {_outside_text(text, 200)}"
                end = outcome.end_perf_s
            elif outcome.cut:
                result.error = outcome.cut
                end = outcome.end_perf_s
            else:
                events(outcome.end_perf_s, splitter.flush())  # a last event without its newline
                end = last_event
                if result.error is None and not times:
                    result.error = "stream ended without any generated text"
                if result.error is None:
                    result.success = True
        except asyncio.CancelledError:
            result.partial = True
            result.error = "cancelled"
            end = time.perf_counter()
        except ReadTimeout:
            result.error = (f"no data from the server for {s.read_timeout_s:g} s (read timeout): request abandoned "
                            "(a stalled server?)")
            end = time.perf_counter()
        except StreamError as exc:
            result.error = _outside_text(str(exc), 300)
            end = time.perf_counter()
        timings = request_timings(times, cumulative, end - st, total_tokens)
        result.e2e_ms = timings.e2e_s * 1000.0
        result.output_tokens = timings.output_tokens
        result.chunk_offsets_ms = [t * 1000.0 for t in times]
        result.chunk_cumulative_tokens = list(cumulative)
        result.token_counts = timings.token_counts
        if result.success:
            result.ttft_ms = timings.ttft_s * 1000.0 if timings.ttft_s is not None else None
            result.tpot_ms = timings.tpot_s * 1000.0 if timings.tpot_s is not None else None
            result.itl_ms = [v * 1000.0 for v in timings.itl_s]
        if count:
            self._streaming_tokens.pop(index, None)
            if result.success:
                self._finished_tokens += result.output_tokens
            if not result.partial:  # a request a cancel cut short did not finish
                self._done += 1
            if not result.success and not result.partial:
                self._errors += 1
            if result.ttft_ms is not None:
                self._ttfts.append(result.ttft_ms)
            self._emit(force=True)
        return result

    # -- progress and result -----------------------------------------------------------------------------------

    def _emit(self, force: bool = False) -> None:
        if self.on_progress is None:
            return
        now = time.perf_counter()
        if not force and now - self._last_progress < 0.2:
            return
        self._last_progress = now
        elapsed = now - self._run_start if self._run_start else 0.0
        ttft = Distribution.of(self._ttfts).p50
        tokens = self._finished_tokens + sum(self._streaming_tokens.values())
        self.on_progress(
            BenchProgress(
                phase=self._phase,
                done=self._done,
                total=self.settings.num_requests,
                errors=self._errors,
                output_tokens=tokens,
                elapsed_s=elapsed,
                output_tokens_per_s=tokens / elapsed if elapsed > 0 else 0.0,
                ttft_p50_ms=ttft,
            )
        )

    def _result(
        self,
        requests: list[RequestResult],
        duration_s: float,
        started_at: str,
        model: str,
        info: dict | None,
        before: _accept.ServerCounters | None,
        after: _accept.ServerCounters | None,
        pre_warmup: _accept.ServerCounters | None = None,
    ) -> RunResult:
        ok = [r for r in requests if r.success]
        total_out = sum(r.output_tokens for r in ok)
        out_rate = total_out / duration_s if duration_s > 0 else 0.0
        samples = self.log_accept_samples() if callable(self.log_accept_samples) else self.log_accept_samples
        accept = _accept.choose(requests, before, after, samples, pre_warmup, self.settings.warmup_requests)
        settings = self.settings.to_dict()
        settings["model"] = model
        reported = _accept.config_from_server_info(info)
        effective = {**self.effective_config, **reported}
        differs = {k: v for k, v in self.effective_config.items() if k in reported and reported[k] != v}
        if differs:  # asked for, but the server runs otherwise (a silent rewrite by SGLang)
            effective["requested"] = differs
        return RunResult(
            settings=settings,
            workload=self.settings.workload.to_dict(),
            effective_config=effective,
            started_at=started_at,
            duration_s=duration_s,
            partial=self.cancelled,
            completed=len(ok),
            errors=sum(1 for r in requests if not r.success and not r.partial),
            total_output_tokens=total_out,
            output_tokens_per_s=out_rate,
            requests_per_s=len(ok) / duration_s if duration_s > 0 else 0.0,
            ttft_ms=Distribution.of(r.ttft_ms for r in ok if r.ttft_ms is not None),
            itl_ms=Distribution.of(v for r in ok for v in r.itl_ms),
            tpot_ms=Distribution.of(r.tpot_ms for r in ok if r.tpot_ms is not None),
            e2e_ms=Distribution.of(r.e2e_ms for r in ok if r.e2e_ms is not None),
            output_rate_se=standard_error_of_rate(out_rate, [r.output_tokens_per_s or 0.0 for r in ok]),
            accept_length=accept.value,
            accept_length_source=accept.source,
            accept_length_note=accept.note,
            requests=requests,
        )


async def run_benchmark(settings: BenchSettings, **kwargs: Any) -> RunResult:
    """Convenience: ``await BenchRunner(settings, **kwargs).run()`` (same keyword arguments and errors)."""
    return await BenchRunner(settings, **kwargs).run()
