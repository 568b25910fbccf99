"""SGLang's log line shapes by era (SGLang's logging, 0.4.x to 2026; examples in tests/data/sglang-log-formats.txt).

Eras: ``0.4.5`` (group 1), ``0.5.0`` (group 2), ``0.5.3`` (group 3), ``0.5.9`` (group 4), ``2026`` (group 5).
All output goes to stderr (Python logging's default and tqdm's), one flush per write, under a lock so lines from
HTTP threads never interleave.
"""

from __future__ import annotations

import sys
import threading
import time

_LOCK = threading.Lock()
_bar_open = False  # a tqdm bar was written without its final newline


def _write(text: str, *, bar: bool = False) -> None:
    """Write and flush; a line written while a progress bar is open first ends the bar's line (as tqdm's
    close does when the capture is interrupted)."""
    global _bar_open
    with _LOCK:
        if _bar_open and not bar:
            text = "\n" + text
        sys.stderr.write(text)
        sys.stderr.flush()
        _bar_open = bar and not text.endswith("\n")


def ts() -> str:
    """Timestamp as SGLang's logger prints it: ``%Y-%m-%d %H:%M:%S``."""
    return time.strftime("%Y-%m-%d %H:%M:%S")


class Log:
    """Writes log lines for one era and one parallel layout (tp_size, dp_size)."""

    def __init__(self, era: str, tp_size: int = 1, dp_size: int = 1) -> None:
        self.era, self.tp_size, self.dp_size = era, tp_size, dp_size

    # -- prefixes -------------------------------------------------------------------------------
    def prefix(self, rank: int | None) -> str:
        """Rank prefix of scheduler lines: always `` TP<r>`` in 0.4.x; from 0.5 only when tp_size > 1."""
        if rank is None:
            return ""
        if self.era == "0.4.5":
            return f" DP0 TP{rank}" if self.dp_size > 1 else f" TP{rank}"
        parts = []
        if self.dp_size > 1:
            parts.append(" DP0")
        if self.tp_size > 1:
            parts.append(f" TP{rank}")
        return "".join(parts)

    def line(self, message: str, rank: int | None = None) -> None:
        """``[YYYY-MM-DD HH:MM:SS<prefix>] message``."""
        _write(f"[{ts()}{self.prefix(rank)}] {message}\n")

    def bare(self, message: str) -> None:
        """A line without timestamp (pre-logging warnings, tracebacks)."""
        _write(message + "\n")

    def raw(self, text: str) -> None:
        """Text as is (tqdm's carriage-return updates)."""
        _write(text, bar=True)

    def warning(self, message: str) -> None:
        """A ServerArgs warning: bare before 2026 (logging not yet configured), timestamped in 2026."""
        if self.era == "2026":
            self.line(message)
        else:
            self.bare(message)

    # -- start-up -------------------------------------------------------------------------------
    def server_args(self, fields: list[tuple[str, object]]) -> None:
        body = ", ".join(f"{k}={v!r}" for k, v in fields)
        self.line(f"server_args=ServerArgs({body})")

    def load_weight_begin(self, avail_gb: float, rank: int = 0) -> None:
        self.line(f"Load weight begin. avail mem={avail_gb:.2f} GB", rank)

    def load_weight_end(self, arch: str, dtype: str, avail_gb: float, usage_gb: float, elapsed_s: float,
                        rank: int = 0) -> None:
        if self.era in ("0.4.5", "0.5.0"):
            msg = f"Load weight end. type={arch}, dtype={dtype}, avail mem={avail_gb:.2f} GB, mem usage={usage_gb:.2f} GB."
        else:
            msg = (f"Load weight end. elapsed={elapsed_s:.2f} s, type={arch}, dtype={dtype}, "
                   f"avail mem={avail_gb:.2f} GB, mem usage={usage_gb:.2f} GB.")
        self.line(msg, rank)

    def kv_cache(self, tokens: int, kv_gb: float, avail_gb: float, rank: int = 0) -> None:
        half = kv_gb / 2
        dtype = "dtype: torch.bfloat16, " if self.era == "2026" else ""
        self.line(f"KV Cache is allocated. {dtype}#tokens: {tokens}, K size: {half:.2f} GB, V size: {half:.2f} GB", rank)
        self.line(f"Memory pool end. avail mem={avail_gb:.2f} GB", rank)

    def graph_begin(self, what: str, bs: list[int], avail_gb: float, tokens_per_req: int, rank: int = 0) -> None:
        """``what``: ``target`` or ``draft`` (2026: ``target verify``/``target decode``/``draft decode``)."""
        if self.era == "2026":
            self.line(f"Capture {what} CUDA graph begin. backend=full, num_tokens_per_req={tokens_per_req}, "
                      f"bs={bs}, avail mem={avail_gb:.2f} GB", rank)
            return
        label = "cuda graph" if what.startswith("target") else "draft cuda graph"
        self.line(f"Capture {label} begin. This can take up to several minutes. avail mem={avail_gb:.2f} GB", rank)
        if self.era != "0.4.5" and what.startswith("target"):
            self.line(f"Capture cuda graph bs {bs}", rank)

    def graph_end(self, what: str, elapsed_s: float, usage_gb: float, avail_gb: float, rank: int = 0) -> None:
        if self.era == "2026":
            self.line(f"Capture {what} CUDA graph end. elapsed={elapsed_s:.2f} s, mem usage={usage_gb:.2f} GB, "
                      f"avail mem={avail_gb:.2f} GB.", rank)
            return
        label = "cuda graph" if what.startswith("target") else "draft cuda graph"
        if self.era == "0.4.5":
            tail = f"avail mem={avail_gb:.2f} GB. mem usage={usage_gb:.2f} GB."
        else:
            tail = f"mem usage={usage_gb:.2f} GB. avail mem={avail_gb:.2f} GB."
        self.line(f"Capture {label} end. Time elapsed: {elapsed_s:.2f} s. {tail}", rank)

    def capture_progress(self, bs: int, avail_gb: float, done: int, total: int, elapsed_s: float) -> None:
        """One tqdm update, carriage-return style (``\\r`` before, ``\\n`` after the last)."""
        pct = 100.0 * done / total if total else 100.0
        filled = 10 * done / total if total else 10
        full = int(filled)
        part = " ▏▎▍▌▋▊▉"[int((filled - full) * 8)] if full < 10 else ""
        bar = ("█" * full + part).ljust(10)
        rate = done / elapsed_s if elapsed_s > 0 and done else 0.0
        remaining = (total - done) / rate if rate else None
        el = _clock(elapsed_s)
        if done == 0:
            timing = f"[{el}<?, ?it/s]"
        else:
            timing = f"[{el}<{_clock(remaining or 0)}, {rate:5.2f}it/s]"
        desc = "" if self.era == "0.4.5" else f"Capturing batches (bs={bs} avail_mem={avail_gb:.2f} GB): "
        end = "\n" if done == total else ""
        self.raw(f"\r{desc}{pct:3.0f}%|{bar}| {done}/{total} {timing}{end}")

    def capacity(self, cap: dict, avail_gb: float, rank: int = 0) -> None:
        msg = (f"max_total_num_tokens={cap['max_total_num_tokens']}, chunked_prefill_size={cap['chunked_prefill_size']}, "
               f"max_prefill_tokens={cap['max_prefill_tokens']}, max_running_requests={cap['max_running_requests']}, "
               f"context_len={cap['context_len']}")
        if self.era != "0.4.5":
            msg += f", available_gpu_mem={avail_gb:.2f} GB"
        self.line(msg, rank)

    def uvicorn_start(self, pid: int, host: str, port: int) -> None:
        self.line(f"INFO:     Started server process [{pid}]")
        self.line("INFO:     Waiting for application startup.")
        self.line("INFO:     Application startup complete.")
        self.line(f"INFO:     Uvicorn running on http://{host}:{port} (Press CTRL+C to quit)")

    def access(self, client: str, method: str, path: str, status: int) -> None:
        reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 503: "Service Unavailable"}.get(status, "")
        self.line(f'INFO:     {client} - "{method} {path} HTTP/1.1" {status} {reason}'.rstrip())

    def ready(self) -> None:
        self.line("The server is fired up and ready to roll!")

    # -- steady state ---------------------------------------------------------------------------
    def prefill(self, new_seq: int, new_token: int, running: int, queue: int, usage: float,
                input_tps: float, rank: int = 0) -> None:
        sep = "," if self.era in ("0.5.9", "2026") else "."
        msg = (f"Prefill batch{sep} #new-seq: {new_seq}, #new-token: {new_token}, #cached-token: 0, "
               f"token usage: {usage:.2f}, #running-req: {running}, #queue-req: {queue}, ")
        if self.era in ("0.5.9", "2026"):
            msg += f"input throughput (token/s): {input_tps:.2f}, cuda graph: False"
        self.line(msg, rank)

    def decode(self, running: int, tokens: int, usage: float, accept_len: float | None,
               accept_rate: float | None, gen_tps: float, queue: int = 0, rank: int = 0) -> None:
        """The decode batch line; accept fields only when ``accept_len`` is not None (speculative)."""
        era = self.era
        sep = "," if era in ("0.5.9", "2026") else "."
        msg = f"Decode batch{sep} #running-req: {running}, #token: {tokens}, token usage: {usage:.2f}, "
        if accept_len is not None:
            msg += f"accept len: {accept_len:.2f}, "
            if era in ("0.5.3", "0.5.9", "2026") and accept_rate is not None:
                msg += f"accept rate: {accept_rate:.2f}, "
        if era != "0.4.5":
            msg += "cuda graph: True, "
        msg += f"gen throughput (token/s): {gen_tps:.2f}, #queue-req: {queue}"
        msg += "" if era in ("0.5.9", "2026") else ", "
        self.line(msg, rank)


def _clock(seconds: float) -> str:
    seconds = int(max(0, seconds))
    return f"{seconds // 60:02d}:{seconds % 60:02d}"
