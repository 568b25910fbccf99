#!/usr/bin/env bash
# Device check for specdash's GPU clean-up on a machine with a real NVIDIA GPU: real CUDA processes in the process
# trees users make, classified by NVML / nvidia-smi and specdash. Needs only an NVIDIA GPU, python3 and the
# package (torch or cupy optional: CUDA memory is allocated through libcuda with ctypes when they are missing).
#
# What it does (about 1-2 minutes, hard limit ~5; HOLD_MIB MiB per CUDA process, default 1024):
#   1. the driver's view, and the idle baseline: per GPU, used memory minus the listed processes' memory;
#   2. builds, with real CUDA processes whose process titles are SGLang's (argv[0] set, as `ps` shows a title
#      set with setproctitle):
#      a. a crashed server: a launcher (`python3 -m sglang.launch_server ...` by its title) in its own session
#         starts two CUDA schedulers `sglang::scheduler_TP0/1` and an `sglang::detokenizer` without GPU memory,
#         then exits;
#      b. a healthy server nohup'd from a shell that exits at once (`sh -c 'nohup ... &'`, as `ssh host 'nohup
#         ... &'` does): the launcher lives on with PPID 1 without leading its process group, one CUDA scheduler;
#      c. a `nohup python3 train.py &` training job holding CUDA memory (PPID 1, not from a server);
#   3. `specdash ps local --json`: (a)'s schedulers `orphan`, its detokenizer a member of the crashed server,
#      (b) `server`, (c) `foreign` ("detached job"); NVML must be the sampler;
#   4. `specdash clean local --yes --json`: exit 0, the whole crashed server gone (detokenizer too), its memory
#      released in NVML/nvidia-smi, (b) and (c) untouched;
#   5. (root with util-linux `unshare` only) a container's view: a new PID namespace (`unshare --pid --fork
#      --mount-proc`) in which a second crashed server is made; inside it `specdash ps` must not call the GPU
#      clean while (b) and (c) hold memory outside, should find the inner orphan through its open /dev/nvidia*
#      files, and `clean` must leave (b) and (c) alone. How the driver lists PIDs there (none, or host PIDs) is
#      printed: that is what this step is for.
# Prints everything; exit 0 when every check passed, 1 otherwise. Run from anywhere: tools/device_check.sh
set -u
cd "$(dirname "$0")/.." || exit 1
REPO=$(pwd)
PY=${PYTHON:-python3}
WORK=$(mktemp -d /tmp/specdash-device-check.XXXXXX)
FAILED=0
HOLD_MIB=${HOLD_MIB:-1024}
step() { echo; echo "=== $* ($(date +%T))"; }
ok() { echo "PASS: $*"; }
bad() { echo "FAIL: $*"; FAILED=1; }

step "driver"
command -v nvidia-smi && timeout 30 nvidia-smi -L
timeout 30 nvidia-smi --query-gpu=index,uuid,memory.used,memory.total,utilization.gpu,name --format=csv
timeout 30 nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory,process_name --format=csv
echo "python: $($PY -c 'import sys; print(sys.executable, sys.version.split()[0])')  pid namespace: $(readlink /proc/self/ns/pid)  PID 1: $(tr '\0' ' ' </proc/1/cmdline | cut -c1-80)"

step "install specdash"
if ! $PY -c "import specdash" 2>/dev/null; then
  if ! timeout 180 $PY -m pip install -q -e "$REPO" > "$WORK/pip.log" 2>&1; then
    tail -3 "$WORK/pip.log"
    echo "full install failed (offline?): trying without dependencies"
    timeout 120 $PY -m pip install -q --no-deps -e "$REPO" > "$WORK/pip.log" 2>&1 || tail -3 "$WORK/pip.log"
  fi
fi
if ! $PY -c "import specdash" 2>/dev/null; then
  echo "pip install failed: using PYTHONPATH=$REPO"
  export PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}"
fi
$PY -c "import specdash, sys; print('specdash', specdash.__version__, specdash.__file__)" || { bad "cannot import specdash"; exit 1; }
$PY -c "import pynvml; pynvml.nvmlInit(); print('NVML ok, driver', pynvml.nvmlSystemGetDriverVersion(), 'GPUs', pynvml.nvmlDeviceGetCount())" \
  || echo "NVML not importable/usable: specdash will fall back to nvidia-smi (pip install nvidia-ml-py)"
SPECDASH="$PY -m specdash"
# the interpreter itself (not a pyenv/venv shim script): `exec -a TITLE` must reach the real binary
PY_EXE=$($PY -c 'import sys; print(sys.executable)')


step "CUDA holder program"
cat > "$WORK/holder.py" <<'PYEOF'
"""holder.py worker MIB | idle | launcher MIB N crash|live

worker: allocate MIB MiB on GPU 0, print "ready PID", sleep. idle: print "ready PID", sleep (no CUDA).
launcher: start N workers titled sglang::scheduler_TP<i> and an idle sglang::detokenizer (argv[0] is the title,
as `ps` shows SGLang's setproctitle titles), wait until they are ready, print "pids S0 .. DETOK", then exit at
once (crash: the children are orphaned, still holding memory) or stay (live)."""
import ctypes, os, subprocess, sys, time

def allocate(mib):
    n = mib * 1024 * 1024
    try:
        import torch
        if torch.cuda.is_available():
            return "torch", torch.empty(n, dtype=torch.uint8, device="cuda:0")
    except Exception as exc:
        print("torch unusable:", exc, file=sys.stderr)
    try:
        import cupy
        return "cupy", cupy.cuda.alloc(n)
    except Exception as exc:
        print("cupy unusable:", exc, file=sys.stderr)
    for name in ("libcuda.so.1", "libcuda.so"):  # driver API: present wherever the driver is
        try:
            cuda = ctypes.CDLL(name)
        except OSError:
            continue
        ctx, dev, ptr = ctypes.c_void_p(), ctypes.c_int(), ctypes.c_uint64()
        assert cuda.cuInit(0) == 0, "cuInit failed"
        assert cuda.cuDeviceGet(ctypes.byref(dev), 0) == 0, "cuDeviceGet failed"
        assert cuda.cuCtxCreate_v2(ctypes.byref(ctx), 0, dev) == 0, "cuCtxCreate failed"
        rc = cuda.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(n))
        assert rc == 0, f"cuMemAlloc failed: {rc}"
        return "libcuda", (cuda, ctx, ptr)
    raise SystemExit("no way to allocate CUDA memory (torch, cupy, libcuda all missing)")

def titled(title, *args):
    return subprocess.Popen([title, os.path.abspath(__file__), *args], executable=os.readlink("/proc/self/exe"),
                            stdout=subprocess.PIPE, text=True)

mode = sys.argv[1]
if mode in ("worker", "idle"):
    keep = allocate(int(sys.argv[2])) if mode == "worker" else None
    print(f"ready {os.getpid()}" + (f" via {keep[0]}" if keep else ""), flush=True)
    while True:
        time.sleep(1)
mib, n, how = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
kids = [titled(f"sglang::scheduler_TP{i}", "worker", str(mib)) for i in range(n)]
kids.append(titled("sglang::detokenizer", "idle"))
for k in kids:
    line = k.stdout.readline().strip()
    print(line, flush=True)
    if not line.startswith("ready"):
        sys.exit(1)
print("pids " + " ".join(str(k.pid) for k in kids), flush=True)
if how == "crash":
    os._exit(0)  # crash-like exit: the children are orphaned, still holding memory
while True:
    time.sleep(1)
PYEOF
# as.sh TITLE PROGRAM ARGS...: run PROGRAM with argv[0] = TITLE (what `ps` shows first); the PID stays the same
printf '%s\n' '#!/usr/bin/env bash' 'title=$1; shift; exec -a "$title" "$@"' > "$WORK/as.sh"
LAUNCH_TITLE="python3 -m sglang.launch_server --model-path device-check --port 1"

step "idle baseline (per GPU: used memory minus the listed processes' memory)"
$PY - <<'PYEOF'
import subprocess
q = lambda *a: subprocess.run(["nvidia-smi", *a], capture_output=True, text=True).stdout.splitlines()
apps = [a.split(",") for a in q("--query-compute-apps=gpu_uuid,used_memory", "--format=csv,noheader,nounits")]
for line in q("--query-gpu=index,uuid,memory.used", "--format=csv,noheader,nounits"):
    index, uuid, used = [x.strip() for x in line.split(",")]
    listed = sum(int(a[1]) for a in apps if len(a) == 2 and a[0].strip() == uuid and a[1].strip().isdigit())
    print(f"GPU {index}: used {used} MiB, listed processes {listed} MiB, unattributed {int(used) - listed} MiB")
PYEOF

GROUPS_STARTED=""
CRASHED=""
cleanup() {  # only what this script started: its process groups and the PIDs it was told, by number
  for g in $GROUPS_STARTED; do kill -9 -- "-$g" 2>/dev/null; done
  for p in $CRASHED; do kill -9 "$p" 2>/dev/null; done
}
trap cleanup EXIT
alive() { [ -e "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }
pgid_of() { ps -o pgid= -p "$1" | tr -d ' '; }

step "a. crashed server: launcher in its own session, 2 CUDA schedulers + detokenizer, launcher exits"
setsid bash "$WORK/as.sh" "$LAUNCH_TITLE" "$PY_EXE" "$WORK/holder.py" launcher "$HOLD_MIB" 2 crash > "$WORK/crashed.out" 2>&1 &
CRASHED_LAUNCHER=$!
step "b. healthy server nohup'd from a shell that exits at once"
LIVE_LAUNCHER=$(setsid sh -c "nohup bash '$WORK/as.sh' '$LAUNCH_TITLE' $PY_EXE '$WORK/holder.py' launcher $HOLD_MIB 1 live > '$WORK/live.out' 2>&1 & echo \$!")
step "c. nohup python3 train.py & (CUDA, not from a server)"
TRAIN=$(setsid sh -c "nohup bash '$WORK/as.sh' 'python3 train.py --epochs 3' $PY_EXE '$WORK/holder.py' worker $HOLD_MIB > '$WORK/train.out' 2>&1 & echo \$!")
GROUPS_STARTED="$(pgid_of "$LIVE_LAUNCHER") $(pgid_of "$TRAIN")"
for _ in $(seq 1 120); do
  grep -q '^pids ' "$WORK/crashed.out" && grep -q '^pids ' "$WORK/live.out" && grep -q '^ready' "$WORK/train.out" && break
  sleep 0.5
done
cat "$WORK/crashed.out" "$WORK/live.out" "$WORK/train.out"
CRASHED=$(sed -n 's/^pids //p' "$WORK/crashed.out")
LIVE=$(sed -n 's/^pids //p' "$WORK/live.out")
if [ -z "$CRASHED" ] || [ -z "$LIVE" ] || ! grep -q '^ready' "$WORK/train.out"; then bad "the CUDA processes did not start"; exit 1; fi
GROUPS_STARTED="$GROUPS_STARTED $(pgid_of "${CRASHED%% *}")"
sleep 1
for p in $CRASHED_LAUNCHER $CRASHED $LIVE_LAUNCHER $LIVE $TRAIN; do
  ps -o pid=,ppid=,pgid=,sid=,user=,stat=,args= -p "$p" || echo "$p (gone)"
done
timeout 30 nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory,process_name --format=csv

step "specdash sampler on this machine (NVML expected)"
timeout 60 $PY - <<'PYEOF'
import asyncio
from specdash.hosts.local import LocalHost
from specdash.gpu.sampler import make_sampler
async def main():
    s = make_sampler(LocalHost(), 1.0)
    snap = await s.sample_once()
    await s.close()
    print("source:", snap.source, "error:", snap.error)
    for g in snap.gpus: print(" ", g)
    for p in snap.processes: print(" ", p)
    raise SystemExit(0 if snap.source == "nvml" else 1)
asyncio.run(main())
PYEOF
if [ $? -eq 0 ]; then ok "NVML sampling"; else bad "NVML sampling (see above)"; fi

step "specdash ps local"
timeout 60 $SPECDASH ps local
timeout 60 $SPECDASH ps local --json > "$WORK/ps.json"; echo "exit $?"
$PY - "$WORK/ps.json" "$CRASHED" "$LIVE" "$TRAIN" "$HOLD_MIB" <<'PYEOF'
import json, sys
data = json.load(open(sys.argv[1]))
crashed, live = [int(x) for x in sys.argv[2].split()], [int(x) for x in sys.argv[3].split()]
train, mib = int(sys.argv[4]), int(sys.argv[5])
procs = {p["pid"]: p for p in data["processes"]}
ok = True
def check(good, what, p):
    global ok
    print(("PASS" if good else "FAIL") + f": {what}: {p}")
    ok &= bool(good)
for pid in crashed[:-1]:
    p = procs.get(pid)
    check(p and p["class"] == "orphan" and p["target"] and (p["used_mib"] or 0) >= mib * 0.9,
          f"crashed server's scheduler {pid} is an orphan holding its memory", p)
p = procs.get(crashed[-1])
check(p and p["class"] == "orphan" and p["source"] == "process group" and p["target"],
      f"crashed server's detokenizer {crashed[-1]} goes with it", p)
for pid in live[:-1]:
    p = procs.get(pid)
    check(p and p["class"] == "server" and not p["target"], f"nohup'd live server's scheduler {pid} is a server", p)
p = procs.get(train)
check(p and p["class"] == "foreign" and p["reason"].startswith("detached job"), f"nohup training job {train} is foreign", p)
check("2 orphans from a crashed server" in data["summary"], "summary names the crashed server", data["summary"])
print("INFO: unattributed per GPU:", [(g["index"], g["unattributed_mib"]) for g in data["gpus"]],
      "| container:", data["container"])
sys.exit(0 if ok else 1)
PYEOF
[ $? -eq 0 ] || FAILED=1

step "specdash clean local --yes --json"
timeout 120 $SPECDASH clean local --yes --json --grace-s 5 --timeout-s 60 > "$WORK/clean.json"
RC=$?
cat "$WORK/clean.json"; echo
echo "exit $RC"
if [ $RC -eq 0 ]; then ok "clean reported the memory released"; else bad "clean exit $RC"; fi
for p in $CRASHED; do if alive "$p"; then bad "crashed server's PID $p still alive"; else ok "crashed server's PID $p gone"; fi; done
for p in $LIVE_LAUNCHER $LIVE $TRAIN; do if alive "$p"; then ok "PID $p (live server / training job) untouched"; else bad "PID $p was killed"; fi; done
sleep 1
timeout 30 nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory,process_name --format=csv,noheader > "$WORK/after.csv"
cat "$WORK/after.csv"
for p in $CRASHED; do if grep -q "^$p," "$WORK/after.csv"; then bad "driver still lists $p"; else ok "driver does not list $p"; fi; done
timeout 60 $SPECDASH ps local

step "container view: a new PID namespace (unshare --pid --fork --mount-proc)"
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null 2>&1; then
  {
    echo "set -u"
    echo "setsid bash '$WORK/as.sh' '$LAUNCH_TITLE' $PY_EXE '$WORK/holder.py' launcher $HOLD_MIB 1 crash > '$WORK/inner.out' 2>&1 &"
    echo "for _ in \$(seq 1 120); do grep -q '^pids ' '$WORK/inner.out' && break; sleep 0.5; done"
    echo "cat '$WORK/inner.out'; sleep 1"
    echo "echo '--- nvidia-smi inside the namespace'; nvidia-smi --query-compute-apps=pid,used_memory,process_name --format=csv"
    echo "echo '--- specdash ps local (inside)'; $SPECDASH ps local"
    echo "$SPECDASH ps local --json > '$WORK/inner-ps.json'"
    echo "echo '--- specdash clean local --yes (inside)'; $SPECDASH clean local --yes --grace-s 5 --timeout-s 30; echo \"clean exit \$?\""
    echo "echo '--- specdash ps local (inside, after)'; $SPECDASH ps local"
  } > "$WORK/inner.sh"
  timeout 150 unshare --pid --fork --mount-proc bash "$WORK/inner.sh"
  echo "unshare exit $?"
  $PY - "$WORK/inner-ps.json" <<'PYEOF'
import json, sys
try:
    data = json.load(open(sys.argv[1]))
except (OSError, ValueError) as exc:
    print("FAIL: no ps --json from inside the namespace:", exc)
    sys.exit(1)
print("INFO: processes inside:", [(p["pid"], p["class"], p["source"], p["used_mib"]) for p in data["processes"]])
print("INFO: unattributed per GPU inside:", [(g["index"], g["unattributed_mib"]) for g in data["gpus"]])
clean = data["summary"] == "no orphaned GPU memory"
print(("FAIL" if clean else "PASS") + ": inside the namespace the GPU is not called clean:", data["summary"])
sys.exit(1 if clean else 0)
PYEOF
  [ $? -eq 0 ] || FAILED=1
  # the namespace's processes died with its PID 1 (the inner bash) when unshare returned
  for p in $LIVE_LAUNCHER $LIVE $TRAIN; do if alive "$p"; then ok "PID $p outside the namespace untouched"; else bad "PID $p outside was killed"; fi; done
else
  echo "SKIP: needs root and unshare"
fi

step "result"
cleanup
trap - EXIT
rm -rf "$WORK"
if [ $FAILED -eq 0 ]; then echo "DEVICE CHECK PASSED"; else echo "DEVICE CHECK FAILED"; fi
exit $FAILED
