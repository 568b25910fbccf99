"""Seeded random sweep of speculative flag combinations through specdash and the real SGLang (oracle venv).

Usage: ``python tools/sglang_oracle/sweep.py [--n 320] [--seed 20261130] [--venv ~/.cache/specdash-oracle]``
prints the agreement figure and every disagreement. tests/test_oracle_sweep.py runs the same sweep.

Each combination draws: algorithm (EAGLE, EAGLE3, NEXTN, STANDALONE, NGRAM, lower-case spellings, none), each of
the three depth flags present/absent with varied values, page size, attention backend (triton, flashinfer, fa3,
torch_native), max_running_requests, --enable-mixed-chunk, --disable-overlap-schedule, device (cpu/cuda) and
the target architecture (Llama, Qwen2); and at argparse level: abbreviations (``--speculative-algo``, the
ambiguous ``--speculative-draft`` and ``--cuda-graph-max-bs``), a vLLM flag, a missing ``--model-path``. Verdicts that depend on the GPU are left out (trtllm backends; topk > 1
with page size > 1 and no explicit attention backend, where the backend is picked from the hardware).
Compared: the verdict (does SGLang raise while parsing/resolving arguments) and every effective field specdash
predicts definitely (see specdash.sglang.dry_run.compare).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_VENV = Path(os.environ.get("SPECDASH_ORACLE_VENV", str(Path.home() / ".cache" / "specdash-oracle")))
ORACLE_VERSION = "0.5.23"

_CONFIG = {"model_type": "llama", "hidden_size": 256, "intermediate_size": 512, "num_attention_heads": 4,
           "num_hidden_layers": 2, "num_key_value_heads": 4, "vocab_size": 32000, "max_position_embeddings": 2048,
           "rms_norm_eps": 1e-5, "torch_dtype": "float16", "hidden_act": "silu"}
ARCHS = {"llama": ("LlamaForCausalLM", "llama"), "qwen2": ("Qwen2ForCausalLM", "qwen2")}


def oracle_python(venv: Path = DEFAULT_VENV) -> Path | None:
    """The venv's python when the oracle venv exists, else None."""
    py = venv / "bin" / "python"
    return py if py.exists() else None


def make_models(root: Path) -> dict[str, Path]:
    """Model dirs holding only a config.json, one per architecture in :data:`ARCHS`."""
    out = {}
    for key, (arch, model_type) in ARCHS.items():
        d = root / key
        d.mkdir(parents=True, exist_ok=True)
        cfg = dict(_CONFIG, architectures=[arch], model_type=model_type)
        (d / "config.json").write_text(json.dumps(cfg))
        out[key] = d
    return out


def generate(n: int, seed: int, models: dict[str, Path]) -> list[dict]:
    """``n`` combinations: ``{"id", "argv", "env", "model_config"}``."""
    rng = random.Random(seed)
    cases = []
    algorithms = ["EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM", "eagle3", "Eagle", "EAGLE", "EAGLE3"]
    while len(cases) < n:
        model_key = rng.choice(list(models))
        argv = ["--model-path", str(models[model_key]), "--device", rng.choice(["cpu", "cuda"])]
        algo = rng.choice(algorithms)
        argv += ["--speculative-algorithm", algo]
        if algo.upper() in ("EAGLE", "EAGLE3", "STANDALONE") or (algo.upper() == "NEXTN" and rng.random() < 0.7):
            argv += ["--speculative-draft-model-path", str(models["llama"])]
        steps = rng.choice([None, None, 1, 2, 3, 5, 7])
        topk = rng.choice([None, None, 1, 1, 2, 4, 8])
        draft = rng.choice([None, None, 2, 4, 6, 8, 16, 32])
        for flag, value in (("--speculative-num-steps", steps), ("--speculative-eagle-topk", topk),
                            ("--speculative-num-draft-tokens", draft)):
            if value is not None:
                argv += [flag, str(value)]
        page = rng.choice([None, None, 1, 16, 64])
        backend = rng.choice([None, None, "triton", "flashinfer", "fa3", "torch_native"])
        if page is not None:
            argv += ["--page-size", str(page)]
        if backend is not None:
            argv += ["--attention-backend", backend]
        mrr = rng.choice([None, None, 8, 64])
        if mrr is not None:
            argv += ["--max-running-requests", str(mrr)]
        if rng.random() < 0.25:
            argv.append("--enable-mixed-chunk")
        if rng.random() < 0.15:
            argv.append("--disable-overlap-schedule")
        # argparse-level variations: abbreviations (unique or ambiguous), an unknown flag, a missing --model-path
        if rng.random() < 0.12:
            argv = ["--speculative-algo" if a == "--speculative-algorithm" else a for a in argv]
        if rng.random() < 0.08:
            argv = ["--speculative-draft" if a == "--speculative-draft-model-path" else a for a in argv]
        if rng.random() < 0.08:
            argv += [rng.choice(["--cuda-graph-max-bs", "--cuda-graph-max-bs-decode", "--mem-frac"]),
                     rng.choice(["8", "0.8"])]
        if rng.random() < 0.04:
            argv += ["--num-speculative-tokens", "3"]
        if rng.random() < 0.03:
            argv = argv[2:]
        effective_topk = topk
        gpu_dependent = (page or 1) > 1 and backend is None and (effective_topk is None or effective_topk > 1
                                                                  or algo.upper() == "NGRAM")
        if gpu_dependent:
            continue
        if "--mem-frac" in argv and argv[argv.index("--mem-frac") + 1] == "8":
            continue  # SGLang accepts a fraction of 8 in argparse but fails on memory later: not an argument rule
        arch = ARCHS[model_key][0]
        cases.append({"id": len(cases), "argv": argv, "env": {}, "model_config": {"architectures": [arch]}})
    return cases


def run_oracle(cases: list[dict], python: Path, timeout_s: float = 1800) -> dict[int, dict]:
    """Run every case through the real SGLang in one process (import once); ``{id: result}``."""
    payload = "".join(json.dumps({"id": c["id"], "argv": c["argv"], "env": c["env"]}) + "\n" for c in cases)
    proc = subprocess.run([str(python), str(HERE / "oracle_resolve.py")], input=payload, capture_output=True,
                          text=True, timeout=timeout_s)
    out = {}
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            data = json.loads(line)
            out[data["id"]] = data
    if not out:
        raise RuntimeError(f"oracle produced no results: {proc.stderr[-2000:]}")
    return out


def compare_all(cases: list[dict], results: dict[int, dict]) -> tuple[int, list[tuple[dict, list, dict]]]:
    """Validate each case with specdash and compare with SGLang; returns (agreeing count, disagreements)."""
    from specdash.sglang.dry_run import DryRunResult, compare
    from specdash.sglang.validate import validate_command

    agree, bad = 0, []
    for case in cases:
        result = results[case["id"]]
        text = " ".join(case["argv"])
        report = validate_command(text, ORACLE_VERSION, case["model_config"])
        sg = DryRunResult(result["ok"], result["exception"], result["message"], result["resolved"], (), ORACLE_VERSION)
        diffs = compare(report, sg)
        if diffs:
            bad.append((case, diffs, result))
        else:
            agree += 1
    return agree, bad


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=320)
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV)
    args = parser.parse_args()
    python = oracle_python(args.venv)
    if python is None:
        print(f"no oracle venv at {args.venv}: run tools/sglang_oracle/build_venv.sh", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        models = make_models(Path(tmp))
        cases = generate(args.n, args.seed, models)
        results = run_oracle(cases, python)
        agree, bad = compare_all(cases, results)
    print(f"agreement: {agree}/{len(cases)} = {100.0 * agree / len(cases):.1f} %")
    for case, diffs, _result in bad:
        print(" ".join(case["argv"][2:]))
        for d in diffs:
            print(f"    {d.field}: specdash={d.specdash!r} sglang={d.sglang!r}")
    return 0 if not bad else 1


if __name__ == "__main__":
    raise SystemExit(main())
