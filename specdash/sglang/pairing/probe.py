"""The authoritative probe: ask the installed SGLang which target boundaries it captures.

The script below runs with the host's python (where SGLang is installed). It imports only the module that defines
the target's model class, builds a lightweight stand-in object of that class (``object.__new__``: no ``__init__``,
nothing loaded, no GPU), attaches a recording stand-in for ``self.model`` (and for ``self.language_model`` of
multimodal wrappers, built from the class the wrapper's ``__init__`` assigns), calls SGLang's own
``set_eagle3_layers_to_capture(layer_ids)`` and prints one JSON line ``SPECDASH_PROBE {...}``:

``{"ok": true, "sglang_version": "0.5.23", "model_class": "DeepseekV3ForCausalLM", "method_module": "...",
"captured": [2, 30, 58], "final_boundary_capturable": false}`` or ``{"ok": false, "error": "..."}``.

``final_boundary_capturable`` is a feature probe of the capturing module's source (gpt-oss after SGLang PR #32334): true
when its forward captures ``end_layer`` / ``i + 1`` (gpt-oss after PR #32334).
"""

from __future__ import annotations

import json

from specdash.sglang.pairing.configs import text_config

PROBE_MARKER = "SPECDASH_PROBE "

PROBE_SCRIPT = r'''
import glob, importlib, inspect, json, os, re, sys, types

def out(d):
    sys.stdout.write("SPECDASH_PROBE " + json.dumps(d) + "\n")
    sys.stdout.flush()
    sys.exit(0)

try:
    req = json.loads(sys.argv[1])
except Exception as e:
    out({"ok": False, "error": "bad probe request: %s" % e})
try:
    import sglang
except Exception as e:
    out({"ok": False, "error": "sglang is not importable: %s: %s" % (type(e).__name__, e)})
version = getattr(sglang, "__version__", None)
if version is None:
    try:
        from importlib.metadata import version as _v
        version = _v("sglang")
    except Exception:
        version = None
models_dir = os.path.join(os.path.dirname(sglang.__file__), "srt", "models")

def load_class(arch):
    # the module whose EntryClass names the class wins (two files may define classes of one name)
    pat = re.compile(r"^class\s+%s\s*[(:]" % re.escape(arch), re.M)
    entry = re.compile(r"^EntryClass\s*=[^\n]*(\n[ \t][^\n]*)*", re.M)
    defining, registering = [], []
    for path in sorted(glob.glob(os.path.join(models_dir, "*.py"))):
        try:
            text = open(path, encoding="utf-8").read()
        except OSError:
            continue
        if pat.search(text):
            defining.append(path)
            m = entry.search(text)
            if m and re.search(r"\b%s\b" % re.escape(arch), m.group(0)):
                registering.append(path)
    for path in registering + [p for p in defining if p not in registering]:
        mod = importlib.import_module("sglang.srt.models." + os.path.basename(path)[:-3])
        cls = getattr(mod, arch, None)
        if cls is not None:
            return cls
    from sglang.srt.models.registry import ModelRegistry
    cls, _ = ModelRegistry.resolve_model_cls([arch])
    return cls

def ns(value):
    if isinstance(value, dict):
        o = types.SimpleNamespace()
        for k, v in value.items():
            if isinstance(k, str) and k.isidentifier():
                setattr(o, k, ns(v))
        return o
    if isinstance(value, list):
        return [ns(v) for v in value]
    return value

PP = types.SimpleNamespace(is_last_rank=True, is_first_rank=True, rank_in_group=0, world_size=1)
sink = []

class Recorder(object):
    def __init__(self, n):
        object.__setattr__(self, "layers", [types.SimpleNamespace() for _ in range(n)])
    def __setattr__(self, key, value):
        if key == "layers_to_capture":
            sink.append([int(v) for v in value])
        object.__setattr__(self, key, value)
    def set_eagle3_layers_to_capture(self, layer_ids):
        if layer_ids is None:
            raise ValueError("the wrapper's language-model class was not found; cannot resolve its default layers")
        self.layers_to_capture = list(layer_ids)

def inner_class(cls):
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        try:
            src = inspect.getsource(init)
        except Exception:
            continue
        m = re.search(r"self\.language_model\s*=\s*([A-Za-z_][A-Za-z0-9_]*)\s*\(", src)
        if m:
            name = m.group(1)
            found = init.__globals__.get(name)
            if found is None:  # imported inside __init__ (mllama4.py: from sglang.srt.models.llama4 import ...)
                found = load_class(name)
            return found
    return None

def stand_in(cls, config, n, depth=0):
    obj = object.__new__(cls)
    d = obj.__dict__
    d["config"] = ns(config)
    d["pp_group"] = PP
    d["model"] = Recorder(n)
    d["capture_aux_hidden_states"] = False
    inner = inner_class(cls) if depth == 0 else None
    if inner is not None and isinstance(inner, type):
        tc = config.get("text_config") if isinstance(config.get("text_config"), dict) else config
        d["language_model"] = stand_in(inner, tc, n, depth + 1)
    else:
        d["language_model"] = Recorder(n)
    return obj

def patch_globals(fn, saved):
    g = getattr(fn, "__globals__", {})
    for name in ("get_parallel", "get_pp_group"):
        if name in g and (id(g), name) not in saved:
            saved[(id(g), name)] = (g, name, g[name])
            g[name] = lambda *a, **k: types.SimpleNamespace(pp_group=PP, is_last_rank=True, is_first_rank=True)

class Done(Exception):
    def __init__(self, result):
        self.result = result

def fail(result):
    raise Done(result)

def probe_one(req):
    del sink[:]
    arch = req["architecture"]
    cls = load_class(arch)
    if cls is None:
        fail({"ok": False, "sglang_version": version, "error": "SGLang has no model class %s" % arch})
    if not hasattr(cls, "set_eagle3_layers_to_capture"):
        fail({"ok": False, "sglang_version": version, "model_class": cls.__name__,
              "error": "Model %s does not implement set_eagle3_layers_to_capture" % cls.__name__})
    n = int(req["num_layers"])
    obj = stand_in(cls, req["config"], n)
    saved = {}
    patch_globals(cls.set_eagle3_layers_to_capture, saved)
    lm = obj.__dict__.get("language_model")
    if lm is not None and hasattr(type(lm), "set_eagle3_layers_to_capture"):
        patch_globals(type(lm).set_eagle3_layers_to_capture, saved)
    try:
        obj.set_eagle3_layers_to_capture(req.get("layer_ids"))
    finally:
        for g, name, value in saved.values():
            g[name] = value
    captured = sink[-1] if sink else None
    if captured is None:
        for holder in (lm, obj):
            val = getattr(holder, "__dict__", {}).get("layers_to_capture")
            if isinstance(val, list):
                captured = [int(v) for v in val]
    if captured is None:
        fail({"ok": False, "sglang_version": version, "model_class": cls.__name__,
              "error": "set_eagle3_layers_to_capture set no layers_to_capture"})
    effective = cls
    if lm is not None and not isinstance(lm, Recorder) and hasattr(type(lm), "set_eagle3_layers_to_capture"):
        effective = type(lm)
    method_module = effective.set_eagle3_layers_to_capture.__module__
    try:
        src = inspect.getsource(sys.modules[method_module])
        final = bool(re.search(r"end_layer\s+in\s+self\.layers_to_capture"
                               r"|i\s*\+\s*1\s+in\s+self\.layers_to_capture", src))
    except Exception:
        final = None
    return {"ok": True, "sglang_version": version, "model_class": cls.__name__, "method_module": method_module,
            "captured": captured, "final_boundary_capturable": final}

def safe_probe(req):
    try:
        return probe_one(req)
    except Done as d:
        return d.result
    except BaseException as e:
        return {"ok": False, "sglang_version": version, "error": "%s: %s" % (type(e).__name__, e)}

if isinstance(req, list):
    out({"ok": True, "sglang_version": version, "batch": [safe_probe(r) for r in req]})
out(safe_probe(req))
'''


def probe_request(target_config: dict, layer_ids: list[int] | None) -> dict:
    """The JSON request the probe script takes: ``{"architecture", "num_layers", "config", "layer_ids"}``.

    Raises ValueError when the target config has no architecture or layer count.
    """
    archs = target_config.get("architectures") or []
    inner = text_config(target_config)
    n = inner.get("num_hidden_layers", target_config.get("num_hidden_layers"))
    if not archs or not isinstance(archs[0], str):
        raise ValueError("the target config has no architectures entry")
    if not isinstance(n, int):
        raise ValueError("the target config has no num_hidden_layers")
    return {"architecture": archs[0], "num_layers": n, "config": target_config, "layer_ids": layer_ids}


def probe_command(python: str, request: dict | list[dict]) -> str:
    """The POSIX shell command running :data:`PROBE_SCRIPT` with ``python`` (a path or name, e.g. ``python3``) on
    one request or a list of them (then the answer is ``{"ok": true, "batch": [result, ...]}``)."""
    from specdash.hosts.base import quote

    return f"{quote(python)} -c {quote(PROBE_SCRIPT)} {quote(json.dumps(request))}"


def parse_probe_output(stdout: str, stderr: str = "", exit_status: int = 0) -> dict:
    """The probe's JSON dict from its stdout (last ``SPECDASH_PROBE`` line); ``{"ok": False, "error": ...}`` when
    there is none (the error names the last stderr line, e.g. ``No module named sglang``)."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(PROBE_MARKER):
            try:
                data = json.loads(line[len(PROBE_MARKER):])
            except json.JSONDecodeError:
                break
            if isinstance(data, dict):
                return data
    tail = [ln for ln in stderr.strip().splitlines() if ln.strip()]
    reason = tail[-1].strip() if tail else f"no probe output (exit status {exit_status})"
    return {"ok": False, "error": reason[:300]}


async def run_probe_batch(host, requests: list[dict], *, python: str = "python3",
                          timeout_s: float = 300.0) -> list[dict]:
    """Run several :func:`probe_request` dicts in one python process (one SGLang import); one result dict per
    request, each as :func:`run_probe` returns. A failure of the whole run repeats its error for every request."""
    result = await host.run(probe_command(python, requests), timeout_s=timeout_s)
    if result.exit_status == -1 and "timeout" in result.stderr:
        return [{"ok": False, "error": f"probe timed out after {timeout_s:g} s"} for _ in requests]
    data = parse_probe_output(result.stdout, result.stderr, result.exit_status)
    batch = data.get("batch")
    if isinstance(batch, list) and len(batch) == len(requests):
        return [r if isinstance(r, dict) else {"ok": False, "error": "bad probe result"} for r in batch]
    return [dict(data) for _ in requests]


async def run_probe(host, target_config: dict, layer_ids: list[int] | None, *, python: str = "python3",
                    timeout_s: float = 180.0) -> dict:
    """Run the probe on ``host`` (a :class:`specdash.hosts.base.Host`) and return its dict (see module doc).

    Never raises for probe failures: returns ``{"ok": False, "error": ...}`` (no SGLang, no such class, timeout).
    Raises ValueError for a target config without architectures/num_hidden_layers; HostError when unreachable.
    """
    request = probe_request(target_config, layer_ids)
    result = await host.run(probe_command(python, request), timeout_s=timeout_s)
    if result.exit_status == -1 and "timeout" in result.stderr:
        return {"ok": False, "error": f"probe timed out after {timeout_s:g} s"}
    return parse_probe_output(result.stdout, result.stderr, result.exit_status)
