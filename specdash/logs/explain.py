"""Plain-words explanations of SGLang log lines: silent overrides, crash reasons, OOM, argparse failures.

Every entry names its source (the SGLang file or the upstream issue/PR). Pure functions over text.
"""

from __future__ import annotations

import dataclasses
import re

from specdash.sglang import chain_rule


@dataclasses.dataclass(frozen=True)
class Explanation:
    """``title``: one line for the findings list; ``detail``: what it means in plain words; ``flag``: the SGLang
    flag it is about (``--speculative-num-draft-tokens``) or None; ``fix``: what to change (builder hint) or None."""

    title: str
    detail: str
    flag: str | None = None
    fix: str | None = None


# ---- silent rewrites (SGLang server_args.py) -------------------------------------------------------------------
_OVERRIDES: tuple[tuple[str, Explanation], ...] = (
    (
        chain_rule.LOG_PHRASE,
        Explanation(
            "num_draft_tokens overridden: set to num_steps + 1 because topk == 1",
            "With --speculative-eagle-topk 1 the draft is a chain, so SGLang ignores the "
            "--speculative-num-draft-tokens you gave and verifies num_steps + 1 tokens (server_args). A larger tree "
            "needs topk > 1.",
            "--speculative-num-draft-tokens",
            chain_rule.general_fix(),
        ),
    ),
    (
        "Max running requests is reset to",
        Explanation(
            "max_running_requests lowered for speculative decoding",
            "Speculative decoding caps concurrent requests (48 by default since ~v0.4.5); extra requests queue. "
            "Set --max-running-requests explicitly if your workload needs more concurrency.",
            "--max-running-requests",
            "pass --max-running-requests explicitly",
        ),
    ),
    (
        "Overlap scheduler is disabled",
        Explanation(
            "overlap scheduler disabled by speculative decoding",
            "EAGLE-family speculation runs without the overlap scheduler in this version (server_args); throughput of "
            "a baseline run with overlap on is not comparable like-for-like.",
            "--disable-overlap-schedule",
            None,
        ),
    ),
    (
        "Mixed chunked prefill is disabled",
        Explanation(
            "--enable-mixed-chunk ignored with speculative decoding",
            "SGLang turns mixed chunked prefill off for EAGLE-family speculation (v0.4.10+).",
            "--enable-mixed-chunk",
            "drop --enable-mixed-chunk",
        ),
    ),
    (
        "mixed chunked prefill are disabled",
        Explanation(
            "overlap scheduler / mixed chunked prefill disabled for NGRAM",
            "NGRAM speculation runs without mixed chunked prefill (and without the overlap scheduler before 2026).",
            "--enable-mixed-chunk",
            None,
        ),
    ),
    (
        "speculative_num_draft_tokens is set to 12 by default",
        Explanation(
            "NGRAM draft tokens defaulted to 12",
            "No --speculative-num-draft-tokens was given for NGRAM; SGLang uses 12.",
            "--speculative-num-draft-tokens",
            "pass --speculative-num-draft-tokens explicitly",
        ),
    ),
    (
        "speculative_eagle_topk is changed to 1 when page_size > 1",
        Explanation(
            "topk forced to 1 because page_size > 1",
            "This version (~v0.4.5) cannot run a draft tree with paged KV; topk was set to 1 (a chain).",
            "--speculative-eagle-topk",
            "use --page-size 1 for a tree, or topk 1",
        ),
    ),
    (
        "DeepSeek MTP does not require setting speculative_draft_model_path",
        Explanation(
            "draft path ignored for a DeepSeek MTP model",
            "The target ships its own NextN/MTP head; SGLang uses the target checkpoint as the draft.",
            "--speculative-draft-model-path",
            "drop --speculative-draft-model-path",
        ),
    ),
    (
        "The radix cache, chunked prefill, and overlap scheduler are disabled",
        Explanation(
            "radix cache, chunked prefill and overlap scheduler disabled by EAGLE",
            "SGLang v0.4.1 turns these off for EAGLE speculation.",
            None,
            None,
        ),
    ),
    (
        "overriding",
        Explanation(
            "speculative depth overridden",
            "This algorithm only supports speculative_num_steps == 1 (and topk 1); SGLang overrides what was given.",
            "--speculative-num-steps",
            "set --speculative-num-steps 1",
        ),
    ),
    (
        "Attention backend not specified",
        Explanation(
            "attention backend chosen automatically",
            "SGLang picked the attention backend; with speculation the automatic choice can differ from a baseline run "
            "(e.g. trtllm_mha -> triton, page size -> 1). Compare effective server_args before comparing speed.",
            "--attention-backend",
            "pass --attention-backend explicitly in both runs",
        ),
    ),
    (
        "spec v2 is used",
        Explanation(
            "speculative worker mode chosen",
            "SGLang chose the spec-v2 worker path for this algorithm.",
            None,
            None,
        ),
    ),
)


def explain_override(message: str) -> Explanation:
    """Explanation of an override line (``LineKind.override``); a generic one for unknown phrasings."""
    for phrase, expl in _OVERRIDES:
        if phrase in message:
            return expl
    return Explanation("setting changed by SGLang", message.strip(), None, None)


# ---- crash reasons (SGLang tracebacks as logged by scheduler.py) -------------------------------------------------
_OOM_GPU = re.compile(r"GPU (\d+) has a total capacity of ([\d.]+ [GM]iB) of which ([\d.]+ [GM]iB) is free")
_OOM_ALLOC = re.compile(r"Tried to allocate ([\d.]+ [GM]iB)")
_OOM_SELF = re.compile(r"this process has ([\d.]+ [GM]iB) memory in use")
_OOM_OTHER = re.compile(r"Process (\d+) has ([\d.]+ [GM]iB) memory in use")
_TENSOR_SIZE = re.compile(r"Expected size (\d+) but got size (\d+)")

OOM_KNOBS = (
    "lower --mem-fraction-static (leaves room for activations and CUDA graphs) or raise it if the KV pool is what "
    "failed; lower --cuda-graph-max-bs; lower --max-running-requests or --chunked-prefill-size; a smaller draft tree "
    "(--speculative-num-draft-tokens / --speculative-eagle-topk)"
)


def parse_oom(message: str) -> dict:
    """Per-GPU picture of a PyTorch CUDA OOM message: ``gpu``, ``total``, ``free``, ``tried``, ``this_process``,
    ``others`` ([(pid, size)]). Sizes are kept as printed (e.g. ``"39.56 GiB"``); missing parts are absent."""
    out: dict = {}
    m = _OOM_GPU.search(message)
    if m:
        out["gpu"], out["total"], out["free"] = int(m.group(1)), m.group(2), m.group(3)
    m = _OOM_ALLOC.search(message)
    if m:
        out["tried"] = m.group(1)
    m = _OOM_SELF.search(message)
    if m:
        out["this_process"] = m.group(1)
    others = [(int(pid), size) for pid, size in _OOM_OTHER.findall(message)]
    if others:
        out["others"] = others
    return out


def explain_oom(message: str) -> Explanation:
    """Explanation of an OOM line with the memory knobs to turn."""
    if "Not enough memory" in message:
        return Explanation(
            "KV cache pool too small: not enough memory after weights",
            "After loading the target and draft weights (and reserving memory for CUDA graphs) too little GPU memory "
            "is left for the KV pool (model_runner, v0.5.0rc0).",
            "--mem-fraction-static",
            "raise --mem-fraction-static, lower --context-length, or use more GPUs (--tp-size)",
        )
    oom = parse_oom(message)
    parts = []
    if "gpu" in oom:
        parts.append(f"GPU {oom['gpu']}: {oom['total']} total, {oom['free']} free")
    if "tried" in oom:
        parts.append(f"tried to allocate {oom['tried']}")
    if "this_process" in oom:
        parts.append(f"this process holds {oom['this_process']}")
    if "others" in oom:
        pids = ", ".join(f"PID {pid} {size}" for pid, size in oom["others"])
        parts.append(f"other processes on it: {pids}")
    picture = "; ".join(parts)
    return Explanation(
        "CUDA out of memory" + (f" on GPU {oom['gpu']}" if "gpu" in oom else ""),
        (picture + ". " if picture else "") + "Memory knobs: " + OOM_KNOBS + ".",
        "--mem-fraction-static",
        OOM_KNOBS,
    )


#: vLLM / pre-merge spellings SGLang rejects -> what to use (https://github.com/sgl-project/sglang/issues/555).
FOREIGN_FLAGS: dict[str, str] = {
    "--speculative-model": "--speculative-draft-model-path (for n-gram: --speculative-algorithm NGRAM)",
    "--speculative_model": "--speculative-draft-model-path",
    "--num-speculative-tokens": "--speculative-num-draft-tokens (NGRAM) or --speculative-num-steps (EAGLE chain)",
    "--num_speculative_tokens": "--speculative-num-draft-tokens / --speculative-num-steps",
    "--tensor-parallel-size": "--tp-size",
    "--ngram-prompt-lookup-max": "no 1:1 equivalent; see --speculative-ngram-* options",
    "--use-v2-block-manager": "no SGLang equivalent; drop it",
    "--gpu-memory-utilization": "--mem-fraction-static (different meaning)",
    "--gpu_memory_utilization": "--mem-fraction-static (different meaning)",
    "--speculative-config": "--speculative-algorithm / --speculative-draft-model-path / --speculative-num-steps",
    "--draft-model-path": "--speculative-draft-model-path",
    "--num-speculative-steps": "--speculative-num-steps",
    "--eagle-topk": "--speculative-eagle-topk",
    "--num-draft-tokens": "--speculative-num-draft-tokens",
}


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


_FLAG_WORD = re.compile(r"^--?[A-Za-z_]")
#: what a title shows of the rejected words when none of them is a flag (they are the only clue)
_TITLE_WORDS = 40


def _unrecognized(listed: str) -> Explanation:
    """Explanation of argparse's ``unrecognized arguments: <listed>``: ``listed`` is the rejected command-line
    words joined by single spaces (CPython's ``ArgumentParser.parse_args``: ``'unrecognized arguments: %s' %
    ' '.join(argv)``), so a word that holds a space reads as two and an empty word as nothing. Flags
    (``--speculative-model``) are named, and so are the other words (a flag's value, a stray word, a lone ``\\``
    left by a line continuation onto nothing): SGLang takes no positional arguments (server_args.py
    ``ServerArgs.add_cli_args``), so argparse rejects every word no flag consumes."""
    words = listed.split()
    if not words:
        return Explanation(
            "launch failed: unrecognized arguments (argparse's message names none: empty or blank words)",
            "SGLang's argparse rejected arguments it prints as nothing - an empty or blank word in the command "
            "(such as '' or an unset \"$VAR\" in quotes).", None, None)
    flags = [w for w in words if _FLAG_WORD.match(w)]
    others = [w for w in words if not _FLAG_WORD.match(w)]
    hints = [f"{f} -> {FOREIGN_FLAGS[f]}" for f in flags if f in FOREIGN_FLAGS]
    text = f"SGLang's argparse rejected {_count(len(words), 'argument')}: {' '.join(words)}."
    if flags:
        text += f" Flags this SGLang does not know: {', '.join(flags)}."
    words_no_flag_takes = [w for w in others if w != "\\"]
    if words_no_flag_takes:
        text += (f" Not flags: {', '.join(words_no_flag_takes)} (a rejected flag's value, or a word no flag takes: "
                 "SGLang has no positional arguments).")
    fix = "; ".join(hints) or None
    if "\\" in others:
        text += (" A lone \\ is a line continuation with nothing after it: the command's last line ends in a "
                 "backslash. Remove that backslash.")
        fix = fix or "remove the backslash that ends the command's last line"
    if hints:
        text += " Other-engine spellings: " + "; ".join(hints) + "."
    if flags:
        title = f"launch failed: {_count(len(flags), 'unrecognized flag')}"
        if others:
            title += f" (and {_count(len(others), 'other argument')})"
        if len(", ".join(flags)) <= _TITLE_WORDS:
            title += f": {', '.join(flags)}"
    else:
        shown = " ".join(others)
        shown = shown if len(shown) <= _TITLE_WORDS else shown[:_TITLE_WORDS - 1] + "…"
        title = f"launch failed: {_count(len(others), 'unrecognized argument')}: {shown}"
    return Explanation(title, text, flags[0] if flags else None, fix)


def explain_argparse(detail: str) -> Explanation:
    """Explanation of ``launch_server.py: error: <detail>``."""
    if detail.startswith("unrecognized arguments:"):
        return _unrecognized(detail.split(":", 1)[1])
    if "invalid choice" in detail:
        return Explanation(
            "launch failed: invalid choice", detail + ". Algorithm names are upper case (EAGLE, EAGLE3, NEXTN, "
            "STANDALONE, NGRAM) in SGLang before 2026.", "--speculative-algorithm", None)
    if "ambiguous option" in detail:
        return Explanation("launch failed: ambiguous abbreviated flag", detail + ". Spell the flag out in full.",
                           None, None)
    return Explanation("launch failed: bad arguments", detail, None, None)


_BIND_ADDRESS = re.compile(r"bind on address \(?'?([^'),]*)'?, (\d+)(?:, \d+)*\)?: (.*)$")


def _bind_failed(detail: str) -> Explanation:
    """The HTTP server could not listen on its address: ``detail`` is the OSError text of CPython's asyncio
    ``create_server`` (``[Errno 98] error while attempting to bind on address ('127.0.0.1', 30000): address
    already in use``; an IPv6 address has four fields, ``('::1', 30000, 0, 0)``), which uvicorn logs before it
    exits - after the whole start-up (weights, KV cache, CUDA graphs), since SGLang starts its HTTP server last."""
    m = _BIND_ADDRESS.search(detail)
    port = m.group(2) if m else None
    reason = m.group(3).strip() if m else detail
    where = f"port {port}" if port else "its HTTP port"
    if "in use" in reason:
        return Explanation(
            f"launch failed: {where} is already in use (another process listens on it)",
            f"The server loaded everything, then could not listen on {where}: another process - often another "
            "SGLang server - already does. Launch again on a free port.",
            "--port", "choose a free port with --port")
    return Explanation(f"launch failed: the HTTP server could not listen on {where} ({reason})",
                       f"uvicorn could not bind {where}: {reason}. Check --host and --port.", "--port", None)


def explain_crash(exception: str, detail: str, frames: list[str]) -> Explanation:
    """Explanation of the exception that ended a traceback. ``frames``: the traceback's ``File "..."`` lines."""
    where = " ".join(frames)
    short = exception.rsplit(".", 1)[-1]
    if exception == "argparse":
        return explain_argparse(detail)
    if "out of memory" in detail or "OutOfMemoryError" in exception or "Not enough memory" in detail:
        return explain_oom(f"{exception}: {detail}")
    if short == "OSError" and "error while attempting to bind on address" in detail:
        return _bind_failed(detail)
    if short == "AssertionError" and not detail and ("server_args" in where or not frames):
        return Explanation(
            "launch failed: bare AssertionError in server_args (partial speculative depth flags)",
            "SGLang's ServerArgs asserts that --speculative-num-steps, --speculative-eagle-topk and "
            "--speculative-num-draft-tokens are given all together or not at all (it auto-chooses them only when all "
            "three are omitted); topk or num-draft-tokens without num-steps ends here (server_args ~v0.4.5+).",
            "--speculative-num-steps",
            "give all three (e.g. --speculative-num-steps 3 --speculative-eagle-topk 1 "
            "--speculative-num-draft-tokens 4) or none",
        )
    if short == "TypeError" and "'>' not supported between instances of 'NoneType' and 'int'" in detail:
        return Explanation(
            "launch failed: --speculative-num-steps given without --speculative-eagle-topk",
            "SGLang only auto-chooses topk and num_draft_tokens when all three depth flags are omitted; with num-steps "
            "alone it compares topk None > 1 and dies (SGLang PR #22895).",
            "--speculative-eagle-topk",
            "add --speculative-eagle-topk 1 --speculative-num-draft-tokens <steps + 1>, "
            "or drop --speculative-num-steps",
        )
    if short == "TypeError" and "unsupported operand type(s) for *: 'NoneType' and 'int'" in detail:
        return Explanation(
            "launch failed: speculative topk unset (NEXTN/STANDALONE)",
            "2026 SGLang multiplies topk while it is still None (open PR #34361).",
            "--speculative-eagle-topk",
            "pass --speculative-eagle-topk explicitly",
        )
    if "Pipeline parallelism is not compatible" in detail:
        return Explanation("launch failed: --pp-size > 1 with speculative decoding",
                           "Pipeline parallelism cannot be combined with speculative decoding (check_server_args).",
                           "--pp-size", "use --pp-size 1 or turn speculation off")
    if "HybridAttentionBackend does not support speculative" in detail:
        return Explanation("launch failed: different prefill/decode attention backends with speculation",
                           "SGLang ≤ Aug 2025 cannot run speculative decoding with different "
                           "--prefill-attention-backend "
                           "and --decode-attention-backend (SGLang issue #9330, PR #9573).",
                           "--decode-attention-backend",
                           "use one --attention-backend")
    if "Unknown speculative algorithm name" in detail:
        return Explanation("launch failed: unknown --speculative-algorithm", detail +
                           ". Valid: EAGLE, EAGLE3, NEXTN, STANDALONE, NGRAM (2026 adds DFLASH, DSPARK).",
                           "--speculative-algorithm", None)
    if "trtllm_mha backend only supports topk = 1" in detail:
        return Explanation("launch failed: trtllm_mha needs topk 1", detail, "--speculative-eagle-topk",
                           "use --speculative-eagle-topk 1 or another --attention-backend")
    if "page_size > 1 is unstable" in detail:
        return Explanation("launch failed: topk > 1 with page_size > 1", detail, "--page-size",
                           "use --page-size 1, topk 1, or the flashinfer backend")
    if "Sizes of tensors must match" in detail and ("eagle" in where.lower() or "eagle" in detail.lower()):
        m = _TENSOR_SIZE.search(detail)
        sizes = f" ({m.group(2)} = --speculative-num-draft-tokens?)" if m else ""
        return Explanation(
            "crash: tensor size mismatch in the EAGLE3 draft forward" + sizes,
            "Known unsupported combination: SpecV2 (SGLANG_ENABLE_SPEC_V2=1) with --speculative-eagle-topk > 1 "
            "(issues #14077, #13352).",
            "--speculative-eagle-topk",
            "unset SGLANG_ENABLE_SPEC_V2 or use --speculative-eagle-topk 1",
        )
    capture_text = f"{detail} {where}"
    if "cuda_graph_runner" in where or "Capture cuda graph failed" in detail or "StreamCapture" in detail \
            or "stream is capturing" in detail or ("cuda_graph" in where and "capture" in capture_text.lower()):
        runner = "the draft runner (eagle_draft_cuda_graph_runner)" if "eagle_draft_cuda_graph_runner" in where \
            or "draft" in where.split("cuda_graph")[0][-40:] else "the target runner"
        return Explanation(
            f"crash: CUDA graph capture failed in {runner}",
            f"{short}: {detail}. A kernel did something not allowed while a CUDA graph is being captured. Seen with "
            "--enable-expert-distribution-metrics together with EAGLE/MTP and --speculative-num-steps >= 2 "
            "(SGLang issue #32105). --disable-cuda-graph confirms; a smaller --cuda-graph-max-bs shortens the retry.",
            "--speculative-num-steps",
            "drop --enable-expert-distribution-metrics or use --speculative-num-steps 1",
        )
    return Explanation(f"crash: {short}" + (f": {detail[:120]}" if detail else ""),
                       f"{exception}: {detail}" if detail else exception, None, None)


#: (file name part, component) in the order they are looked for, deepest frame first.
_COMPONENT_FILES: tuple[tuple[str, str], ...] = (
    ("cuda_graph_runner", "CUDA graph capture"),
    ("model_runner", "model runner"),
    ("loader", "weight loading"),
    ("parallel_state", "distributed (NCCL) init"),
    ("tp_worker", "TP worker"),
    ("scheduler", "scheduler"),
    ("detokenizer", "detokenizer"),
    ("tokenizer_manager", "tokenizer manager"),
    ("server_args", "server arguments"),
)
_HEAD_COMPONENTS = (("Scheduler", "scheduler"), ("MultimodalDetokenizer", "detokenizer"),
                    ("Detokenizer", "detokenizer"), ("TokenizerManager", "tokenizer manager"))


def traceback_component(frames: list[str], head: str = "") -> str | None:
    """Where a traceback happened, in words, from its ``File "..."`` ``frames`` (outermost first) and the line
    that opened it (``head``, e.g. ``Scheduler hit an exception: ...``): ``"draft worker init (model runner)"``,
    ``"scheduler"``; None when nothing is recognisable. SGLang's layout (python/sglang/srt/): the draft worker
    lives in ``speculative/`` (``eagle_worker.py``, ``eagle_worker_v2.py``, ``standalone_worker.py``), the
    scheduler in ``managers/scheduler.py``, the model runner in ``model_executor/model_runner.py``."""
    deepest = None
    for frame in reversed(frames):
        path = frame.split('"')[1] if frame.count('"') >= 2 else frame
        base = path.rsplit("/", 1)[-1]
        deepest = next((name for part, name in _COMPONENT_FILES if part in base), None)
        if deepest:
            break
    draft = any("/speculative/" in f or "eagle_worker" in f or "draft_worker" in f for f in frames)
    init = any(f.endswith((", in __init__", ", in init")) or ", in init_" in f for f in frames)
    if draft:
        return "draft worker init" + (f" ({deepest})" if deepest else "") if init else \
            "draft worker" + (f" ({deepest})" if deepest else "")
    if deepest is None:
        deepest = next((name for part, name in _HEAD_COMPONENTS if head.lstrip().startswith(part)), None)
    if deepest and init and deepest in ("model runner", "scheduler", "TP worker"):
        return f"{deepest} init"
    return deepest
