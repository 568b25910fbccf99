"""Every known-issues entry against the text of its own SGLang thread: the thread's command (or log line) fires the
entry, and the same text with a release outside the affected range does not fire it, or says "fixed in X".

Commands and log lines below are taken from the linked threads (quoted flags, models and error lines); where a
thread gives only the flags in prose, the command is those flags on a launch line.
"""

from __future__ import annotations

import dataclasses
import re

import pytest

from specdash.sglang.known_issues import KNOWN_ISSUES, KnownIssueLogScanner
from specdash.sglang.validate import validate_command
from specdash.sglang.versions import parse_version

LAUNCH = "python3 -m sglang.launch_server"
DEPTH = "--speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4"


@dataclasses.dataclass
class Case:
    """``text``: a command (``kind`` command) or a log line (``kind`` log); ``version``: an affected release (None:
    the release is not named); ``severity``: what it fires at; ``config``: the target's config.json;
    ``outside``: (text or None for the same text, version or None) that must not fire, or fire "fixed in";
    ``fixed_in``: the release the outside case reports as fixing it (None: it must not fire at all)."""

    kind: str
    text: str
    version: str | None
    severity: str
    config: dict | None = None
    outside: tuple[str | None, str | None] | None = None
    fixed_in: str | None = None


CASES: dict[str, Case] = {
    # SGLang issue #16274: TP4 + DP4 with --enable-dp-attention and EAGLE under SPEC_V2; SGLang PR #16310's model
    "spec-v2-dp-attention-accept-length": Case(
        "command", f"SGLANG_ENABLE_SPEC_V2=1 {LAUNCH} --model-path nvidia/DeepSeek-R1-0528-NVFP4-v2 --tp-size 4 "
                   f"--dp-size 4 --enable-dp-attention --speculative-algorithm EAGLE {DEPTH}",
        "0.5.7", "warning", outside=(None, "0.5.8"), fixed_in="0.5.8"),
    # SGLang issue #29144: DeepSeek-V4-Flash + EAGLE + --enable-dp-attention (dp 8, tp 8), dsv4 backend
    "eagle-dp-attention-draft-deadlock": Case(
        "command", f"{LAUNCH} --model-path deepseek-ai/DeepSeek-V4-Flash --tp-size 8 --dp-size 8 "
                   f"--enable-dp-attention --attention-backend dsv4 --speculative-algorithm EAGLE {DEPTH}",
        "0.5.23", "warning", config={"architectures": ["DeepseekV4ForCausalLM"]},
        outside=(f"{LAUNCH} --model-path deepseek-ai/DeepSeek-V4-Flash --tp-size 8 --speculative-algorithm EAGLE "
                 f"{DEPTH}", "0.5.23")),
    # SGLang issue #6684 (decode command from the thread) plus DP attention, the combination the thread says fails
    "mtp-pd-dp-attention": Case(
        "command", "python3 -m sglang.launch_server --model-path /data/models/DeepSeek-V3-1B-Test "
                   "--cuda-graph-max-bs 8 "
                   "--port 30000 --tensor-parallel-size 2 --trust-remote-code  --disaggregation-mode decode  "
                   "--disaggregation-ib-device  \"mlx5_1,mlx5_2,mlx5_3,mlx5_4\"  --speculative-algorithm EAGLE  "
                   "--speculative-num-steps 3 --speculative-eagle-topk 2 --speculative-num-draft-tokens 4  "
                   "--host 192.168.0.44  --mem-fraction-static 0.6  --chunked-prefill-size 0 --dp-size 2 "
                   "--enable-dp-attention",
        "0.4.7", "info",
        outside=("python3 -m sglang.launch_server --model-path /data/models/DeepSeek-V3-1B-Test --cuda-graph-max-bs 8 "
                 "--tensor-parallel-size 2 --disaggregation-mode decode --speculative-algorithm EAGLE "
                 "--speculative-num-steps 3 --speculative-eagle-topk 2 --speculative-num-draft-tokens 4", "0.4.7")),
    # SGLang PR #17212's decode command, verbatim; its prefill command (spec flags commented out) must not fire
    "pd-decode-spec-prefill-without": Case(
        "command", "python3 -m sglang.launch_server \\\n    --model-path /dev/shm/GLM-4.5-Air-FP8 \\\n"
                   "    --disaggregation-mode decode \\\n    --tp-size 4 \\\n    --mem-fraction-static 0.8 \\\n"
                   "    --kv-cache-dtype fp8_e4m3 \\\n    --host 0.0.0.0 \\\n    --attention-backend fa3 \\\n"
                   "    --port 30011 \\\n    --speculative-algo EAGLE --speculative-num-steps 2 "
                   "--speculative-eagle-topk 1 --speculative-num-draft-tokens 3\n",
        "0.5.5", "info",
        outside=("python3 -m sglang.launch_server \\\n    --model-path /dev/shm/GLM-4.5-Air-FP8 \\\n"
                 "    --disaggregation-mode prefill \\\n    --tp-size 4 \\\n    --mem-fraction-static 0.8 \\\n"
                 "    --kv-cache-dtype fp8_e4m3 \\\n    --host 0.0.0.0 \\\n    --attention-backend fa3 \\\n"
                 "    --port 30001 \\\n    --chunked-prefill-size 65536 \\\n"
                 "    # --speculative-algo EAGLE --speculative-num-steps 2 --speculative-eagle-topk 1 "
                 "--speculative-num-draft-tokens 3\n", "0.5.5")),
    # SGLang issue #25079: MTP decode node without --disable-radix-cache; "Closing as fixed in v0.5.11"
    "mtp-pd-decode-mamba-radix": Case(
        "command", f"{LAUNCH} --model-path /models/hybrid-mtp --disaggregation-mode decode --tp-size 4 "
                   f"--speculative-algorithm EAGLE {DEPTH}",
        "0.5.10", "info", outside=(None, "0.5.11"), fixed_in="0.5.11"),
    # SGLang PR #32209: GLM-5.2 PD with DP attention and EAGLE MTP, nixl transfer backend, v0.5.15.post1
    "pd-decode-dp-attention-mtp-hang": Case(
        "command", f"{LAUNCH} --model-path zai-org/GLM-5.2-NVFP4 --disaggregation-mode decode "
                   f"--disaggregation-transfer-backend nixl --tp-size 8 --dp-size 8 --enable-dp-attention "
                   f"--speculative-algorithm EAGLE {DEPTH}",
        "0.5.15.post1", "info",
        outside=(f"{LAUNCH} --model-path zai-org/GLM-5.2-NVFP4 --disaggregation-mode decode --tp-size 8 "
                 f"--speculative-algorithm EAGLE {DEPTH}", "0.5.15.post1")),
    # SGLang PR #13590: Llama-3.3-70B-Instruct with yuhuili/EAGLE3-LLaMA3.3-Instruct-70B under PD (prefill node)
    "pd-eagle3-hidden-states-size": Case(
        "command", f"{LAUNCH} --model-path meta-llama/Llama-3.3-70B-Instruct --disaggregation-mode prefill "
                   "--tp-size 4 --speculative-algorithm EAGLE3 --speculative-draft-model-path "
                   f"yuhuili/EAGLE3-LLaMA3.3-Instruct-70B {DEPTH}",
        "0.5.5", "info",
        outside=(f"{LAUNCH} --model-path meta-llama/Llama-3.3-70B-Instruct --tp-size 4 --speculative-algorithm EAGLE3 "
                 f"--speculative-draft-model-path yuhuili/EAGLE3-LLaMA3.3-Instruct-70B {DEPTH}", "0.5.5")),
    # SGLang PR #6910: the crash line it quotes
    "pp-qwen2-eagle-draft-pp-proxy": Case(
        "log", "TypeError: Qwen2Model.forward() got an unexpected keyword argument 'pp_proxy_tensors'",
               "0.4.6.post5", "warning", outside=(None, "0.4.7"), fixed_in="0.4.7"),
    # SGLang PR #30775: the PP x spec path behind SGLANG_ENABLE_PP_SPEC=1 (tracked in SGLang issue #39634)
    "pp-spec-experimental": Case(
        "command", f"SGLANG_ENABLE_PP_SPEC=1 {LAUNCH} --model-path zai-org/GLM-5.2 --pp-size 2 --tp-size 4 "
                   f"--speculative-algorithm EAGLE {DEPTH}",
        "0.5.23", "info",
        outside=(f"{LAUNCH} --model-path zai-org/GLM-5.2 --tp-size 4 --speculative-algorithm EAGLE {DEPTH}",
                 "0.5.23")),
    # SGLang PR #21589: an EAGLE3 model with SGLANG_ENABLE_SPEC_V2 crashed
    "spec-v2-eagle3-crash": Case(
        "command", f"SGLANG_ENABLE_SPEC_V2=1 {LAUNCH} --model-path meta-llama/Llama-3.1-8B-Instruct "
                   f"--speculative-algorithm EAGLE3 --speculative-draft-model-path yuhuili/EAGLE3-LLaMA3.1-Instruct-8B "
                   f"{DEPTH}",
        "0.5.9", "warning", outside=(None, "0.5.11"), fixed_in="0.5.11"),
    # SGLang PR #14063: Qwen2.5-VL-7B-Instruct + EAGLE3 with SGLANG_ENABLE_SPEC_V2=1
    "spec-v2-vlm-eagle3": Case(
        "command", f"SGLANG_ENABLE_SPEC_V2=1 {LAUNCH} --model-path Qwen/Qwen2.5-VL-7B-Instruct "
                   f"--speculative-algorithm EAGLE3 --speculative-draft-model-path Rayzl/qwen2.5-vl-7b-eagle3-sgl "
                   f"{DEPTH}",
        "0.5.9", "info", config={"architectures": ["Qwen2_5_VLForConditionalGeneration"]},
        outside=(f"{LAUNCH} --model-path Qwen/Qwen2.5-VL-7B-Instruct --speculative-algorithm EAGLE3 "
                 f"--speculative-draft-model-path Rayzl/qwen2.5-vl-7b-eagle3-sgl {DEPTH}", "0.5.9")),
    # SGLang issue #13352's reproduction (on 0.5.16 and later SGLang keeps spec v2 on with topk > 1)
    "spec-v2-eagle3-topk-tree-crash": Case(
        "command", "SGLANG_ENABLE_SPEC_V2=1 SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 python -m sglang.launch_server "
                   "--model-path /dataset/model/llama3.1/Llama-3.1-8B-Instruct --host 0.0.0.0 --port 30000 "
                   "--trust-remote-code --speculative-algorithm EAGLE3 --speculative-draft-model-path "
                   "jamesliu1/sglang-EAGLE3-Llama-3.1-Instruct-8B --speculative-num-steps 5 "
                   "--speculative-num-draft-tokens 8 --speculative-eagle-topk 4 --disable-cuda-graph",
        "0.5.23", "info",
        outside=("python -m sglang.launch_server --model-path /dataset/model/llama3.1/Llama-3.1-8B-Instruct "
                 "--speculative-algorithm EAGLE3 --speculative-draft-model-path "
                 "jamesliu1/sglang-EAGLE3-Llama-3.1-Instruct-8B --speculative-num-steps 5 "
                 "--speculative-num-draft-tokens 8 --speculative-eagle-topk 4 --disable-overlap-schedule", "0.5.23")),
    # SGLang issue #17349: the error line it quotes (SGLANG_ENABLE_SPEC_V2=1, gpt-oss-120b + EAGLE3, logprobs)
    "spec-v2-eagle3-logprobs-crash": Case(
        "log", "UnboundLocalError: cannot access local variable 'aux_pruned_states' where it is not associated with a "
               "value", "0.5.9", "warning"),
    # SGLang issue #28011: EAGLE spec v2 + DSA backend + HiCache on 8x H20-3e
    "spec-v2-dsa-hicache-nccl-hang": Case(
        "command", f"SGLANG_ENABLE_SPEC_V2=1 {LAUNCH} --model-path zai-org/GLM-5.1-FP8 --tp-size 8 "
                   f"--attention-backend dsa --enable-hierarchical-cache --speculative-algorithm EAGLE {DEPTH}",
        "0.5.23", "warning",
        outside=(f"{LAUNCH} --model-path zai-org/GLM-5.1-FP8 --tp-size 8 --attention-backend dsa "
                 f"--enable-hierarchical-cache --disable-overlap-schedule --speculative-algorithm EAGLE {DEPTH}",
                 "0.5.23")),
    # SGLang issue #15638: the assert line it quotes
    "spec-v2-draft-extend-gather-oob": Case(
        "log", "/pytorch/aten/src/ATen/native/cuda/IndexKernelUtils.cu:16: vectorized_gather_kernel: block: [64,0,0], "
               "thread: [224,0,0] Assertion `ind >=0 && ind < ind_dim_size && \"vectorized gather kernel index out of "
               "bounds\"` failed.", "0.5.9", "info"),
    # SGLang issue #23330: Qwen3.5 hybrid + MTP + adaptive step size
    "adaptive-mtp-hybrid-gdn": Case(
        "command", f"{LAUNCH} --model-path Qwen/Qwen3.5-397B-A17B-FP8 --tp-size 8 --speculative-algorithm EAGLE "
                   "--speculative-adaptive",
        "0.5.12", "info",
        outside=(f"{LAUNCH} --model-path Qwen/Qwen3.5-397B-A17B-FP8 --tp-size 8 --speculative-algorithm EAGLE {DEPTH}",
                 "0.5.12")),
    # SGLang PR #15279: the error it quotes, and its --kv-cache-dtype fp4_e2m1 launch (SGLANG_ENABLE_SPEC_V2=1)
    "eagle-fp4-kv-cache-copy": Case(
        "command", "SGLANG_ENABLE_SPEC_V2=1 python3 -m sglang.launch_server --model-path /scratch/huggingface/"
                   "dsv31-agent-1003-bt-rl-1026-mtp-2-force-thinkFP4 --trust-remote-code --quantization modelopt_fp4 "
                   "--tp 4 --port 30001 --enable-metrics --kv-cache-dtype fp4_e2m1 --page-size 64 "
                   f"--max-running-requests 32 --chunked-prefill-size 32768 --speculative-algorithm EAGLE {DEPTH}",
        "0.5.9", "warning",
        outside=("SGLANG_ENABLE_SPEC_V2=1 python3 -m sglang.launch_server --model-path /scratch/huggingface/"
                 "dsv31-agent-1003-bt-rl-1026-mtp-2-force-thinkFP4 --trust-remote-code --tp 4 --kv-cache-dtype "
                 "fp8_e4m3 "
                 f"--page-size 64 --speculative-algorithm EAGLE {DEPTH}", "0.5.9")),
    # SGLang issue #28569's launch command, verbatim
    "eagle3-gpt-oss-draft-graph-replay": Case(
        "command", "sglang serve \\\n  --model-path openai/gpt-oss-120b \\\n  --tp 4 \\\n  --speculative-algorithm "
                   "EAGLE3 "
                   "\\\n  --speculative-draft-model-path lmsys/EAGLE3-gpt-oss-120b-bf16 \\\n  "
                   "--speculative-num-steps 3 "
                   "\\\n  --speculative-eagle-topk 1 \\\n  --speculative-num-draft-tokens 4 \\\n"
                   "  --mem-fraction-static 0.85 \\\n  --cuda-graph-bs-decode 1 2 4 8 \\\n"
                   "  --enable-metrics --device cuda --host 127.0.0.1 --port 21000\n",
        "0.5.23", "warning", config={"architectures": ["GptOssForCausalLM"]},
        outside=("sglang serve --model-path openai/gpt-oss-120b --tp 4 --speculative-algorithm EAGLE3 "
                 "--speculative-draft-model-path lmsys/EAGLE3-gpt-oss-120b-bf16 --speculative-num-steps 3 "
                 "--speculative-eagle-topk 1 --speculative-num-draft-tokens 4 --disable-cuda-graph", "0.5.23")),
    # SGLang issue #28407: the traceback frame it names
    "nextn-structured-output-mamba-hybrid": Case(
        "log", '  File "/sgl-workspace/sglang/python/sglang/srt/speculative/eagle_worker_v2.py", line 512, in '
               "prepare_mamba_track_for_verify", "0.5.18", "warning"),
    # SGLang issue #30549: the assertion line it quotes
    "adaptive-shared-logits-buffer": Case(
        "log", "AssertionError: shared logits buffer holds 128 rows but caller needs 256 (vocab_size=154880)",
               "0.5.17", "warning", outside=(None, "0.5.19"), fixed_in="0.5.19"),
    # SGLang PR #36564: EAGLE parameters left at their defaults on Hopper
    "hopper-fa3-unresolved-eagle-topk": Case(
        "command", f"{LAUNCH} --model-path meta-llama/Llama-3.1-8B-Instruct --speculative-algorithm EAGLE "
                   "--speculative-draft-model-path lmsys/sglang-EAGLE-LLaMA3-Instruct-8B",
        "0.5.23", "info",
        outside=(f"{LAUNCH} --model-path meta-llama/Llama-3.1-8B-Instruct --speculative-algorithm EAGLE "
                 "--speculative-draft-model-path lmsys/sglang-EAGLE-LLaMA3-Instruct-8B --attention-backend flashinfer",
                 "0.5.23")),
    # SGLang PR #20298: the error line it quotes
    "eagle3-draft-mla-backend-b200": Case(
        "log", "ValueError: trtllm_mla backend can only be used with MLA models.", "0.5.9", "info"),
    # SGLang issue #20148: its launch command, verbatim up to the port
    "eagle-npu-xgrammar": Case(
        "command", "python3 -m sglang.launch_server \\\n--model-path /model/Qwen3-14B \\\n--trust-remote-code \\\n"
                   "--speculative-algorithm EAGLE3 \\\n--speculative-draft-model-path /model/mx/eagle/qwen3-14b_eagle3 "
                   "\\\n--speculative-num-steps 1 \\\n--speculative-eagle-topk 1 \\\n--speculative-num-draft-tokens 2 "
                   "\\\n--attention-backend ascend \\\n--mem-fraction-static 0.8 \\\n--disable-radix-cache \\\n"
                   "--chunked-prefill-size 32768 \\\n--cuda-graph-bs 32 40 \\\n--max-running-requests 40 \\\n"
                   "--tp-size 1 \\\n--dp-size 1 \\\n--nnodes 1 \\\n--node-rank 0 \\\n--base-gpu-id 0 \\\n"
                   "--host 0.0.0.0\n",
        "0.5.9", "warning",
        outside=(f"{LAUNCH} --model-path /model/Qwen3-14B --speculative-algorithm EAGLE3 "
                 "--speculative-draft-model-path /model/mx/eagle/qwen3-14b_eagle3 --speculative-num-steps 1 "
                 "--speculative-eagle-topk 1 --speculative-num-draft-tokens 2 --attention-backend fa3", "0.5.9")),
    # SGLang PR #35872 (ROCm EAGLE topk=1, fixed in 0.5.21), with the AMD launch of SGLang PR #23146
    "rocm-eagle-topk1-full-softmax-draft": Case(
        "command", "SGLANG_USE_AITER_UNIFIED_ATTN=1 SGLANG_USE_AITER=1 SGLANG_AITER_UNIFIED_VERIFY=1 \\\n"
                   "python3 -m sglang.launch_server \\\n  --model-path /data2/Qwen/Qwen3.5-397B-A17B-FP8 --tp 8 \\\n"
                   "  --attention-backend aiter --trust-remote-code \\\n  --watchdog-timeout 1200 "
                   "--mem-fraction-static 0.9 \\\n  --host 0.0.0.0 --port 9000 --disable-radix-cache \\\n"
                   "  --max-running-requests 128 \\\n  --page-size 16 \\\n  --speculative-algorithm EAGLE "
                   "--speculative-num-steps 3 \\\n  --speculative-eagle-topk 1 --speculative-num-draft-tokens 4\n",
        "0.5.18", "info",
        outside=(f"{LAUNCH} --model-path /data2/Qwen/Qwen3.5-397B-A17B-FP8 --tp-size 8 --attention-backend aiter "
                 "--speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 2 "
                 "--speculative-num-draft-tokens 4", "0.5.18")),
    # SGLang PR #29876: the assertion line it quotes
    "rocm-eagle-dsa-tilelang": Case(
        "log", "AssertionError: All of them must not be None", "0.5.14", "info"),
    # SGLang issue #37648: 8x MI355X, GLM-5.3-MXFP4, TP8, AITER, FP8 KV cache, EAGLE
    "rocm-eagle-high-concurrency-memory-fault": Case(
        "command", f"SGLANG_USE_AITER=1 {LAUNCH} --model-path OneNexus/GLM-5.3-MXFP4 --tp-size 8 --kv-cache-dtype "
                   f"fp8_e4m3 --speculative-algorithm EAGLE {DEPTH}",
        "0.5.18", "warning",
        outside=(f"{LAUNCH} --model-path OneNexus/GLM-5.3-MXFP4 --tp-size 8 --kv-cache-dtype fp8_e4m3 "
                 f"--speculative-algorithm EAGLE {DEPTH}", "0.5.18")),
    # SGLang PR #21272: Kimi-K2.5 with lightseekorg/kimi-k2.5-eagle3 served as EAGLE (accept_len 1.00); as EAGLE3 it
    # is fine
    "eagle3-draft-served-as-eagle": Case(
        "command", f"{LAUNCH} --model-path moonshotai/Kimi-K2.5 --tp-size 8 --speculative-algorithm EAGLE "
                   f"--speculative-draft-model-path lightseekorg/kimi-k2.5-eagle3 {DEPTH}",
        "0.5.9", "info",
        outside=(f"{LAUNCH} --model-path moonshotai/Kimi-K2.5 --tp-size 8 --speculative-algorithm EAGLE3 "
                 f"--speculative-draft-model-path lightseekorg/kimi-k2.5-eagle3 {DEPTH}", "0.5.9")),
    # SGLang issue #20154's reproduction
    "simulate-acc-len-active": Case(
        "command", "SGLANG_SIMULATE_ACC_LEN=3 python -m sglang.launch_server \\\n    --model moonshotai/Kimi-K2.5 "
                   "\\\n    --speculative-algorithm EAGLE \\\n    --speculative-draft-model-path "
                   "lightseekorg/kimi-k2.5-eagle3\n",
        "0.5.9", "warning",
        outside=("SGLANG_SIMULATE_ACC_LEN=-1 python -m sglang.launch_server --model moonshotai/Kimi-K2.5 "
                 "--speculative-algorithm EAGLE --speculative-draft-model-path "
                 "lightseekorg/kimi-k2.5-eagle3", "0.5.9")),
    "simulate-acc-len-byte-token-stall": Case(
        "command", "SGLANG_SIMULATE_ACC_LEN=3 python -m sglang.launch_server \\\n    --model moonshotai/Kimi-K2.5 "
                   "\\\n    --speculative-algorithm EAGLE \\\n    --speculative-draft-model-path "
                   "lightseekorg/kimi-k2.5-eagle3\n",
        "0.5.9", "warning",
        outside=("SGLANG_SIMULATE_ACC_LEN=3 SGLANG_SIMULATE_ACC_TOKEN_MODE=real-draft-token python -m "
                 "sglang.launch_server --model moonshotai/Kimi-K2.5 --speculative-algorithm EAGLE "
                 "--speculative-draft-model-path lightseekorg/kimi-k2.5-eagle3", "0.5.9")),
    # SGLang PR #32595: Llama-3.1-8B-Instruct + z-lab/LLaMA3.1-8B-Instruct-DFlash-UltraChat with SGLANG_SIMULATE_ACC_LEN
    "simulate-acc-len-dflash-ignored": Case(
        "command", f"SGLANG_SIMULATE_ACC_LEN=4 {LAUNCH} --model-path meta-llama/Llama-3.1-8B-Instruct "
                   "--speculative-algorithm DFLASH --speculative-draft-model-path "
                   "z-lab/LLaMA3.1-8B-Instruct-DFlash-UltraChat",
        "0.5.16", "warning", outside=(None, "0.5.17"), fixed_in="0.5.17"),
    # SGLang issue #4417's launch command, verbatim
    "multinode-mtp-cuda-graph-stuck": Case(
        "command", "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-R1 --tp 16 --dist-init-addr "
                   "172.16.1.68:5000 --nnodes 2 --node-rank 0 --trust-remote-code --host 0.0.0.0  "
                   "--enable-cache-report --enable-metrics --watchdog-timeout=3000 \\\n       "
                   "--speculative-algorithm EAGLE --speculative-draft-model-path lmsys/DeepSeek-R1-NextN "
                   "--speculative-num-steps 1 --speculative-eagle-topk 1 --speculative-num-draft-tokens 2 \\\n       "
                   "--reasoning-parser deepseek-r1 \\\n",
        "0.4.3", "info",
        outside=("python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-R1 --tp 16 --nnodes 2 "
                 "--node-rank 0 --disable-cuda-graph --speculative-algorithm EAGLE --speculative-draft-model-path "
                 "lmsys/DeepSeek-R1-NextN --speculative-num-steps 1 --speculative-eagle-topk 1 "
                 "--speculative-num-draft-tokens 2", "0.4.3")),
    # SGLang issue #31600: EAGLE with HiCache L2 and a Mooncake L3 store
    "eagle-hicache-store-hit-accept-drop": Case(
        "command", f"{LAUNCH} --model-path /models/glm-5.2-w4afp8 --tp-size 8 --speculative-algorithm EAGLE {DEPTH} "
                   "--enable-hierarchical-cache --hicache-storage-backend mooncake",
        "0.5.15.post1", "warning",
        outside=(f"{LAUNCH} --model-path /models/glm-5.2-w4afp8 --tp-size 8 --speculative-algorithm EAGLE {DEPTH} "
                 "--enable-hierarchical-cache", "0.5.15.post1")),
    # SGLang issue #28771: GLM-5.1-FP8, EAGLE + HiCache (Mooncake RDMA) + DSA, TP 4
    "eagle-hicache-mooncake-dsa-accept-decay": Case(
        "command", "CUDA_VISIBLE_DEVICES=0,1,2,3 python3 -m sglang.launch_server \\\n  --model-path "
                   "/modules/GLM-5.1-FP8 "
                   "\\\n  --host 0.0.0.0 --port 30000 \\\n  --trust-remote-code \\\n  --tp-size 4 \\\n"
                   f"  --speculative-algorithm EAGLE {DEPTH} --enable-hierarchical-cache "
                   "--hicache-storage-backend mooncake\n",
        "0.5.13", "info",
        outside=(f"{LAUNCH} --model-path /modules/GLM-5.1-FP8 --tp-size 4 --speculative-algorithm EAGLE {DEPTH} "
                 "--enable-hierarchical-cache --hicache-storage-backend file", "0.5.13")),
    # SGLang issue #32459: v0.5.16, TP8 + EAGLE steps=3/draft=4, cache report on
    "eagle-radix-reuse-collapse": Case(
        "command", f"{LAUNCH} --model-path /models/GLM-DSA-NVFP4 --tp-size 8 --speculative-algorithm EAGLE {DEPTH} "
                   "--enable-cache-report",
        "0.5.16", "info",
        outside=(f"{LAUNCH} --model-path /models/GLM-DSA-NVFP4 --tp-size 8 --speculative-algorithm EAGLE {DEPTH} "
                 "--enable-cache-report --disable-radix-cache", "0.5.16")),
    # SGLang issue #17576's launch command (the thread glues two flags together; separated here)
    "ngram-json-schema-crash": Case(
        "command", "CUDA_VISIBLE_DEVICES=0,1 SGLANG_FLASHINFER_WORKSPACE_SIZE=536870912 "
                   "SGLANG_USE_CUDA_IPC_TRANSPORT=1 "
                   "python3 -m sglang.launch_server --model /upfs/xiaoyuan/weights/Qwen2.5-VL-72B-Instruct/ --tp 2 "
                   "--dp 1 --port 9090 --host 127.0.0.1 --ep 1 --attention-backend flashinfer "
                   "--mem-fraction-static 0.6 --max-running-requests 32 --disable-radix-cache --chat-template qwen2-vl "
                   "--keep-mm-feature-on-device --speculative-algorithm NGRAM",
        "0.5.8", "info",
        outside=("python3 -m sglang.launch_server --model /upfs/xiaoyuan/weights/Qwen2.5-VL-72B-Instruct/ --tp 2 "
                 "--speculative-algorithm EAGLE --speculative-draft-model-path d " + DEPTH, "0.5.8")),
    # SGLang issue #12477: NGRAM with the hierarchical cache, also with --hicache-io-backend direct
    "ngram-hicache": Case(
        "command", f"{LAUNCH} --model-path Qwen/Qwen3-8B --speculative-algorithm NGRAM --enable-hierarchical-cache "
                   "--hicache-io-backend direct",
        "0.5.5", "info",
        outside=(f"{LAUNCH} --model-path Qwen/Qwen3-8B --speculative-algorithm NGRAM", "0.5.5")),
    # SGLang PR #7192: DeepSeek MTP with DeepEP
    "mtp-deepep-shape-mismatch": Case(
        "command", f"{LAUNCH} --model-path deepseek-ai/DeepSeek-V3 --tp-size 8 --enable-dp-attention --dp-size 8 "
                   f"--moe-a2a-backend deepep --speculative-algorithm EAGLE {DEPTH}",
        "0.5.5", "info",
        outside=(f"{LAUNCH} --model-path deepseek-ai/DeepSeek-V3 --tp-size 8 --speculative-algorithm EAGLE {DEPTH}",
                 "0.5.5")),
    # SGLang PR #7569's launch command, verbatim
    "mtp-two-batch-overlap": Case(
        "command", "SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK=256 SGLANG_TBO_DEBUG=1 python3 -m "
                   "sglang.launch_server     --model-path /dev/shm/DeepSeek-V3-0324     --trust-remote-code     "
                   "--tp 8     --attention-backend fa3     --mem-fraction-static 0.7     --chunked-prefill-size "
                   "512     "
                   "--max-running-requests 32     --cuda-graph-max-bs 32     --enable-dp-attention     --dp-size 8     "
                   "--enable-dp-lm-head     --enable-deepep-moe     --deepep-mode low_latency     "
                   "--speculative-algo NEXTN     --speculative-num-steps 3     --speculative-eagle-topk 1     "
                   "--speculative-num-draft-tokens 4 --moe-dense-tp-size 1 --enable-two-batch-overlap "
                   "--decode-log-interval 1",
        "0.4.8", "info"),
    # SGLang PR #33892's log: the idle-batch draft extend under DP attention
    "eagle3-dp-attention-idle-batch-crash": Case(
        "log", "RuntimeError: max(): Expected reduction dim to be specified for input.numel() == 0.", None, "info",
        outside=("[DP0 TP0 EP0] can't use cuda graph for draft extend! may have correctness issue!", None)),
    # SGLang issue #6891's launch command, verbatim (node rank 0 of 2)
    "mtp-dp-attention-multinode-crash": Case(
        "command", "NCCL_NET_GDR_LEVEL=0 python3 -m sglang.launch_server --model-path "
                   "/scratch/alephalpha/DeepSeek-R1-0528 "
                   " --host 0.0.0.0  --port 40000 --trust-remote-code --dist-init-addr 10.1.32.3:20000 --nnodes 2 "
                   "--node-rank 0 --dp-size 8 --tp-size 16 --enable-dp-attention  --mem-fraction-static 0.8 "
                   "--max-running-requests 8 --attention-backend flashinfer --speculative-algorithm EAGLE "
                   "--speculative-num-steps 1 --speculative-eagle-topk 1 --speculative-num-draft-tokens 2",
        "0.4.7", "info", config={"architectures": ["DeepseekV3ForCausalLM"]},
        outside=("python3 -m sglang.launch_server --model-path /scratch/alephalpha/DeepSeek-R1-0528 "
                 "--trust-remote-code "
                 "--dist-init-addr 10.1.32.3:20000 --nnodes 2 --node-rank 0 --tp-size 16 --attention-backend "
                 "flashinfer --speculative-algorithm EAGLE --speculative-num-steps 1 --speculative-eagle-topk 1 "
                 "--speculative-num-draft-tokens 2", "0.4.7")),
    # SGLang PR #13555: EAGLE3 (steps 3, topk 1, 4 tokens) with an MLA target under PD; without PD it is not it
    "pd-eagle3-mla-draft-cache": Case(
        "command", f"{LAUNCH} --model-path deepseek-ai/DeepSeek-V3 --tp-size 8 --disaggregation-mode decode "
                   "--speculative-algorithm EAGLE3 --speculative-draft-model-path /models/dsv3-eagle3 "
                   f"{DEPTH}",
        "0.5.5", "info", config={"architectures": ["DeepseekV3ForCausalLM"]},
        outside=(f"{LAUNCH} --model-path deepseek-ai/DeepSeek-V3 --tp-size 8 --speculative-algorithm EAGLE3 "
                 f"--speculative-draft-model-path /models/dsv3-eagle3 {DEPTH}", "0.5.5")),
    # SGLang issue #16541: DeepSeek-V3.1 PD decode node with MTP, 0.5.7 (the thread's flags on a launch line)
    "spec-v2-pd-structured-output": Case(
        "command", f"SGLANG_ENABLE_SPEC_V2=1 {LAUNCH} --model-path deepseek-ai/DeepSeek-V3.1 --tp-size 8 "
                   f"--disaggregation-mode decode --speculative-algorithm EAGLE {DEPTH}",
        "0.5.7", "info",
        outside=(f"SGLANG_ENABLE_SPEC_V2=1 {LAUNCH} --model-path deepseek-ai/DeepSeek-V3.1 --tp-size 8 "
                 f"--speculative-algorithm EAGLE {DEPTH}", "0.5.7")),
    # SGLang issue #36140: DFLASH on a PD decode node
    "dflash-pd-unsupported": Case(
        "command", f"{LAUNCH} --model-path Qwen/Qwen3-8B --disaggregation-mode decode --speculative-algorithm DFLASH "
                   "--speculative-draft-model-path z-lab/Qwen3-8B-DFlash-b16",
        "0.5.23", "warning",
        outside=(f"{LAUNCH} --model-path Qwen/Qwen3-8B --speculative-algorithm DFLASH "
                 "--speculative-draft-model-path z-lab/Qwen3-8B-DFlash-b16", "0.5.23")),
    # SGLang issue #33642: EAGLE on a PD decode node with DSA attention
    "pd-decode-dsa-first-verify-hang": Case(
        "command", f"SGLANG_ENABLE_SPEC_V2=1 {LAUNCH} --model-path deepseek-ai/DeepSeek-V3.2 --tp-size 8 "
                   f"--disaggregation-mode decode --attention-backend nsa --speculative-algorithm EAGLE {DEPTH}",
        "0.5.18", "warning",
        outside=(f"SGLANG_ENABLE_SPEC_V2=1 {LAUNCH} --model-path deepseek-ai/DeepSeek-V3.2 --tp-size 8 "
                 f"--disaggregation-mode prefill --attention-backend nsa --speculative-algorithm EAGLE {DEPTH}",
                 "0.5.18")),
    # SGLang issue #13019 (comment on v0.5.6): spec v2 with EAGLE; the same launch without SGLANG_ENABLE_SPEC_V2 is
    # not it
    "spec-v2-xgrammar-garbled": Case(
        "command", f"SGLANG_ENABLE_SPEC_V2=1 {LAUNCH} --model-path Qwen/Qwen3-235B-A22B --tp-size 8 --port 7080 "
                   f"--speculative-algorithm EAGLE3 --speculative-draft-model-path /models/qwen3-235b-eagle3 {DEPTH}",
        "0.5.6", "info",
        outside=(f"{LAUNCH} --model-path Qwen/Qwen3-235B-A22B --tp-size 8 --port 7080 --speculative-algorithm EAGLE3 "
                 f"--speculative-draft-model-path /models/qwen3-235b-eagle3 {DEPTH}", "0.5.6")),
    # SGLang PR #15373 / issue #15050: the error line they quote
    "eagle-grammar-terminated-check": Case(
        "log", "RuntimeError: [09:59:19] /project/cpp/grammar_matcher.cc:653: Check failed: !terminated_", None,
        "info", outside=("RuntimeError: [09:59:19] /project/cpp/grammar_matcher.cc:653: Check failed: mask", None)),
    # SGLang PR #14464's error line
    "spec-reasoning-grammar-stop-token": Case(
        "log", "RuntimeError: [23:42:39] /project/cpp/grammar_matcher.cc:556: Check failed: (!IsStopTokenAccepted()) "
               "is false: GrammarMatcher has terminated after accepting the stop token, but is trying to find the "
               "next token mask", "0.5.6", "info"),
    # SGLang PR #11215's launch command, verbatim
    "eagle-hicache-accept-length": Case(
        "command", "python3 -m sglang.launch_server --model meta-llama/Llama-3.1-8B-Instruct --speculative-algo EAGLE3 "
                   "    --speculative-draft-model-path lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B      "
                   "--speculative-num-steps 2 --speculative-eagle-topk 1 --speculative-num-draft-tokens 3     "
                   "--dtype float16 --page-size 1 --enable-hierarchical-cache --hicache-ratio 1.2",
        "0.5.3", "info",
        outside=("python3 -m sglang.launch_server --model meta-llama/Llama-3.1-8B-Instruct --speculative-algo EAGLE3 "
                 "--speculative-draft-model-path lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B --speculative-num-steps 2 "
                 "--speculative-eagle-topk 1 --speculative-num-draft-tokens 3 --dtype float16 --page-size 1",
                 "0.5.3")),
    # SGLang PR #17193: EAGLE + HiCache with the Mooncake Store backend
    "eagle-hicache-storage-hash": Case(
        "command", f"{LAUNCH} --model-path Qwen/Qwen3-8B --speculative-algorithm EAGLE3 --speculative-draft-model-path "
                   f"/models/qwen3-eagle3 {DEPTH} --enable-hierarchical-cache --hicache-storage-backend mooncake",
        "0.5.8", "info",
        outside=(f"{LAUNCH} --model-path Qwen/Qwen3-8B --speculative-algorithm EAGLE3 --speculative-draft-model-path "
                 f"/models/qwen3-eagle3 {DEPTH} --enable-hierarchical-cache", "0.5.8")),
    # SGLang issue #36352: NGRAM with --attention-backend torch_native
    "ngram-torch-native-warmup-crash": Case(
        "command", f"{LAUNCH} --model-path Qwen/Qwen2.5-0.5B-Instruct --speculative-algorithm NGRAM "
                   "--attention-backend torch_native",
        "0.5.23", "warning",
        outside=(f"{LAUNCH} --model-path Qwen/Qwen2.5-0.5B-Instruct --speculative-algorithm NGRAM "
                 "--attention-backend triton", "0.5.23")),
    # SGLang issue #3762: Qwen-7B, EAGLE on triton with speculative-num-steps=1
    "eagle-triton-num-steps-1": Case(
        "command", f"{LAUNCH} --model-path Qwen/Qwen2-7B-Instruct --speculative-algorithm EAGLE "
                   "--speculative-draft-model-path yuhuili/EAGLE-Qwen2-7B-Instruct --speculative-num-steps 1 "
                   "--speculative-eagle-topk 1 --speculative-num-draft-tokens 2 --attention-backend triton",
        "0.4.3.post4", "info",
        outside=(f"{LAUNCH} --model-path Qwen/Qwen2-7B-Instruct --speculative-algorithm EAGLE "
                 "--speculative-draft-model-path yuhuili/EAGLE-Qwen2-7B-Instruct --speculative-num-steps 2 "
                 "--speculative-eagle-topk 1 --speculative-num-draft-tokens 3 --attention-backend triton",
                 "0.4.3.post4")),
    # SGLang issue #5491's second launch command (no --attention-backend), verbatim
    "eagle-flashinfer-torch-compile-topk": Case(
        "command", "python -m sglang.launch_server --model /mnt/data/open_source/QwQ-32B/Qwen__QwQ-32B/ "
                   "--served-model-name Qwen-32B --speculative-algorithm EAGLE --speculative-draft-model-path "
                   "/mnt/train/eagle/EAGLE-1/ckpt_2/state_1/ --speculative-num-steps 3 --speculative-eagle-topk 2 "
                   "--speculative-num-draft-tokens 8 --cuda-graph-max-bs 8 --port 9123 --tensor-parallel-size 2 "
                   "--mem-fraction-static 0.8 --enable-torch-compile --max-running-requests 100",
        "0.4.5", "info",
        outside=("python -m sglang.launch_server --model /mnt/data/open_source/QwQ-32B/Qwen__QwQ-32B/ "
                 "--served-model-name Qwen-32B --speculative-algorithm EAGLE --speculative-draft-model-path "
                 "/mnt/train/eagle/EAGLE-1/ckpt_2/state_1/ --speculative-num-steps 3 --speculative-eagle-topk 2 "
                 "--speculative-num-draft-tokens 8 --cuda-graph-max-bs 8 --port 9123 --tensor-parallel-size 2 "
                 "--mem-fraction-static 0.8 --enable-torch-compile --max-running-requests 100 --attention-backend "
                 "triton", "0.4.5")),
    # SGLang issue #4119: DeepSeek NEXTN, 2 nodes, TP16, CUDA graphs on (the thread's flags)
    "multinode-nextn-master-graph-memory": Case(
        "command", "python3 -u -m sglang.launch_server --model-path /models/DeepSeek-R1 --tp 16 --dist-init-addr "
                   "29.22.5.6:5001 --nnodes 2 --node-rank 0 --trust-remote-code --mem-fraction-static 0.62 "
                   "--max-running-requests 64 --cuda-graph-max-bs 32 --speculative-algorithm NEXTN "
                   "--speculative-draft-model-path /models/DeepSeek-R1-NextN --speculative-num-steps 2 "
                   "--speculative-eagle-topk 4 --speculative-num-draft-tokens 4",
        "0.4.3.post4", "info", config={"architectures": ["DeepseekV3ForCausalLM"]},
        outside=("python3 -u -m sglang.launch_server --model-path /models/DeepSeek-R1 --tp 8 --trust-remote-code "
                 "--speculative-algorithm NEXTN --speculative-draft-model-path /models/DeepSeek-R1-NextN "
                 "--speculative-num-steps 2 --speculative-eagle-topk 4 --speculative-num-draft-tokens 4",
                 "0.4.3.post4")),
    # SGLang issue #6496's launch command (LWS variables written out), v0.4.6.post4
    "multinode-eagle-cuda-graph-hang": Case(
        "command", "python3 -m sglang.launch_server --host 0.0.0.0 --port 8888 --trust-remote-code --show-time-cost "
                   "--model-path /tmp/scratch-space/DeepSeek-V3-0324 --tp 16 --dist-init-addr leader:5000 --nnodes 2 "
                   "--node-rank 0 --speculative-algo EAGLE --speculative-eagle-topk 1 --speculative-num-steps 3 "
                   "--speculative-num-draft-tokens 4 --max-running-requests 256 --tool-call-parser deepseekv3",
        "0.4.7", "info", config={"architectures": ["DeepseekV3ForCausalLM"]},
        outside=("python3 -m sglang.launch_server --model-path /tmp/scratch-space/DeepSeek-V3-0324 --tp 16 "
                 "--dist-init-addr leader:5000 --nnodes 2 --node-rank 0 --speculative-algo EAGLE "
                 "--speculative-eagle-topk 1 --speculative-num-steps 3 --speculative-num-draft-tokens 4 "
                 "--disable-cuda-graph", "0.4.7")),
    # SGLang PR #17974's traceback line
    "bench-speculative-missing-args": Case(
        "log", "AttributeError: 'types.SimpleNamespace' object has no attribute 'return_routed_experts'", None, "info",
        outside=("    \"return_routed_experts\": args.return_routed_experts,", None)),
    # SGLang issue #36528: the two start-up errors it describes, in Python's AttributeError form
    "eagle3-no-draft-path-target-as-draft": Case(
        "log", "AttributeError: 'Qwen2ForCausalLM' object has no attribute 'set_embed'", "0.5.23", "warning",
        outside=("AttributeError: 'Qwen2ForCausalLM' object has no attribute 'lm_head'", "0.5.23")),
    # SGLang issue #17935: Qwen3-VL-30B-A3B with EAGLE3 on 0.5.7
    "qwen3-vl-moe-spec-missing-methods": Case(
        "command", f"{LAUNCH} --model-path Qwen/Qwen3-VL-30B-A3B-Instruct-AWQ --dtype bfloat16 --context-length 4096 "
                   "--speculative-algorithm EAGLE3 --speculative-draft-model-path "
                   "/models/SpecForge_qwen3-vl-model_eagle3 "
                   f"{DEPTH}",
        "0.5.7", "warning", config={"architectures": ["Qwen3VLMoeForConditionalGeneration"]},
        outside=(f"{LAUNCH} --model-path Qwen/Qwen3-VL-30B-A3B-Instruct-AWQ --dtype bfloat16 --context-length 4096",
                 "0.5.7")),
    # SGLang PR #10090 (review comment): the STANDALONE crash's traceback line
    "standalone-merge-batch-crash": Case(
        "log", "    self.spec_info.merge_batch(other.spec_info)", None, "info",
        outside=("    self.running_batch.merge_batch(self.last_batch)", None)),
    # SGLang PR #29313: EAGLE on AMD without --disable-custom-all-reduce (GLM-5.1 cookbook command shape)
    "rocm-eagle-custom-allreduce-deadlock": Case(
        "command", f"SGLANG_USE_AITER=1 {LAUNCH} --model-path zai-org/GLM-5.1-FP8 --tp-size 8 --speculative-algorithm "
                   f"EAGLE {DEPTH}",
        "0.5.18", "warning",
        outside=(f"SGLANG_USE_AITER=1 {LAUNCH} --model-path zai-org/GLM-5.1-FP8 --tp-size 8 "
                 f"--disable-custom-all-reduce --speculative-algorithm EAGLE {DEPTH}", "0.5.18")),
    # SGLang PR #28471: GLM-5.2-FP8 with EAGLE on MI350X (v0.5.13.post1-rocm720)
    "rocm-gfx950-fp8-gemm-accept-drop": Case(
        "command", f"SGLANG_USE_AITER=1 {LAUNCH} --model-path zai-org/GLM-5.2-FP8 --tp-size 4 --speculative-algorithm "
                   f"EAGLE {DEPTH}",
        "0.5.13.post1", "info",
        outside=(f"{LAUNCH} --model-path zai-org/GLM-5.2-FP8 --tp-size 4 --speculative-algorithm EAGLE {DEPTH}",
                 "0.5.13.post1")),
    # SGLang PR #36866: MiniMax-M3-MXFP8 with Inferact/MiniMax-M3-EAGLE3 on MI350X, aiter attention
    "rocm-aiter-legacy-workspace-oom": Case(
        "command", f"SGLANG_USE_AITER_MOE_GU_ITLV=0 {LAUNCH} --model-path MiniMaxAI/MiniMax-M3-MXFP8 --tp-size 4 "
                   "--attention-backend aiter --mem-fraction-static 0.85 --speculative-algorithm EAGLE3 "
                   f"--speculative-draft-model-path Inferact/MiniMax-M3-EAGLE3 {DEPTH}",
        "0.5.18", "info",
        outside=(f"SGLANG_USE_AITER_UNIFIED_ATTN=1 SGLANG_USE_AITER_MOE_GU_ITLV=0 {LAUNCH} --model-path "
                 "MiniMaxAI/MiniMax-M3-MXFP8 --tp-size 4 --attention-backend aiter --mem-fraction-static 0.85 "
                 "--speculative-algorithm EAGLE3 --speculative-draft-model-path Inferact/MiniMax-M3-EAGLE3 "
                 f"{DEPTH}", "0.5.18")),
    # SGLang PR #35195 / issue #35144: EAGLE on XPU at TP=2
    "xpu-eagle-verify-broadcast-hang": Case(
        "command", f"{LAUNCH} --model-path Qwen/Qwen3-8B --device xpu --tp-size 2 --speculative-algorithm EAGLE3 "
                   f"--speculative-draft-model-path /models/qwen3-8b-eagle3 {DEPTH}",
        "0.5.18", "info",
        outside=(f"{LAUNCH} --model-path Qwen/Qwen3-8B --device xpu --tp-size 1 --speculative-algorithm EAGLE3 "
                 f"--speculative-draft-model-path /models/qwen3-8b-eagle3 {DEPTH}", "0.5.18")),
    # SGLang issue #14368's log line
    "pd-prefill-spec-topk-length-mismatch": Case(
        "log", "[2025-12-03 15:11:43 TP0] length of new_indices: 5 != length of topk_p: 7, this should not happen",
        None, "info", outside=("[2025-12-03 15:11:42 TP0] Cache flushed successfully!", None)),
    # SGLang PR #34191: NEXTN (3 steps, 4 draft tokens) on a hybrid GDN target's prefill server
    "pd-prefill-hybrid-spec-verify-scratch": Case(
        "command", f"{LAUNCH} --model-path Qwen/Qwen3-Next-80B-A3B-Instruct --tp-size 4 --disaggregation-mode prefill "
                   "--speculative-algorithm NEXTN --speculative-num-steps 3 --speculative-eagle-topk 1 "
                   "--speculative-num-draft-tokens 4",
        "0.5.18", "info", config={"architectures": ["Qwen3NextForCausalLM"]},
        outside=(f"{LAUNCH} --model-path Qwen/Qwen3-Next-80B-A3B-Instruct --tp-size 4 --disaggregation-mode decode "
                 "--speculative-algorithm NEXTN --speculative-num-steps 3 --speculative-eagle-topk 1 "
                 "--speculative-num-draft-tokens 4", "0.5.18")),
    # SGLang PR #39378: GLM-5.2 disaggregated PP prefill with MTP
    "pp-prefill-mtp-rejected": Case(
        "command", f"{LAUNCH} --model-path zai-org/GLM-5.2-FP8 --tp-size 8 --pp-size 2 --disaggregation-mode prefill "
                   f"--disaggregation-transfer-backend nixl --speculative-algorithm EAGLE {DEPTH}",
        "0.5.23", "info",
        outside=(f"{LAUNCH} --model-path zai-org/GLM-5.2-FP8 --tp-size 8 --disaggregation-mode prefill "
                 f"--disaggregation-transfer-backend nixl --speculative-algorithm EAGLE {DEPTH}", "0.5.23")),
}


def _fired(case: Case, entry_id: str, text: str, version: str | None):
    """(severity, message, link) of the entry's diagnostic or finding, or None."""
    if case.kind == "log":
        scanner = KnownIssueLogScanner(version)
        scanner.feed(1, text)
        found = [f for f in scanner.findings() if f["data"]["id"] == entry_id]
        return (found[0]["severity"], found[0]["message"] + " " + found[0]["explanation"],
                found[0]["data"]["link"]) if found else None
    report = validate_command(text, version, case.config)
    code = f"known-issue:{entry_id}"
    diag = report.find(code)
    if diag is not None:
        return diag.severity, diag.message, diag.link
    summary = report.find("known-issues-gpu-dependent")
    if summary is not None and any(e.link in summary.message for e in KNOWN_ISSUES if e.id == entry_id):
        return summary.severity, summary.message, summary.link
    return None


def test_every_entry_has_a_case_from_its_thread():
    assert sorted(CASES) == sorted(e.id for e in KNOWN_ISSUES)


def test_entries_are_well_formed():
    ids = [e.id for e in KNOWN_ISSUES]
    assert len(ids) == len(set(ids))
    for entry in KNOWN_ISSUES:
        assert entry.command is not None or entry.logs, entry.id
        assert entry.severity in ("warning", "info"), entry.id  # a known bug is never an SGLang refusal
        assert all(re.fullmatch(r"https://github\.com/sgl-project/sglang/(issues|pull)/\d+", link)
                   for link in entry.links), entry.id
        for version in (entry.first_bad, entry.first_fixed):
            if version is not None:
                parse_version(version)
        if entry.first_bad and entry.first_fixed:
            assert parse_version(entry.first_bad) < parse_version(entry.first_fixed), entry.id
        assert entry.workaround and entry.symptom and entry.title, entry.id


@pytest.mark.parametrize("entry_id", sorted(CASES))
def test_thread_text_fires_the_entry_with_its_link(entry_id):
    case = CASES[entry_id]
    entry = next(e for e in KNOWN_ISSUES if e.id == entry_id)
    fired = _fired(case, entry_id, case.text, case.version)
    assert fired is not None, f"{entry_id} did not fire on its thread's text"
    severity, message, link = fired
    assert severity == case.severity
    assert link == entry.link
    assert not re.search(r"fixed in \d", message) or entry.first_fixed is not None  # "fixed in X" only when known


@pytest.mark.parametrize("entry_id", sorted(k for k, c in CASES.items() if c.outside is not None))
def test_outside_the_range_it_does_not_fire_or_says_fixed(entry_id):
    case = CASES[entry_id]
    text, version = case.outside
    fired = _fired(case, entry_id, text if text is not None else case.text, version)
    if case.fixed_in is None:
        assert fired is None, f"{entry_id} fired outside its pattern or range"
    else:
        assert fired is not None
        severity, message, _ = fired
        assert severity == "info"
        assert f"fixed in {case.fixed_in}" in message


def test_without_a_release_a_range_limited_entry_is_only_info():
    """No --sglang-version: the rules use the newest release, but a known issue of some releases is not asserted."""
    case = CASES["spec-v2-dp-attention-accept-length"]
    report = validate_command(case.text, None, None)
    diag = report.find("known-issue:spec-v2-dp-attention-accept-length")
    assert diag is not None and diag.severity == "info"
    assert "release is not known here" in diag.message


def test_a_release_before_the_first_bad_one_does_not_fire():
    case = CASES["adaptive-shared-logits-buffer"]
    assert _fired(case, "adaptive-shared-logits-buffer", case.text, "0.5.15") is None
    report = validate_command(f"{LAUNCH} --model-path m --speculative-algorithm EAGLE --speculative-draft-model-path d "
                              "--speculative-adaptive", "0.5.12")
    assert report.find("known-issue:adaptive-shared-logits-buffer") is None
    report = validate_command(f"{LAUNCH} --model-path m --speculative-algorithm EAGLE --speculative-draft-model-path d "
                              "--speculative-adaptive", "0.5.17")
    assert report.find("known-issue:adaptive-shared-logits-buffer").severity == "warning"


def test_an_architecture_limited_entry_is_only_info_when_the_architecture_is_unknown():
    case = CASES["eagle-dp-attention-draft-deadlock"]
    report = validate_command(case.text, case.version, None)  # no config.json, and the name matches no known family
    diag = report.find("known-issue:eagle-dp-attention-draft-deadlock")
    assert diag is not None and diag.severity == "info"
    assert "architecture is not known here" in diag.message
    other = validate_command(case.text, case.version, {"architectures": ["DeepseekV3ForCausalLM"]})
    assert other.find("known-issue:eagle-dp-attention-draft-deadlock") is None


def test_an_amd_only_entry_needs_amd_evidence_in_the_command():
    plain = validate_command(f"{LAUNCH} --model-path m --speculative-algorithm EAGLE --speculative-draft-model-path d "
                             f"{DEPTH}", "0.5.18")
    assert plain.find("known-issue:rocm-eagle-topk1-full-softmax-draft") is None
    assert plain.find("known-issues-gpu-dependent") is None
    amd = validate_command(f"SGLANG_USE_AITER=1 {LAUNCH} --model-path m --speculative-algorithm EAGLE "
                           f"--speculative-draft-model-path d {DEPTH}", "0.5.18")
    assert amd.find("known-issue:rocm-eagle-topk1-full-softmax-draft") is not None


def test_a_gpu_family_the_command_cannot_show_is_named_in_one_info():
    case = CASES["hopper-fa3-unresolved-eagle-topk"]
    report = validate_command(case.text, case.version)
    assert report.find("known-issue:hopper-fa3-unresolved-eagle-topk") is None
    summary = report.find("known-issues-gpu-dependent")
    assert summary.severity == "info"
    assert "only on Hopper (SM90) GPUs: https://github.com/sgl-project/sglang/pull/36564" in summary.message


def test_no_known_issue_is_an_error():
    for case in CASES.values():
        if case.kind == "command":
            report = validate_command(case.text, case.version, case.config)
            assert not [d for d in report.diagnostics if d.code.startswith("known-issue") and d.severity == "error"]


#: The other half of entries that have both a command pattern and a log pattern (the case above tests one half).
OTHER_HALF = {
    "spec-v2-dsa-hicache-nccl-hang": (
        "log", '  File "/sgl-workspace/sglang/python/sglang/srt/layers/attention/dsa_backend.py", line 1070, in '
               "_apply_cuda_graph_metadata", "0.5.13"),
    "eagle-fp4-kv-cache-copy": ("log", "RuntimeError: \"copy_\" not implemented for 'Float4_e2m1fn_x2'", "0.5.9"),
    "adaptive-shared-logits-buffer": (
        "command", f"{LAUNCH} --model-path zai-org/GLM-5.2 --speculative-algorithm EAGLE --speculative-adaptive "
                   "--cuda-graph-max-bs 32", "0.5.17"),
    "eagle3-draft-mla-backend-b200": (
        "command", f"{LAUNCH} --model-path moonshotai/Kimi-K2.5 --tp-size 8 --attention-backend trtllm_mla "
                   "--speculative-algorithm EAGLE3 --speculative-draft-model-path lightseekorg/kimi-k2.5-eagle3 "
                   f"{DEPTH}", "0.5.9"),
    "rocm-eagle-dsa-tilelang": (
        "command", f"SGLANG_USE_AITER=1 {LAUNCH} --model-path /models/GLM-5.2-FP8 --tp-size 8 --dsa-prefill-backend "
                   f"tilelang --dsa-decode-backend tilelang --speculative-algorithm EAGLE {DEPTH}", "0.5.23"),
}


@pytest.mark.parametrize("entry_id", sorted(OTHER_HALF))
def test_the_other_half_of_a_two_sided_entry_fires(entry_id):
    kind, text, version = OTHER_HALF[entry_id]
    entry = next(e for e in KNOWN_ISSUES if e.id == entry_id)
    assert entry.command is not None and entry.logs
    case = dataclasses.replace(CASES[entry_id], kind=kind,
                               config={"architectures": ["KimiK25ForConditionalGeneration"]})
    fired = _fired(case, entry_id, text, version)
    assert fired is not None and fired[2] == entry.link


def test_another_architecture_keeps_an_architecture_entry_silent():
    case = CASES["qwen3-vl-moe-spec-missing-methods"]
    report = validate_command(case.text, case.version, {"architectures": ["Qwen3VLForConditionalGeneration"]})
    assert report.find("known-issue:qwen3-vl-moe-spec-missing-methods") is None


def test_one_decode_line_at_accept_len_one_is_not_a_known_issue():
    """A single batch can reject every draft: 'accept len: 1.00' on one line says nothing about the pairing."""
    scanner = KnownIssueLogScanner("0.5.9")
    scanner.feed(1, "[2026-03-24 10:00:00 TP0] Decode batch. #running-req: 1, #token: 1203, token usage: 0.01, "
                    "accept len: 1.00, cuda graph: True, gen throughput (token/s): 61.50, #queue-req: 0")
    assert scanner.findings() == []


def test_the_log_pane_and_scan_get_the_same_findings_as_objects():
    scanner = KnownIssueLogScanner("0.5.17")
    for number, text in enumerate(["ok", CASES["eagle3-dp-attention-idle-batch-crash"].text,
                                   CASES["eagle3-dp-attention-idle-batch-crash"].text], start=1):
        scanner.feed(number, text)
    (finding,) = scanner.finding_objects()
    assert finding.key == "known_issue:eagle3-dp-attention-idle-batch-crash"
    assert (finding.line, finding.count, finding.last_line) == (2, 2, 3)
    assert finding.data["link"] == "https://github.com/sgl-project/sglang/pull/33892"
    assert finding.as_dict() == scanner.findings()[0]


def test_a_fix_release_read_from_the_wheels_is_said():
    """The ROCm topk=1 draft path changed in 0.5.21 (PR #35872): 0.5.21 is told the issue is fixed, 0.5.20 is not."""
    case = CASES["rocm-eagle-topk1-full-softmax-draft"]
    fixed = validate_command(case.text, "0.5.21").find("known-issue:rocm-eagle-topk1-full-softmax-draft")
    assert fixed is not None and fixed.severity == "info" and "fixed in 0.5.21 (this is 0.5.21)" in fixed.message
    before = validate_command(case.text, "0.5.20").find("known-issue:rocm-eagle-topk1-full-softmax-draft")
    assert before is not None and "fixed in 0.5.21" in before.message and "this is" not in before.message
