"""The bare ``org--name`` model directory gets the repo-id note only when it splits one way."""

from __future__ import annotations

import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from specdash.sglang.rules.shell import bare_repo_id
from specdash.sglang.validate import validate_command

_PART = st.from_regex(r"\A[A-Za-z0-9](?:[A-Za-z0-9_.]|-[A-Za-z0-9_.])*[A-Za-z0-9]\Z").filter(
    lambda s: ".." not in s and "--" not in s)


@settings(max_examples=200, deadline=None)
@given(_PART, _PART, st.sampled_from(["", "/data/", "/mnt/hub/", "./"]), st.sampled_from(["", "/"]))
def test_one_double_dash_between_valid_parts_gives_the_repo_id(org, name, prefix, slash):
    assert bare_repo_id(f"{prefix}{org}--{name}{slash}") == f"{org}/{name}"
    assert bare_repo_id(f"{prefix}{org}--{name}--x") is None  # two ways to split: no note
    assert bare_repo_id(f"{prefix}{org}{name}") is None


def test_cases_that_are_not_one_repo():
    for path in ("/m/models--Qwen--Qwen3-8B", "Qwen3-8B", "x---y", "-a--b", "a--", "--model", "a..b--c"):
        assert bare_repo_id(path) is None, path


def test_validate_shows_the_note_and_the_cache_form_keeps_its_own():
    report = validate_command("python3 -m sglang.launch_server --model-path /data/hub/Qwen--Qwen3-8B --tp 1")
    diag = report.find("hf-cache-path")
    assert diag is not None and diag.severity == "info"
    assert diag.message == ("--model-path ends in Qwen--Qwen3-8B, the form Hugging Face gives the repo Qwen/Qwen3-8B "
                            "in cache directory names; if it is that model, the repo id Qwen/Qwen3-8B names it on "
                            "another host.")
    cache = validate_command("python3 -m sglang.launch_server --model-path "
                             "/root/.cache/huggingface/hub/models--Qwen--Qwen3-8B/snapshots/9c925d64 --tp 1")
    assert "a Hugging Face cache directory of Qwen/Qwen3-8B, snapshot 9c925d64" in cache.find("hf-cache-path").message
    plain = validate_command("python3 -m sglang.launch_server --model-path /data/my--own--model --tp 1")
    assert plain.find("hf-cache-path") is None
    out = subprocess.run([sys.executable, "-m", "specdash", "validate", "--", "python3", "-m", "sglang.launch_server",
                          "--model-path", "deepseek-ai--DeepSeek-V3", "--tp", "8"], capture_output=True, timeout=120)
    assert "info     hf-cache-path [--model-path]: --model-path ends in deepseek-ai--DeepSeek-V3" in out.stdout.decode()
