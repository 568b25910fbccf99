#!/usr/bin/env bash
# The second oracle: the real SGLang 0.5.5, CPU-only, for the 0.5.5-0.5.10 rules. Built from the 0.5.23 venv
# (build_venv.sh) by copying it and swapping SGLang and transformers; about 6 GB more.
#
#   bash tools/sglang_oracle/build_venv_055.sh [SRC_VENV] [VENV_DIR]
#
# sglang 0.5.5 pins torch 2.8.0; the 0.5.23 venv's torch 2.14.1 imports the same modules and argument resolution
# touches no kernel, so pip's version complaint is expected. sgl_kernel (CUDA kernels, imported at module level)
# is replaced by the import-only stand-in standins/sgl_kernel.py, whose placeholders raise if a kernel is ever
# called, so a resolution that reached one would show as an oracle error instead of passing silently.
set -euo pipefail
SRC="${1:-$HOME/.cache/specdash-oracle}"
VENV="${2:-$HOME/.cache/specdash-oracle-055}"
HERE="$(cd "$(dirname "$0")" && pwd)"
[ -x "$SRC/bin/python" ] || { echo "no 0.5.23 oracle venv at $SRC: run build_venv.sh first" >&2; exit 2; }
rm -rf "$VENV"
cp -a "$SRC" "$VENV"
PY="$VENV/bin/python"
"$PY" -m pip install -q --no-deps sglang==0.5.5 transformers==4.57.1 tokenizers==0.22.1
"$PY" -m pip install -q "huggingface-hub>=0.34,<1.0" openai==2.6.1 fastapi partial_json_parser einops
SITE="$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
cp "$HERE/standins/sgl_kernel.py" "$SITE/sgl_kernel.py"
"$PY" -c "from sglang.srt.server_args import prepare_server_args; import sglang; print('oracle venv ready:', sglang.__version__)"
