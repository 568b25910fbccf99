"""Warnings and notes that SGLang itself does not raise: legal but harmful settings, placeholders, GPU counts,
missing draft models, memory-hungry trees.

Sources per rule are in each message's docstring comment below: SGLang issues and PRs, and reported launches
(a multimodal target with an EAGLE-3 draft, NEXTN on a model without MTP layers, STANDALONE with two tokenizers,
large trees that run out of CUDA graph memory).
"""

from __future__ import annotations

import re

from specdash.sglang.architectures import mtp_architectures
from specdash.sglang.arguments import Unresolved
from specdash.sglang.diagnostics import Edit
from specdash.sglang.rules.context import Context

_PLACEHOLDER = re.compile(r"^<.*>$|\{[A-Z_a-z]*\}|/path/to/|^path/to/|YOUR[_-]|^\$\{?[A-Z_]+\}?$|^\.\.\.$|^xxx",
                          re.IGNORECASE)
_DEPTH = ("speculative_num_steps", "speculative_eagle_topk", "speculative_num_draft_tokens")


def check(ctx: Context) -> None:
    """Add the advisory diagnostics for ``ctx`` (after the resolution has filled ``ctx.values``)."""
    v = ctx.values
    algo = v.get("speculative_algorithm")
    _placeholders(ctx)
    _visible_devices(ctx)
    if v.get("disable_cuda_graph"):
        msg = ("--disable-cuda-graph: every decode step runs without CUDA graphs" +
               (", so each draft step is launch-bound and speculation loses most of its gain "
                "(compare runs only with the "
                "same CUDA-graph setting)" if algo else "; compare benchmarks only with the same setting"))
        ctx.add("warning", "cuda-graph-off", ctx.option("disable_cuda_graph"), msg,
                ctx.fix("remove --disable-cuda-graph", Edit("remove", dest="disable_cuda_graph")))
    if algo is None:
        given = [ctx.option(d) for d in _DEPTH + ("speculative_draft_model_path",) if ctx.typed(d)]
        if given:
            ctx.add("warning", "spec-flags-without-algorithm", given,
                    f"{', '.join(given)} set but --speculative-algorithm is not: SGLang ignores them and runs "
                    "without speculative decoding.",
                    ctx.fix("add --speculative-algorithm EAGLE3", ctx.set_edit("speculative_algorithm", "EAGLE3")))
        return
    steps, topk, draft = (v.get(d) for d in _DEPTH)
    if ctx.stopped:
        return
    _draft_model(ctx, algo)
    _cuda_graph_batch(ctx, draft)
    if isinstance(steps, int) and isinstance(topk, int) and isinstance(draft, int) and topk > 1 \
            and algo not in ("NGRAM",):
        pool = topk + (steps - 1) * topk * topk
        if draft - 1 > pool:
            ctx.add("warning", "draft-tokens-exceed-pool", ctx.option("speculative_num_draft_tokens"),
                    f"{draft} draft tokens with {steps} steps x topk {topk}: the draft tree has at most {pool} "
                    f"candidates (topk + (steps-1)*topk^2), so at most {pool + 1} can be verified.",
                    ctx.fix(f"set --speculative-num-draft-tokens {min(pool + 1, steps * topk + 1)}",
                            ctx.set_edit("speculative_num_draft_tokens", min(pool + 1, steps * topk + 1))))
        elif draft > steps * topk + 1:
            ctx.add("warning", "draft-tokens-beyond-useful", ctx.option("speculative_num_draft_tokens"),
                    f"{draft} draft tokens > num_steps*topk+1 = {steps * topk + 1}: legal, but SGLang's "
                    "bench_speculative skips such configurations (the extra verified tokens rarely pay off).",
                    ctx.fix(f"set --speculative-num-draft-tokens {steps * topk + 1}",
                            ctx.set_edit("speculative_num_draft_tokens", steps * topk + 1)))
    _memory_and_moe(ctx, algo, steps, topk, draft)
    _flashinfer_mla_topk(ctx, topk)
    if v.get("enable_lora") or v.get("lora_paths"):
        if ctx.profile.at_least("0.5.8") and algo != "NGRAM":
            ctx.error("lora-with-spec", ctx.option("lora_paths"),
                      "SGLang raises ValueError: Currently LoRA is only compatible with NGRAM speculative decoding.",
                      exception="ValueError", stop=False)
    if v.get("attention_backend") == "flex_attention":
        ctx.error("flex-attention-spec", ctx.option("attention_backend"),
                  "SGLang raises AssertionError: Speculative decoding is currently not supported with Flex Attention "
                  "backend", exception="AssertionError", stop=False)
    pre, dec = v.get("prefill_attention_backend"), v.get("decode_attention_backend")
    if pre and dec and pre != dec and not ctx.profile.at_least("0.5.1"):
        ctx.error("hybrid-attention-spec", (ctx.option("prefill_attention_backend"),
                                            ctx.option("decode_attention_backend")),
                  "SGLang raises AssertionError at start-up: Currently HybridAttentionBackend does not support "
                  "speculative decoding.", exception="AssertionError", stage="startup", stop=False)
    if v.get("enable_expert_distribution_metrics") and isinstance(steps, int) and steps >= 2 \
            and algo in ("EAGLE", "EAGLE3"):
        ctx.add("warning", "expert-metrics-draft-graph", ctx.option("enable_expert_distribution_metrics"),
                "--enable-expert-distribution-metrics with EAGLE/MTP and num_steps >= 2 makes the draft CUDA-graph "
                "capture fail (SGLang issue #32105, fix proposed in PR #32106).",
                ctx.fix("remove --enable-expert-distribution-metrics",
                        Edit("remove", dest="enable_expert_distribution_metrics")))
    if not ctx.typed("attention_backend") and ctx.profile.at_least("0.5.5"):
        ctx.add("info", "auto-backend-with-spec", ctx.option("attention_backend"),
                "attention backend and page size are chosen automatically; with speculation SGLang may pick a "
                "different backend/page size than without it (e.g. trtllm_mha -> triton and page_size -> 1 on B200, "
                "SGLang issue #39515). Compare the server_args line of both runs, or pin --attention-backend.")


def _placeholders(ctx: Context) -> None:
    for dest in ("model_path", "speculative_draft_model_path", "tokenizer_path", "speculative_token_map"):
        value = ctx.parsed.typed.get(dest)
        if isinstance(value, str) and not isinstance(value, Unresolved) and _PLACEHOLDER.search(value):
            ctx.error("placeholder-path", ctx.option(dest),
                      f"{ctx.option(dest)} {value} is a placeholder, not a path or model id: SGLang fails to load it.",
                      exception="OSError", stage="startup", stop=False)


def _visible_devices(ctx: Context) -> None:
    raw = ctx.env.get("CUDA_VISIBLE_DEVICES")
    if raw is None or raw.strip() == "":
        return
    count = len([d for d in raw.split(",") if d.strip()])
    v = ctx.values
    tp, pp = int(v.get("tp_size") or 1), int(v.get("pp_size") or 1)
    dp = int(v.get("dp_size") or 1)
    needed = tp * pp * (1 if v.get("enable_dp_attention") else dp)
    if count < needed:
        ctx.error("visible-devices-too-few", ("CUDA_VISIBLE_DEVICES", ctx.option("tp_size")),
                  f"CUDA_VISIBLE_DEVICES lists {count} GPU(s) but tp x pp x dp = {needed}: the launch fails when a "
                  "rank finds no GPU.", exception="RuntimeError", stage="startup", stop=False,
                  fix=ctx.fix(f"set --tp-size {count // max(1, needed // tp) or 1}",
                              ctx.set_edit("tp_size", count // max(1, needed // tp) or 1)))
    elif count > needed:
        ctx.add("warning", "visible-devices-unused", ("CUDA_VISIBLE_DEVICES", ctx.option("tp_size")),
                f"CUDA_VISIBLE_DEVICES lists {count} GPUs but tp x pp x dp = {needed}: {count - needed} stay idle.",
                ctx.fix(f"set --tp-size {count // max(1, pp)}", ctx.set_edit("tp_size", count // max(1, pp))))


def _draft_model(ctx: Context, algo: str) -> None:
    v = ctx.values
    if algo not in ("EAGLE", "EAGLE3", "STANDALONE") or v.get("speculative_draft_model_path") is not None \
            or ctx.typed("speculative_draft_model_path"):
        return
    mtp = mtp_architectures(ctx.profile)
    typed_algo = str(ctx.parsed.typed.get("speculative_algorithm", algo)).upper()
    if ctx.arch is not None and ctx.arch in mtp:
        return
    opt = ctx.option("speculative_draft_model_path")
    if typed_algo == "NEXTN":
        known = f"{ctx.arch} is not in SGLang's list" if ctx.arch else "the target's architecture is not known here"
        ctx.add("warning", "draft-path-maybe-missing", opt,
                "NEXTN without --speculative-draft-model-path works only for targets that ship MTP/NextN layers "
                f"({', '.join(mtp[:4])}, ... or a model-specific hook); {known}.")
        return
    if ctx.arch_source != "config.json":
        # whether the target bundles its own draft layers is a fact of its config.json, not of its name
        known = (f"its architecture was only guessed from the model name ({ctx.arch})" if ctx.arch
                 else "its architecture is not known here")
        ctx.add("warning", "draft-path-maybe-missing", opt,
                f"--speculative-algorithm {typed_algo} without {opt} works only for targets that ship their own "
                f"MTP/NextN layers ({', '.join(mtp[:4])}, ...); {known}, so specdash cannot tell whether this one "
                "does. Without a draft head SGLang crashes at start-up (SGLang issue #36528). Give the model's "
                "config.json (validate --host TARGET reads it) to decide.")
        return
    arch = ctx.arch
    ctx.error("draft-path-missing", opt,
              f"--speculative-algorithm {typed_algo} needs {opt}: {arch} has no bundled draft head. Without it "
              "SGLang uses the target checkpoint as the draft, loads the weights twice and crashes at start-up "
              "(SGLang issue #36528). Only targets with their own MTP/NextN layers may omit it.",
              exception="AttributeError", stage="startup", stop=False)


#: Mixture-of-experts targets by architecture name (a ``Moe`` in the name covers Qwen2/3-MoE, Glm4Moe, BailingMoe...).
_MOE_ARCHITECTURES = ("DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM",
                      "DeepseekV4ForCausalLM", "MixtralForCausalLM", "GptOssForCausalLM",
                      "Llama4ForConditionalGeneration", "Grok1ForCausalLM", "KimiK25ForConditionalGeneration")


def _memory_and_moe(ctx: Context, algo: str, steps, topk, draft) -> None:
    """Two costs of speculation that SGLang does not warn about:

    - a typed ``--mem-fraction-static`` >= 0.95 gives the KV-cache pool almost all GPU memory, while the draft model's
      weights, its own KV cache and the extra CUDA graphs of the draft and verify passes need memory outside it (SGLang
      reserves extra memory for speculation only when it picks the fraction itself): start-up or capture runs out of
      memory on a full GPU;
    - a wide draft tree (topk > 1 with many draft tokens) on a mixture-of-experts target: every verify pass routes
      all draft tokens through the experts, so more experts are read per decode step than with a chain, and the
      memory-bound MoE layers cost more than the accepted tokens save at small batch sizes.
    """
    v = ctx.values
    fraction = v.get("mem_fraction_static")
    if ctx.typed("mem_fraction_static") and isinstance(fraction, (int, float)) and fraction >= 0.95 \
            and algo != "NGRAM":
        ctx.add("warning", "mem-fraction-high-with-draft", ctx.option("mem_fraction_static"),
                f"--mem-fraction-static {fraction} leaves almost no GPU memory outside the KV-cache pool, but the "
                f"{algo} draft (its weights, KV cache and CUDA graphs) lives outside it; SGLang adds its "
                "speculation reserve only when it chooses the fraction. Expect an out-of-memory error at start-up "
                "or CUDA-graph capture on a full GPU.",
                ctx.fix("remove --mem-fraction-static (SGLang then reserves for the draft)",
                        Edit("remove", dest="mem_fraction_static")))
    arch = ctx.arch or ""
    moe = arch in _MOE_ARCHITECTURES or "Moe" in arch
    if moe and isinstance(topk, int) and isinstance(draft, int) and isinstance(steps, int) and topk > 1 \
            and draft >= 8 and algo in ("EAGLE", "EAGLE3", "STANDALONE"):
        source = "" if ctx.arch_source == "config.json" else f" ({arch} {ctx.arch_source or 'assumed'})"
        ctx.add("info", "wide-tree-on-moe", (ctx.option("speculative_eagle_topk"),
                                              ctx.option("speculative_num_draft_tokens")),
                f"a {draft}-token tree (topk {topk}) on a mixture-of-experts target{source}: each verify pass "
                "sends all draft tokens through the experts, reading more of them per step than a chain does; "
                f"benchmark a chain too (topk 1, {steps} steps, {steps + 1} draft tokens) and keep the faster.",
                ctx.fix(f"try a chain: topk 1, {steps + 1} draft tokens",
                        ctx.set_edit("speculative_eagle_topk", 1),
                        ctx.set_edit("speculative_num_draft_tokens", steps + 1)))


def _flashinfer_mla_topk(ctx: Context, topk) -> None:
    """FlashInfer's MLA backend drafts chains only: its multi-step draft backend raises ``ValueError: Currently
    Flashinfer MLA only supports topk=1 for speculative decoding`` when the server starts (``flashinfer_mla_backend.py``
    read in the 0.4.4.post1, 0.4.5 and 0.4.7 wheels). It serves MLA targets (DeepSeek V2/V3) with
    ``--enable-flashinfer-mla`` (0.4.4-0.4.6) or ``--attention-backend flashinfer`` (0.4.7); later releases were not
    read, so the rule stops at 0.4.7."""
    p, v = ctx.profile, ctx.values
    if not (p.at_least("0.4.4") and not p.at_least("0.4.8")) or not isinstance(topk, int) or topk <= 1:
        return
    uses = v.get("enable_flashinfer_mla") or (p.at_least("0.4.7") and v.get("attention_backend") == "flashinfer")
    if not uses:
        return
    from specdash.sglang.rules.backends import MLA_ARCHITECTURES

    flag = ctx.option("enable_flashinfer_mla") if v.get("enable_flashinfer_mla") else ctx.option("attention_backend")
    if ctx.arch in MLA_ARCHITECTURES and ctx.arch_source != "config.json":
        ctx.add("warning", "flashinfer-mla-topk", (flag, ctx.option("speculative_eagle_topk")),
                f"the model name suggests an MLA target ({ctx.arch}): FlashInfer MLA drafts chains only, and with "
                f"topk {topk} the server would stop at start-up with ValueError: Currently Flashinfer MLA only "
                "supports topk=1 for speculative decoding (give the model's config.json to be sure)",
                ctx.fix(f"use topk 1 ({ctx.option('speculative_eagle_topk')} 1)",
                        ctx.set_edit("speculative_eagle_topk", 1)))
    elif ctx.arch in MLA_ARCHITECTURES:
        ctx.error("flashinfer-mla-topk", (flag, ctx.option("speculative_eagle_topk")),
                  f"FlashInfer MLA drafts chains only: with topk {topk} the server stops at start-up with ValueError: "
                  "Currently Flashinfer MLA only supports topk=1 for speculative decoding",
                  exception="ValueError", stage="startup", stop=False,
                  fix=ctx.fix(f"use topk 1 ({ctx.option('speculative_eagle_topk')} 1)",
                              ctx.set_edit("speculative_eagle_topk", 1)))
    elif ctx.arch is None or ctx.arch_source != "config.json":
        ctx.add("info", "flashinfer-mla-topk-unknown", (flag, ctx.option("speculative_eagle_topk")),
                f"if the target is an MLA model (DeepSeek V2/V3), FlashInfer MLA refuses topk {topk} at start-up "
                "(only topk 1); give the model's config.json to decide")


def _cuda_graph_batch(ctx: Context, draft) -> None:
    v = ctx.values
    if v.get("disable_cuda_graph"):
        return
    max_bs = v.get("cuda_graph_max_bs", v.get("cuda_graph_max_bs_decode"))
    if isinstance(max_bs, int) and max_bs <= 4:
        ctx.add("warning", "cuda-graph-max-bs-small", ctx.option("cuda_graph_max_bs"),
                f"--cuda-graph-max-bs {max_bs}: decode batches larger than {max_bs} run without CUDA graphs, where "
                "speculative decoding is much slower than the baseline. Fine for a single-stream test; set it to at "
                "least the highest concurrency you benchmark (watch 'cuda graph: False' on Decode batch lines).",
                ctx.fix("set --cuda-graph-max-bs 32", ctx.set_edit("cuda_graph_max_bs", 32)))
    if isinstance(draft, int) and draft >= 32 and not (isinstance(max_bs, int) and max_bs < 16):
        bs = max_bs if isinstance(max_bs, int) else "the default (160 in early 2025 releases)"
        ctx.add("warning", "large-tree-cuda-graph-memory", ctx.option("speculative_num_draft_tokens"),
                f"{draft} draft tokens per request: CUDA graphs are captured for every batch size up to "
                f"--cuda-graph-max-bs ({bs}) with buffers for {draft} tokens per request, which has run out of "
                "memory (SGLang PR #3430, issue #3395). Lower --cuda-graph-max-bs or use a smaller tree; the "
                "'Capture cuda graph end ... mem usage=' log line shows the cost.",
                ctx.fix("set --cuda-graph-max-bs 16", ctx.set_edit("cuda_graph_max_bs", 16)))


def check_pairing(ctx: Context, model_config: dict | None, draft_config: dict | None) -> None:
    """STANDALONE needs one tokenizer for draft and target (SGLang issue #24051): compare ``vocab_size``."""
    if ctx.values.get("speculative_algorithm") != "STANDALONE" or not model_config or not draft_config:
        return
    tv, dv = model_config.get("vocab_size"), draft_config.get("vocab_size")
    if tv is not None and dv is not None and tv != dv:
        ctx.error("standalone-vocab-mismatch", ctx.option("speculative_draft_model_path"),
                  f"STANDALONE draft and target must share one tokenizer: target vocab_size {tv}, draft vocab_size "
                  f"{dv}. SGLang starts normally and every accepted draft token decodes to a different string "
                  "(silent output corruption).", exception="none (silent corruption)", stage="runtime", stop=False)
