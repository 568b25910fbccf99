"""``ServerArgs.check_server_args()``: what the launch asserts right after resolving the arguments, before any GPU
work. Errors here carry ``stage="check_server_args"``.

Read in the sglang wheels: 0.5.5 (``check_server_args`` in ``server_args.py``; the pipeline rule also for
0.5.0-0.5.15) and 0.5.23 (``check_server_args`` and ``check_pipeline_parallel_compat`` in
``arg_groups/validation_hook.py``):

- the chunked prefill size must be a multiple of the page size: ``--page-size 0`` divides by zero
  (ZeroDivisionError) unless chunked prefill is off (``--chunked-prefill-size -1``); a typed chunked prefill size
  that is not a multiple is an AssertionError. With no ``--chunked-prefill-size`` SGLang picks a positive one from
  the GPU's memory, so only the page size 0 case is certain;
- a LoRA MoE runner for the draft (``--speculative-moe-runner-backend lora_*``, 0.5.23): the draft has no adapters;
- pipeline parallelism: up to 0.5.15 it excludes speculative decoding and mixed chunked prefill; from 0.5.23 it
  allows speculative decoding with EAGLE (and NEXTN, which is EAGLE) only, on the prefill nodes of a disaggregated
  deployment (or with ``SGLANG_ENABLE_PP_SPEC=1``).
"""

from __future__ import annotations

from specdash.sglang.diagnostics import Edit
from specdash.sglang.rules.context import Context

STAGE = "check_server_args"


def check(ctx: Context) -> None:
    """Add the ``check_server_args`` errors for the resolved ``ctx.values`` (nothing once resolution stopped)."""
    if ctx.stopped:
        return
    p, v = ctx.profile, ctx.values
    _pipeline(ctx)
    runner = v.get("speculative_moe_runner_backend")
    if p.at_least("0.5.23") and v.get("speculative_algorithm") is not None and isinstance(runner, str) \
            and runner.startswith("lora"):
        # check_lora_moe_runner_args (arg_groups/lora_hook.py, 0.5.23): the draft has no LoRA adapters
        opt = ctx.option("speculative_moe_runner_backend")
        ctx.error("lora-moe-runner-for-draft", (opt,),
                  f"SGLang raises ValueError: {opt} {runner} is not supported: the LoRA MoE runner serves adapter "
                  "traffic on the target model", exception="ValueError", stage=STAGE,
                  fix=ctx.fix(f"remove {opt}", Edit("remove", dest="speculative_moe_runner_backend")))
    read = (p.at_least("0.5.5") and not p.at_least("0.5.11")) or p.at_least("0.5.23")
    if not read:
        return
    page = v.get("page_size")
    chunked = v.get("chunked_prefill_size")
    page_opt, chunk_opt = ctx.option("page_size"), ctx.option("chunked_prefill_size")
    if page == 0 and (chunked is None or chunked > 0):
        on_blackwell = " (on Blackwell, fa4 sets the page size to 128 first)" \
            if ctx.notes.get("page_size_gpu_dependent") else ""
        ctx.error("page-size-zero", (page_opt,),
                  f"{page_opt} 0: the launch checks chunked_prefill_size % page_size and stops with "
                  f"ZeroDivisionError: integer modulo by zero{on_blackwell}", exception="ZeroDivisionError",
                  stage=STAGE, fix=ctx.fix(f"set {page_opt} 1", ctx.set_edit("page_size", 1)),
                  hardware_dependent=bool(on_blackwell))
    elif isinstance(page, int) and page > 0 and isinstance(chunked, int) and chunked > 0 and chunked % page:
        ctx.error("chunked-prefill-page-size", (chunk_opt, page_opt),
                  f"SGLang raises AssertionError: chunked_prefill_size must be divisible by page_size ({chunked} % "
                  f"{page} = {chunked % page})", exception="AssertionError", stage=STAGE,
                  fix=ctx.fix(f"set {chunk_opt} {chunked - chunked % page or page}",
                              ctx.set_edit("chunked_prefill_size", chunked - chunked % page or page)))


def _pipeline(ctx: Context) -> None:
    p, v = ctx.profile, ctx.values
    if (v.get("pp_size") or 1) <= 1:
        return
    algo = v.get("speculative_algorithm")
    pp_opt = ctx.option("pp_size")
    if p.at_least("0.5.0rc0") and not p.at_least("0.5.16"):
        if algo is not None or v.get("enable_mixed_chunk"):
            ctx.error("pp-with-spec", pp_opt,
                      "SGLang raises AssertionError: Pipeline parallelism is not compatible with overlap schedule, "
                      "speculative decoding, mixed chunked prefill.", exception="AssertionError", stage=STAGE,
                      fix=ctx.fix(f"remove {pp_opt}", Edit("remove", dest="pp_size")), stop=False)
    elif p.at_least("0.5.23") and algo is not None:
        _pipeline_0523(ctx, algo)


def _pipeline_0523(ctx: Context, algo: str) -> None:
    """``check_pipeline_parallel_compat`` (0.5.23): EAGLE (non-multi-layer) or DSPARK only, and on prefill nodes
    of a disaggregated deployment unless ``SGLANG_ENABLE_PP_SPEC`` is set (then not disaggregated, not adaptive,
    no attention DP)."""
    from specdash.sglang.rules.parallel import attention_dp_layout

    v = ctx.values
    pp_opt = ctx.option("pp_size")
    mode = v.get("disaggregation_mode") or "null"
    pp_spec = str(ctx.env.get("SGLANG_ENABLE_PP_SPEC", "")).strip().lower() in ("1", "true", "yes", "y")
    problem = None
    if algo == "DSPARK":
        if mode != "prefill":
            problem = "Pipeline parallel DSPARK requires disaggregation-mode=prefill"
    elif algo != "EAGLE" or v.get("enable_multi_layer_eagle"):
        problem = (f"Pipeline parallelism currently only supports EAGLE (non-multi-layer) speculative decoding "
                   f"(here: {algo})")
    elif pp_spec:
        if mode != "null":
            problem = "SGLANG_ENABLE_PP_SPEC is not compatible with --disaggregation-mode"
        elif v.get("speculative_adaptive"):
            problem = "SGLANG_ENABLE_PP_SPEC is not compatible with --speculative-adaptive"
        elif attention_dp_layout(v)[0] > 1:
            problem = "SGLANG_ENABLE_PP_SPEC is not compatible with attention DP (--attn-dp-size)"
    elif mode != "prefill":
        problem = "PP + speculative decoding (MTP) is only supported on prefill nodes (disaggregation-mode=prefill)"
    if problem:
        ctx.error("pp-with-spec", (pp_opt, ctx.option("speculative_algorithm")),
                  f"SGLang raises AssertionError: {problem}", exception="AssertionError", stage=STAGE,
                  fix=ctx.fix(f"remove {pp_opt}", Edit("remove", dest="pp_size")), stop=False)
