"""Broad seeded sweep: commands drawn from the real flag table of a release, through specdash and the real SGLang.

Usage::

    python tools/sglang_oracle/broad_sweep.py --version 0.5.23 --n 2000 --seed 1 [--venv DIR] [--show 40]

Where :mod:`sweep` varies a fixed handful of flags, this generator draws from everything the release's parser
has (``specdash/sglang/data/flags_<release>.json``, itself dumped from the real parser):

- every ``--speculative-*`` flag of the release, with values of its type (ints around the edges: -1, 0, 1 ...,
  floats, every choice of a ``choices`` flag, switches and ``--no-`` forms); flags that name files (token maps,
  adaptive configs, corpora) are left out, since whether a file exists on the GPU host is not a rule;
- parallelism (``--tp-size``, ``--dp-size``, ``--attn-dp-size``, ``--pp-size``, ``--enable-dp-attention``), every
  attention backend choice, page sizes including 0, CUDA-graph and memory/chunking flags, ``--device cpu|cuda``;
- environment prefixes SGLang reads during resolution (``SGLANG_ENABLE_SPEC_V2``,
  ``SGLANG_ENABLE_DP_SPEC_PREFILL_COORDINATION``);
- argparse forms: ``--flag=value``, abbreviations (unique or ambiguous), ``_`` for ``-``, typos, a flag of another
  engine, a missing ``--model-path``;
- three targets given as a config.json directory: Llama, Qwen3-MoE, and DeepSeek-V3 with a NextN layer (run
  without a draft path, as MTP deployments are).

Compared (:func:`specdash.sglang.dry_run.compare`): the verdict at the argument stages and every effective field
specdash predicts definitely. Cases where specdash marks an outcome ``hardware_dependent`` (the attention backend
chosen from the GPU, ...) or SGLang fails for want of a GPU are counted apart. Prints the agreement, the hardware
count, and the disagreements grouped by the specdash diagnostic code or SGLang exception that decided them.
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent))

from sweep import DEFAULT_VENV, oracle_python, run_oracle  # noqa: E402

_BASE = {"hidden_size": 256, "intermediate_size": 512, "num_attention_heads": 4, "num_hidden_layers": 4,
         "num_key_value_heads": 4, "vocab_size": 32000, "max_position_embeddings": 4096, "rms_norm_eps": 1e-5,
         "torch_dtype": "bfloat16", "hidden_act": "silu"}
TARGETS: dict[str, dict] = {
    "llama": dict(_BASE, architectures=["LlamaForCausalLM"], model_type="llama"),
    "qwen3moe": dict(_BASE, architectures=["Qwen3MoeForCausalLM"], model_type="qwen3_moe", num_experts=8,
                     num_experts_per_tok=2, moe_intermediate_size=128, head_dim=64, decoder_sparse_step=1,
                     norm_topk_prob=True, mlp_only_layers=[]),
    "deepseek": dict(_BASE, architectures=["DeepseekV3ForCausalLM"], model_type="deepseek_v3", kv_lora_rank=64,
                     q_lora_rank=96, qk_nope_head_dim=32, qk_rope_head_dim=16, v_head_dim=32, n_routed_experts=8,
                     n_shared_experts=1, num_experts_per_tok=2, moe_intermediate_size=128, first_k_dense_replace=1,
                     moe_layer_freq=1, n_group=1, topk_group=1, routed_scaling_factor=1.0,
                     num_nextn_predict_layers=1, topk_method="noaux_tc", scoring_func="sigmoid"),
}
#: speculative flags whose value is a file or a directory on the host
_PATH_FLAGS = {"speculative_token_map", "speculative_adaptive_config", "speculative_ngram_external_corpus_path",
               "speculative_draft_model_path", "speculative_draft_model_revision", "speculative_dspark_sps_table_path",
               "spec_trace_dir", "speculative_draft_load_format"}
_INTS = ["-1", "0", "1", "1", "2", "3", "4", "5", "8", "16"]
_FLOATS = ["0", "0.5", "0.9", "1.0", "1"]
_ALGOS = ["EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM", "DFLASH", "eagle3", "Eagle", "MTP", None, None]
_BACKENDS_COMMON = ["triton", "flashinfer", "fa3", "torch_native", "flex_attention", "flashmla", "cutlass_mla",
                    "trtllm_mha", "trtllm_mla", "fa4", "aiter", "ascend", "intel_amx"]


def make_models(root: Path) -> dict[str, Path]:
    """One config-only model directory per entry of :data:`TARGETS`."""
    out = {}
    for key, cfg in TARGETS.items():
        d = root / key
        d.mkdir(parents=True, exist_ok=True)
        (d / "config.json").write_text(json.dumps(cfg))
        out[key] = d
    return out


def _value(rng: random.Random, spec) -> str | None:
    if spec.choices:
        return str(rng.choice(list(spec.choices)))
    if spec.type in ("int", "human_readable_int"):
        return rng.choice(_INTS)
    if spec.type == "float":
        return rng.choice(_FLOATS)
    return None


def _word(rng: random.Random, option: str, value: str | None, table) -> list[str]:
    """``option value`` in one of the forms argparse accepts (or does not)."""
    roll = rng.random()
    if roll < 0.06 and len(option) > 12:  # abbreviation, possibly ambiguous
        option = option[: rng.randint(8, len(option) - 1)]
    elif roll < 0.09:
        option = "--" + option[2:].replace("-", "_")
    elif roll < 0.11 and len(option) > 10:  # a typo: two letters swapped
        i = rng.randint(3, len(option) - 3)
        option = option[:i] + option[i + 1] + option[i] + option[i + 2:]
    if value is None:
        return [option]
    if rng.random() < 0.25:
        return [f"{option}={value}"]
    return [option, value]


def generate(n: int, seed: int, models: dict[str, Path], release: str) -> list[dict]:
    """``n`` cases ``{"id", "argv", "env", "model_config", "text"}`` for ``release``'s flag table."""
    from specdash.sglang.flags import load_table
    from specdash.sglang.versions import profile_for

    table = load_table(profile_for(release).flag_release)
    spec_flags = [s for s in table.specs if s.dest.startswith("speculative_") and s.dest not in _PATH_FLAGS
                  and s.dest not in ("speculative_algorithm", "speculative_num_steps", "speculative_eagle_topk",
                                     "speculative_num_draft_tokens")]
    backends = sorted(set(_BACKENDS_COMMON) | set(getattr(table.by_dest.get("attention_backend"), "choices", None)
                                                   or ()))
    rng = random.Random(seed)
    cases: list[dict] = []
    while len(cases) < n:
        target = rng.choice(list(models))
        argv: list[str] = ["--model-path", str(models[target])]
        env: dict[str, str] = {}

        def add(dest: str, value: str | None = None, raw_option: str | None = None, into: list[str] = argv) -> None:
            spec = table.by_dest.get(dest)
            option = raw_option or (spec.canonical if spec else "--" + dest.replace("_", "-"))
            into.extend(_word(rng, option, value, table))

        add("device", rng.choice(["cpu", "cuda", "cuda"]))
        algo = rng.choice(_ALGOS)
        if algo is not None:
            add("speculative_algorithm", algo)
            wants_draft = algo.upper() in ("EAGLE", "EAGLE3", "STANDALONE", "DFLASH") and target != "deepseek"
            if wants_draft and rng.random() < 0.9 or (target == "deepseek" and rng.random() < 0.15):
                add("speculative_draft_model_path", str(models["llama"]))
        for dest, values in (("speculative_num_steps", [None, None, "0", "1", "2", "3", "5", "7"]),
                             ("speculative_eagle_topk", [None, None, "1", "1", "2", "4", "8", "0"]),
                             ("speculative_num_draft_tokens", [None, None, "1", "2", "4", "6", "8", "16", "64"])):
            value = rng.choice(values)
            if value is not None:
                add(dest, value)
        for spec in rng.sample(spec_flags, k=min(len(spec_flags), rng.choice([0, 0, 1, 1, 2, 3]))):
            if spec.takes_value:
                value = _value(rng, spec)
                if value is None:
                    continue
                add(spec.dest, value, raw_option=spec.options[0])
            else:
                add(spec.dest, None, raw_option=rng.choice(list(spec.options)))
        # parallelism
        if rng.random() < 0.35:
            tp = rng.choice(["1", "2", "4", "8"])
            add("tp_size", tp)
            if rng.random() < 0.4:
                add("dp_size", rng.choice(["1", "2", "4"]))
            if rng.random() < 0.3 and "attn_dp_size" in table.by_dest:
                add("attn_dp_size", rng.choice(["1", "2", "3", "4"]))
            if rng.random() < 0.3:
                add("enable_dp_attention")
        if rng.random() < 0.12:
            add("pp_size", rng.choice(["1", "2"]))
        if rng.random() < 0.45:
            add("attention_backend", rng.choice(backends))
        if rng.random() < 0.35:
            add("page_size", rng.choice(["0", "1", "16", "64"]))
        for dest, prob, values in (("max_running_requests", 0.2, ["8", "64"]),
                                   ("mem_fraction_static", 0.15, ["0.5", "0.85", "0.95"]),
                                   ("chunked_prefill_size", 0.15, ["-1", "2048", "8192"]),
                                   ("cuda_graph_max_bs_decode", 0.1, ["4", "32"]),
                                   ("context_length", 0.1, ["4096", "2k", "8K"])):
            if rng.random() < prob and dest in table.by_dest:
                add(dest, rng.choice(values))
        for dest, prob in (("enable_mixed_chunk", 0.2), ("disable_overlap_schedule", 0.15),
                           ("disable_cuda_graph", 0.1), ("enable_deterministic_inference", 0.05)):
            if rng.random() < prob and dest in table.by_dest:
                add(dest)
        if rng.random() < 0.1:
            env["SGLANG_ENABLE_SPEC_V2"] = rng.choice(["1", "0", "True", "bogus"])
        if rng.random() < 0.06:
            env["SGLANG_ENABLE_DP_SPEC_PREFILL_COORDINATION"] = "1"
        if rng.random() < 0.03:
            argv += ["--num-speculative-tokens", "3"]
        if rng.random() < 0.02:
            argv = argv[2:]
        prefix = "".join(f"{k}={v} " for k, v in env.items())
        text = prefix + "python -m sglang.launch_server " + " ".join(_shell(a) for a in argv)
        cases.append({"id": len(cases), "argv": argv, "env": env, "text": text,
                      "model_config": TARGETS[target]})
    return cases


def _shell(word: str) -> str:
    if word and all(ch.isalnum() or ch in "-_=./:+" for ch in word):
        return word
    return "'" + word.replace("'", "'\"'\"'") + "'"


_HARDWARE_WORDS = ("cuda", "gpu", "nvml", "device capability", "libcuda", "sm_", "hopper", "blackwell")


def judge(cases: list[dict], results: dict, release: str):
    """Compare; returns (agree, hardware, disagreements) where disagreements are (case, diffs, result, report)."""
    from specdash.sglang.dry_run import DryRunResult, compare
    from specdash.sglang.validate import validate_command

    agree, hardware, bad = 0, 0, []
    for case in cases:
        result = results[case["id"]]
        report = validate_command(case["text"], release, case["model_config"])
        sg = DryRunResult(result["ok"], result["exception"], result["message"], result["resolved"], (), release)
        diffs = compare(report, sg)
        if not diffs:
            agree += 1
            continue
        message = (result.get("message") or "").lower()
        if any(getattr(d, "hardware_dependent", False) for d in report.diagnostics) or \
                (not result["ok"] and result["exception"] != "SystemExit"
                 and any(w in message[:300] for w in _HARDWARE_WORDS)):
            hardware += 1
            continue
        bad.append((case, diffs, result, report))
    return agree, hardware, bad


def check_server_args_agreement(cases: list[dict], results: dict, release: str):
    """Compare specdash's ``check_server_args``-stage errors with SGLang's ``check_server_args()`` on the cases
    both resolved; returns (agree, total, [(text, specdash verdict, sglang verdict)]). Hardware words in SGLang's
    message (GPU counts, ...) put a case aside as for the resolution."""
    from specdash.sglang.validate import validate_command

    agree, total, bad = 0, 0, []
    for case in cases:
        result = results[case["id"]]
        check = result.get("check")
        if not result["ok"] or not check:
            continue
        report = validate_command(case["text"], release, case["model_config"])
        if any(d.severity == "error" and d.stage in ("argparse", "server_args") for d in report.diagnostics):
            continue
        message = (check.get("message") or "").lower()
        if not check["ok"] and any(w in message[:300] for w in _HARDWARE_WORDS):
            continue
        total += 1
        mine = any(d.severity == "error" and d.stage == "check_server_args" for d in report.diagnostics)
        if mine == (not check["ok"]):
            agree += 1
        else:
            bad.append((case["text"], "error" if mine else "ok",
                        f"{check['exception']}: {check['message'][:120]}" if not check["ok"] else "ok"))
    return agree, total, bad


def _decider(report, result) -> str:
    errors = [d.code for d in report.diagnostics if d.severity == "error" and d.stage in ("argparse", "server_args")]
    if errors:
        return f"specdash {errors[0]} / sglang {result['exception'] or 'ok'}"
    return f"specdash ok / sglang {result['exception'] or 'ok'}: {(result.get('message') or '')[:90]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", default="0.5.23", help="the SGLang release installed in the venv")
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV)
    parser.add_argument("--show", type=int, default=30, help="print this many disagreements in full")
    parser.add_argument("--dump", type=Path, help="write every disagreement to this JSON-lines file")
    args = parser.parse_args()
    python = oracle_python(args.venv)
    if python is None:
        print(f"no oracle venv at {args.venv}: see tools/sglang_oracle/README.md", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        models = make_models(Path(tmp))
        cases = generate(args.n, args.seed, models, args.version)
        results = run_oracle(cases, python, timeout_s=3600)
        agree, hardware, bad = judge(cases, results, args.version)
        counted = len(cases) - hardware
        check_agree, check_total, check_bad = check_server_args_agreement(cases, results, args.version)
        print(f"SGLang {args.version}, seed {args.seed}: {agree}/{counted} = {100.0 * agree / max(1, counted):.2f} % "
              f"agree ({hardware} hardware-dependent counted apart, {len(cases)} commands)")
        print(f"check_server_args() after a successful resolution: {check_agree}/{check_total} agree")
        for text, mine, theirs in check_bad[: args.show]:
            print(f"  check: specdash={mine} sglang={theirs}: {text.replace(str(Path(tmp)), 'M')}")
        groups = collections.Counter(_decider(report, result) for _, _, result, report in bad)
        for key, count in groups.most_common():
            print(f"  {count:4d}  {key}")
        if args.dump:
            with args.dump.open("w") as fh:
                for case, diffs, result, report in bad:
                    fh.write(json.dumps({"text": case["text"].replace(str(Path(tmp)), "M"),
                                         "decider": _decider(report, result),
                                         "diffs": [[d.field, repr(d.specdash), str(d.sglang)[:400]] for d in diffs],
                                         "specdash": [d.code for d in report.diagnostics]}) + "\n")
        for case, diffs, _result, _ in bad[: args.show]:
            print(case["text"].replace(str(Path(tmp)), "M"))
            for d in diffs:
                print(f"    {d.field}: specdash={d.specdash!r} sglang={str(d.sglang)[:300]!r}")
    return 0 if not bad else 1


if __name__ == "__main__":
    raise SystemExit(main())
