"""Write story.yaml: a small session through the real Recorder (see README.md). Run on purpose only."""

from __future__ import annotations

from pathlib import Path

from specdash.session.recorder import Recorder

HERE = Path(__file__).parent
COMMAND_BAD = ("HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 python -m sglang.launch_server "
               "--model-path meta-llama/Llama-3.1-8B-Instruct --speculative-algorithm EAGLE "
               "--speculative-draft-model-path yuhuili/EAGLE-LLaMA3.1-Instruct-8B --speculative-eagle-topk 1 "
               "--speculative-num-draft-tokens 16 --api-key sk-live-0123456789abcdefghij --port 30000")
COMMAND_OK = COMMAND_BAD.replace("--speculative-eagle-topk 1", "--speculative-num-steps 1 --speculative-eagle-topk 1")


def lines_of(name: str, offset: int) -> tuple[list[list], int]:
    out = []
    for text in (HERE / name).read_text().splitlines():
        out.append([offset, text])
        offset += len(text.encode()) + 1
    return out, offset


def main() -> None:
    path = HERE / "story.yaml"
    path.unlink(missing_ok=True)
    header = {"host": "gpu-box", "sglang_version": "0.5.6", "started_at": "2026-11-30T09:00:00+00:00",
              "specdash_version": "0.1.0", "demo": True,
              "note": "test data: hand-scripted events with real SGLang log lines, not a GPU run"}
    with Recorder(path, header, timer=False) as rec:
        rec.record("connection", t=0.0, state="connecting", detail="gpu-box:22")
        rec.record("connection", t=0.4, state="connected")
        rec.record("command", t=1.0, action="validated", command=COMMAND_BAD, diagnostics=[
            {"severity": "error", "code": "steps-missing", "flags": ["--speculative-eagle-topk"],
             "message": "topk/num_draft_tokens without --speculative-num-steps: SGLang dies on a bare AssertionError"}])
        rec.record("command", t=2.0, action="launched", command=COMMAND_BAD, pid=4242, pgid=4242)
        tb, offset = lines_of("assert_traceback.log", 0)
        rec.record("log", t=3.0, lines=tb, source="/runs/1/server.log")
        rec.record("finding", t=3.1, code="crash", severity="error", line=len(tb),
                   message="server crashed: bare AssertionError in server_args",
                   detail="--speculative-eagle-topk given without --speculative-num-steps")
        rec.record("command", t=4.0, action="stopped", command=COMMAND_BAD, pid=4242, exit_reason="AssertionError")
        rec.record("command", t=5.0, action="launched", command=COMMAND_OK, pid=4300, pgid=4300,
                   effective={"speculative_algorithm": "EAGLE", "speculative_num_steps": 1,
                              "speculative_eagle_topk": 1, "speculative_num_draft_tokens": 2},
                   diagnostics=[{"severity": "override", "code": "draft-tokens-adjusted",
                                 "message": "speculative_num_draft_tokens 16 -> 2 (topk 1 forces num_steps + 1)"}])
        over, offset = lines_of("startup_override.log", 0)
        rec.record("log", t=6.0, lines=over, source="/runs/2/server.log")
        rec.record("finding", t=6.05, code="override", severity="override", line=1,
                   message="speculative_num_draft_tokens 16 -> 2: topk 1 forces num_steps + 1")
        rec.record("gpu", t=7.0, source="nvidia-smi", gpus=[
            [0, "NVIDIA H100 80GB HBM3", "GPU-0a1b", 71234, 81559, 97], [1, "NVIDIA H100 80GB HBM3", "GPU-2c3d", 3, 81559, 0]],
            processes=[[4301, 0, 71200, "sglang::scheduler_TP0", "server", "alice"]])
        dec, offset = lines_of("decode.log", offset)
        rec.record("log", t=8.0, lines=dec, source="/runs/2/server.log")
        rec.record("metric", t=8.0, values={"accept_len": 1.41, "accept_rate": 0.35, "gen_throughput": 2380.05,
                                            "running_req": 48, "queue_req": 41, "token_usage": 0.19})
        rec.record("finding", t=8.1, code="low-accept", severity="warning", line=6,
                   message="accept length 1.41 with 2 draft tokens in use")
        rec.record("action", t=9.0, binding="gpus.kill")
        rec.record("kill", t=9.5, outcome="released", before_mib=71200, after_mib=0, signals=["SIGTERM"],
                   targets=[{"pid": 4301, "name": "sglang::scheduler_TP0", "gpu": 0, "used_mib": 71200,
                             "class": "orphan", "user": "alice"}])
        rec.record("bench", t=10.0, label="d4", workload="short-chat",
                   config={"speculative_algorithm": "EAGLE", "speculative_num_steps": 3,
                           "speculative_eagle_topk": 1, "speculative_num_draft_tokens": 4},
                   result={"output_tokens_per_s": 1843.2, "requests_per_s": 3.1,
                           "ttft_ms": {"p50": 41.0, "p90": 55.5, "p99": 80.2},
                           "itl_ms": {"p50": 6.1, "p90": 7.9, "p99": 12.0}, "accept_length": 2.71,
                           "accept_length_source": "meta_info", "errors": 0})
        rec.record("sweep", t=11.0, workload="short-chat", baseline="baseline",
                   recommendation="d5 (steps 4, topk 1, draft tokens 5): x1.62 over the baseline",
                   points=[{"label": "baseline", "output_tokens_per_s": 1010.0, "speedup": 1.0, "stable": True},
                           {"label": "d16", "output_tokens_per_s": 1290.0, "speedup": 1.28, "accept_length": 3.1,
                            "stable": True},
                           {"label": "d5", "output_tokens_per_s": 1636.0, "speedup": 1.62, "accept_length": 2.8,
                            "stable": True}])
        rec.record("marker", t=11.5, text="log truncated (size went down): following from the start", level="warning")


if __name__ == "__main__":
    main()
