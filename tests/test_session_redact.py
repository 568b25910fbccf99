"""Secrets never reach a session file: tokens in env assignments, flag values, URLs, headers, server_args logs."""

from __future__ import annotations

import pytest

from specdash.session.reader import read_session
from specdash.session.recorder import Recorder
from specdash.text.redaction import REDACTED, is_secret_name, redact_text, redact_value

HF = "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"


@pytest.mark.parametrize(
    "text, secret",
    [
        (f"HF_TOKEN={HF} python -m sglang.launch_server --model-path m", HF),
        ("export OPENAI_API_KEY='sk-abc' && python3 -m sglang.launch_server", "sk-abc"),
        ("env AWS_SECRET=topsecret DB_PASSWORD=hunter2 python -m x", "topsecret"),
        ("env AWS_SECRET=topsecret DB_PASSWORD=hunter2 python -m x", "hunter2"),
        ("python -m sglang.launch_server --api-key s3cr3t --port 30000", "s3cr3t"),
        ("python -m sglang.launch_server --api-key=s3cr3t --port 30000", "s3cr3t"),
        ("sglang serve --admin-api-key adm1n --model-path m", "adm1n"),
        ("huggingface-cli download m --hf-token tok123", "tok123"),
        ("curl http://alice:pa55w0rd@10.0.0.5:30000/health", "pa55w0rd"),
        ("curl 'http://h:30000/v1/models?api_key=qwerty&x=1'", "qwerty"),
        ('curl -H "Authorization: Bearer eyJhbGciOi.abc-123" http://h/v1/models', "eyJhbGciOi.abc-123"),
        ("server_args=ServerArgs(model_path='m', api_key='zzz-key', admin_api_key=None, port=30000)", "zzz-key"),
        ('{"model": "m", "api_key": "json-secret"}', "json-secret"),
        (f"downloading with token {HF}", HF),
    ],
)
def test_secret_is_replaced_and_context_kept(text, secret):
    out = redact_text(text)
    assert secret not in out
    assert REDACTED in out
    assert redact_text(out) == out  # idempotent


@pytest.mark.parametrize(
    "text",
    [
        "python -m sglang.launch_server --speculative-token-map /data/map.pt --max-total-tokens 8192 "
        "--speculative-eagle-topk 1 --ssl-keyfile /etc/k.pem --api-key --port 30000",
        "[2025-10-22 10:27:57 TP0] Decode batch. #running-req: 1, #token: 108, token usage: 0.00, accept len: 2.17",
        "server_args=ServerArgs(api_key=None, admin_api_key=None, tokenizer_path='m', max_prefill_tokens=16384)",
        "CUDA_VISIBLE_DEVICES=0,1 SGLANG_ENABLE_SPEC_V2=1 python -m sglang.launch_server",
        "curl http://bob@h:30000/health",
    ],
)
def test_non_secrets_are_untouched(text):
    assert redact_text(text) == text


def test_names_that_hold_secrets():
    assert all(map(is_secret_name, ["HF_TOKEN", "OPENAI_API_KEY", "api_key", "MY_SECRET", "DB_PASSWORD"]))
    assert not any(map(is_secret_name, ["CUDA_VISIBLE_DEVICES", "max_total_tokens", "speculative_token_map"]))


def test_structures_are_walked_and_secret_keys_redacted():
    value = {"env": {"HF_TOKEN": "plain", "CUDA_VISIBLE_DEVICES": "0"}, "argv": ["--api-key", "k1"],
             "rows": [(1, "--hf-token t2")]}
    out = redact_value(value)
    assert out["env"] == {"HF_TOKEN": REDACTED, "CUDA_VISIBLE_DEVICES": "0"}
    assert out["rows"] == [[1, f"--hf-token {REDACTED}"]]
    assert value["env"]["HF_TOKEN"] == "plain"  # input not modified


def test_recorder_writes_no_secret_anywhere(tmp_path):
    path = tmp_path / "s.yaml"
    secrets = [HF, "s3cr3t", "pa55w0rd", "bearer-tok-123"]
    with Recorder(path, {"host": "h", "note": f"token {HF}"}, timer=False) as rec:
        rec.record("command", action="launched",
                   command=f"HF_TOKEN={HF} python -m sglang.launch_server --api-key s3cr3t",
                   effective={"api_key": "s3cr3t"})
        rec.record("log", lines=[[0, "server_args=ServerArgs(api_key='s3cr3t', port=30000)"],
                                 [60, "GET http://u:pa55w0rd@h/health Authorization: Bearer bearer-tok-123"]])
        rec.record("connection", state="failed", detail="ssh://u:pa55w0rd@h refused")
    raw = path.read_text()
    for secret in secrets:
        assert secret not in raw
    log = read_session(path)
    assert log.events[0].command.endswith(f"--api-key {REDACTED}")
    assert log.events[1].lines[0][1] == f"server_args=ServerArgs(api_key='{REDACTED}', port=30000)"
