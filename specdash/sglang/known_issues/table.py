"""The known-issues table: what SGLang's own tracker says about speculative decoding, keyed to releases.

Every entry was read from the public thread it links (issue or PR on github.com/sgl-project/sglang). A
``first_fixed`` release is stated only when the thread says so or when the change is present in that release's
PyPI wheel and absent from the one before (a comment above the entry names the file checked); otherwise the entry
says the fix release is not known. Tests: ``tests/test_known_issues_table.py`` feeds each entry the command or
log text of its own thread.
"""

from __future__ import annotations

import re

from specdash.sglang.known_issues.model import AtLeast, CommandPattern, KnownIssue, LogPattern
from specdash.sglang.mla_architectures import MLA_ARCHITECTURES

_I = "https://github.com/sgl-project/sglang/issues/"
_P = "https://github.com/sgl-project/sglang/pull/"

EAGLE_FAMILY = ("EAGLE", "EAGLE3")
#: Overlap (spec v2) is on: the effective values keep the overlap scheduler with a speculative algorithm.
_SPEC_V2 = {"disable_overlap_schedule": False}
_AMD = {"attention_backend": "aiter", "SGLANG_USE_AITER": "1|true", "HIP_VISIBLE_DEVICES": ".+"}
_POSITIVE = r"(?!-)(?!0*(\.0*)?$)[0-9.]+"


def _not_typed(*dests: str):
    return lambda ctx: not any(ctx.typed(d) for d in dests)


def _names_eagle3(path) -> bool:
    """The draft path's last component names EAGLE-3 (``lightseekorg/kimi-k2.5-eagle3``, ``…-EAGLE3-…``)."""
    return isinstance(path, str) and re.search(r"eagle-?3", path.rstrip("/").rsplit("/", 1)[-1], re.I) is not None


def _token_mode_fixed(ctx) -> bool:
    return ctx.env.get("SGLANG_SIMULATE_ACC_TOKEN_MODE", "").strip().lower() != "real-draft-token"


KNOWN_ISSUES: tuple[KnownIssue, ...] = (
    # ---- speculative decoding with DP attention ------------------------------------------------------------
    KnownIssue(
        "spec-v2-dp-attention-accept-length", "dp-attention",
        "accept length drops with DP attention under spec v2 (overlap)",
        "With --enable-dp-attention and EAGLE under SPEC_V2 the average accept length fell from about 2.35 to about "
        "1.48 (TP4 vs TP4+DP4, GB300); the draft-extend step passed a wrong logprob token count to the DP MLP sync",
        (_I + "16274", _P + "16310"),
        "compare accept length with and without --enable-dp-attention; run spec v1 (--disable-overlap-schedule) "
        "or a build with PR #16310",
        CommandPattern(EAGLE_FAMILY, {"enable_dp_attention": True, **_SPEC_V2}),
        # 0.5.8's eagle_worker_v2._draft_extend_for_decode passes num_steps + 1 logprob tokens; 0.5.7's passes 1
        first_fixed="0.5.8", fixed_by="PR #16310 (merged)", status="fixed"),
    KnownIssue(
        "eagle-dp-attention-draft-deadlock", "dp-attention",
        "EAGLE/NextN + DP attention deadlocks on the first real request (DeepSeek-V4-Flash)",
        "With DeepSeek-V4-Flash, EAGLE and --enable-dp-attention (dp 8, tp 8) the server warms up, then the first "
        "request through target-prefill -> draft-extend deadlocks all DP ranks in an NCCL collective until "
        "'Scheduler watchdog timeout'; /health keeps answering",
        (_I + "29144",),
        "the thread's only working change was running without --speculative-algorithm; --speculative-skip-dp-mlp-sync "
        "did not help",
        CommandPattern(EAGLE_FAMILY, {"enable_dp_attention": True}, architectures=("DeepseekV4ForCausalLM",)),
        status="closed as inactive"),
    # ---- prefill/decode disaggregation -------------------------------------------------------------------------
    KnownIssue(
        "mtp-pd-dp-attention", "pd-disaggregation",
        "MTP + PD disaggregation + DP attention (tp != dp) not supported",
        "In the thread MTP with PD ran, but MTP + PD + DP attention (and + DeepEP) failed",
        (_I + "6684", _P + "7420"),
        "run without --enable-dp-attention on the PD nodes, or a build with PR #7420",
        CommandPattern(EAGLE_FAMILY, {"disaggregation_mode": ("prefill", "decode"), "enable_dp_attention": True}),
        fixed_by="PR #7420 (merged)"),
    KnownIssue(
        "pd-decode-spec-prefill-without", "pd-disaggregation",
        "wrong answers when only the decode node runs speculative decoding",
        "A PD-disaggregated MHA model (GLM-4.5-Air FP8 in the PR) with speculative flags on the decode node but not "
        "on the prefill node returned incorrect responses: the KV transfer left a wrong value cache on decode",
        (_P + "17212",),
        "give the prefill node the same --speculative-* flags as the decode node",
        CommandPattern(EAGLE_FAMILY, {"disaggregation_mode": ("decode",)}),
        fixed_by="PR #17212 (merged)", reported_in=("releases after 0.5.2",)),
    KnownIssue(
        "mtp-pd-decode-mamba-radix", "pd-disaggregation",
        "MTP + PD decode node with a hybrid (Mamba) target crashes unless the radix cache is off",
        "On the decode node the mamba validation ran before PD set disable_radix_cache, raising a spurious "
        "ValueError; --mamba-scheduler-strategy extra_buffer avoided it but capped concurrency and crashed under load",
        (_I + "25079", _P + "19746"),
        "pass --disable-radix-cache on the decode node (not --mamba-scheduler-strategy extra_buffer)",
        CommandPattern(EAGLE_FAMILY, {"disaggregation_mode": ("decode",), "disable_radix_cache": False}),
        severity="info", first_fixed="0.5.11", fixed_by="PR #19746", status="fixed"),
    KnownIssue(
        "pd-eagle3-hidden-states-size", "pd-disaggregation",
        "PD + EAGLE3: draft hidden states transferred with the wrong size",
        "With EAGLE3 the prefill node's hidden states hold the 3 captured layers (3x hidden), and the PD buffers "
        "were sized from the target's hidden size: shape mismatches on transfer, and a crash in send_kv_chunk on the "
        "prefill node for Llama-3.3-70B with EAGLE3-LLaMA3.3-Instruct-70B",
        (_I + "10059", _P + "9976", _P + "10547", _P + "13590"),
        "use a build with PR #13590; check the decode node's accept length against a non-PD run",
        CommandPattern(("EAGLE3",), {"disaggregation_mode": ("prefill", "decode")}),
        fixed_by="PR #13590 (merged)"),
    KnownIssue(
        "pd-decode-dp-attention-mtp-hang", "pd-disaggregation",
        "PD decode with DP attention and EAGLE MTP hangs on the first routed request",
        "GLM-5.2 PD (2P2D) with DP attention and EAGLE MTP: the first routed request timed out after 240 s; "
        "bisected to PR #30839, reproduced on v0.5.15.post1 and with the nixl transfer backend too",
        (_P + "32209",),
        "the thread's working setups were builds without PR #30839 (e.g. a 2026-07-14 nightly) or with it reverted",
        CommandPattern(EAGLE_FAMILY, {"disaggregation_mode": ("decode",), "enable_dp_attention": True}),
        severity="info", reported_in=("0.5.15.post1",)),
    # ---- pipeline parallelism -------------------------------------------------------------------------------------
    KnownIssue(
        "pp-qwen2-eagle-draft-pp-proxy", "pipeline",
        "Qwen2 EAGLE draft crashes after pipeline-parallelism support landed",
        "The server crashed with \"Qwen2Model.forward() got an unexpected keyword argument 'pp_proxy_tensors'\"",
        (_P + "6910",),
        "use a build with PR #6910",
        logs=(LogPattern("pp_proxy_tensors", r"unexpected keyword argument 'pp_proxy_tensors'"),),
        # models/qwen2_eagle.py takes pp_proxy_tensors from the 0.4.7 wheel on; 0.4.6.post3-post5 do not
        first_fixed="0.4.7", fixed_by="PR #6910 (merged)", status="fixed"),
    KnownIssue(
        "pp-spec-experimental", "pipeline",
        "pipeline parallelism x speculative decoding is still being designed",
        "SGLang's tracking issue lists the prefill gate PRs to converge, a model-agnostic last-stage draft embedding "
        "(PR #39643) and rejecting EAGLE3/DFLASH aux capture under PP (PR #39644); the decode design is not decided",
        (_I + "39634", _P + "30775"),
        "compare accept length and output against a --pp-size 1 run before relying on it",
        CommandPattern(("EAGLE",), {"pp_size": AtLeast(2)}, env={"SGLANG_ENABLE_PP_SPEC": "1|true|yes|y"}),
        severity="info"),
    # ---- SpecV2 / overlap spec -----------------------------------------------------------------------------------
    KnownIssue(
        "spec-v2-eagle3-crash", "spec-v2",
        "EAGLE3 crashes with spec v2 (SGLANG_ENABLE_SPEC_V2)",
        "With SGLANG_ENABLE_SPEC_V2 an EAGLE3 model crashed: the v2 worker kept return_logprob on the draft batch "
        "and left aux_pruned_states unset on one path",
        (_P + "21589",),
        "run spec v1 (--disable-overlap-schedule, or without SGLANG_ENABLE_SPEC_V2 where it is opt-in) or a "
        "build with PR #21589",
        CommandPattern(("EAGLE3",), _SPEC_V2),
        # eagle_worker_v2.py sets return_logprob = False from the 0.5.11 wheel on; 0.5.4-0.5.10 do not
        first_fixed="0.5.11", fixed_by="PR #21589 (merged)", status="fixed"),
    KnownIssue(
        "spec-v2-vlm-eagle3", "spec-v2",
        "Qwen2.5-VL + EAGLE3 under spec v2: crash, then lower accept length",
        "Under SGLANG_ENABLE_SPEC_V2=1 Qwen2.5-VL with EAGLE3 failed with \"'list' object has no attribute 'to'\"; "
        "with the proposed fix the MMStar accept length was about 2.14 under spec v2 against 3.18 under spec v1",
        (_P + "14063",),
        "run spec v1 (--disable-overlap-schedule) for vision-language targets with EAGLE3",
        CommandPattern(("EAGLE3",), _SPEC_V2, architectures=("Qwen2_5_VLForConditionalGeneration",)),
        severity="info", status="closed"),
    KnownIssue(
        "spec-v2-eagle3-topk-tree-crash", "spec-v2",
        "EAGLE3 under spec v2 with topk > 1 crashes in the draft-extend step",
        "With SGLANG_ENABLE_SPEC_V2=1, EAGLE3 and --speculative-eagle-topk 4 the draft-extend input ids were not "
        "updated: 'RuntimeError: Sizes of tensors must match except in dimension 1. Expected size 6 but got size 8' in "
        "llama_eagle3.py",
        (_I + "13352",),
        "use --speculative-eagle-topk 1 with spec v2, or run spec v1 (--disable-overlap-schedule)",
        CommandPattern(("EAGLE3",), {"speculative_eagle_topk": AtLeast(2), **_SPEC_V2}),
        severity="info", reported_in=("a development build of 2025-11",)),
    KnownIssue(
        "spec-v2-eagle3-logprobs-crash", "spec-v2",
        "spec v2 + EAGLE3 crashes when a request asks for logprobs",
        "With SGLANG_ENABLE_SPEC_V2=1 and EAGLE3, a request with logprobs failed in the logits processor: "
        "\"UnboundLocalError: cannot access local variable 'aux_pruned_states' where it is not associated with a "
        "value\"; the follow-up issue says spec v2's verify never computes logprobs (not an issue under spec v1)",
        (_I + "17349", _I + "19761"),
        "do not request logprobs from a spec v2 server, or run spec v1 (--disable-overlap-schedule)",
        logs=(LogPattern("aux_pruned_states", r"cannot access local variable 'aux_pruned_states'"),)),
    KnownIssue(
        "spec-v2-dsa-hicache-nccl-hang", "spec-v2",
        "spec v2 verify with the DSA backend and HiCache: intermittent NCCL hang or index-out-of-bounds",
        "EAGLE under spec v2 with the DSA attention backend and HiCache (8x H20-3e) hung intermittently in an NCCL "
        "collective during verify, or hit 'IndexKernel.cu:111: index out of bounds' in _apply_cuda_graph_metadata "
        "(dsa_backend.py) first, which then timed out NCCL",
        (_I + "28011",),
        "compare with --disable-overlap-schedule (spec v1) or without --enable-hierarchical-cache",
        CommandPattern(EAGLE_FAMILY, {"enable_hierarchical_cache": True, "attention_backend": ("dsa", "nsa"),
                                      **_SPEC_V2}),
        logs=(LogPattern("_apply_cuda_graph_metadata", r"in _apply_cuda_graph_metadata"),),
        reported_in=("0.5.12.post2.dev908",), status="closed as inactive"),
    KnownIssue(
        "spec-v2-draft-extend-gather-oob", "spec-v2",
        "EAGLE draft-extend index out of bounds (vectorized_gather_kernel) under spec v2 / concurrent requests",
        "EAGLE3 with SGLANG_ENABLE_SPEC_V2=1 (Qwen3-30B-A3B on H20) crashed in _draft_extend_for_decode with "
        "'vectorized gather kernel index out of bounds'; a later report hit the same assert with EAGLE/MTP and a "
        "concurrent constrained tool request, then an NCCL abort",
        (_I + "15638", _I + "37936"),
        "the same assert has other causes; with speculation, compare a run with --disable-overlap-schedule",
        logs=(LogPattern("vectorized gather kernel index out of bounds",
                         r"vectorized gather kernel index out of bounds"),),
        severity="info", status="open (one report closed as inactive)"),
    # ---- adaptive depth --------------------------------------------------------------------------------------------
    KnownIssue(
        "adaptive-mtp-hybrid-gdn", "adaptive-depth",
        "adaptive speculative steps (MTP) break on hybrid GDN (Qwen3.5) targets",
        "With a Qwen3.5 hybrid target, MTP and an adaptive step size, recapturing the target's verify-extend CUDA "
        "graph for another step size raised an error",
        (_I + "23330", _P + "21599"),
        "pin --speculative-num-steps instead of --speculative-adaptive for hybrid (Mamba/GDN) targets",
        CommandPattern(EAGLE_FAMILY, {"speculative_adaptive": True}),
        severity="info", status="closed as inactive"),
    KnownIssue(
        "adaptive-shared-logits-buffer", "adaptive-depth",
        "--speculative-adaptive crashes at start-up: shared logits buffer too small",
        "The shared logits buffer is sized from the active num_draft_tokens while --speculative-adaptive captures "
        "every candidate step: 'AssertionError: shared logits buffer holds 128 rows but caller needs 256'",
        (_I + "30549",),
        "run without --speculative-adaptive (pin --speculative-num-steps), or a release with the fix",
        CommandPattern((), {"speculative_adaptive": True}),
        logs=(LogPattern("shared logits buffer holds", r"shared logits buffer holds \d+ rows but caller needs \d+"),),
        # graph_shared_output.py (the assert) is in the wheels from 0.5.16; ModelRunner.max_decode_logits_rows
        # sizes the buffer from the active draft tokens in 0.5.16-0.5.18 and from every adaptive candidate from 0.5.19
        first_bad="0.5.16", first_fixed="0.5.19", reported_in=("nightly 2026-07-08",), status="fixed"),
    # ---- attention backends --------------------------------------------------------------------------------------
    KnownIssue(
        "hopper-fa3-unresolved-eagle-topk", "attention-backend",
        "default EAGLE depth picks a different attention backend than the same depth typed out (Hopper)",
        "On Hopper the default backend is chosen before the EAGLE depth is filled in: with no depth flags SGLang "
        "picks FA3 and then fills topk > 1, while typing the same values picks FlashInfer",
        (_P + "36564",),
        "pin --attention-backend (and the depth flags) so the runs you compare use the same backend",
        CommandPattern(EAGLE_FAMILY, {"speculative_eagle_topk": AtLeast(2)}, hardware="Hopper (SM90)"),
        when=_not_typed("attention_backend", "speculative_eagle_topk"), severity="info"),
    KnownIssue(
        "eagle3-draft-mla-backend-b200", "attention-backend",
        "non-MLA EAGLE3 draft inherits an MLA-only backend on B200",
        "On B200 SGLang auto-selects trtllm_mla for MLA targets (Kimi K2.5); the Llama-layout EAGLE3 draft "
        "inherits it and fails with 'ValueError: trtllm_mla backend can only be used with MLA models.'",
        (_P + "20298", _I + "23490"),
        "give the draft its own backend: the Kimi K2.6 thread's workaround is --speculative-draft-attention-backend "
        "trtllm_mha",
        CommandPattern(("EAGLE3",), {"attention_backend": (None, "trtllm_mla")}, hardware="Blackwell (SM100)",
                       hardware_evidence={"attention_backend": "trtllm_mla"},
                       architectures=tuple(sorted(MLA_ARCHITECTURES))),
        logs=(LogPattern("trtllm_mla backend can only be used with MLA models",
                         r"trtllm_mla backend can only be used with MLA models"),),
        severity="info", when=_not_typed("speculative_draft_attention_backend")),
    KnownIssue(
        "eagle-npu-xgrammar", "attention-backend",
        "EAGLE/EAGLE3 on Ascend NPU crash with json_schema requests",
        "With EAGLE/EAGLE3 on the ascend backend, requests with json_schema crash the service intermittently after "
        "several consecutive requests, more often with many draft tokens",
        (_I + "20148",),
        "avoid structured-output requests on this deployment, or use fewer draft tokens",
        CommandPattern(EAGLE_FAMILY, {"attention_backend": ("ascend",)})),
    # ---- AMD / ROCm ------------------------------------------------------------------------------------------------
    KnownIssue(
        "rocm-eagle-topk1-full-softmax-draft", "amd-rocm",
        "ROCm EAGLE topk=1 draft runs a full-vocabulary softmax every draft step (before 0.5.21)",
        "On ROCm the topk=1 draft took softmax over the whole vocabulary and then the top entry; PR #35872 replaces it "
        "with a masked Triton split-argmax (the PR measured it against the full-softmax selector on MI355X). The PR "
        "did not use AITER greedy_sample because it returned an out-of-vocabulary index for a 151,666-token "
        "vocabulary; SGLang's all-greedy sampler does use greedy_sample when SGLANG_USE_AITER is set (0.5.20's "
        "sampler.py offers SGLANG_DISABLE_AITER_GREEDY_SAMPLE=1 for rows it gets wrong)",
        (_P + "35872", _P + "25251"),
        "use 0.5.21 or newer for the cheaper draft step; if outputs contain an empty or out-of-range token with "
        "SGLANG_USE_AITER, set SGLANG_DISABLE_AITER_GREEDY_SAMPLE=1",
        CommandPattern(EAGLE_FAMILY, {"speculative_eagle_topk": (1,)}, hardware="AMD ROCm (MI300/MI355)",
                       hardware_evidence=_AMD, evidence_required=True),
        # eagle_worker_v2.py: 0.5.21's draft extend has "elif self.topk == 1 and _is_hip: draft_topk1_argmax_only";
        # 0.5.20's falls through to renorm_draft_probs + fast_topk on ROCm (PyPI wheels compared)
        severity="info", first_fixed="0.5.21", fixed_by="PR #35872 (merged)", status="fixed"),
    KnownIssue(
        "rocm-eagle-dsa-tilelang", "amd-rocm",
        "EAGLE with the DSA tilelang backends crashes on MI355X",
        "EAGLE on MI355X (gfx950) with --dsa-prefill-backend tilelang --dsa-decode-backend tilelang starts, then "
        "crashes on the first request with 'AssertionError: All of them must not be None' in dsa_backend.py",
        (_P + "29876",),
        "use other DSA backends for speculative decoding on MI355X",
        CommandPattern(EAGLE_FAMILY, {"dsa_prefill_backend": ("tilelang",), "dsa_decode_backend": ("tilelang",)},
                       hardware="AMD ROCm (MI355X)", hardware_evidence=_AMD, evidence_required=True),
        logs=(LogPattern("All of them must not be None", r"AssertionError: All of them must not be None"),),
        severity="info", status="closed"),
    KnownIssue(
        "rocm-eagle-high-concurrency-memory-fault", "amd-rocm",
        "EAGLE on MI355X: GPU memory access fault under high concurrency",
        "Kimi-K2 EAGLE3 under a high-concurrency benchmark, and GLM-5.3-MXFP4 TP8 + AITER + FP8 KV + EAGLE after "
        "about 24 minutes of 32 concurrent long-context clients: GPU memory access faults on ranks, scheduler exit -6; "
        "a restart with the same argv served again",
        (_I + "37648", _I + "23784"),
        "cap concurrency (--max-running-requests) for long runs and watch for the fault; no fix is linked",
        CommandPattern(EAGLE_FAMILY, {}, hardware="AMD ROCm (MI355X)", hardware_evidence=_AMD,
                       evidence_required=True)),
    KnownIssue(
        "eagle3-draft-served-as-eagle", "draft-model",
        "the draft's name says EAGLE-3 but the algorithm is EAGLE: accept length stays at exactly 1.00",
        "Under EAGLE no aux hidden states are captured and an EAGLE-3 draft silently skips its fc layer; the only "
        "symptom is 'accept_len: 1.00' (found on MI355X with Kimi-K2.5 and its EAGLE-3 draft)",
        (_P + "21272",),
        "use --speculative-algorithm EAGLE3 for EAGLE-3 drafts (specdash validate checks the pair when both "
        "config.json files are readable)",
        # The draft's name is the only hint the command gives (the pairing check decides from config.json); one
        # decode line at accept len 1.00 is not evidence (a batch can reject every draft), so no log pattern.
        CommandPattern(("EAGLE",), {"speculative_draft_model_path": _names_eagle3}),
        severity="info", status="closed"),
    # ---- environment variables that change benchmark truth ----------------------------------------------------
    KnownIssue(
        "simulate-acc-len-active", "env-benchmark",
        "SGLANG_SIMULATE_ACC_LEN forces the accept length",
        "The benchmark knob commits drafted tokens regardless of the target logits: accept length and throughput "
        "are simulated (unset: 3.17, set to 4: 4.00 in the DFLASH PR) and the generated text is not the model's",
        (_P + "35194", _P + "32595"),
        "unset SGLANG_SIMULATE_ACC_LEN for real measurements and for any accuracy evaluation",
        CommandPattern((), {}, env={"SGLANG_SIMULATE_ACC_LEN": _POSITIVE}), status="by design"),
    KnownIssue(
        "simulate-acc-len-byte-token-stall", "env-benchmark",
        "SGLANG_SIMULATE_ACC_LEN stalls streaming output on byte-fallback tokenizers",
        "Simulated tokens are all id 100; where id 100 is a byte token (Kimi-K2.5, DeepSeek-V4-Pro) it decodes to "
        "U+FFFD, the detokenizer never commits, requests look hung and detokenization becomes O(n^2)",
        (_I + "20154", _I + "34740", _P + "34852"),
        "set SGLANG_SIMULATE_ACC_TOKEN_MODE=real-draft-token where the release supports it",
        CommandPattern((), {}, env={"SGLANG_SIMULATE_ACC_LEN": _POSITIVE}), when=_token_mode_fixed),
    KnownIssue(
        "simulate-acc-len-dflash-ignored", "env-benchmark",
        "SGLANG_SIMULATE_ACC_LEN has no effect with DFLASH",
        "The DFLASH worker never read SGLANG_SIMULATE_ACC_LEN, so a benchmark that sets it measures the real "
        "accept length while labelled simulated",
        (_P + "32595", _P + "31603"),
        "use a build with PR #32595, or compare the 'accept len' log lines with the value you set",
        CommandPattern(("DFLASH",), {}, env={"SGLANG_SIMULATE_ACC_LEN": _POSITIVE}),
        # apply_dflash_simulated_acceptance (dflash_utils.py) is in the wheels from 0.5.17, not in 0.5.16
        first_fixed="0.5.17", fixed_by="PR #32595 (merged)", status="fixed"),
    # ---- multi-node start-up ------------------------------------------------------------------------------------
    KnownIssue(
        "multinode-mtp-cuda-graph-stuck", "multi-node",
        "MTP on two nodes stuck at CUDA graph capture",
        "DeepSeek-R1 with an EAGLE NextN draft, --tp 16 --nnodes 2: start-up stops after 'Capture cuda graph "
        "begin', with the triton backend and with flashinfer MLA",
        (_I + "4417",),
        "the thread reports no fix; compare a start with --disable-cuda-graph to tell a capture hang from slow "
        "capture",
        CommandPattern(EAGLE_FAMILY, {"nnodes": AtLeast(2), "disable_cuda_graph": False}),
        severity="info"),
    # ---- caches under speculative decoding: benchmark truth ---------------------------------------------------
    KnownIssue(
        "eagle-hicache-store-hit-accept-drop", "env-benchmark",
        "EAGLE accept length collapses on HiCache L2/L3 store hits",
        "With HiCache and a storage backend (Mooncake in the thread) a store hit skips prefill, but only the target's "
        "KV is persisted: the draft has no context and accept length fell from 5.94 to 2.87 (steady ~1.4), decode "
        "throughput from ~770 to ~130-320 tok/s",
        (_I + "31600",),
        "benchmark cache-hit and cold runs separately; compare accept length on store hits before relying on it",
        CommandPattern(EAGLE_FAMILY, {"enable_hierarchical_cache": True, "hicache_storage_backend": True}),
        status="closed"),
    KnownIssue(
        "eagle-hicache-mooncake-dsa-accept-decay", "env-benchmark",
        "EAGLE accept length decays over hours with HiCache + Mooncake + DSA (GLM-5.1)",
        "GLM-5.1-FP8 with EAGLE, HiCache over Mooncake RDMA and DSA: accept length fell smoothly from ~3.4 to ~1.9 "
        "over about two hours, with no error",
        (_I + "28771",),
        "watch accept length over a long run (specdash's log pane trends it); restart comparisons from a fresh cache",
        CommandPattern(EAGLE_FAMILY, {"enable_hierarchical_cache": True, "hicache_storage_backend": ("mooncake",)}),
        severity="info", reported_in=("main 2026-06-17",), status="closed as inactive"),
    KnownIssue(
        "eagle-radix-reuse-collapse", "env-benchmark",
        "EAGLE defeats radix prefix reuse for multi-turn traffic (GLM-DSA NVFP4)",
        "On v0.5.16 with GLM-DSA NVFP4, enabling EAGLE dropped deep-prompt cache hits from 97% to 40-53% at any "
        "draft length; TTFT and input throughput matched full re-prefill (input 43,981 -> 12,881-16,811 tok/s)",
        (_I + "32459",),
        "compare cached_tokens (--enable-cache-report) with and without speculation before reading multi-turn "
        "benchmark numbers",
        CommandPattern(EAGLE_FAMILY, {"disable_radix_cache": False, "enable_cache_report": True}),
        severity="info", reported_in=("0.5.16",)),
    KnownIssue(
        "eagle-fp4-kv-cache-copy", "attention-backend",
        "EAGLE with an FP4 KV cache fails in target verify",
        "With --kv-cache-dtype fp4_e2m1 EAGLE's TARGET_VERIFY converted the query to FP4 with .to(): "
        "'\"copy_\" not implemented for 'Float4_e2m1fn_x2''; regular decode does not take that path",
        (_P + "15279",),
        "use an FP8 KV cache with speculative decoding; the proposed fix was not merged",
        CommandPattern(EAGLE_FAMILY, {"kv_cache_dtype": ("fp4_e2m1",)}),
        logs=(LogPattern("Float4_e2m1fn_x2", r"not implemented for 'Float4_e2m1fn_x2'"),),
        status="closed without merge"),
    KnownIssue(
        "eagle3-gpt-oss-draft-graph-replay", "attention-backend",
        "EAGLE3 on gpt-oss-120b: draft CUDA graph replay hits an illegal memory access as the batch shrinks",
        "gpt-oss-120b (sliding-window / hybrid attention) with its EAGLE3 draft crashed deterministically once the "
        "running batch shrank from 32 to about 12; running the draft eager (--disable-cuda-graph) did not crash",
        (_I + "28569",),
        "the thread's only working setting was --disable-cuda-graph (slower: compare runs with the same setting)",
        CommandPattern(("EAGLE3",), {"disable_cuda_graph": False}, architectures=("GptOssForCausalLM",)),
        reported_in=("main 2026-06-17",), status="closed as inactive"),
    KnownIssue(
        "nextn-structured-output-mamba-hybrid", "other",
        "NEXTN + structured output crashes the scheduler on Mamba-hybrid targets (Qwen3.5-397B)",
        "With NEXTN on Qwen3.5-397B-A17B-FP8 (8x B200) a request with response_format json_schema/json_object returned "
        "valid JSON, then every TP scheduler died with a NoneType TypeError in prepare_mamba_track_for_verify",
        (_I + "28407",),
        "avoid structured-output requests with speculation on hybrid targets; without speculation they worked",
        logs=(LogPattern("prepare_mamba_track_for_verify", r"prepare_mamba_track_for_verify"),),
        status="closed as inactive"),
    # ---- other speculative features -----------------------------------------------------------------------------
    KnownIssue(
        "ngram-json-schema-crash", "other",
        "NGRAM speculative decoding crashes on json_schema requests",
        "With --speculative-algorithm NGRAM a request with json_schema crashed the server (xgrammar)",
        (_I + "17576",),
        "avoid structured-output requests with NGRAM, or check a current release before relying on it",
        CommandPattern(("NGRAM",), {}), severity="info", status="closed"),
    KnownIssue(
        "ngram-hicache", "other",
        "NGRAM speculative decoding fails with the hierarchical cache",
        "NGRAM with --enable-hierarchical-cache failed with the same error with --hicache-io-backend direct; a "
        "maintainer suggested the spec-decoding side had been fixed in a newer release",
        (_I + "12477",),
        "run NGRAM without --enable-hierarchical-cache, or a newer release",
        CommandPattern(("NGRAM",), {"enable_hierarchical_cache": True}), severity="info",
        status="closed as inactive"),
    KnownIssue(
        "mtp-deepep-shape-mismatch", "other",
        "MTP with DeepEP: shape mismatch in select_top_k_tokens",
        "DeepSeek with MTP and DeepEP failed in eagle_utils.select_top_k_tokens: the NextN layer ran the decoder "
        "layer's scattered mode, so scores and topk_p had different batch sizes",
        (_P + "7192",),
        "compare with --moe-a2a-backend none (or without --enable-deepep-moe) to confirm; the proposed fix was not "
        "merged",
        CommandPattern(EAGLE_FAMILY, {}),
        when=lambda ctx: bool(ctx.values.get("enable_deepep_moe"))
        or str(ctx.values.get("moe_a2a_backend") or "").lower() == "deepep",
        severity="info", status="closed without merge"),
    KnownIssue(
        "mtp-two-batch-overlap", "other",
        "MTP fails with two-batch overlap",
        "NEXTN/EAGLE with --enable-two-batch-overlap (DeepSeek-V3, DP attention, DeepEP low latency) hit an error "
        "that the PR corrects",
        (_P + "7569",),
        "use a build with PR #7569",
        CommandPattern(EAGLE_FAMILY, {"enable_two_batch_overlap": True}),
        fixed_by="PR #7569 (merged)"),
    # ---- more entries: DP attention, multi-node, PD, structured output, caches, backends, ROCm, XPU ------------------
    KnownIssue(
        "eagle3-dp-attention-idle-batch-crash", "dp-attention",
        "EAGLE-3 + DP attention crashes on an idle batch in the draft extend",
        "With DP attention a rank with no requests runs an idle batch; the draft extend of the multi-layer EAGLE v2 "
        "worker initialised FlashAttention metadata for it and failed with \"max(): Expected reduction dim to be "
        "specified for input.numel() == 0\" after \"can't use cuda graph for draft extend!\"",
        (_P + "33892",),
        "use a build with PR #33892",
        logs=(LogPattern("Expected reduction dim to be specified for input.numel() == 0",
                         r"max\(\): Expected reduction dim to be specified for input\.numel\(\) == 0"),),
        fixed_by="PR #33892 (merged)", status="fixed"),
    KnownIssue(
        "mtp-dp-attention-multinode-crash", "dp-attention",
        "MTP/EAGLE + DP attention across nodes hangs or crashes at start-up or first requests",
        "DeepSeek-R1 on two nodes (tp 16, dp 8 or dp 4) with --enable-dp-attention and EAGLE/NEXTN crashed (R1-0528, "
        "flashinfer) or hung (H20), and failed to initialise on 0.4.4.post1; removing --enable-dp-attention worked",
        (_I + "6891", _I + "6296", _I + "4783"),
        "compare with the same launch without --enable-dp-attention; a maintainer pointed to PR #6081 (MTP with DP "
        "attention) for builds before it",
        CommandPattern(EAGLE_FAMILY, {"enable_dp_attention": True, "nnodes": AtLeast(2)}),
        severity="info", reported_in=("0.4.4.post1",), status="closed as inactive"),
    # ---- prefill/decode disaggregation ----------------------------------------------------------------------------
    KnownIssue(
        "pd-eagle3-mla-draft-cache", "pd-disaggregation",
        "PD + EAGLE-3 with an MLA target writes the draft cache in the wrong format",
        "With EAGLE3 on an MLA target (DeepSeek family) under PD disaggregation the draft KV cache was written in the "
        "MLA layout: accept length fell from 2.8 to 2.1 (steps 3, topk 1, draft tokens 4) and the Mooncake transfer "
        "engine could crash with \"Failed to get segment descriptor for segment\"",
        (_P + "13555",),
        "use a build with PR #13555; compare the decode node's accept length with a non-PD run",
        CommandPattern(("EAGLE3",), {"disaggregation_mode": ("prefill", "decode")},
                       architectures=tuple(sorted(MLA_ARCHITECTURES))),
        fixed_by="PR #13555 (merged)"),
    KnownIssue(
        "spec-v2-pd-structured-output", "pd-disaggregation",
        "structured outputs with speculative decoding on a PD decode node: wrong output (spec v2) or crash (v1)",
        "DeepSeek-V3.1 and MiMo-V2-Flash, 8xH200, 0.5.6.post2 and 0.5.7: json_object/json_schema requests did not "
        "follow the schema with spec v2 under PD, and the PD decode node crashed under production load with spec v1; "
        "a single-node TP8 deployment worked",
        (_I + "16541", _I + "13019"),
        "test structured-output requests against the PD deployment before serving them; route them to a "
        "non-speculative or non-PD deployment",
        CommandPattern(EAGLE_FAMILY, {"disaggregation_mode": ("decode",)}),
        severity="info", reported_in=("0.5.6.post2", "0.5.7"), status="closed as inactive"),
    KnownIssue(
        "dflash-pd-unsupported", "pd-disaggregation",
        "DFLASH under PD disaggregation: spec_info None crash, then watchdog self-kill",
        "The PD protocol does not carry DFLASH draft state: the decode node crashed on spec_info None and the "
        "watchdog killed it; with local workarounds the stack booted but produced no tokens",
        (_I + "36140", _P + "34285"),
        "run PD without speculative decoding on the decode node, or DFLASH without PD; PR #34285 (open) adds "
        "support",
        CommandPattern(("DFLASH",), {"disaggregation_mode": ("prefill", "decode")})),
    KnownIssue(
        "pd-decode-dsa-first-verify-hang", "pd-disaggregation",
        "PD decode with DSA attention and EAGLE hangs on the first verify",
        "All schedulers of a PD decode node with DSA attention hung in cuModuleLoadData on the first EAGLE verify "
        "until the watchdog timeout",
        (_I + "33642",),
        "compare with a decode node without --speculative-algorithm; warm the kernel caches before routing traffic",
        CommandPattern(EAGLE_FAMILY, {"disaggregation_mode": ("decode",), "attention_backend": ("dsa", "nsa")})),
    KnownIssue(
        "pd-prefill-spec-topk-length-mismatch", "pd-disaggregation",
        "speculative flags on a PD prefill node: 'length of new_indices != length of topk_p'",
        "With speculative decoding configured on the prefill side of a PD deployment the log reported \"length of "
        "new_indices: 5 != length of topk_p: 7, this should not happen\" on requests after a cache flush",
        (_I + "14368",),
        "compare the prefill node's speculative flags with the decode node's; report the log lines with the release",
        logs=(LogPattern("length of new_indices", r"length of new_indices: \d+ != length of topk_p: \d+"),),
        severity="info"),
    KnownIssue(
        "pd-prefill-hybrid-spec-verify-scratch", "pd-disaggregation",
        "PD prefill with speculative decoding on a hybrid (GDN/KDA) target allocates verify-only mamba snapshots",
        "A prefill server never runs TARGET_VERIFY, but with speculative decoding on a hybrid linear-attention target "
        "it still allocated num_draft_tokens x the mamba pool (~24 GB per rank for 4 draft tokens and a 256-slot "
        "pool), captured verify graphs and warmed up in verify mode; deep-PP prefill layouts hit OOM at CUDA graph "
        "capture",
        (_P + "34191",),
        "use a build with PR #34191, or lower --mem-fraction-static / the mamba pool on the prefill node",
        CommandPattern(EAGLE_FAMILY, {"disaggregation_mode": ("prefill",)},
                       architectures=("Qwen3NextForCausalLM", "Qwen3_5MoeForConditionalGeneration")),
        fixed_by="PR #34191 (merged)"),
    KnownIssue(
        "pp-prefill-mtp-rejected", "pipeline",
        "PD prefill with pipeline parallelism and MTP (GLM-5.2) refused or broken before PR #39378",
        "PP + speculative decoding was rejected outside NPU; the NextN draft on the last PP stage lacked the target "
        "embedding, the PP ring dropped the DSA dsa_topk_indices seed (eager and CUDA-graph decode could diverge), "
        "and NIXL could not map heterogeneous PP prefill stages; decode-side PP + speculative stays rejected",
        (_P + "39378", _I + "23162"),
        "use a build with PR #39378 for PP on the prefill node only; keep the decode node at --pp-size 1",
        CommandPattern(EAGLE_FAMILY, {"disaggregation_mode": ("prefill",), "pp_size": AtLeast(2)}),
        fixed_by="PR #39378 (merged)"),
    # ---- SpecV2 / overlap and structured output ---------------------------------------------------------------------
    KnownIssue(
        "spec-v2-xgrammar-garbled", "spec-v2",
        "structured output (XGrammar) under spec v2 returns garbled JSON",
        "With SGLANG_ENABLE_SPEC_V2 a json_schema request on 0.5.6 (Qwen 235B and other models) returned text such "
        "as '{\"name\": \"John!! Doe Doe Doe …' instead of schema-valid JSON; XGrammar support for spec v2 is a "
        "tracked high-priority issue",
        (_I + "13019", _I + "11762"),
        "send structured-output requests to a spec v1 deployment (unset SGLANG_ENABLE_SPEC_V2) or check the output "
        "against the schema",
        CommandPattern(EAGLE_FAMILY, {}, env={"SGLANG_ENABLE_SPEC_V2": "1|true|yes|y"}),
        severity="info", reported_in=("0.5.6",)),
    KnownIssue(
        "eagle-grammar-terminated-check", "other",
        "EAGLE + grammar-constrained output crashes on a terminated grammar",
        "With EAGLE and XGrammar the verify step filled the vocab mask of a grammar that had already terminated: "
        "\"RuntimeError: … grammar_matcher.cc:653: Check failed: !terminated_\" and the scheduler died",
        (_I + "15050", _P + "15373"),
        "avoid structured-output requests on the speculative deployment; the proposed fix (skip terminated grammars "
        "in generate_token_bitmask) was closed",
        logs=(LogPattern("Check failed: !terminated_", r"grammar_matcher\.cc:\d+: Check failed: !terminated_"),),
        severity="info", status="closed as inactive"),
    KnownIssue(
        "spec-reasoning-grammar-stop-token", "other",
        "speculative decoding + reasoning parser + grammar: matcher used after the stop token",
        "ReasonerGrammarObject did not implement is_terminated, so with a reasoning parser and speculative decoding "
        "the verify step crashed: \"GrammarMatcher has terminated after accepting the stop token, but is trying to "
        "find the next token mask\"",
        (_P + "14464", _P + "14480"),
        "use a build with PR #14464, or send structured-output requests without the reasoning parser",
        CommandPattern(EAGLE_FAMILY, {"reasoning_parser": True}),
        logs=(LogPattern("GrammarMatcher has terminated after accepting the stop token",
                         r"GrammarMatcher has terminated after accepting the stop token, but is trying to find the "
                         r"next token mask"),),
        fixed_by="PR #14464 (merged)", status="fixed"),
    # ---- hierarchical cache ----------------------------------------------------------------------------------------
    KnownIssue(
        "eagle-hicache-accept-length", "env-benchmark",
        "EAGLE with the hierarchical cache: lower accept length",
        "EAGLE3 on Llama-3.1-8B with --enable-hierarchical-cache measured accept length 2.25 before the fix and 2.39 "
        "with it (bench_sglang_eagle, 10 questions); the EAGLE cache keys were not handled by HiCache",
        (_P + "11215",),
        "use a build with PR #11215; compare accept length with and without --enable-hierarchical-cache",
        CommandPattern(EAGLE_FAMILY, {"enable_hierarchical_cache": True}),
        fixed_by="PR #11215 (merged)"),
    KnownIssue(
        "eagle-hicache-storage-hash", "env-benchmark",
        "EAGLE + HiCache storage backend: cross-instance KV sharing never hits",
        "In EAGLE mode the radix cache keys are bigrams; the storage prefetch hashed single tokens, so the hashes "
        "written (bigram) and queried (token) differ and every pod recomputed the KV cache (Mooncake Store)",
        (_P + "17193",),
        "measure the storage hit rate with speculative decoding on and off; the proposed fix was closed",
        CommandPattern(EAGLE_FAMILY, {"enable_hierarchical_cache": True, "hicache_storage_backend": True}),
        severity="info", status="closed (not merged)"),
    # ---- attention backends' spec limits ----------------------------------------------------------------------------
    KnownIssue(
        "ngram-torch-native-warmup-crash", "attention-backend",
        "NGRAM with the torch_native backend crashes in the start-up warmup",
        "SGLang accepts --speculative-algorithm NGRAM with --attention-backend torch_native, reports 'Application "
        "startup complete', then the warmup fails with \"AttributeError: 'NoneType' object has no attribute "
        "'shape'\" (unset extend_prefix_lens); the backend support matrix marks speculative decoding unsupported "
        "for torch_native",
        (_I + "36352",),
        "use an attention backend that supports speculative decoding (triton, flashinfer, fa3)",
        CommandPattern(("NGRAM",), {"attention_backend": ("torch_native",)})),
    KnownIssue(
        "eagle-triton-num-steps-1", "attention-backend",
        "EAGLE on the triton backend with --speculative-num-steps 1 fails",
        "Launching Qwen-7B with EAGLE on the triton attention backend and speculative-num-steps=1 failed in the "
        "scheduler's run_batch",
        (_I + "3762",),
        "use --speculative-num-steps 2 or more, or another attention backend",
        CommandPattern(EAGLE_FAMILY, {"attention_backend": ("triton",), "speculative_num_steps": (1,)}),
        severity="info", status="closed as inactive"),
    KnownIssue(
        "eagle-flashinfer-torch-compile-topk", "attention-backend",
        "EAGLE topk > 1 with torch.compile on flashinfer crashes after some requests",
        "QwQ-32B with EAGLE (steps 3, topk 2, 8 draft tokens) and --enable-torch-compile crashed after some "
        "successful requests on the default flashinfer backend; triton did not crash, fa3 worked but only with "
        "topk 1",
        (_I + "5491",),
        "use --attention-backend triton, or fa3 with --speculative-eagle-topk 1",
        CommandPattern(EAGLE_FAMILY, {"enable_torch_compile": True, "speculative_eagle_topk": AtLeast(2),
                                      "attention_backend": (None, "flashinfer")}),
        severity="info", status="closed"),
    # ---- multi-node start-up ----------------------------------------------------------------------------------------
    KnownIssue(
        "multinode-nextn-master-graph-memory", "multi-node",
        "NEXTN on two nodes: the master node's CUDA graphs use 10-20 GB more memory",
        "DeepSeek with NEXTN, 2 nodes TP16: with CUDA graphs the node-rank 0 process used more than 10 GB (20 GB "
        "when capturing up to bs 64) more than the worker, leaving little KV cache",
        (_I + "4119",),
        "lower --cuda-graph-max-bs or --mem-fraction-static on the master node and compare the KV cache sizes of "
        "both nodes' logs",
        CommandPattern(EAGLE_FAMILY, {"nnodes": AtLeast(2), "disable_cuda_graph": False}),
        severity="info", status="closed as inactive"),
    KnownIssue(
        "multinode-eagle-cuda-graph-hang", "multi-node",
        "EAGLE on two nodes: both nodes hang (CUDA graph / DeepGEMM)",
        "DeepSeek-V3-0324 TP16 over two H100x8 nodes (LWS) with EAGLE (topk 1, steps 3, 4 draft tokens) on "
        "v0.4.6.post4: several failures around CUDA graph capture and DeepGEMM, including both nodes hanging",
        (_I + "6496",),
        "try --disable-cuda-graph to separate a capture hang from a transport problem; watch both nodes' logs",
        CommandPattern(EAGLE_FAMILY, {"nnodes": AtLeast(2), "disable_cuda_graph": False}),
        severity="info", reported_in=("0.4.6.post4",)),
    # ---- benchmark tooling -------------------------------------------------------------------------------------------
    KnownIssue(
        "bench-speculative-missing-args", "env-benchmark",
        "bench_speculative.py stops with AttributeError: return_routed_experts",
        "The speculative benchmark script built its args without return_routed_experts and plot_throughput, so "
        "async_request_sglang_generate failed: \"'types.SimpleNamespace' object has no attribute "
        "'return_routed_experts'\" — no figures are produced",
        (_P + "17974",),
        "use a build with PR #17974 (or add the two fields to the script's args)",
        logs=(LogPattern("return_routed_experts",
                         r"'types\.SimpleNamespace' object has no attribute 'return_routed_experts'"),),
        fixed_by="PR #17974 (merged)", status="fixed"),
    # ---- draft model loading -----------------------------------------------------------------------------------------
    KnownIssue(
        "eagle3-no-draft-path-target-as-draft", "draft-model",
        "EAGLE3 without --speculative-draft-model-path loads the target as the draft and crashes",
        "With no draft path SGLang fell back to the target checkpoint as the EAGLE-3 draft, loaded the weights twice "
        "and crashed at start-up: Qwen2ForCausalLM has no set_embed, LlamaForCausalLM has no hot_token_id",
        (_I + "36528", _P + "36593"),
        "pass --speculative-draft-model-path with an EAGLE-3 draft (specdash validate reports the missing path when "
        "the target's config.json is readable)",
        logs=(LogPattern("object has no attribute '", r"object has no attribute '(set_embed|hot_token_id)'"),)),
    KnownIssue(
        "qwen3-vl-moe-spec-missing-methods", "draft-model",
        "Qwen3-VL MoE targets cannot start speculative decoding (missing draft hooks)",
        "Qwen3-VL-30B-A3B (MoE) on 0.5.7: EAGLE crashed because Qwen3VLMoeForConditionalGeneration has no "
        "get_embed_and_head(), EAGLE3 because it has no set_eagle3_layers_to_capture()",
        (_I + "17935",),
        "serve the target without speculative decoding, or a release whose Qwen3-VL MoE wrapper implements both",
        CommandPattern(EAGLE_FAMILY, {}, architectures=("Qwen3VLMoeForConditionalGeneration",)),
        # only EAGLE as a condition: without the architecture it would be a note on every EAGLE command
        when=lambda ctx: ctx.arch is not None,
        logs=(LogPattern("object has no attribute '",
                         r"object has no attribute '(get_embed_and_head|set_eagle3_layers_to_capture)'"),),
        reported_in=("0.5.7",)),
    KnownIssue(
        "standalone-merge-batch-crash", "other",
        "STANDALONE speculative decoding crashes in merge_batch after 1000-2000 requests",
        "Benchmarking with thousands of requests, 50 in parallel, the server crashed in get_next_batch_to_run -> "
        "merge_batch -> spec_info.merge_batch (torch.cat of hidden_states): \"RuntimeError: Sizes of tensors …\"",
        (_P + "10090",),
        "restart policy / lower concurrency until the cause is fixed; compare with EAGLE on the same workload",
        logs=(LogPattern("merge_batch(other.spec_info)", r"self\.spec_info\.merge_batch\(other\.spec_info\)"),),
        severity="info", status="reported in the PR thread"),
    # ---- AMD / ROCm --------------------------------------------------------------------------------------------------
    KnownIssue(
        "rocm-eagle-custom-allreduce-deadlock", "amd-rocm",
        "EAGLE on AMD deadlocks in the aiter custom all-reduce at high concurrency",
        "The aiter custom all-reduce kernel (aiter::cross_device_reduce_2stage) deadlocked during the EAGLE "
        "target-verify step at concurrency >= 16 (steps 4, topk 1, 5 tokens) or >= 32 (3, 1, 4) on MI355X: the "
        "server hangs with no recovery. SGLang's GLM-5.1 cookbook requires --disable-custom-all-reduce for EAGLE on "
        "AMD",
        (_P + "29313",),
        "add --disable-custom-all-reduce (falls back to RCCL, negligible cost)",
        CommandPattern(EAGLE_FAMILY, {"disable_custom_all_reduce": False}, hardware="AMD ROCm",
                       hardware_evidence=_AMD, evidence_required=True)),
    KnownIssue(
        "rocm-gfx950-fp8-gemm-accept-drop", "amd-rocm",
        "MI350X/MI355X (gfx950): block-FP8 aiter GEMM corrupts output, MTP accept length about 1.3",
        "On gfx950 block-FP8 linear layers routed to aiter's gemm_a8w8_blockscale_bpreshuffle, which is numerically "
        "wrong there (ROCm 7.2, v0.5.13.post1-rocm720): GLM-5.2-FP8 GSM8K fell to 0.000 and EAGLE/MTP acceptance to "
        "about 1.3 (2.65-3.77 with the fix); MI300X/MI325X (gfx942) are not affected",
        (_P + "28471",),
        "on gfx950 check the base model's accuracy first; the thread's fix sets _use_aiter_bpreshuffle_gfx95 = False",
        CommandPattern(EAGLE_FAMILY, {}, hardware="AMD ROCm", hardware_evidence=_AMD, evidence_required=True),
        severity="info", reported_in=("0.5.13.post1",)),
    KnownIssue(
        "rocm-aiter-legacy-workspace-oom", "amd-rocm",
        "aiter attention on gfx950 without the unified attention path: ~65 GB workspace OOM",
        "Serving MiniMax-M3 (EAGLE3 draft) on MI350X with the aiter backend at --mem-fraction-static 0.85 needed "
        "SGLANG_USE_AITER_UNIFIED_ATTN=1 to avoid a ~65 GB legacy aiter workspace allocation",
        (_P + "36866", _P + "36659"),
        "set SGLANG_USE_AITER_UNIFIED_ATTN=1 (MiniMax-M3 also needs SGLANG_USE_AITER_MOE_GU_ITLV=0)",
        CommandPattern(("EAGLE3",), {"attention_backend": ("aiter",)}, env_absent=("SGLANG_USE_AITER_UNIFIED_ATTN",),
                       hardware="AMD ROCm", hardware_evidence=_AMD, evidence_required=True),
        severity="info"),
    # ---- Intel XPU ---------------------------------------------------------------------------------------------------
    KnownIssue(
        "xpu-eagle-verify-broadcast-hang", "other",
        "EAGLE/NEXTN on Intel XPU with TP 2 hangs at warmup",
        "A verify-decision broadcast moved onto the greedy path (PR #34238) runs raw torch.distributed.broadcast on "
        "XPU: TP=2 intermittently hung on the first decode step after the first verify until the 300 s watchdog",
        (_P + "35195", _P + "35165"),
        "use a build with PR #35195, or --tp-size 1 on XPU",
        CommandPattern(EAGLE_FAMILY, {"device": ("xpu",), "tp_size": AtLeast(2)}),
        fixed_by="PR #35195 (merged)"),
)
