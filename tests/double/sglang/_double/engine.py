"""The double's "inference": scripted tokens, speculative chunks, decode log lines while requests run.

Tokens are words from a fixed text. With a speculative algorithm each verify step yields several tokens, on
average the scenario's accept length (step k yields floor((k+1)*a) - floor(k*a) tokens), and ``spec_verify_ct``
counts the steps. Figures come from the scenario, kept possible for the configuration the double runs: an accept
length never exceeds ``max_accept_len`` (``speculative_num_steps + 1``, or ``speculative_num_draft_tokens`` without
steps, as the server_args line shows them; SGLang's verify accepts at most one token per draft step plus the bonus
token). A scripted accept length above it (a scenario written for a deeper configuration, e.g. the same scenario
across a depth sweep) becomes ``1 + rate * (max_accept_len - 1)`` with the scripted accept rate (the share of draft
tokens accepted), or ``max_accept_len`` without one. Without speculation there is no accept length at all.
"""

from __future__ import annotations

import itertools
import math
import threading
import time
import uuid

from sglang._double.logfmt import Log

_WORDS = (
    "The capital of France is Paris , a city on the Seine known for its museums , cafes and the Eiffel Tower"
    " which was built for the world fair of 1889 and still draws millions of visitors every year ."
).split()


class Engine:
    """Counts running requests and writes decode lines every ``log_interval_s`` while any run."""

    def __init__(self, scenario: dict, log: Log, speculative: bool, max_accept_len: int | None = None) -> None:
        self.scenario, self.log, self.speculative = scenario, log, speculative
        self.max_accept_len = max_accept_len if speculative else None
        dec = scenario["decode"]
        self.tokens_per_s = float(dec["tokens_per_s"])
        self.ttft_s = float(dec["ttft_s"])
        self.interval_s = float(dec["log_interval_s"])
        self.default_max_tokens = int(dec["default_max_tokens"])
        self._accept_len = itertools.cycle(dec["accept_len"])
        self._accept_rate = itertools.cycle(dec["accept_rate"])
        self._throughput = itertools.cycle(dec["gen_throughput"])
        self.first_accept_rate = dec["accept_rate"][0]
        self.first_accept_len = (self.possible(float(dec["accept_len"][0]), self.first_accept_rate) if speculative
                                 else 1.0)
        self.capacity = scenario["capacity"]["max_total_num_tokens"]
        self._lock = threading.Lock()
        self.running = 0
        self.tokens_in_flight = 0
        self.total_steps = 0
        self.total_tokens = 0
        self.last_throughput = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._logger, name="decode-log", daemon=True)

    def possible(self, accept_len: float, rate) -> float:
        """``accept_len`` kept within what the configuration allows (see the module docstring)."""
        top = self.max_accept_len
        if not top or accept_len <= top:
            return accept_len
        if rate is not None and 0 <= float(rate) <= 1:
            return round(1 + float(rate) * (top - 1), 2)
        return float(top)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _logger(self) -> None:
        while not self._stop.wait(self.interval_s):
            with self._lock:
                running, tokens = self.running, self.tokens_in_flight
            if not running:
                continue
            rate = next(self._accept_rate)
            accept_len = self.possible(float(next(self._accept_len)), rate) if self.speculative else None
            throughput = float(next(self._throughput))
            self.last_throughput = throughput
            self.log.decode(running, tokens, tokens / self.capacity, accept_len,
                            float(rate) if rate is not None else None, throughput)

    # -- one request ----------------------------------------------------------------------------
    def generate(self, prompt_tokens: int, max_tokens: int):
        """Yield lists of token strings (one list per verify step) with real delays; ``self`` keeps stats.

        Returns (via StopIteration.value) a dict: completion_tokens, spec_verify_ct, e2e_latency.
        """
        start = time.monotonic()
        with self._lock:
            self.running += 1
            self.tokens_in_flight += prompt_tokens
            running = self.running
        self.log.prefill(1, prompt_tokens, running - 1, 0, self.tokens_in_flight / self.capacity,
                         prompt_tokens / max(self.ttft_s, 1e-3))
        time.sleep(self.ttft_s)
        a = self.first_accept_len
        produced, steps = 0, 0
        try:
            while produced < max_tokens:
                n = math.floor((steps + 1) * a) - math.floor(steps * a) if self.speculative else 1
                n = max(1, min(n, max_tokens - produced))
                chunk = [(" " if produced + i else "") + _WORDS[(produced + i) % len(_WORDS)] for i in range(n)]
                produced += n
                steps += 1
                with self._lock:
                    self.tokens_in_flight += n
                    self.total_tokens += n
                    self.total_steps += 1
                yield chunk
                time.sleep(n / self.tokens_per_s)
        finally:
            with self._lock:
                self.running -= 1
                self.tokens_in_flight -= prompt_tokens + produced
        return {"completion_tokens": produced, "spec_verify_ct": steps, "e2e_latency": time.monotonic() - start}

    def avg_spec_accept_length(self) -> float | None:
        """Lifetime accepted tokens per verify step (what /get_server_info reports), None before any step."""
        with self._lock:
            return self.total_tokens / self.total_steps if self.total_steps and self.speculative else None


def request_id() -> str:
    return uuid.uuid4().hex


def count_tokens(text: str) -> int:
    """Prompt tokens, roughly: whitespace-separated words (at least 1)."""
    return max(1, len(str(text).split()))
