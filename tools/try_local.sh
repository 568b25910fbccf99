#!/usr/bin/env bash
# Try specdash's live loop (launch, watch, benchmark, sweep, kill, restart) on a machine without a GPU.
#
#   tools/try_local.sh [SCENARIO] [CONNECT OPTIONS...]   the console on 'local', with SGLang's test double
#   tools/try_local.sh --print-env [SCENARIO]            the environment only, for: eval "$(tools/try_local.sh --print-env)"
#
# SCENARIO: a name in tests/double/scenarios (default, fast, slow_startup, crash_orphan, stubborn, era_2026) or a
# path to a scenario file; default "default". The environment is tests/double/harness.py's double_env: the double
# first on PYTHONPATH (python3 -m sglang.launch_server runs it), tests/double/bin and tests/fakes/bin (a fake
# nvidia-smi with 2 H100s) first on PATH, and a state folder (SPECDASH_TRY_DIR; default a new temp folder for the
# console, and the same folder ${TMPDIR:-/tmp}/specdash-try-UID on every --print-env call, its fake GPUs reset):
# nothing touches your real state, GPUs or servers. The console's launch builder (F3) starts with a launch command
# for the double on a free port (connect --command; the file is in the state folder). Needs a terminal and the
# checkout installed (README: pip install -e .).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-python3}"
print_env=0
if [ "${1:-}" = "--print-env" ]; then
    print_env=1
    shift
fi
scenario=default
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
    scenario="$1"
    shift
fi
if [ "$print_env" = 1 ]; then
    dir="${SPECDASH_TRY_DIR:-${TMPDIR:-/tmp}/specdash-try-$(id -u)}"
    mkdir -p -m 700 "$dir"
    if [ ! -O "$dir" ]; then
        echo "tools/try_local.sh: $dir belongs to another user: set SPECDASH_TRY_DIR to a folder of yours" >&2
        exit 2
    fi
    "$python" "$repo/tests/double/harness.py" --print-env "$dir" "$scenario"
    exit 0
fi
if [ ! -t 1 ]; then
    echo "tools/try_local.sh: the console needs a terminal and stdout is not one (no pipe or redirection);" \
         "nothing was started. For the environment only: eval \"\$(tools/try_local.sh --print-env)\"" >&2
    exit 2
fi
dir="${SPECDASH_TRY_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/specdash-try.XXXXXX")}"
eval "$("$python" "$repo/tests/double/harness.py" --print-env "$dir" "$scenario")"
port="$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
command_file="$dir/launch-command.sh"
cat > "$command_file" <<EOF
python3 -m sglang.launch_server --model-path /models/Llama-3.1-8B-Instruct --host 127.0.0.1 --port $port \\
  --speculative-algorithm EAGLE3 --speculative-draft-model-path /models/EAGLE3-LLaMA3.1-8B \\
  --speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 8
EOF
cat <<EOF
specdash with SGLang's test double (scenario: $scenario; state in $dir).
The launch builder (F3) starts with this command ($command_file); l launches it:

$(sed 's/^/  /' "$command_file")

F4 then b benchmarks it, S sweeps the depth; x stops the server (press it before q: a server keeps running after q).
EOF
status=0
"$python" -m specdash connect local --command "$command_file" "$@" || status=$?
# the console's exit line says `specdash connect local` re-attaches a server left running: true in this script's
# environment (its state folder), not in a plain shell
echo "Back to a server left running here (re-attach; the console's stop key stops it, F1 lists the keys): SPECDASH_TRY_DIR=$dir tools/try_local.sh"
echo "GPU processes left (stop a server you launched with: kill -TERM -PGID):"
"$python" -m specdash ps local || true
exit "$status"
