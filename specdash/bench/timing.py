"""Per-request latency math from the arrival times of streamed chunks (pure).

Definitions (the same as SGLang's ``python/sglang/bench_serving.py``; its /generate client spreads a
chunk's gap over the tokens in it):

* **TTFT**: from sending the request to the first chunk that carries generated text.
* **ITL** (inter-token latency), per token: a later chunk that brings ``n`` new tokens ``g`` seconds after the
  previous token-carrying chunk contributes ``n`` samples of ``g / n``. So with speculative decoding, where one
  chunk carries several accepted tokens, ITL is the per-token time, not the per-chunk gap. Chunks that bring no new
  token are skipped (their time does not start a gap). Tokens in the first chunk contribute no ITL sample.
* **E2E latency**: from sending to the end of the stream (``[DONE]`` or the last byte).
* **TPOT** (time per output token after the first): ``(E2E - TTFT) / (output_tokens - 1)``, only when
  ``output_tokens > 1``.

New tokens per chunk come from the server's cumulative counts (OpenAI ``usage.completion_tokens`` sent with every
chunk, or /generate ``meta_info.completion_tokens``). When the server does not send them per chunk, the total from
the last usage (or the chunk count) is spread evenly over the chunks after the first, which gets one token;
the request is then marked ``token_counts = "estimated"``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence


@dataclasses.dataclass(frozen=True)
class RequestTimings:
    """Latency figures of one request, in seconds. ``itl_s``: one sample per token after the first chunk.

    ``chunk_tokens``: new tokens attributed to each token-carrying chunk (what the ITL samples were built from);
    ``token_counts``: "server" (counts from usage/meta_info) or "estimated".
    """

    ttft_s: float | None
    itl_s: tuple[float, ...]
    tpot_s: float | None
    e2e_s: float
    output_tokens: int
    chunk_tokens: tuple[int, ...]
    token_counts: str


def _spread(total: int, slots: int) -> list[int]:
    base, extra = divmod(total, slots)
    # largest remainder: the first `extra` slots get one more
    return [base + (1 if i < extra else 0) for i in range(slots)]


def request_timings(
    chunk_times_s: Sequence[float],
    chunk_cumulative_tokens: Sequence[int | None],
    end_s: float,
    total_tokens: int | None = None,
) -> RequestTimings:
    """Compute :class:`RequestTimings` for one request.

    ``chunk_times_s``: arrival of each chunk that carried text, seconds since the request was sent;
    ``chunk_cumulative_tokens``: the server's cumulative completion-token count at each of those chunks (``None``
    where the chunk had none); ``end_s``: end of stream, seconds since send; ``total_tokens``: final completion
    tokens from the last usage / meta_info, if known. Raises ``ValueError`` when the two sequences differ in length.
    """
    if len(chunk_times_s) != len(chunk_cumulative_tokens):
        raise ValueError("chunk_times_s and chunk_cumulative_tokens must have the same length")
    if not chunk_times_s:
        return RequestTimings(None, (), None, end_s, total_tokens or 0, (), "server")

    known = all(c is not None for c in chunk_cumulative_tokens)
    times: list[float] = []
    counts: list[int] = []
    if known:
        last = 0
        for t, cum in zip(chunk_times_s, chunk_cumulative_tokens, strict=False):
            new = int(cum) - last  # type: ignore[arg-type]
            if new <= 0 and times:
                continue  # no new token: bench_serving skips the chunk
            times.append(t)
            counts.append(new)
            last = int(cum)  # type: ignore[arg-type]
        token_counts = "server"
        output_tokens = total_tokens if total_tokens is not None else last
    else:
        times = list(chunk_times_s)
        output_tokens = total_tokens if total_tokens is not None else len(times)
        if len(times) == 1:
            counts = [max(output_tokens, 1)]
        else:
            rest = max(output_tokens - 1, len(times) - 1)
            counts = [1] + _spread(rest, len(times) - 1)
        token_counts = "estimated"

    ttft = times[0]
    itl: list[float] = []
    for i in range(1, len(times)):
        gap = times[i] - times[i - 1]
        n = counts[i]
        itl.extend([gap / n] * n)
    tpot = (end_s - ttft) / (output_tokens - 1) if output_tokens > 1 else None
    return RequestTimings(ttft, tuple(itl), tpot, end_s, output_tokens, tuple(counts), token_counts)
