"""The redaction corpus (tests/redaction_corpus.py: 50 real-shaped secrets in ~30 positions each) is redacted
100 % in redact_text, in session files (plain and .gz) and in `replay --summary` of a hand-written session; an
ordinary SGLang log is left exactly as it is."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import pytest
from redaction_corpus import NAMED_POSITIONS, SECRETS, cases

from specdash.session.recorder import Recorder
from specdash.text.redaction import REDACTED, is_secret_name, redact_text

CASES = cases()


def test_corpus_size():
    assert len(SECRETS) >= 50
    assert len(CASES) >= len(SECRETS) * len(NAMED_POSITIONS)


def test_every_secret_in_every_position_is_redacted():
    leaked = [text for text, secret in CASES if secret in redact_text(text)]
    assert leaked == []
    assert all(REDACTED in redact_text(text) for text, _ in CASES)


def test_redaction_is_idempotent_and_keeps_the_context():
    for text, _ in CASES[:: 7]:
        once = redact_text(text)
        assert redact_text(once) == once
    assert redact_text(f"HF_TOKEN={SECRETS[0]} python3 -m sglang.launch_server --port 30000") == \
        f"HF_TOKEN={REDACTED} python3 -m sglang.launch_server --port 30000"
    assert redact_text("HF_TOKEN=abc\\ Xyz1 python3 -m x") == f"HF_TOKEN={REDACTED} python3 -m x"
    assert redact_text("X-API-Key: k3y") == f"X-API-Key: {REDACTED}"
    assert redact_text('Cookie: a=1; b=2') == f"Cookie: {REDACTED}"
    assert redact_text("Authorization: Basic dXNlcjpwYXNz") == f"Authorization: Basic {REDACTED}"


@pytest.mark.parametrize("name", ["HF_TOKEN", "HF_TOKEN2", "GH_PAT", "MY_PAT", "MYSQL_PWD", "X-API-Key", "api-key",
                                  "Cookie", "aws_secret_access_key", "ssl_keyfile_password", "DB_PASSWORD"])
def test_secret_names(name):
    assert is_secret_name(name)


@pytest.mark.parametrize("name", ["PATH", "LD_LIBRARY_PATH", "PWD", "OLDPWD", "max_total_tokens", "tokenizer_path",
                                  "speculative_token_map", "ssl_keyfile", "CUDA_VISIBLE_DEVICES", "dispatch"])
def test_not_secret_names(name):
    assert not is_secret_name(name)


def test_an_ordinary_sglang_log_is_untouched(tmp_path):
    log = tmp_path / "server.log"
    subprocess.run([sys.executable, str(Path(__file__).parents[1] / "benchmarks" / "bench_log_generate.py"),
                    str(log), "20000"], check=True)
    lines = log.read_text(errors="replace").splitlines()
    changed = [line for line in lines if redact_text(line) != line]
    assert changed == []


@pytest.mark.parametrize("name", ["s.yaml", "s.yaml.gz"])
def test_session_files_hold_no_secret(tmp_path, name):
    path = tmp_path / name
    with Recorder(path, {"host": "h", "note": CASES[0][0]}, timer=False) as rec:
        for i, (text, _) in enumerate(CASES):
            rec.record("command", t=i, action="launched", command=text, effective={"note": text})
            rec.record("log", t=i + 0.5, lines=[[i, text]], source="/var/log/sglang.log")
            rec.record("marker", t=i + 0.6, level="warning", text=text)
    raw = gzip.decompress(path.read_bytes()).decode() if name.endswith(".gz") else path.read_text()
    raw = raw.encode().decode("unicode_escape", errors="replace") + raw  # JSON escapes undone, and as written
    leaked = sorted({secret for secret in SECRETS if secret in raw})
    assert leaked == []


def test_replay_summary_of_a_hand_written_session_shows_no_secret(tmp_path):
    """A session file not written by specdash's recorder (hand-edited, or from an older version) still prints no
    secret in `replay --summary`."""
    path = tmp_path / "hand.yaml"
    docs = ["--- \nkind: header\nt: 0\nhost: h\nnote: 'started with " + SECRETS[0] + "'\n"]
    for i, (text, _) in enumerate(CASES[::3]):
        docs.append("---\n" + "\n".join([
            "kind: command", f"t: {i}", "action: launched", "command: " + _yaml_str(text)]) + "\n")
        docs.append("---\n" + "\n".join(["kind: marker", f"t: {i}", "level: error", "text: " + _yaml_str(text)])
                    + "\n")
    path.write_text("".join(docs) + "---\nkind: end\nt: 9999\n")
    out = subprocess.run([sys.executable, "-m", "specdash", "replay", "--summary", str(path)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "config      launched" in out.stdout and REDACTED in out.stdout
    leaked = sorted({secret for text, secret in CASES[::3] if secret in out.stdout} | (
        {SECRETS[0]} if SECRETS[0] in out.stdout else set()))
    assert leaked == []


def _yaml_str(text: str) -> str:
    import json

    return json.dumps(text)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_no_secret_leaks_through_its_neighbours(seed):
    """Many secrets in one text (a multi-line command, a pasted block): an unclosed quote or a value on one line
    must not swallow the next line's secret."""
    import random

    shuffled = list(CASES)
    random.Random(seed).shuffle(shuffled)
    out = redact_text("\n".join(text for text, _ in shuffled))
    assert [secret for _, secret in shuffled if secret in out] == []
