"""SGLang's own speculative-decoding argument resolution, transcribed per version profile.

Each step below names the SGLang code it mirrors. Sources (PyPI wheels): ``ServerArgs.__post_init__`` in
``server_args.py`` for 0.4.1.post7, 0.4.3.post4/0.4.4.post1, 0.4.5, 0.4.7, 0.4.10, 0.5.1;
``ServerArgs._handle_speculative_decoding`` for 0.5.5, 0.5.8, 0.5.9, 0.5.10, 0.5.11, 0.5.12;
``arg_groups/speculative_hook.py`` (``handle_speculative_decoding``, ``_handle_eagle_family``, ``_handle_ngram``)
for 0.5.16, 0.5.20 and 0.5.23. The steps run in SGLang's order and stop where SGLang raises, so the effective
values are what SGLang would hold at that point.
"""

from __future__ import annotations

from specdash.sglang import chain_rule
from specdash.sglang.architectures import (
    MTP_NO_WARNING,
    auto_triple,
    auto_triple_choices,
    mtp_architectures,
)
from specdash.sglang.diagnostics import Edit
from specdash.sglang.rules.context import Context
from specdash.sglang.rules.parallel import attention_dp_layout

#: Builtin algorithm names of the current profile (``SpeculativeAlgorithm`` enum, 0.5.23) plus the NEXTN alias.
CURRENT_ALGORITHMS = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM", "DFLASH", "DSPARK", "UNO", "FROZEN_KV_MTP")
_TYPE_ERROR_GT = "'>' not supported between instances of 'NoneType' and 'int'"
_TRUE = ("true", "1", "yes", "y")
_FALSE = ("false", "0", "no", "n")


def _env_bool(ctx: Context, name: str, default: bool) -> bool:
    raw = ctx.env.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    if not ctx.profile.at_least("0.5.8"):
        # EnvField.get in sglang/srt/environ.py (read in 0.5.5) warns and falls back to the default
        ctx.add("warning", "bad-env-value", name,
                f'{name}={raw}: "{value}" is not a valid boolean value; SGLang warns and uses the default '
                f"({'true' if default else 'false'})",
                ctx.fix(f"set {name}=1", Edit("set_env", option=name, value="1")))
        return default
    ctx.error("bad-env-value", name, f'{name}={raw}: SGLang raises ValueError: "{value}" is not a valid boolean '
              "value (use 1/0 or true/false)", exception="ValueError", stage="server_args", stop=False,
              fix=ctx.fix(f"set {name}=1", Edit("set_env", option=name, value="1")))
    return default


def resolve(ctx: Context) -> None:
    """Run the version's speculative resolution on ``ctx.values`` (see module docstring)."""
    v, p = ctx.values, ctx.profile
    algo = v.get("speculative_algorithm")
    if algo is None:
        if p.at_least("0.5.23"):
            _checks_with_or_without_algorithm(ctx, None)
        return
    algo_opt = ctx.option("speculative_algorithm")
    if p.at_least("0.5.16"):
        upper = str(algo).upper()
        if upper != algo:
            ctx.override("algorithm-upper-cased", "speculative_algorithm", upper,
                         "SGLang upper-cases the algorithm name (handle_speculative_decoding)")
        algo = upper
        if algo not in CURRENT_ALGORITHMS:
            ctx.error("unknown-algorithm", algo_opt,
                      f"SGLang raises ValueError: Unknown speculative algorithm name: {v['speculative_algorithm']}. "
                      "Builtins: EAGLE, EAGLE3, NEXTN (= EAGLE), STANDALONE, NGRAM, DFLASH, DSPARK, UNO.",
                      exception="ValueError",
                      fix=ctx.fix(f"use {algo_opt} NEXTN" if algo == "MTP" else f"use {algo_opt} EAGLE3",
                                  ctx.set_edit("speculative_algorithm", "NEXTN" if algo == "MTP" else "EAGLE3")))
            return
    if p.at_least("0.4.3") and algo == "NEXTN":
        ctx.override("nextn-is-eagle", "speculative_algorithm", "EAGLE",
                     "NEXTN is an alias: SGLang runs it with the EAGLE implementation")
        algo = "EAGLE"
    v["speculative_algorithm"] = algo
    # handle_speculative_decoding sets the draft revision to "main" from 0.5.16 (arg_groups/speculative_hook.py);
    # 0.5.5's ServerArgs leaves it None (read in the 0.5.5 wheel)
    if p.at_least("0.5.16") and v.get("speculative_draft_model_path") is not None \
            and "speculative_draft_model_revision" in v and v.get("speculative_draft_model_revision") is None:
        v["speculative_draft_model_revision"] = "main"
    if p.at_least("0.5.23"):
        _checks_with_or_without_algorithm(ctx, algo)
        if ctx.stopped:
            return
    if p.at_least("0.5.16"):
        _current_common(ctx)
        if ctx.stopped:
            return
    family: tuple[str, ...] = ("EAGLE", "EAGLE3", "STANDALONE") if p.at_least("0.5.5") else ("EAGLE", "EAGLE3")
    if not p.at_least("0.4.5"):
        family = ("EAGLE",)
    if algo in family:
        _eagle_family(ctx, algo)
    elif algo == "NGRAM":
        _ngram(ctx)
    elif algo in ("DFLASH", "DSPARK"):
        _block_drafters(ctx, algo)


def _checks_with_or_without_algorithm(ctx: Context, algo: str | None) -> None:
    """Checks ``handle_speculative_decoding`` (``arg_groups/speculative_hook.py``, read in the 0.5.23 wheel) makes
    whether or not an algorithm is set: ``--speculative-use-block-verification`` only with EAGLE / EAGLE3 / NEXTN /
    DFLASH / DSPARK on CUDA or ROCm, and it switches rejection sampling on for EAGLE / EAGLE3;
    ``--speculative-draft-window-size`` must be positive; ``--speculative-draft-sink-size`` must be >= 0 and needs
    the window; ``SGLANG_ENABLE_DP_SPEC_PREFILL_COORDINATION`` needs single-layer EAGLE / EAGLE3 / DSPARK."""
    v = ctx.values
    draft_a2a = v.get("speculative_moe_a2a_backend")
    if draft_a2a is None and algo is not None and algo != "NGRAM":
        draft_a2a = v.get("moe_a2a_backend")
    if draft_a2a == "deepep_v2":
        # validate_deepep_v2_speculative_draft (arg_groups/moe_hook.py, 0.5.23), run before the speculative hook
        opt = ctx.option("speculative_moe_a2a_backend")
        ctx.error("deepep-v2-draft", (opt,),
                  f"SGLang raises ValueError: DeepEP v2 MoE is not validated as a speculative draft backend. Select "
                  f"another {opt}.", exception="ValueError",
                  fix=ctx.fix(f"set {opt} none", ctx.set_edit("speculative_moe_a2a_backend", "none")))
        return
    if v.get("speculative_use_block_verification"):
        opt = ctx.option("speculative_use_block_verification")
        device = v.get("device") or "cuda"  # unset: chosen from the hardware, a CUDA/ROCm GPU on a GPU host
        if algo not in ("EAGLE", "EAGLE3", "DFLASH", "DSPARK"):
            ctx.error("block-verification-algorithm", (opt, ctx.option("speculative_algorithm")),
                      f"SGLang raises ValueError: {opt} only supports EAGLE / EAGLE3 / NEXTN / DFLASH / DSPARK.",
                      exception="ValueError",
                      fix=ctx.fix(f"remove {opt}", Edit("remove", dest="speculative_use_block_verification")))
            return
        if device != "cuda":
            ctx.error("block-verification-device", (opt, ctx.option("device")),
                      f"SGLang raises ValueError: {opt} only supports CUDA or ROCm.", exception="ValueError",
                      fix=ctx.fix(f"remove {opt}", Edit("remove", dest="speculative_use_block_verification")))
            return
        if algo in ("EAGLE", "EAGLE3") and not v.get("speculative_use_rejection_sampling"):
            ctx.override("block-verification-rejection-sampling", "speculative_use_rejection_sampling", True,
                         "block verification needs sampled proposals: SGLang switches rejection sampling on",
                         flags=(ctx.option("speculative_use_rejection_sampling"), opt))
    if not _draft_window_positive(ctx):
        return
    sink = v.get("speculative_draft_sink_size")
    if sink is not None:
        opt = ctx.option("speculative_draft_sink_size")
        if sink < 0:
            ctx.error("draft-sink-negative", opt,
                      f"SGLang raises ValueError: {opt} must be non-negative, got {sink}.", exception="ValueError")
            return
        if v.get("speculative_draft_window_size") is None:
            window_opt = ctx.option("speculative_draft_window_size")
            ctx.error("draft-sink-without-window", (opt, window_opt),
                      f"SGLang raises ValueError: {opt} requires {window_opt}.", exception="ValueError",
                      fix=ctx.fix(f"remove {opt}", Edit("remove", dest="speculative_draft_sink_size")))
            return
    if _env_bool(ctx, "SGLANG_ENABLE_DP_SPEC_PREFILL_COORDINATION", False) and \
            (algo not in ("EAGLE", "EAGLE3", "DSPARK") or v.get("enable_multi_layer_eagle")):
        ctx.error("dp-spec-prefill-coordination", ("SGLANG_ENABLE_DP_SPEC_PREFILL_COORDINATION",),
                  "SGLang raises ValueError: DP spec/prefill coordination requires single-layer EAGLE, EAGLE3 or "
                  f"DSPARK (speculative algorithm here: {algo or 'none'}).", exception="ValueError",
                  fix=ctx.fix("unset SGLANG_ENABLE_DP_SPEC_PREFILL_COORDINATION",
                              Edit("unset_env", option="SGLANG_ENABLE_DP_SPEC_PREFILL_COORDINATION")))


def _rejection_sampling(ctx: Context, algo: str, topk: int) -> None:
    """``--speculative-use-rejection-sampling`` in ``_handle_eagle_family`` (read in the 0.5.23 wheel): EAGLE /
    EAGLE3 / NEXTN only (STANDALONE: NotImplementedError), topk 1 only, and not with non-default accept
    thresholds (ValueError each). With ``--enable-deterministic-inference`` it needs a CUDA-compatible device."""
    v = ctx.values
    if not v.get("speculative_use_rejection_sampling"):
        return
    opt = ctx.option("speculative_use_rejection_sampling")
    remove = ctx.fix(f"remove {opt}", Edit("remove", dest="speculative_use_rejection_sampling"))
    if algo not in ("EAGLE", "EAGLE3"):
        ctx.error("rejection-sampling-algorithm", (opt, ctx.option("speculative_algorithm")),
                  f"SGLang raises NotImplementedError: {opt} is only supported for EAGLE / EAGLE3 / NEXTN, not "
                  f"speculative_algorithm={algo}.", exception="NotImplementedError", fix=remove)
        return
    if topk != 1:
        topk_opt = ctx.option("speculative_eagle_topk")
        ctx.error("rejection-sampling-topk", (opt, topk_opt),
                  f"SGLang raises ValueError: {opt} requires {topk_opt}=1.", exception="ValueError", fix=remove)
        return
    device = v.get("device")
    if v.get("enable_deterministic_inference") and device is not None and not str(device).startswith("cuda"):
        ctx.error("rejection-sampling-deterministic-device", (opt, ctx.option("enable_deterministic_inference")),
                  "SGLang raises ValueError: Deterministic rejection sampling is currently supported only on "
                  "CUDA-compatible devices because draft proposal sampling uses a Triton hash kernel.",
                  exception="ValueError", fix=remove)
        return
    single = v.get("speculative_accept_threshold_single", 1.0)
    acc = v.get("speculative_accept_threshold_acc", 1.0)
    if (single is not None and single != 1.0) or (acc is not None and acc != 1.0):
        ctx.error("rejection-sampling-thresholds",
                  (opt, ctx.option("speculative_accept_threshold_single"),
                   ctx.option("speculative_accept_threshold_acc")),
                  f"SGLang raises ValueError: {opt} is incompatible with --speculative-accept-threshold-single / "
                  "--speculative-accept-threshold-acc; rejection sampling ignores the accept thresholds.",
                  exception="ValueError", fix=remove)


def _draft_window_positive(ctx: Context) -> bool:
    """``--speculative-draft-window-size`` must be positive (``handle_speculative_decoding``, 0.5.16+); False (and
    the error) when it is not."""
    window = ctx.values.get("speculative_draft_window_size")
    if window is not None and int(window) <= 0:
        ctx.error("draft-window-not-positive", ctx.option("speculative_draft_window_size"),
                  f"SGLang raises ValueError: --speculative-draft-window-size must be positive, got {window}.",
                  exception="ValueError")
        return False
    return True


def _current_common(ctx: Context) -> None:
    v = ctx.values
    if not _draft_window_positive(ctx):
        return
    if "SGLANG_ENABLE_SPEC_V2" in ctx.env:
        ctx.add("warning", "spec-v2-env-removed", "SGLANG_ENABLE_SPEC_V2",
                "SGLANG_ENABLE_SPEC_V2 has no effect in this release: speculative decoding always runs the V2 "
                "worker; --disable-overlap-schedule selects the synchronous path.",
                ctx.fix("unset SGLANG_ENABLE_SPEC_V2", Edit("unset_env", option="SGLANG_ENABLE_SPEC_V2")))
    if v.get("speculative_adaptive"):
        _adaptive(ctx)


#: ``DEFAULT_ADAPTIVE_CONFIG`` of ``sglang/srt/speculative/adaptive_spec_params.py`` (0.5.23): the union of its
#: per-batch-size ``candidate_steps`` ([1, 3, 5, 7], [0, 1, 3], [0, 1], [0]), sorted.
ADAPTIVE_DEFAULT_CANDIDATE_STEPS = (0, 1, 3, 5, 7)


def _attention_dp(v: dict) -> bool:
    """Attention data parallelism is on: ``--attn-dp-size`` > 1, or the older spelling ``--enable-dp-attention``
    with ``--dp-size`` > 1 (``handle_deprecated_dp_attention`` in ``arg_groups/parallel_hook.py``, 0.5.23)."""
    return attention_dp_layout(v)[0] > 1


def _no_attention_dp_fix(ctx: Context):
    """The fix that turns attention DP off: ``--attn-dp-size 1`` when it was typed above 1, else remove
    ``--enable-dp-attention``."""
    if (ctx.values.get("attn_dp_size") or 1) > 1:
        return ctx.fix(f"set {ctx.option('attn_dp_size')} 1", ctx.set_edit("attn_dp_size", 1))
    return ctx.fix("remove --enable-dp-attention", Edit("remove", dest="enable_dp_attention"))


def _adaptive(ctx: Context) -> None:
    """``--speculative-adaptive`` (0.5.16+), before the algorithm's own handler: ``_maybe_disable_adaptive`` and
    ``_init_adaptive_speculative_params`` in ``arg_groups/speculative_hook.py`` with ``adaptive_unsupported_reason``
    in ``speculative/adaptive_spec_params.py`` (0.5.23).

    Switched off (WARNING ``speculative_adaptive disabled: <reason>``) for algorithms other than EAGLE/EAGLE3 (NEXTN
    is EAGLE by now), a typed topk other than 1, attention DP, multi-layer EAGLE, two-batch overlap and PD
    multiplexing; the static rules (and their bare AssertionError) apply afterwards. Kept: topk := 1, num_steps :=
    the middle candidate step (3 with the default config), a num_steps outside the candidates is a ValueError, and
    num_draft_tokens := num_steps + 1. With ``--speculative-adaptive-config FILE`` the candidates come from that file,
    which is not read here: the depth is then reported as not known.
    """
    v = ctx.values
    algo = v.get("speculative_algorithm")
    topk = v.get("speculative_eagle_topk")
    reason = None
    if algo not in ("EAGLE", "EAGLE3"):
        reason = f"speculative_algorithm={algo} (only EAGLE/EAGLE3 are supported)"
    elif topk is not None and topk != 1:
        reason = f"speculative_eagle_topk={topk} (only topk=1 is supported)"
    elif _attention_dp(v):
        reason = "attention DP is not supported (adaptive tier decisions are not synchronized across DP ranks)"
    elif v.get("enable_multi_layer_eagle"):
        reason = "enable_multi_layer_eagle=True is not supported (MultiLayerEagleWorkerV2 does not implement adaptive)"
    elif v.get("enable_two_batch_overlap"):
        reason = "enable_two_batch_overlap=True is not supported"
    elif v.get("enable_pdmux"):
        reason = "enable_pdmux=True is not supported"
    flag = ctx.option("speculative_adaptive")
    if reason is not None:
        v["speculative_adaptive"] = False
        ctx.add("warning", "adaptive-disabled", (flag,),
                f"{flag} is switched off by SGLang (log: 'speculative_adaptive disabled: {reason}. Falling back to "
                "static speculative params.'); the static depth rules apply",
                ctx.fix(f"remove {flag}", Edit("remove", dest="speculative_adaptive")),
                field="speculative_adaptive", from_value=True, to_value=False)
        return
    steps_opt = ctx.option("speculative_num_steps")
    if v.get("speculative_adaptive_config"):
        if topk is None:
            ctx.override("adaptive-topk", "speculative_eagle_topk", 1, "adaptive speculative decoding runs a chain")
        ctx.add("info", "adaptive-config-unread", (ctx.option("speculative_adaptive_config"), steps_opt),
                f"the adaptive candidate steps come from {v.get('speculative_adaptive_config')}, which is not read "
                f"here: SGLang starts at the middle candidate (or {steps_opt}, which must be one of them) and "
                "verifies num_steps + 1 tokens")
        ctx.notes["adaptive_depth_unknown"] = True
        return
    candidates = list(ADAPTIVE_DEFAULT_CANDIDATE_STEPS)
    if topk is None:
        ctx.override("adaptive-topk", "speculative_eagle_topk", 1, "adaptive speculative decoding runs a chain")
    steps = v.get("speculative_num_steps")
    if steps is None:
        ctx.override("adaptive-steps", "speculative_num_steps", candidates[len(candidates) // 2],
                     f"adaptive speculative decoding starts at the middle of its candidate steps {candidates}")
        steps = v["speculative_num_steps"]
    elif steps not in candidates:
        near = min(candidates, key=lambda c: (abs(c - steps), -c))
        ctx.error("adaptive-steps-not-candidate", (steps_opt, flag),
                  f"SGLang raises ValueError: {steps_opt}={steps} is not in the adaptive config candidate_steps "
                  f"{candidates}. Pass one of those values.", exception="ValueError",
                  fix=ctx.fix(f"use {steps_opt} {near}", ctx.set_edit("speculative_num_steps", near)))
        return
    ctx.override("adaptive-draft-tokens", "speculative_num_draft_tokens", steps + 1,
                 "adaptive speculative decoding verifies num_steps + 1 tokens",
                 flags=(ctx.option("speculative_num_draft_tokens"), flag))


def _eagle_family(ctx: Context, algo: str) -> None:
    v, p = ctx.values, ctx.profile
    if p.name == "0.4.1":
        why = "SGLang 0.4.0-0.4.2 turns these off for EAGLE (radix cache, chunked prefill, overlap scheduler)"
        ctx.override("eagle-disables-radix-cache", "disable_radix_cache", True, why)
        ctx.override("eagle-disables-chunked-prefill", "chunked_prefill_size", -1, why)
        ctx.override("eagle-disables-overlap", "disable_overlap_schedule", True, why)
        v["disable_cuda_graph_padding"] = True
        return
    if p.name == "0.4.3":
        if v.get("max_running_requests") is None:
            ctx.override("max-running-requests-default", "max_running_requests", 32,
                         "SGLang 0.4.3-0.4.4 caps concurrent requests at 32 for EAGLE",
                         ctx.fix("set --max-running-requests explicitly", ctx.set_edit("max_running_requests", 32)))
        v["disable_cuda_graph_padding"] = True
        ctx.override("eagle-disables-overlap", "disable_overlap_schedule", True,
                     "the overlap scheduler is off for EAGLE")
        return
    # 0.4.5 and later
    if algo == "STANDALONE" and (_attention_dp(v) if p.at_least("0.5.23") else v.get("enable_dp_attention")):
        ctx.error("standalone-dp-attention", (ctx.option("speculative_algorithm"), ctx.option("enable_dp_attention")),
                  "SGLang raises ValueError: Currently standalone speculative decoding does not support dp attention.",
                  exception="ValueError", fix=_no_attention_dp_fix(ctx))
        return
    if v.get("max_running_requests") is None:
        ctx.override("max-running-requests-default", "max_running_requests", 48,
                     "SGLang lowers the request cap to 48 for speculative decoding when --max-running-requests is "
                     "not given" + (" (log: 'Max running requests is reset to 48 for speculative decoding')"
                                    if p.at_least("0.5.5") else " (no log line)"),
                     ctx.fix("set --max-running-requests explicitly (e.g. 48)",
                             ctx.set_edit("max_running_requests", 48)))
    _overlap(ctx, algo)
    if ctx.stopped:
        return
    mixed_off = p.at_least("0.4.7") and (not p.at_least("0.5.20") or algo not in ("EAGLE", "EAGLE3"))
    if mixed_off and v.get("enable_mixed_chunk"):
        ctx.override("mixed-chunk-disabled", "enable_mixed_chunk", False,
                     f"mixed chunked prefill is not supported with {algo} speculative decoding",
                     ctx.fix("remove --enable-mixed-chunk", Edit("remove", dest="enable_mixed_chunk")))
    _mtp_draft(ctx)
    if ctx.stopped:
        return
    steps_opt, topk_opt, draft_opt = (ctx.option("speculative_num_steps"), ctx.option("speculative_eagle_topk"),
                                      ctx.option("speculative_num_draft_tokens"))
    steps, topk, draft = v.get("speculative_num_steps"), v.get("speculative_eagle_topk"), \
        v.get("speculative_num_draft_tokens")
    adaptive = bool(v.get("speculative_adaptive")) and p.at_least("0.5.16")
    if adaptive and steps is None:
        ctx.notes["depth_undecided"] = True
        return
    if steps is None and not adaptive:
        if topk is not None or draft is not None:
            given = [o for o, x in ((topk_opt, topk), (draft_opt, draft)) if x is not None]
            if ctx.notes.get("spec_v2_chain_only") and topk != 1:
                # SGLANG_ENABLE_SPEC_V2 (0.5.5-0.5.10) runs only chains: the fix must not leave topk > 1
                n = max(1, (draft or 4) - 1)
                chain = ctx.fix(f"add {steps_opt} {n} with {topk_opt} 1 {draft_opt} {n + 1} (a chain: "
                                "SGLANG_ENABLE_SPEC_V2 supports only topk 1)",
                                ctx.set_edit("speculative_num_steps", n), ctx.set_edit("speculative_eagle_topk", 1),
                                ctx.set_edit("speculative_num_draft_tokens", n + 1))
            else:
                chain = ctx.fix(f"add {steps_opt} {_suggest_steps(topk, draft)}",
                                ctx.set_edit("speculative_num_steps", _suggest_steps(topk, draft)))
            ctx.error("steps-missing", (steps_opt, *given),
                      f"{' and '.join(given)} given without {steps_opt}: SGLang chooses the three depth values only "
                      "when all three are omitted, and otherwise stops with a bare AssertionError (no message) in "
                      "ServerArgs. Add --speculative-num-steps, or remove the other depth flags.",
                      exception="AssertionError", fix=chain)
            return
        triple = auto_triple(ctx.profile, algo, ctx.arch)
        if triple is None:
            choices = auto_triple_choices(ctx.profile, algo)
            text = "; ".join(f"{k}: {a}/{b}/{c}" for k, (a, b, c) in choices.items())
            ctx.add("info", "auto-depth-unknown-arch", (steps_opt, topk_opt, draft_opt),
                    "no depth flags: SGLang chooses (num_steps, topk, num_draft_tokens) from the target's "
                    f"architecture, which is not known here ({text}). Give the model's config.json to decide.")
            ctx.notes["depth_undecided"] = True
            return
        model_path = str(v.get("model_path") or "")
        if p.name == "0.4.5" and model_path and not model_path.startswith(("/", ".", "~")) \
                and model_path.count("/") == 1:
            ctx.add("warning", "auto-depth-needs-local-config", (ctx.option("model_path"),),
                    f"SGLang {p.releases} chooses the depth values by reading {model_path}/config.json from the "
                    "local disk; if --model-path is a Hugging Face repo id (not a local directory) it raises "
                    f"ValueError: {model_path}/config.json is not found. Give a local path or the three depth flags.",
                    ctx.fix(f"pin the depth: {steps_opt} {triple[0]} {topk_opt} {triple[1]} {draft_opt} {triple[2]}",
                            ctx.set_edit("speculative_num_steps", triple[0]),
                            ctx.set_edit("speculative_eagle_topk", triple[1]),
                            ctx.set_edit("speculative_num_draft_tokens", triple[2])))
        a, b, c = triple
        arch_text = f"for {ctx.arch}" + (f" ({ctx.arch_source})" if ctx.arch_source else "") if ctx.arch else \
            ("for STANDALONE" if algo == "STANDALONE" else "for every architecture in this release")
        v["speculative_num_steps"], v["speculative_eagle_topk"], v["speculative_num_draft_tokens"] = a, b, c
        ctx.add("info", "auto-depth", (steps_opt, topk_opt, draft_opt),
                f"no depth flags: SGLang will choose num_steps/topk/num_draft_tokens = {a}/{b}/{c} {arch_text}",
                ctx.fix(f"pin them: {steps_opt} {a} {topk_opt} {b} {draft_opt} {c}",
                        ctx.set_edit("speculative_num_steps", a), ctx.set_edit("speculative_eagle_topk", b),
                        ctx.set_edit("speculative_num_draft_tokens", c)))
        steps, topk, draft = a, b, c
    if steps is None:  # not reached: chosen above or returned
        return
    if topk is None:
        _topk_missing(ctx, algo)
        return
    # trtllm_mha: only topk 1 (0.5.0+)
    if p.at_least("0.5.0rc0"):
        backends = [v.get("attention_backend"), v.get("decode_attention_backend"), v.get("prefill_attention_backend")]
        if "trtllm_mha" in backends and topk > 1:
            ctx.error("trtllm-mha-topk", (ctx.option("attention_backend"), topk_opt),
                      "SGLang raises ValueError: trtllm_mha backend only supports topk = 1 for speculative decoding.",
                      exception="ValueError",
                      fix=ctx.fix(f"use a chain: {topk_opt} 1 {draft_opt} {steps + 1}",
                                  ctx.set_edit("speculative_eagle_topk", 1),
                                  ctx.set_edit("speculative_num_draft_tokens", steps + 1)))
            return
    if p.at_least("0.5.23"):
        _rejection_sampling(ctx, algo, topk)
        if ctx.stopped:
            return
    page = v.get("page_size")
    page = 1 if page is None else page
    if p.at_least("0.4.5") and not p.at_least("0.4.10") and page > 1 and topk > 1:
        ctx.override("page-size-forces-topk-1", "speculative_eagle_topk", 1,
                     f"SGLang {p.releases} sets topk to 1 when --page-size > 1",
                     ctx.fix("use --page-size 1", ctx.set_edit("page_size", 1)))
        topk = 1
    if p.at_least("0.4.7") and topk == 1 and draft != steps + 1:
        fix = None
        if draft is not None and draft - 1 > 0 and draft != steps + 1:
            fix = ctx.fix(chain_rule.chain_fix(draft, steps_opt), ctx.set_edit("speculative_num_steps", draft - 1))
        why = f"{chain_rule.WHY} (log: '{chain_rule.LOG_LINE}')"
        if draft is not None and draft > steps + 1:
            alternative = chain_rule.tree_alternative(draft, topk_opt, draft_opt)
            why += f". {alternative[0].upper()}{alternative[1:]}"
        ctx.override("draft-tokens-adjusted", "speculative_num_draft_tokens", steps + 1, why, fix,
                     flags=(draft_opt, topk_opt, steps_opt))
        draft = steps + 1
    if p.at_least("0.5.5") and topk > 1 and page > 1:
        allowed: tuple[str, ...]
        if p.at_least("0.5.16"):
            allowed = ("flashinfer", "fa3", "triton")
        elif p.at_least("0.5.8"):
            allowed = ("flashinfer", "fa3")
        else:
            allowed = ("flashinfer",)
        backend = v.get("attention_backend")
        if backend is None:
            ctx.add("warning", "page-size-topk-auto-backend", (ctx.option("page_size"), topk_opt),
                    f"topk {topk} > 1 with --page-size {page} > 1 is accepted only with attention backend "
                    f"{' / '.join(allowed)}; the backend is chosen automatically from the GPU and model here, and "
                    "SGLang raises ValueError if it is another one.",
                    ctx.fix(f"add --attention-backend {allowed[0]}", ctx.set_edit("attention_backend", allowed[0])),
                    hardware_dependent=True)
        elif backend not in allowed:
            if p.at_least("0.5.16"):
                msg = (f"speculative_eagle_topk > 1 with page_size > 1 is only supported on {allowed}; got "
                       f"attention_backend={backend!r}. Use page_size == 1 or one of those backends.")
            else:
                msg = ("speculative_eagle_topk > 1 with page_size > 1 is unstable and produces incorrect results for "
                       "paged attention backends. This combination is only supported for the 'flashinfer' backend.")
            ctx.error("page-size-topk-backend", (ctx.option("page_size"), topk_opt, ctx.option("attention_backend")),
                      f"SGLang raises ValueError: {msg}", exception="ValueError",
                      fix=ctx.fix("use --page-size 1", ctx.set_edit("page_size", 1)))
            return
    if draft is None:
        ctx.error("draft-tokens-missing", draft_opt,
                  f"{steps_opt} and {topk_opt} {topk} are set but {draft_opt} is not: SGLang accepts the arguments "
                  "but the speculative worker has no verify width and fails at start-up.",
                  exception="TypeError", stage="startup",
                  fix=ctx.fix(f"add {draft_opt} {min(steps * topk + 1, 64)}",
                              ctx.set_edit("speculative_num_draft_tokens", min(steps * topk + 1, 64))))


def _suggest_steps(topk, draft) -> int:
    if topk == 1 and draft:
        return max(1, draft - 1)
    return 3 if (topk or 1) == 1 else 5


def _topk_missing(ctx: Context, algo: str) -> None:
    """num_steps given, topk omitted. 0.5.5+: ``speculative_eagle_topk > 1`` compares None (page-size rule) ->
    TypeError in ServerArgs (SGLang PR #22895 reproduces it). 0.4.7-0.5.4: ServerArgs passes, the draft worker
    fails at start-up."""
    p, v = ctx.profile, ctx.values
    steps = v.get("speculative_num_steps")
    if steps is None:  # not reached: the caller checked it
        return
    steps_opt, topk_opt, draft_opt = (ctx.option("speculative_num_steps"), ctx.option("speculative_eagle_topk"),
                                      ctx.option("speculative_num_draft_tokens"))
    given = [steps_opt] + ([draft_opt] if v.get("speculative_num_draft_tokens") is not None else [])
    page = v.get("page_size") or 1
    in_server_args = p.at_least("0.5.5") or (p.at_least("0.4.5") and not p.at_least("0.4.10") and page > 1)
    where = (f"SGLang stops in ServerArgs with TypeError: {_TYPE_ERROR_GT}" if in_server_args else
             "SGLang accepts the arguments but the draft worker fails at start-up with speculative_eagle_topk None")
    fix = ctx.fix(f"add {topk_opt} 1 {draft_opt} {steps + 1} (a chain of {steps})",
                  ctx.set_edit("speculative_eagle_topk", 1), ctx.set_edit("speculative_num_draft_tokens", steps + 1))
    ctx.error("topk-missing", (*given, topk_opt),
              f"{' and '.join(given)} set but {topk_opt} is not. SGLang auto-chooses the depth values only when all "
              f"three are omitted; {where}. Either add {topk_opt} 1 {draft_opt} {steps + 1} (a chain, = steps + 1), "
              f"or drop {steps_opt} and let SGLang choose all three.",
              exception="TypeError", stage="server_args" if in_server_args else "startup", fix=fix)


def _overlap(ctx: Context, algo: str) -> None:
    v, p = ctx.values, ctx.profile
    topk = v.get("speculative_eagle_topk")
    env_set = "SGLANG_ENABLE_SPEC_V2" in ctx.env
    if not p.at_least("0.5.5"):
        ctx.override("spec-disables-overlap", "disable_overlap_schedule", True,
                     "the overlap scheduler is off with EAGLE speculative decoding in this release")
        if env_set:
            ctx.add("warning", "spec-v2-env-unknown", "SGLANG_ENABLE_SPEC_V2",
                    f"SGLANG_ENABLE_SPEC_V2 is not read by SGLang {p.releases}; it has no effect.")
        return
    if not p.at_least("0.5.8"):
        spec_v2 = _env_bool(ctx, "SGLANG_ENABLE_SPEC_V2", False)
        ctx.notes["spec_v2_chain_only"] = spec_v2
        if algo == "EAGLE" and spec_v2:
            ctx.override("spec-v2-overlap-on", "disable_overlap_schedule", False,
                         "SGLANG_ENABLE_SPEC_V2 turns the overlap scheduler on for EAGLE")
        if not spec_v2:
            ctx.override("spec-disables-overlap", "disable_overlap_schedule", True,
                         "the overlap scheduler is off unless SGLANG_ENABLE_SPEC_V2 is set")
        if spec_v2 and topk is not None and topk > 1 and not v.get("disable_overlap_schedule"):
            ctx.error("spec-v2-topk", ("SGLANG_ENABLE_SPEC_V2", ctx.option("speculative_eagle_topk")),
                      f"SGLANG_ENABLE_SPEC_V2=1 (overlap speculative scheduler) requires --speculative-eagle-topk 1; "
                      f"topk = {topk} passes the argument checks in this release but fails at run time with a tensor "
                      "size mismatch in the draft forward (SGLang issues #13352, #14077).",
                      exception="RuntimeError", stage="runtime",
                      fix=ctx.fix("unset SGLANG_ENABLE_SPEC_V2", Edit("unset_env", option="SGLANG_ENABLE_SPEC_V2")))
        return
    if not p.at_least("0.5.11"):
        spec_v2 = _env_bool(ctx, "SGLANG_ENABLE_SPEC_V2", False)
        ctx.notes["spec_v2_chain_only"] = spec_v2
        if spec_v2:
            ctx.override("spec-v2-overlap-on", "disable_overlap_schedule", False,
                         "SGLANG_ENABLE_SPEC_V2 turns the overlap scheduler on")
            if topk is not None and topk > 1:
                ctx.error("spec-v2-topk", ("SGLANG_ENABLE_SPEC_V2", ctx.option("speculative_eagle_topk")),
                          "SGLANG_ENABLE_SPEC_V2=1 requires --speculative-eagle-topk 1: SGLang raises ValueError: "
                          "Spec v2 currently only supports topk = 1 for speculative decoding.",
                          exception="ValueError",
                          fix=ctx.fix("unset SGLANG_ENABLE_SPEC_V2",
                                      Edit("unset_env", option="SGLANG_ENABLE_SPEC_V2")))
        else:
            ctx.override("spec-disables-overlap", "disable_overlap_schedule", True,
                         "the overlap scheduler is off unless SGLANG_ENABLE_SPEC_V2=True is set")
        return
    if not p.at_least("0.5.16"):
        spec_v2 = _env_bool(ctx, "SGLANG_ENABLE_SPEC_V2", True)
        if topk is not None and topk > 1 and not v.get("disable_overlap_schedule"):
            ctx.override("spec-v1-topk", "disable_overlap_schedule", True,
                         "spec v2 (overlap) supports only topk 1, so SGLang falls back to spec v1 without overlap")
        elif not spec_v2 and not v.get("disable_overlap_schedule"):
            ctx.override("spec-v1-env", "disable_overlap_schedule", True,
                         "SGLANG_ENABLE_SPEC_V2=False selects spec v1 without overlap")
        return
    if v.get("device") == "cpu" and not v.get("disable_overlap_schedule"):
        ctx.override("spec-cpu-overlap", "disable_overlap_schedule", True,
                     "Overlap schedule is not implemented for speculative decoding on CPU")


def _mtp_draft(ctx: Context) -> None:
    v, p = ctx.values, ctx.profile
    archs = mtp_architectures(p)
    if not archs or ctx.arch is None:
        return
    if ctx.arch in archs:
        if v.get("speculative_draft_model_path") is None:
            v["speculative_draft_model_path"] = v.get("model_path")
            if "speculative_draft_model_revision" in v:
                v["speculative_draft_model_revision"] = v.get("revision")
            guessed = "" if ctx.arch_source == "config.json" else \
                " (if the target is that architecture: it is guessed from the model name, config.json decides)"
            ctx.add("info", "mtp-draft-from-target", ctx.option("speculative_draft_model_path"),
                    f"{ctx.arch} carries its own MTP/NextN draft layers: SGLang uses the target checkpoint as the "
                    f"draft{guessed}.", field="speculative_draft_model_path")
        elif ctx.arch not in MTP_NO_WARNING:
            ctx.add("warning", "mtp-draft-path-given", ctx.option("speculative_draft_model_path"),
                    f"{ctx.arch} carries its own MTP draft: SGLang logs 'DeepSeek MTP does not require setting "
                    "speculative_draft_model_path.' and still uses the path given.",
                    ctx.fix("remove --speculative-draft-model-path",
                            Edit("remove", dest="speculative_draft_model_path")))
        if p.at_least("0.5.0rc0") and not p.at_least("0.5.5"):
            page = v.get("page_size")
            if page is not None and page != 1 and v.get("attention_backend") == "flashinfer":
                ctx.error("mtp-page-size-flashinfer", (ctx.option("page_size"), ctx.option("attention_backend")),
                          "SGLang raises ValueError: Speculative decoding with page_size != 1 is not supported. "
                          "Please set page_size to 1.", exception="ValueError",
                          fix=ctx.fix("use --page-size 1", ctx.set_edit("page_size", 1)))


def _ngram(ctx: Context) -> None:
    v, p = ctx.values, ctx.profile
    device = v.get("device") or "cuda"
    if p.at_least("0.5.16"):
        if device not in ("cuda", "cpu", "xpu"):
            ctx.error("ngram-device", ctx.option("device"),
                      "SGLang raises ValueError: Ngram speculative decoding only supports CUDA, CPU, or XPU devices.",
                      exception="ValueError")
            return
        if device == "cpu" and not v.get("disable_overlap_schedule"):
            ctx.override("spec-cpu-overlap", "disable_overlap_schedule", True,
                         "Overlap schedule is not implemented for speculative decoding on CPU")
    elif not device.startswith("cuda"):
        ctx.error("ngram-device", ctx.option("device"),
                  "SGLang raises ValueError: Ngram speculative decoding only supports CUDA device.",
                  exception="ValueError")
        return
    if v.get("max_running_requests") is None:
        ctx.override("max-running-requests-default", "max_running_requests", 48,
                     "SGLang lowers the request cap to 48 for speculative decoding when --max-running-requests is "
                     "not given",
                     ctx.fix("set --max-running-requests explicitly", ctx.set_edit("max_running_requests", 48)))
    if not p.at_least("0.5.16"):
        ctx.override("ngram-disables-overlap", "disable_overlap_schedule", True,
                     "the overlap scheduler is off for NGRAM speculative decoding")
    if v.get("enable_mixed_chunk"):
        ctx.override("mixed-chunk-disabled", "enable_mixed_chunk", False,
                     "mixed chunked prefill is not supported with NGRAM speculative decoding")
    v["enable_mixed_chunk"] = False
    breadth = v.get("speculative_ngram_max_bfs_breadth", 10)
    ctx.override("ngram-topk-from-breadth", "speculative_eagle_topk", breadth,
                 "for NGRAM, SGLang takes topk from --speculative-ngram-max-bfs-breadth")
    if v.get("speculative_num_draft_tokens") is None:
        if p.at_least("0.5.10"):
            new = 12
        else:
            new = v.get("speculative_ngram_max_match_window_size", 12)
        ctx.override("ngram-draft-tokens-default", "speculative_num_draft_tokens", new,
                     "NGRAM default verify width")
    if p.at_least("0.5.16") and v.get("speculative_num_steps") is None:
        if breadth == 0:
            breadth_opt = ctx.option("speculative_ngram_max_bfs_breadth")
            ctx.error("ngram-breadth-zero", (breadth_opt,),
                      f"{breadth_opt} 0 makes SGLang divide by zero while it derives num_steps (num_draft_tokens // "
                      "topk in _handle_ngram): the launch stops with ZeroDivisionError: integer division or modulo "
                      "by zero", exception="ZeroDivisionError",
                      fix=ctx.fix(f"use {breadth_opt} 1 or more (default 10)",
                                  ctx.set_edit("speculative_ngram_max_bfs_breadth", 10)))
            return
        v["speculative_num_steps"] = v["speculative_num_draft_tokens"] // breadth
    if p.at_least("0.5.23") and v.get("speculative_ngram_external_corpus_path") is not None:
        _ngram_external_corpus(ctx)
        if ctx.stopped:
            return
    page = v.get("page_size") or 1
    if breadth > 1 and page > 1:
        backend = v.get("attention_backend")
        if backend is None:
            ctx.add("warning", "page-size-topk-auto-backend", ctx.option("page_size"),
                    f"NGRAM uses topk {breadth} (> 1); with --page-size {page} > 1 SGLang accepts only the flashinfer "
                    "attention backend and raises ValueError otherwise; the backend is chosen automatically here.",
                    ctx.fix("add --attention-backend flashinfer", ctx.set_edit("attention_backend", "flashinfer")),
                    hardware_dependent=True)
        elif backend != "flashinfer":
            ctx.error("page-size-topk-backend", (ctx.option("page_size"), ctx.option("attention_backend")),
                      f"SGLang raises ValueError: speculative_eagle_topk({breadth}) > 1 with page_size({page}) > 1 is "
                      "unstable and produces incorrect results for paged attention backends. This combination is "
                      "only supported for the 'flashinfer' backend.", exception="ValueError",
                      fix=ctx.fix("use --page-size 1", ctx.set_edit("page_size", 1)))
            return
    if _attention_dp(v) if p.at_least("0.5.23") else v.get("enable_dp_attention"):
        ctx.error("ngram-dp-attention", ctx.option("enable_dp_attention"),
                  "SGLang raises ValueError: Currently ngram speculative decoding does not support dp attention.",
                  exception="ValueError", fix=_no_attention_dp_fix(ctx))


def _dflash_0523(ctx: Context) -> None:
    """``_handle_dflash`` of ``arg_groups/speculative_hook.py`` as read in the 0.5.23 wheel: device, attention-DP
    and pipeline refusals, num_steps/topk forced to 1, the verify width from ``--speculative-dflash-block-size`` (or
    the draft's config.json, not read here), the draft window, request cap 48; mixed chunked prefill is kept."""
    v = ctx.values
    device = v.get("device") or "cuda"
    if not (device.startswith("cuda") or device in ("npu", "xpu")):
        ctx.error("dflash-device", ctx.option("device"),
                  f"SGLang raises ValueError: DFLASH speculative decoding is not supported by SRTPlatform on device "
                  f"'{device}'.", exception="ValueError")
        return
    if attention_dp_layout(v)[0] > 1 and device != "npu":
        problem = None
        if not device.startswith("cuda"):
            problem = "DFLASH with dp attention requires CUDA or NPU."
        elif not v.get("enable_dp_lm_head"):
            problem = "DFLASH with dp attention requires --enable-dp-lm-head."
        elif (v.get("attn_cp_size") or 1) != 1:
            problem = "DFLASH with dp attention does not support context parallel."
        elif _env_bool(ctx, "SGLANG_ENABLE_DP_SPEC_PREFILL_COORDINATION", False):
            problem = "DFLASH with dp attention requires SGLANG_ENABLE_DP_SPEC_PREFILL_COORDINATION=0."
        if problem:
            fix = (ctx.fix("add --enable-dp-lm-head", ctx.set_edit("enable_dp_lm_head", None))
                   if "lm-head" in problem else None)
            ctx.error("dflash-dp-attention", (ctx.option("speculative_algorithm"), ctx.option("attn_dp_size")),
                      f"SGLang raises ValueError: {problem}", exception="ValueError", fix=fix)
            return
    if (v.get("pp_size") or 1) != 1:
        ctx.error("dflash-pp", ctx.option("pp_size"),
                  "SGLang raises ValueError: Currently DFLASH speculative decoding only supports pp_size == 1.",
                  exception="ValueError", fix=ctx.fix(f"set {ctx.option('pp_size')} 1", ctx.set_edit("pp_size", 1)))
        return
    if v.get("speculative_draft_model_path") is None:
        ctx.error("dflash-draft-missing", ctx.option("speculative_draft_model_path"),
                  "SGLang raises ValueError: DFLASH speculative decoding requires setting "
                  "--speculative-draft-model-path.", exception="ValueError")
        return
    for dest in ("speculative_num_steps", "speculative_eagle_topk"):
        if v.get(dest) not in (None, 1):
            ctx.override("dflash-forces-1", dest, 1, f"DFLASH only supports {dest} == 1")
        v[dest] = 1
    block = v.get("speculative_dflash_block_size")
    draft_opt = ctx.option("speculative_num_draft_tokens")
    if block is not None:
        block_opt = ctx.option("speculative_dflash_block_size")
        if block <= 0:
            ctx.error("dflash-block-size", block_opt, f"SGLang raises ValueError: DFLASH requires {block_opt} to be "
                      f"positive, got {block}.", exception="ValueError")
            return
        draft = v.get("speculative_num_draft_tokens")
        if draft is not None and draft != block:
            ctx.error("dflash-block-size-mismatch", (draft_opt, block_opt),
                      f"SGLang raises ValueError: Both {draft_opt} and {block_opt} are set but they differ. For "
                      f"DFLASH they must match. speculative_num_draft_tokens={draft}, "
                      f"speculative_dflash_block_size={block}.", exception="ValueError",
                      fix=ctx.fix(f"remove {draft_opt}", Edit("remove", dest="speculative_num_draft_tokens")))
            return
        v["speculative_num_draft_tokens"] = block
    if v.get("speculative_num_draft_tokens") is None:
        ctx.add("info", "dflash-block-size-from-draft", draft_opt,
                "DFLASH's verify width (block size) comes from the draft's config.json (16 when it names none), "
                "which is not read here")
    window = v.get("speculative_draft_window_size")
    draft = v.get("speculative_num_draft_tokens")
    if window is not None and draft is not None and window < draft:
        ctx.error("dflash-window-below-block", (ctx.option("speculative_draft_window_size"), draft_opt),
                  "SGLang raises ValueError: --speculative-draft-window-size must be >= --speculative-num-draft-tokens "
                  f"(block_size). window_size={window}, block_size={draft}.", exception="ValueError")
        return
    if v.get("max_running_requests") is None:
        ctx.override("max-running-requests-default", "max_running_requests", 48,
                     "SGLang lowers the request cap to 48 for speculative decoding")


def _ngram_external_corpus(ctx: Context) -> None:
    """``--speculative-ngram-external-corpus-path`` in ``_handle_ngram`` (read in the 0.5.23 wheel): the SAM budget
    (default 0) must be positive and at most num_draft_tokens - 1, and the corpus token cap positive (ValueError
    each)."""
    v = ctx.values
    budget = v.get("speculative_ngram_external_sam_budget") or 0
    cap = v.get("speculative_ngram_external_corpus_max_tokens")
    draft = v.get("speculative_num_draft_tokens")
    budget_opt = ctx.option("speculative_ngram_external_sam_budget")
    path_opt = ctx.option("speculative_ngram_external_corpus_path")
    if budget <= 0:
        ctx.error("ngram-corpus-budget", (budget_opt, path_opt),
                  f"SGLang raises ValueError: {budget_opt} must be positive when {path_opt} is set.",
                  exception="ValueError",
                  fix=ctx.fix(f"set {budget_opt} {max(1, (draft or 2) // 2)}",
                              ctx.set_edit("speculative_ngram_external_sam_budget", max(1, (draft or 2) // 2))))
        return
    if cap is not None and cap <= 0:
        cap_opt = ctx.option("speculative_ngram_external_corpus_max_tokens")
        ctx.error("ngram-corpus-max-tokens", (cap_opt, path_opt),
                  f"SGLang raises ValueError: {cap_opt} must be positive when {path_opt} is set.",
                  exception="ValueError")
        return
    if isinstance(draft, int) and budget > draft - 1:
        ctx.error("ngram-corpus-budget-above-draft", (budget_opt, ctx.option("speculative_num_draft_tokens")),
                  "SGLang raises ValueError: speculative_ngram_external_sam_budget must be less than or equal to "
                  f"speculative_num_draft_tokens - 1 ({draft - 1}).", exception="ValueError",
                  fix=ctx.fix(f"set {budget_opt} {max(1, draft - 1)}",
                              ctx.set_edit("speculative_ngram_external_sam_budget", max(1, draft - 1))))


def _block_drafters(ctx: Context, algo: str) -> None:
    """DFLASH / DSPARK (0.5.16+): num_steps and topk forced to 1, request cap 48, mixed chunk off."""
    v = ctx.values
    if algo == "DFLASH" and ctx.profile.at_least("0.5.23"):
        _dflash_0523(ctx)
        return
    if algo == "DFLASH" and v.get("speculative_draft_model_path") is None:
        ctx.error("dflash-draft-missing", ctx.option("speculative_draft_model_path"),
                  "SGLang raises ValueError: DFLASH speculative decoding requires setting "
                  "--speculative-draft-model-path.", exception="ValueError")
        return
    if v.get("max_running_requests") is None:
        ctx.override("max-running-requests-default", "max_running_requests", 48,
                     "SGLang lowers the request cap to 48 for speculative decoding")
    for dest in ("speculative_num_steps", "speculative_eagle_topk"):
        if v.get(dest) not in (None, 1):
            ctx.override(f"{algo.lower()}-forces-1", dest, 1, f"{algo} only supports {dest} == 1")
        v[dest] = 1
    if v.get("enable_mixed_chunk"):
        ctx.override("mixed-chunk-disabled", "enable_mixed_chunk", False,
                     f"mixed chunked prefill is not supported with {algo}")
