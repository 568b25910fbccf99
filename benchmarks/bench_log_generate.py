"""Generate a realistic SGLang server log (for the log benchmarks): start-up, warmup, ready, then a steady mix of
decode and prefill lines with uvicorn access lines, a few warnings and retractions, tqdm ``\\r`` storms and one
traceback. Usage: ``python benchmarks/bench_log_generate.py OUT_PATH [N_LINES] [ERA]`` (default 1 000 000 lines, era
``late-2025``).

``ERA`` rewrites the scheduler lines into the shape another SGLang release printed (see :data:`ERAS`; shapes from
SGLang ``scheduler.py`` ~0.4.5 and ``scheduler_metrics_mixin.py`` 0.5.x, as in ``tests/data/sglang-log-formats.txt``).
"""

from __future__ import annotations

import random
import re
import sys
from collections.abc import Callable
from datetime import datetime, timedelta

START_LINES = [
    "Overlap scheduler is disabled because of using eagle speculative decoding.",
    "speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when speculative_eagle_topk == 1",
    "[{t}] server_args=ServerArgs(model_path='meta-llama/Llama-3.1-8B-Instruct', tokenizer_path='meta-llama/"
    "Llama-3.1-8B-Instruct', host='127.0.0.1', port=30000, mem_fraction_static=0.7, max_running_requests=48, "
    "tp_size=2, speculative_algorithm='EAGLE3', speculative_draft_model_path='jamesliu1/sglang-EAGLE3-Llama-3.1-"
    "Instruct-8B', speculative_num_steps=3, speculative_eagle_topk=1, speculative_num_draft_tokens=4, "
    "disable_overlap_schedule=True)",
    "[{t} TP0] Load weight begin. avail mem=78.49 GB",
    "[{t} TP1] Load weight begin. avail mem=78.49 GB",
    "[{t} TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=70.86 GB, mem usage=7.63 GB.",
    "[{t} TP0] Load weight end. type=LlamaForCausalLMEagle3, dtype=torch.bfloat16, avail mem=70.02 GB, "
    "mem usage=0.84 GB.",
    "[{t} TP0] KV Cache is allocated. #tokens: 412883, K size: 12.60 GB, V size: 12.60 GB",
    "[{t} TP0] Memory pool end. avail mem=23.71 GB",
    "[{t} TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=23.40 GB",
    "[{t} TP1] Capture cuda graph begin. This can take up to several minutes. avail mem=23.40 GB",
]


def tqdm_storm(n: int = 23) -> str:
    parts = []
    for i in range(n + 1):
        pct = i * 100 // n
        bar = "█" * (pct // 10) + " " * (10 - pct // 10)
        parts.append(f"Capturing batches (bs={max(1, 48 - 2 * i)} avail_mem=23.{40 - i:02d} GB): {pct:3d}%|{bar}| "
                     f"{i}/{n} [00:{i // 2:02d}<00:{(n - i) // 2:02d},  2.41it/s]")
    return "\r".join(parts)


def generate(n_lines: int, seed: int = 1):
    """Yield ``n_lines`` log lines (no newline)."""
    rnd = random.Random(seed)
    t = datetime(2025, 8, 12, 16, 2, 10)
    count = 0

    def ts() -> str:
        return t.strftime("%Y-%m-%d %H:%M:%S")

    for tmpl in START_LINES:
        yield tmpl.format(t=ts())
        count += 1
    yield tqdm_storm()
    yield f"[{ts()} TP0] Capture cuda graph end. Time elapsed: 9.63 s. avail mem=22.62 GB. mem usage=0.78 GB."
    yield (f"[{ts()} TP0] max_total_num_tokens=412883, chunked_prefill_size=8192, max_prefill_tokens=16384, "
           "max_running_requests=48, context_len=131072")
    yield f"[{ts()}] INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)"
    yield f"[{ts()}] The server is fired up and ready to roll!"
    count += 5
    traceback_at = n_lines // 2
    while count < n_lines:
        t += timedelta(milliseconds=rnd.randint(50, 900))
        r = rnd.random()
        running = rnd.randint(1, 48)
        if r < 0.62:
            al = rnd.uniform(1.6, 3.6)
            line = (f"[{ts()} TP0] Decode batch, #running-req: {running}, #token: {running * rnd.randint(200, 2000)}, "
                    f"token usage: {rnd.random() * 0.3:.2f}, accept len: {al:.2f}, accept rate: {al / 4:.2f}, "
                    f"cuda graph: True, gen throughput (token/s): {rnd.uniform(100, 4000):.2f}, "
                    f"#queue-req: {rnd.randint(0, 20)}")
        elif r < 0.82:
            line = (f"[{ts()} TP0] Prefill batch, #new-seq: {rnd.randint(1, 8)}, "
                    f"#new-token: {rnd.randint(16, 8192)}, #cached-token: {rnd.randint(0, 512)}, "
                    f"token usage: {rnd.random() * 0.3:.2f}, #running-req: {running}, "
                    f"#queue-req: {rnd.randint(0, 20)}, input throughput (token/s): {rnd.uniform(1000, 20000):.2f}, "
                    "cuda graph: False")
        elif r < 0.985:
            line = (f'[{ts()}] INFO:     127.0.0.1:{rnd.randint(30000, 60000)} - '
                    '"POST /v1/chat/completions HTTP/1.1" 200 OK')
        elif r < 0.99:
            line = (f"[{ts()} TP0] KV cache pool is full. Retract requests. #retracted_reqs: 1, "
                    "#new_token_ratio: 0.9998 -> 1.0000")
        elif r < 0.995:
            line = (f"[{ts()}] WARNING: Endpoint '/get_server_info' is deprecated and will be removed in a future "
                    "version.")
        else:
            line = "\x1b[32m" + tqdm_storm(8) + "\x1b[0m"
        yield line
        count += 1
        if count == traceback_at:
            yield f"[{ts()} TP0] Scheduler hit an exception: Traceback (most recent call last):"
            yield '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2702, in event_loop'
            yield "    self.process_batch_result(batch, result)"
            yield "RuntimeError: CUDA error: an illegal memory access was encountered"
            count += 4


_PREFIX = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)( TP0)?\] ")


def _sched(line: str, edit: Callable[[str], str]) -> str:
    """``edit`` applied to the message of a Decode/Prefill batch line (other lines unchanged)."""
    m = _PREFIX.match(line)
    if m is None or not line.startswith(("Decode batch", "Prefill batch"), m.end()):
        return line
    return line[:m.end()] + edit(line[m.end():])


def _v045(msg: str) -> str:  # ~0.4.5: "batch." period, no accept rate, no cuda graph, no input throughput, ", " end
    msg = msg.replace("batch,", "batch.", 1)
    msg = re.sub(r"accept rate: [\d.]+, |cuda graph: (?:True|False)(?:, )?|, input throughput \(token/s\): [\d.]+",
                 "", msg)
    return msg.rstrip(", ") + ", "


def _v047(msg: str) -> str:  # ~0.4.7: cuda graph added to decode lines
    msg = msg.replace("batch,", "batch.", 1)
    msg = re.sub(r"accept rate: [\d.]+, |, input throughput \(token/s\): [\d.]+|, cuda graph: (?:True|False)$", "", msg)
    return msg + ", "


def _v053(msg: str) -> str:  # ~0.5.3: accept rate, "batch." period, ", " end
    return msg.replace("batch,", "batch.", 1) + ", "


def _prefix(line: str, new: Callable[[re.Match[str]], str]) -> str:
    m = _PREFIX.match(line)
    return line if m is None else new(m) + line[m.end():]


#: era name -> line rewrite
ERAS: dict[str, Callable[[str], str]] = {
    "late-2025": lambda line: line,
    "0.4.5": lambda line: _sched(line, _v045),
    "0.4.7": lambda line: _sched(line, _v047),
    "0.5.3": lambda line: _sched(line, _v053),
    "iteration": lambda line: _sched(line, lambda m: m.replace("Decode batch,", "Decode batch [18240],", 1)),
    "no-spec": lambda line: _sched(line, lambda m: re.sub(r"accept (?:len|rate): [\d.]+, ", "", m)),
    "hybrid": lambda line: _sched(line, lambda m: m.replace("#token:", "#full token:").replace(
        "token usage:", "full token usage:")),
    "level-2026": lambda line: _prefix(line, lambda m: f"[{m.group(1)}{m.group(2) or ''}] INFO "
                                                       "scheduler_metrics_mixin.py:216: "),
    "no-ranks": lambda line: _prefix(line, lambda m: f"[{m.group(1)}] "),
    "milliseconds": lambda line: _prefix(line, lambda m: f"[{m.group(1)},123{m.group(2) or ''}] "),
    "no-date": lambda line: _prefix(line, lambda m: f"[{m.group(1)[11:]}{m.group(2) or ''}] "),
    "bare": lambda line: _prefix(line, lambda m: ""),
    "gpu-id": lambda line: _prefix(line, lambda m: "[gpu_id=0] "),
    "crlf": lambda line: line + "\r",
}


def main(argv: list[str]) -> int:
    out = argv[1]
    n = int(argv[2]) if len(argv) > 2 else 1_000_000
    era = ERAS[argv[3] if len(argv) > 3 else "late-2025"]
    with open(out, "w", encoding="utf-8") as fh:
        for line in map(era, generate(n)):
            fh.write(line)
            fh.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
