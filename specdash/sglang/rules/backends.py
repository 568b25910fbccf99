"""Attention backend and page size as SGLang resolves them before speculative decoding (0.5.23 and later).

Read in the sglang 0.5.23 wheel: ``arg_groups/serving_hook.py`` (backend aliases), ``handle_deterministic_inference``
and ``handle_attention_backend_compatibility`` (``arg_groups/attention_hook.py``) with the passes it runs from
``arg_groups/overrides.py`` (``_attention_backend_default``, ``_mla_backend_page_constraints``,
``_attention_backend_fa3_fp8_fallback``, ``_fa4_page_constraint``, ``_attention_backend_platform_fallbacks``,
``_intel_xpu_page_constraint``, ``_page_size_default``). They run before the speculative hook, so a backend that
forces ``page_size`` 64 (FlashMLA, ...) meets the ``topk > 1 with page_size > 1`` refusal afterwards.

Outcomes that depend on the GPU (the default backend, Blackwell-only backends, Intel AMX on this CPU) are left
undecided (``None`` = SGLang decides at launch) with a ``hardware_dependent`` diagnostic naming the condition.
"""

from __future__ import annotations

from specdash.sglang.diagnostics import Edit
from specdash.sglang.mla_architectures import MLA_ARCHITECTURES
from specdash.sglang.rules.context import Context

#: ``serving_hook.py``: deprecated backend names and what they mean now.
BACKEND_ALIASES = {"compressed": "dsv4", "tokenspeed_mla": "cutedsl_mla"}
#: ``DETERMINISTIC_ATTENTION_BACKEND_CHOICES`` in ``arg_groups/choices.py``.
DETERMINISTIC_BACKENDS = ("ascend", "fa3", "fa4", "flashinfer", "intel_xpu", "triton")
_BACKEND_DESTS = ("attention_backend", "prefill_attention_backend", "decode_attention_backend")


def resolve(ctx: Context) -> None:
    """Rewrite ``attention_backend`` / ``page_size`` the way SGLang does before its speculative handling (0.5.23
    rules from 0.5.23 on, the 0.5.5 rules for 0.5.5-0.5.10); errors stop the resolution as SGLang's would."""
    if ctx.profile.at_least("0.5.5") and not ctx.profile.at_least("0.5.11"):
        _resolve_055(ctx)
        return
    if not ctx.profile.at_least("0.5.23"):
        return
    v = ctx.values
    for dest in _BACKEND_DESTS:
        if v.get(dest) in BACKEND_ALIASES:
            ctx.override(f"{dest.replace('_', '-')}-alias", dest, BACKEND_ALIASES[v[dest]],
                         f"'{v[dest]}' is a deprecated name of '{BACKEND_ALIASES[v[dest]]}'")
    if v.get("enable_deterministic_inference"):
        _deterministic(ctx)
        if ctx.stopped:
            return
    prefill, decode = v.get("prefill_attention_backend"), v.get("decode_attention_backend")
    if prefill is not None and prefill == decode and v.get("attention_backend") != prefill:
        ctx.override("split-backends-equal", "attention_backend", prefill,
                     "--prefill-attention-backend and --decode-attention-backend name the same backend")
    backend = v.get("attention_backend")
    backends = {b for d in _BACKEND_DESTS if (b := v.get(d)) is not None}
    if backend == "flex_attention" and ctx.parsed.typed.get("speculative_algorithm") is not None:
        ctx.error("flex-attention-speculative", (ctx.option("attention_backend"), ctx.option("speculative_algorithm")),
                  "SGLang raises AssertionError: Speculative decoding is currently not supported with Flex Attention "
                  "backend", exception="AssertionError",
                  fix=ctx.fix("use --attention-backend triton", ctx.set_edit("attention_backend", "triton")))
        return
    _page_constraints(ctx, backend, backends)
    if ctx.stopped:
        return
    if v.get("page_size") is None:
        v["page_size"] = 1  # _page_size_default: 1 on CUDA (64 only on MUSA / AMD's vectorized layout)


def _deterministic(ctx: Context) -> None:
    v = ctx.values
    backend = v.get("attention_backend")
    opt = ctx.option("attention_backend")
    if backend is None and v.get("device") == "cpu":
        # handle_cpu_backends (arg_groups/platform_hook.py) picks intel_amx (torch_native on arm64) first
        ctx.error("deterministic-backend", (opt, ctx.option("enable_deterministic_inference"), ctx.option("device")),
                  "on --device cpu SGLang picks the intel_amx attention backend (torch_native on arm64), and then "
                  f"raises ValueError: Currently only {list(DETERMINISTIC_BACKENDS)} attention backends are supported "
                  "for deterministic inference", exception="ValueError",
                  fix=ctx.fix(f"remove {ctx.option('enable_deterministic_inference')}",
                              Edit("remove", dest="enable_deterministic_inference")))
        return
    if backend is None:
        ctx.add("info", "deterministic-backend-from-gpu", (opt, ctx.option("enable_deterministic_inference")),
                "with --enable-deterministic-inference and no attention backend, SGLang picks fa3 on Hopper and "
                "older GPUs, flashinfer (triton for DeepSeek) on Blackwell", hardware_dependent=True)
        return
    if backend not in DETERMINISTIC_BACKENDS:
        ctx.error("deterministic-backend", (opt, ctx.option("enable_deterministic_inference")),
                  f"SGLang raises ValueError: Currently only {list(DETERMINISTIC_BACKENDS)} attention backends are "
                  "supported for deterministic inference, but you explicitly specified "
                  f"'{backend}'.", exception="ValueError",
                  fix=ctx.fix("use --attention-backend flashinfer", ctx.set_edit("attention_backend", "flashinfer")))


def _page_constraints(ctx: Context, backend: str | None, backends: set[str]) -> None:
    v = ctx.values
    page = v.get("page_size")
    forced, why = page, ""
    if "flashmla" in (backend, v.get("decode_attention_backend")):
        forced, why = 64, "FlashMLA only supports a page_size of 64"
    if "trtllm_mla" in (backend, v.get("decode_attention_backend")):
        if forced not in (32, 64):
            forced, why = 64, "TensorRT-LLM MLA only supports page_size of 32 or 64"
        ctx.add("warning", "trtllm-mla-blackwell", ctx.option("attention_backend"),
                "the trtllm_mla backend runs only on Blackwell GPUs (SM100/SM12x): SGLang raises ValueError on "
                "other GPUs", hardware_dependent=True)
    if "cutedsl_mla" in backends:
        if forced not in (32, 64):
            forced, why = 64, "CuteDSL MLA only supports page_size of 32 or 64"
        if v.get("prefill_attention_backend") == "cutedsl_mla":
            ctx.error("cutedsl-mla-prefill", ctx.option("prefill_attention_backend"),
                      "SGLang raises AssertionError: CuteDSL MLA only supports decoding for now",
                      exception="AssertionError")
            return
        ctx.add("warning", "cutedsl-mla-blackwell", ctx.option("attention_backend"),
                "the cutedsl_mla backend runs only on Blackwell GPUs (SM100): SGLang raises ValueError on other GPUs",
                hardware_dependent=True)
    if "trtllm_mha" in backends:
        if forced not in (16, 32, 64, 128):
            forced, why = 64, "TensorRT-LLM MHA only supports page_size of 16, 32, 64 or 128"
        ctx.add("warning", "trtllm-mha-hopper", ctx.option("attention_backend"),
                "the trtllm_mha backend runs only on Hopper (SM90) and Blackwell (SM100/SM120) GPUs: SGLang raises "
                "ValueError on other GPUs", hardware_dependent=True)
    if "hpc_ops" in backends and forced != 64:
        forced, why = 64, "HPC-Ops attention only supports a page_size of 64"
    backend = _page_then_fa3_fallback(ctx, page, forced, why, backend)
    if "fa4" in backends and ctx.arch not in MLA_ARCHITECTURES and (v.get("speculative_eagle_topk") or 0) <= 1:
        ctx.add("info", "fa4-page-size-on-blackwell", (ctx.option("attention_backend"), ctx.option("page_size")),
                "with fa4 on Blackwell (SM100) SGLang sets page_size 128 for non-MLA targets; on other GPUs it keeps "
                "the page size", hardware_dependent=True)
        ctx.notes["page_size_gpu_dependent"] = True  # the page size stays as typed: what other GPUs run
    if backend == "intel_amx" and (v.get("device") or "cuda") == "cpu":
        ctx.add("info", "intel-amx-fallback", ctx.option("attention_backend"),
                "intel_amx needs a CPU with Intel AMX; elsewhere SGLang falls back to torch_native",
                hardware_dependent=True)
        v["attention_backend"] = None
    if "intel_xpu" in backends:
        allowed = (64, 128) + ((16, 32) if ctx.arch in MLA_ARCHITECTURES else ())
        if v.get("page_size") not in allowed:
            _force_page(ctx, 128, f"the Intel XPU attention backend only supports page_sizes of {list(allowed)}")


def _page_then_fa3_fallback(ctx: Context, page, forced, why: str, backend: str | None) -> str | None:
    """Apply the page size a backend forces, then ``_attention_backend_fa3_fp8_fallback`` (fa3 with an fp8_e5m2 KV
    cache runs triton); returns the backend in force."""
    if forced != page:
        _force_page(ctx, forced, why)
    if backend == "fa3" and ctx.values.get("kv_cache_dtype") == "fp8_e5m2":
        ctx.override("fa3-fp8-e5m2", "attention_backend", "triton",
                     "FlashAttention3 only supports fp8_e4m3 if using FP8 (SGLang falls back to triton)")
        return "triton"
    return backend


def _force_page(ctx: Context, page: int, why: str) -> None:
    ctx.override("backend-page-size", "page_size", page, why,
                 ctx.fix(f"set --page-size {page}", ctx.set_edit("page_size", page)),
                 flags=(ctx.option("page_size"), ctx.option("attention_backend")))


def pipeline_overlap(ctx: Context) -> None:
    """``_pipeline_parallel_overlap_disable`` (``arg_groups/overrides.py``, 0.5.23; ``_handle_pipeline_parallelism``
    in 0.5.5's ``server_args.py``): ``--pp-size`` > 1 turns the overlap scheduler off, speculative or not."""
    known = ctx.profile.at_least("0.5.23") or (ctx.profile.at_least("0.5.5") and not ctx.profile.at_least("0.5.11"))
    if known and (ctx.values.get("pp_size") or 1) > 1 \
            and not ctx.values.get("disable_overlap_schedule"):
        ctx.override("pipeline-disables-overlap", "disable_overlap_schedule", True,
                     "Pipeline parallelism is incompatible with overlap schedule",
                     ctx.fix(f"set {ctx.option('pp_size')} 1", ctx.set_edit("pp_size", 1)))


__all__ = ["BACKEND_ALIASES", "DETERMINISTIC_BACKENDS", "pipeline_overlap", "resolve"]


def _resolve_055(ctx: Context) -> None:
    """``_handle_cpu_backends``, ``_handle_attention_backend_compatibility`` and ``_handle_page_size`` of
    ``ServerArgs`` as read in the sglang 0.5.5 wheel (applied to 0.5.5-0.5.10)."""
    v = ctx.values
    if v.get("device") == "cpu" and v.get("attention_backend") is None:
        v["attention_backend"] = "intel_amx"
    prefill, decode = v.get("prefill_attention_backend"), v.get("decode_attention_backend")
    if prefill is not None and prefill == decode and v.get("attention_backend") != prefill:
        ctx.override("split-backends-equal", "attention_backend", prefill,
                     "--prefill-attention-backend and --decode-attention-backend name the same backend")
    backend = v.get("attention_backend")
    if backend in ("torch_native", "flex_attention") and not v.get("disable_cuda_graph"):
        ctx.override("backend-disables-cuda-graph", "disable_cuda_graph", True,
                     f"CUDA graphs are disabled with the {backend} attention backend")
    if backend == "flex_attention" and v.get("speculative_algorithm") is not None:
        ctx.error("flex-attention-speculative", (ctx.option("attention_backend"), ctx.option("speculative_algorithm")),
                  "SGLang raises AssertionError: Speculative decoding is currently not supported with Flex Attention "
                  "backend", exception="AssertionError",
                  fix=ctx.fix("use --attention-backend triton", ctx.set_edit("attention_backend", "triton")))
        return
    page = v.get("page_size")
    forced, why = page, ""
    if "flashmla" in (backend, decode):
        forced, why = 64, "FlashMLA only supports a page_size of 64"
    if "cutlass_mla" in (backend, decode):
        forced, why = 128, "Cutlass MLA only supports a page_size of 128"
    if "trtllm_mla" in (backend, decode):
        ctx.add("warning", "trtllm-mla-blackwell", ctx.option("attention_backend"),
                "the trtllm_mla backend runs only on Blackwell GPUs: SGLang raises ValueError on other GPUs",
                hardware_dependent=True)
        if forced not in (32, 64):
            forced, why = 64, "TensorRT-LLM MLA only supports page_size of 32 or 64"
    if "trtllm_mha" in (backend, decode, prefill):
        ctx.add("warning", "trtllm-mha-blackwell", ctx.option("attention_backend"),
                "the trtllm_mha backend runs only on Blackwell (SM100) GPUs in this release: SGLang raises ValueError "
                "on other GPUs", hardware_dependent=True)
        if forced not in (16, 32, 64):
            forced, why = 64, "TensorRT-LLM MHA only supports page_size of 16, 32 or 64"
    backend = _page_then_fa3_fallback(ctx, page, forced, why, backend)
    if "fa4" in (backend, decode):
        ctx.error("fa4-decode", ctx.option("attention_backend"),
                  "SGLang raises ValueError: FA4 backend is only supported for prefill. Please use "
                  "`--prefill-attention-backend fa4` instead.", exception="ValueError",
                  fix=ctx.fix("use --attention-backend fa3", ctx.set_edit("attention_backend", "fa3")))
        return
    if prefill == "fa4" and v.get("page_size") != 128:
        _force_page(ctx, 128, "the fa4 prefill backend needs page_size 128")
    if backend == "intel_amx" and v.get("device") == "cpu":
        ctx.add("info", "intel-amx-fallback", ctx.option("attention_backend"),
                "intel_amx needs a CPU with Intel AMX; elsewhere SGLang falls back to torch_native",
                hardware_dependent=True)
        v["attention_backend"] = None
    if backend == "dual_chunk_flash_attn" and v.get("enable_mixed_chunk"):
        ctx.override("dual-chunk-mixed-chunk", "enable_mixed_chunk", False,
                     "the dual_chunk_flash_attn backend turns mixed chunked prefill off (and the radix cache)")
    if backend == "intel_xpu" and v.get("page_size") not in (32, 64, 128):
        _force_page(ctx, 128, "the Intel XPU attention backend only supports page_sizes of [32, 64, 128]")
    if v.get("page_size") is None:
        v["page_size"] = 1


def deterministic_after_speculative(ctx: Context) -> None:
    """0.5.5-0.5.10: ``_handle_deterministic_inference`` runs after the speculative handling (read in the 0.5.5
    wheel): only flashinfer / fa3 / triton, and only fa3 / triton for DeepSeek targets (ValueError otherwise); an
    unset backend is chosen from the GPU."""
    v = ctx.values
    if ctx.stopped or not v.get("enable_deterministic_inference") or not ctx.profile.at_least("0.5.5") \
            or ctx.profile.at_least("0.5.11"):
        return
    backend = v.get("attention_backend")
    opt = ctx.option("attention_backend")
    if backend is None and v.get("device") == "cpu":
        backend = "intel_amx"  # chosen by _handle_cpu_backends; the AMX fallback would make it torch_native
    if backend is None:
        ctx.add("info", "deterministic-backend-from-gpu", (opt, ctx.option("enable_deterministic_inference")),
                "with --enable-deterministic-inference and no attention backend, SGLang picks fa3 on Hopper and "
                "older GPUs, flashinfer (triton for DeepSeek) on Blackwell", hardware_dependent=True)
        return
    if ctx.arch is None and backend == "flashinfer":
        ctx.add("info", "deterministic-backend-needs-arch", (opt, ctx.option("enable_deterministic_inference")),
                "with --enable-deterministic-inference SGLang accepts flashinfer except for DeepSeek targets "
                "(then only fa3 or triton); the target's architecture is not known here: give the model's "
                "config.json (validate --host TARGET reads it) to decide")
    allowed = ("fa3", "triton") if ctx.arch in ("DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM",
                                                 "DeepseekV32ForCausalLM") else ("flashinfer", "fa3", "triton")
    if backend not in allowed:
        ctx.error("deterministic-backend", (opt, ctx.option("enable_deterministic_inference")),
                  f"SGLang raises ValueError: Currently only {list(allowed)} attention backends are supported for "
                  f"deterministic inference{' with DeepSeek models' if len(allowed) == 2 else ''}, but the backend "
                  f"is '{backend}'.", exception="ValueError",
                  fix=ctx.fix("use --attention-backend triton", ctx.set_edit("attention_backend", "triton")))
