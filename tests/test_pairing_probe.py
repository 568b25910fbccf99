"""The probe: SGLang's own set_eagle3_layers_to_capture on a stand-in object, run through a Host.

Two SGLangs: a torch-free stand-in package (tests/data/pairing/fake_sglang, method bodies copied from the 0.5.23
wheel) that exercises the probe's mechanics with a real python process, and the real SGLang 0.5.23 in
~/.cache/specdash-oracle/venv (marker ``oracle``; skipped when that venv is absent), which must agree with the
0.5.23 rules on every worked-example pair.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.pairing import DATA, WORKED, load

from specdash.hosts.local import LocalHost
from specdash.sglang.pairing import analyze_pairing, parse_probe_output, run_probe
from specdash.sglang.pairing.configs import draft_facts
from specdash.sglang.pairing.probe import PROBE_SCRIPT, probe_request, run_probe_batch

FAKE = DATA / "fake_sglang"
ORACLE_DIR = Path.home() / ".cache" / "specdash-oracle"
#: The real SGLang 0.5.23 venv: ~/.cache/specdash-oracle/venv (as briefed) or the venv made at the folder itself.
ORACLE_PYTHON = next(
    (p for p in (ORACLE_DIR / "venv" / "bin" / "python", ORACLE_DIR / "bin" / "python") if p.exists()),
    ORACLE_DIR / "venv" / "bin" / "python",
)


def fake_host() -> LocalHost:
    return LocalHost(env=dict(os.environ, PYTHONPATH=str(FAKE)))


@pytest.mark.parametrize(
    "target, draft",
    [
        ("llama31_8b", "llama31_8b_draft_vllm_ids"),
        ("deepseek_v3", "deepseek_v3_draft_vllm_ids"),
        ("kimi_k25", "kimi_k25_draft_vllm_export"),  # wrapper: delegates to its DeepseekV3 language model
        ("kimi_k25", "kimi_k25_draft_torchspec"),
        ("gpt_oss_120b", "gpt_oss_draft_nvidia_v3"),
        ("gpt_oss_120b", "gpt_oss_draft_noids"),
    ],
)
async def test_probe_runs_the_installed_method_and_agrees_with_the_rules(target, draft):
    target_cfg, draft_cfg = load(f"{target}_target"), load(draft)
    probe = await run_probe(fake_host(), target_cfg, draft_facts(draft_cfg).nested_ids, python=sys.executable)
    assert probe["ok"], probe
    assert probe["sglang_version"] == "0.5.23+fake"
    report = analyze_pairing(target_cfg, draft_cfg, probe_result=probe)
    rules = analyze_pairing(target_cfg, draft_cfg, sglang_version="0.5.23")
    assert report.source == "probe"
    assert report.captured_boundaries == rules.captured_boundaries == probe["captured"]
    assert not report.by_code("probe-rules-disagree")


async def test_probe_reports_the_final_boundary_feature():
    gpt = await run_probe(fake_host(), load("gpt_oss_120b_target"), [24, 30, 36], python=sys.executable)
    llama = await run_probe(fake_host(), load("llama31_8b_target"), None, python=sys.executable)
    assert gpt["final_boundary_capturable"] is True and gpt["captured"] == [24, 30, 36]
    assert llama["final_boundary_capturable"] is False and llama["captured"] == [2, 16, 29]


async def test_probe_patches_module_level_parallel_context():
    """minimax_m2.py asks get_parallel() for the pipeline rank; the probe stands in for it."""
    target = {"architectures": ["MiniMaxM2ForCausalLM"], "num_hidden_layers": 62, "hidden_size": 3072}
    probe = await run_probe(fake_host(), target, [1, 30, 58], python=sys.executable)
    assert probe["ok"] and probe["captured"] == [2, 31, 59]


@pytest.mark.parametrize(
    "arch, ids, expected",
    [
        ("Llama4ForConditionalGeneration", None, [2, 24, 45]),  # language model class imported inside __init__
        ("Llama4ForConditionalGeneration", [1, 23, 44], [2, 24, 45]),
        ("Qwen3_5ForCausalLM", None, [2, 24, 45]),  # the EntryClass module wins over a same-named class
        ("Qwen3_5ForCausalLM", [1, 23, 44], [2, 24, 45]),
    ],
)
async def test_probe_resolves_the_registered_class(arch, ids, expected):
    target = {"architectures": [arch], "num_hidden_layers": 48, "text_config": {"num_hidden_layers": 48}}
    probe = await run_probe(fake_host(), target, ids, python=sys.executable)
    assert probe["ok"], probe
    assert probe["captured"] == expected


async def test_probe_of_a_class_without_the_hook():
    target = {"architectures": ["MixtralForCausalLM"], "num_hidden_layers": 32}
    probe = await run_probe(fake_host(), target, None, python=sys.executable)
    assert not probe["ok"] and "does not implement set_eagle3_layers_to_capture" in probe["error"]


async def test_probe_of_an_unknown_class():
    target = {"architectures": ["NoSuchForCausalLM"], "num_hidden_layers": 32}
    probe = await run_probe(fake_host(), target, None, python=sys.executable)
    assert not probe["ok"] and "not supported" in probe["error"]


async def test_probe_without_sglang_falls_back_to_the_rules():
    host = LocalHost(env=dict(os.environ, PYTHONPATH=str(DATA / "no-such-dir"), PYTHONNOUSERSITE="1"))
    probe = await run_probe(host, load("llama31_8b_target"), [1, 15, 28], python=sys.executable)
    if probe.get("ok"):
        pytest.skip("a real sglang is installed in this python")
    assert "sglang is not importable" in probe["error"]
    report = analyze_pairing(load("llama31_8b_target"), load("llama31_8b_draft_trainer_ids"), probe_result=probe)
    assert report.source == "rules:0.5.23"
    assert report.by_code("probe-failed")[0].severity == "info"
    assert report.captured_boundaries == [2, 16, 29]


async def test_probe_with_a_missing_python():
    probe = await run_probe(LocalHost(), load("llama31_8b_target"), None, python="/nonexistent/python3")
    assert not probe["ok"] and probe["error"]


def test_parse_probe_output_ignores_noise():
    out = 'WARNING something\nSPECDASH_PROBE {"ok": true, "captured": [2, 16, 29]}\n'
    assert parse_probe_output(out)["captured"] == [2, 16, 29]
    assert parse_probe_output("", "Traceback...\nModuleNotFoundError: No module named 'torch'\n", 1) == {
        "ok": False, "error": "ModuleNotFoundError: No module named 'torch'"}


def test_probe_disagreement_is_reported():
    probe = {"ok": True, "sglang_version": "0.5.23", "captured": [3, 31, 59], "final_boundary_capturable": False}
    report = analyze_pairing(load("deepseek_v3_target"), load("deepseek_v3_draft_vllm_ids"), probe_result=probe)
    assert report.captured_boundaries == [3, 31, 59]
    assert report.by_code("probe-rules-disagree")


async def test_batch_probe_answers_every_request_in_one_process():
    pairs = [(load(f"{t}_target"), load(d)) for t, d, _ in WORKED if t != "qwen3_235b"]
    pairs.append(({"architectures": ["MixtralForCausalLM"], "num_hidden_layers": 32}, {}))
    requests = [probe_request(t, draft_facts(d).nested_ids) for t, d in pairs]
    results = await run_probe_batch(fake_host(), requests, python=sys.executable)
    assert len(results) == len(pairs)
    for (target_cfg, draft_cfg), probe in zip(pairs[:-1], results[:-1], strict=False):
        assert probe["ok"], probe
        assert probe["captured"] == analyze_pairing(target_cfg, draft_cfg, sglang_version="0.5.23").captured_boundaries
    assert not results[-1]["ok"]


def oracle_agreement(results, pairs) -> tuple[int, list]:
    """(pairs that agree, disagreements) between probe results and the 0.5.23 rules."""
    agree, disagreements = 0, []
    for (name, target_cfg, draft_cfg), probe in zip(pairs, results, strict=False):
        rules = analyze_pairing(target_cfg, draft_cfg, sglang_version="0.5.23").captured_boundaries
        if probe.get("ok") and probe["captured"] == rules:
            agree += 1
        else:
            disagreements.append((name, probe, rules))
    return agree, disagreements


@pytest.fixture(scope="module")
def oracle_env() -> dict:
    """Environment for probing the real SGLang venv; skips when it is absent or cannot import model files.

    SPECDASH_ORACLE_EXTRA_PATH: a folder with the model files' extra dependencies (einops, dill, ...) that a venv
    built only for ServerArgs lacks; it goes first on the probe's PYTHONPATH.
    """
    if os.environ.get("SPECDASH_ORACLE") != "1":
        pytest.skip("set SPECDASH_ORACLE=1 to probe the real SGLang venv (an SGLang+torch import per probe)")
    if not ORACLE_PYTHON.exists():
        pytest.skip("no real SGLang venv at ~/.cache/specdash-oracle/venv")
    env = dict(os.environ)
    if os.environ.get("SPECDASH_ORACLE_EXTRA_PATH"):
        env["PYTHONPATH"] = os.environ["SPECDASH_ORACLE_EXTRA_PATH"]
    # one process imports the model file of every worked-example target: an incomplete venv skips here, once
    targets = sorted({t for t, _, _ in WORKED})
    requests = [probe_request(load(f"{t}_target"), None) for t in targets]
    proc = subprocess.run([str(ORACLE_PYTHON), "-c", PROBE_SCRIPT, json.dumps(requests)], capture_output=True,
                          text=True, env=env, timeout=300)
    preflight = parse_probe_output(proc.stdout, proc.stderr, proc.returncode)
    results = preflight.get("batch") or [preflight]
    missing = sorted({str(r.get("error")) for r in results if _import_error(r)})
    if missing:
        pytest.skip(f"the oracle venv cannot import SGLang's model files: {missing[0]}")
    assert all(r.get("ok") for r in results), results
    assert str(preflight["sglang_version"]).startswith("0.5.23"), preflight
    return env


@pytest.mark.oracle
@pytest.mark.timeout(600)
async def test_real_sglang_agrees_with_the_rules_on_every_worked_pair(oracle_env):
    pairs = [(draft, load(f"{target}_target"), load(draft)) for target, draft, _ in WORKED]
    requests = [probe_request(t, draft_facts(d).nested_ids) for _, t, d in pairs]
    results = await run_probe_batch(LocalHost(env=oracle_env), requests, python=str(ORACLE_PYTHON), timeout_s=500)
    missing = sorted({str(r.get("error")) for r in results if _import_error(r)})
    if missing:
        pytest.skip(f"the oracle venv cannot import some SGLang model files: {missing[0]}")
    agree, disagreements = oracle_agreement(results, pairs)
    print(f"probe-vs-rules agreement on the worked pairs: {agree}/{len(pairs)}")
    assert disagreements == []


def _import_error(result: dict) -> bool:
    return not result.get("ok") and str(result.get("error")).startswith(("ModuleNotFoundError", "ImportError"))


@pytest.mark.oracle
@pytest.mark.timeout(900)
@pytest.mark.skipif(not os.environ.get("SPECDASH_ORACLE_SWEEP"), reason="set SPECDASH_ORACLE_SWEEP=1 (about 2 min)")
async def test_real_sglang_sweep_over_every_capture_architecture(oracle_env):
    """Every architecture in the capture table x six id sets (none, trainer default, vLLM default, an id equal to
    N, an id 0, first id 1 with N): probe == 0.5.23 rules. One process per run; a module whose import fails in
    this venv poisons later imports of that process, so the run restarts after it (and the arch is reported)."""
    from specdash.sglang.pairing.architectures import TARGET_CAPTURE_FAMILY

    n = 48
    id_sets = [None, [1, n // 2 - 1, n - 4], [2, n // 2, n - 3], [3, 10, n], [0, 5, 9], [1, 20, n]]

    def pairs_for(arch):
        target = {"architectures": [arch], "num_hidden_layers": n, "hidden_size": 1024, "vocab_size": 1000,
                  "text_config": {"num_hidden_layers": n, "hidden_size": 1024, "vocab_size": 1000}}
        drafts = [{"architectures": ["LlamaForCausalLMEagle3"], "hidden_size": 1024,
                   **({"eagle_config": {"eagle_aux_hidden_state_layer_ids": ids}} if ids is not None else {})}
                  for ids in id_sets]
        return [(f"{arch} {ids}", target, d) for ids, d in zip(id_sets, drafts, strict=False)]

    remaining = sorted(TARGET_CAPTURE_FAMILY)
    agree = total = 0
    failed, disagreements = [], []
    while remaining:
        pairs = [p for arch in remaining for p in pairs_for(arch)]
        requests = [probe_request(t, draft_facts(d).nested_ids) for _, t, d in pairs]
        results = await run_probe_batch(LocalHost(env=oracle_env), requests, python=str(ORACLE_PYTHON), timeout_s=590)
        first_failure = next((i for i, r in enumerate(results) if not r.get("ok")), None)
        good = len(results) if first_failure is None else first_failure
        ok_agree, bad = oracle_agreement(results[:good], pairs[:good])
        agree, total = agree + ok_agree, total + good
        disagreements += bad
        if first_failure is None:
            break
        arch = pairs[first_failure][0].split(" ")[0]
        failed.append((arch, results[first_failure].get("error")))
        if _import_error(results[first_failure]):
            break  # an incomplete venv: each retry would cost a full SGLang import
        remaining = remaining[remaining.index(arch) + 1:]
    print(f"probe-vs-rules agreement over the capture table: {agree}/{total}; not probeable: {failed}")
    assert disagreements == []
    assert [f for f in failed if not str(f[1]).startswith(("ModuleNotFoundError", "ImportError"))] == []
    if failed:
        pytest.skip(f"{agree}/{total} agree; the oracle venv cannot import the model files of {[f[0] for f in failed]}")
