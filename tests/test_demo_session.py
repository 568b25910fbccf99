"""The shipped demonstration session agrees with itself: one SGLang release everywhere (the one the demo script
sets for the test double and writes in the header), and the depth sweep the README describes (baseline vs 16, 10
and 5 draft tokens)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from specdash.session.reader import read_session
from specdash.session.summary import summary_lines

REPO = Path(__file__).resolve().parent.parent
SHIPPED = REPO / "sessions" / "demo-eagle3-field-reports.yaml.gz"


def demo_script():
    spec = importlib.util.spec_from_file_location("make_demo_session", REPO / "tools" / "make_demo_session.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_one_sglang_release_in_the_script_the_scenarios_and_the_recording():
    version = demo_script().SGLANG_VERSION
    for scenario in (REPO / "tools" / "demo_scenarios").glob("*.yaml"):
        assert not re.search(r"^version:", scenario.read_text(), re.M), scenario  # the script sets it, once
    session = read_session(SHIPPED)
    assert session.header.sglang_version == version
    text = "\n".join(summary_lines(session))
    named = set(re.findall(r"SGLang (\d+\.\d+(?:\.\d+)?(?:rc\d+)?)\b", text))
    assert named == {version}, named  # e.g. no "SGLang 0.4.10 has no ..." from a probe that saw another release


def test_the_demo_sweep_is_the_readme_sweep():
    readme = (REPO / "README.md").read_text()
    assert "baseline vs 16/10/5 draft tokens" in readme
    (sweep,) = read_session(SHIPPED).of_kind("sweep")
    assert [p["label"] for p in sweep.points] == ["baseline", "chain-16", "chain-10", "chain-5"]


def test_the_demo_follows_only_the_servers_it_launched():
    session = read_session(SHIPPED)
    ports = {m for e in session.of_kind("command") for m in re.findall(r"--port (\d+)", e.command)}
    assert len(ports) == 1, ports  # never another server found running on the recording machine
    first_launch = next(e.t for e in session.of_kind("command") if e.action == "launched")
    assert not [e for e in session.of_kind("finding") if e.t < first_launch]
