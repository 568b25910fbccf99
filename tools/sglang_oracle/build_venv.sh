#!/usr/bin/env bash
# Build a CPU-only venv with the real SGLang 0.5.23, for the oracle sweep (tests/test_oracle_sweep.py) and
# for regenerating flag tables (dump_parser.py). About 6 GB; a few minutes.
#
#   bash tools/sglang_oracle/build_venv.sh [VENV_DIR]     (default: ~/.cache/specdash-oracle)
#
# Recipe (measured): the PyPI CUDA build of torch 2.14.1 + torchvision 0.29.1 imports fine without a GPU;
# sglang itself is installed with --no-deps (its GPU kernels are not needed to parse and resolve arguments),
# then the small pure-Python dependencies that importing sglang.srt.server_args and running its argument
# resolution need. Pins follow sglang 0.5.23's own requirements where it pins.
set -euo pipefail
VENV="${1:-$HOME/.cache/specdash-oracle}"
PY="${PYTHON:-python3}"
"$PY" -m venv "$VENV"
PIP="$VENV/bin/pip"
"$PIP" install -q torch==2.14.1 torchvision==0.29.1
"$PIP" install -q --no-deps sglang==0.5.23
"$PIP" install -q \
  transformers==5.19.0 tokenizers==0.23.2 sentencepiece==0.2.1 compressed-tensors==0.18.0 \
  apache-tvm-ffi==0.1.11 openai-harmony==0.0.4 \
  orjson msgspec pydantic psutil pyzmq requests aiohttp pybase64 huggingface_hub safetensors \
  pyyaml tqdm regex packaging gguf dill loguru ipython httpx typer rich starlette \
  openai==2.8.0 partial_json_parser einops zstandard
# Smoke test: resolve one speculative command with a model dir that holds only config.json.
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
cat > "$TMP/config.json" <<'JSON'
{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 256, "intermediate_size": 512,
 "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 4, "vocab_size": 32000,
 "max_position_embeddings": 2048, "rms_norm_eps": 1e-5, "torch_dtype": "float16", "hidden_act": "silu"}
JSON
HERE="$(cd "$(dirname "$0")" && pwd)"
echo "{\"id\": 1, \"argv\": [\"--model-path\", \"$TMP\", \"--device\", \"cpu\", \"--speculative-algorithm\", \"EAGLE\", \"--speculative-draft-model-path\", \"$TMP\", \"--speculative-num-steps\", \"1\", \"--speculative-eagle-topk\", \"1\", \"--speculative-num-draft-tokens\", \"16\"]}" \
  | "$VENV/bin/python" "$HERE/oracle_resolve.py" | grep -q '"speculative_num_draft_tokens": 2' \
  && echo "oracle venv ready: $VENV (SGLang resolves 16 draft tokens to 2 with topk 1, steps 1)"
