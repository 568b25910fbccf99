"""The sweep's test lifecycle: a base launch command and a fake ``restart(command) -> url`` that starts a real
HTTP server (tests/bench_server.py) whose timings depend on the command's draft tokens."""

from __future__ import annotations

import asyncio
import shlex
import threading

from bench_server import BenchServerProcess

BASE = (
    "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --speculative-algo EAGLE3 "
    "--speculative-draft-model-path jamesliu1/sglang-EAGLE3-Llama-3.1-Instruct-8B --speculative_num_steps 3 "
    "--speculative-eagle-topk=1 --speculative-num-draft-tokens 4 --cuda-graph-max-bs 8 --port 30000"
)

# per depth (SGLang speculative_num_draft_tokens; 0 = no speculation): tokens per verify chunk and its delay.
# Coarse on purpose (tens of ms), so that a loaded test machine's hiccups stay small against them. Output tokens/s
# per request with 9 tokens: baseline ~26, 16 ~33, 10 ~50, 5 ~75 -> chain-5 wins clearly.
TIMINGS = {
    0: {"tokens_per_chunk": 1, "chunk_delay_s": 0.04, "speculative": False},
    16: {"tokens_per_chunk": 4, "chunk_delay_s": 0.12},
    10: {"tokens_per_chunk": 4, "chunk_delay_s": 0.08},
    5: {"tokens_per_chunk": 4, "chunk_delay_s": 0.05},
}


class FakeLifecycle:
    """restart(command[, action]) -> url: stops the previous server (its own process) and starts one whose timings
    depend on the command's draft tokens, read here with shlex independently of specdash; ``actions`` lists the
    action each restart was given (None: a sweep configuration's)."""

    def __init__(self, extra: dict | None = None, hang_on_call: int | None = None, timings: dict | None = None):
        self.timings = timings or TIMINGS
        self.commands: list[str] = []
        self.actions: list[str | None] = []
        self.servers: list[BenchServerProcess] = []
        self.extra = extra or {}
        self.hang_on_call = hang_on_call
        self._starting: list[threading.Thread] = []

    async def restart(self, command: str, action: str | None = None) -> str:
        self.commands.append(command)
        self.actions.append(action)
        if self.hang_on_call and len(self.commands) == self.hang_on_call:
            await asyncio.Event().wait()  # a restart that never finishes: the sweep gets interrupted here
        for server in self.servers:
            server.stop()
        words = shlex.split(command)
        depth = int(words[words.index("--speculative-num-draft-tokens") + 1]) if "--speculative-num-draft-tokens" in words else 0
        config = {"ttft_s": 0.02, **self.timings[depth], **self.extra}
        # listed and started in a thread of its own before any await: a test that ends while the server starts
        # (the sweep's worker cancelled) still stops it in close(), which waits for the start first
        server = BenchServerProcess(config)
        self.servers.append(server)
        starting = threading.Thread(target=server.start, daemon=True)
        self._starting.append(starting)
        starting.start()
        await asyncio.to_thread(starting.join)
        if not server.url:
            raise RuntimeError("the bench server did not start")
        return server.url

    def close(self):
        for starting in self._starting:
            starting.join(timeout=60)
        for server in self.servers:
            server.stop()
