#!/usr/bin/env bash
# Device check for specdash's GPU code on a machine with a real NVIDIA GPU.
#
# What it does (about 1-2 minutes, hard limit ~5):
#   1. shows the driver's view (nvidia-smi -L / CSV queries) and makes `import specdash` work (pip install -e .
#      when needed, offline-tolerant; torch is never installed: it uses torch, cupy, or libcuda via ctypes);
#   2. starts a "launcher" in its own session that starts two CUDA workers holding memory and exits,
#      leaving them orphaned (PPID 1 / a subreaper) — like a crashed SGLang server;
#      and one healthy CUDA holder whose parent (this script) stays alive;
#   3. checks through specdash's own sampler that NVML is used, then `specdash ps local --json`:
#      the two workers must be `orphan` with their memory, the healthy one must not be offered;
#   4. runs `specdash clean local --yes` and checks exit 0, the orphans gone, their memory released in
#      NVML/nvidia-smi, and the healthy holder untouched.
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

step "CUDA holder program"
cat > "$WORK/holder.py" <<'PYEOF'
"""holder.py MODE MIB: MODE=worker allocates MIB MiB on GPU 0 and sleeps; MODE=launcher starts 2 workers
(argv titled like SGLang's) in its own process group, waits until they hold memory, prints their PIDs, exits."""
import ctypes, ctypes.util, glob, os, subprocess, sys, time

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
    candidates = [ctypes.util.find_library("cudart")] + glob.glob("/usr/local/cuda*/lib64/libcudart.so*") + \
        glob.glob(os.path.join(sys.prefix, "lib/python3*/site-packages/nvidia/cuda_runtime/lib/libcudart.so*"))
    for name in filter(None, candidates):
        try:
            rt = ctypes.CDLL(name)
        except OSError:
            continue
        ptr = ctypes.c_void_p()
        rc = rt.cudaMalloc(ctypes.byref(ptr), ctypes.c_size_t(n))
        assert rc == 0, f"cudaMalloc failed: {rc}"
        return "cudart", (rt, ptr)
    raise SystemExit("no way to allocate CUDA memory (torch, cupy, libcuda, libcudart all missing)")

mode, mib = sys.argv[1], int(sys.argv[2])
if mode == "worker":
    how, keep = allocate(mib)
    print(f"ready {os.getpid()} via {how}", flush=True)
    while True:
        time.sleep(1)
else:
    kids = [subprocess.Popen([sys.executable, __file__, "worker", str(mib), f"sglang::scheduler_TP{i}"],
                             stdout=subprocess.PIPE, text=True) for i in range(2)]
    for k in kids:
        line = k.stdout.readline().strip()
        print(line, flush=True)
        if not line.startswith("ready"):
            sys.exit(1)
    print("pids " + " ".join(str(k.pid) for k in kids), flush=True)
    os._exit(0)  # crash-like exit: the workers are orphaned, still holding memory
PYEOF

step "start an orphaning launcher and a healthy holder ($HOLD_MIB MiB each)"
setsid $PY "$WORK/holder.py" launcher "$HOLD_MIB" > "$WORK/launcher.out" 2>&1 &
LAUNCHER=$!
$PY "$WORK/holder.py" worker "$HOLD_MIB" healthy-holder > "$WORK/healthy.out" 2>&1 &
HEALTHY=$!
for _ in $(seq 1 120); do
  grep -q '^pids ' "$WORK/launcher.out" && grep -q '^ready' "$WORK/healthy.out" && break
  if ! kill -0 "$LAUNCHER" 2>/dev/null && ! grep -q '^pids ' "$WORK/launcher.out"; then break; fi
  if ! kill -0 "$HEALTHY" 2>/dev/null; then break; fi
  sleep 0.5
done
cat "$WORK/launcher.out" "$WORK/healthy.out"
ORPHANS=$(sed -n 's/^pids //p' "$WORK/launcher.out")
[ -n "$ORPHANS" ] || { bad "the launcher did not start its workers"; kill "$HEALTHY" 2>/dev/null; exit 1; }
sleep 1
for p in $ORPHANS $HEALTHY; do ps -o pid=,ppid=,pgid=,user=,stat=,args= -p "$p"; done
timeout 30 nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory,process_name --format=csv

cleanup() { for p in $ORPHANS $HEALTHY; do kill -9 "$p" 2>/dev/null; done; }
trap cleanup EXIT

step "specdash sampler on this machine (NVML expected)"
timeout 60 $PY - <<PYEOF
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
    wanted = {int(x) for x in "$ORPHANS $HEALTHY".split()}
    seen = {p.pid for p in snap.processes}
    print("NVML" if snap.source == "nvml" else "NOT NVML", "| our PIDs seen by the driver:", sorted(wanted & seen),
          "| missing:", sorted(wanted - seen))
    if wanted - seen and seen:
        print("HINT: the driver reports PIDs we cannot see: this looks like a container with its own PID namespace")
    raise SystemExit(0 if snap.source == "nvml" and not (wanted - seen) else 1)
asyncio.run(main())
PYEOF
[ $? -eq 0 ] && ok "NVML sampling sees the holders" || bad "NVML sampling (see above)"

step "specdash ps local"
timeout 60 $SPECDASH ps local
timeout 60 $SPECDASH ps local --json > "$WORK/ps.json"; echo "exit $?"
cat "$WORK/ps.json"; echo
$PY - "$WORK/ps.json" "$ORPHANS" "$HEALTHY" "$HOLD_MIB" <<'PYEOF'
import json, sys
data = json.load(open(sys.argv[1]))
orphans, healthy, mib = {int(x) for x in sys.argv[2].split()}, int(sys.argv[3]), int(sys.argv[4])
procs = {p["pid"]: p for p in data["processes"]}
ok = True
for pid in orphans:
    p = procs.get(pid)
    good = p is not None and p["class"] == "orphan" and (p["used_mib"] or 0) >= mib * 0.9
    print(("PASS" if good else "FAIL") + f": orphan {pid}: {p}")
    ok &= good
p = procs.get(healthy)
good = p is not None and p["class"] not in ("orphan", "zombie")
print(("PASS" if good else "FAIL") + f": healthy holder {healthy} not offered for cleaning: {p}")
ok &= good
print("GPUs:", data["gpus"])
sys.exit(0 if ok else 1)
PYEOF
[ $? -eq 0 ] || FAILED=1

step "specdash clean local --yes"
timeout 120 $SPECDASH clean local --yes --grace-s 5 --timeout-s 60
RC=$?
echo "exit $RC"
[ $RC -eq 0 ] && ok "clean reported the memory released" || bad "clean exit $RC"
for p in $ORPHANS; do
  if [ -e "/proc/$p" ] && ! grep -q '^State:.*Z' "/proc/$p/status" 2>/dev/null; then bad "orphan $p still alive"; else ok "orphan $p gone"; fi
done
if [ -e "/proc/$HEALTHY" ]; then ok "healthy holder $HEALTHY untouched"; else bad "healthy holder $HEALTHY was killed"; fi
sleep 1
timeout 30 nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory,process_name --format=csv,noheader > "$WORK/after.csv"
cat "$WORK/after.csv"
for p in $ORPHANS; do
  if grep -q "^$p," "$WORK/after.csv"; then bad "driver still lists orphan $p"; else ok "driver released orphan $p"; fi
done
timeout 60 $SPECDASH ps local

step "result"
cleanup
trap - EXIT
rm -rf "$WORK"
if [ $FAILED -eq 0 ]; then echo "DEVICE CHECK PASSED"; else echo "DEVICE CHECK FAILED"; fi
exit $FAILED
