"""A corpus of real-shaped (fake) secrets and the positions users put them in: command lines, shell quoting and
escapes, HTTP headers, JSON (also JSON inside a JSON string), Python repr (SGLang's ``server_args=ServerArgs(...)``),
INI files, URLs and bare prose. Shared by the redaction, recorder, summary and launch tests."""

from __future__ import annotations

import base64
import random

_rng = random.Random(20261201)
_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def _s(n: int, alphabet: str = _ALNUM) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def _jwt() -> str:
    head = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
    body = base64.urlsafe_b64encode(f'{{"sub":"{_s(8)}","iat":1700000000}}'.encode()).decode().rstrip("=")
    return f"{head}.{body}.{_s(43, _ALNUM + '-_')}"


#: Secrets with a recognisable shape: redacted wherever they appear, even in prose.
SHAPED = (
    [f"hf_{_s(34)}" for _ in range(6)]
    + [f"sk-{_s(48)}" for _ in range(3)] + [f"sk-proj-{_s(40, _ALNUM + '-_')}" for _ in range(3)]
    + [f"ghp_{_s(36)}" for _ in range(3)] + [f"gho_{_s(36)}" for _ in range(2)]
    + [f"github_pat_{_s(22)}_{_s(59)}" for _ in range(3)]
    + [f"AKIA{_s(16, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567')}" for _ in range(3)]
    + [_jwt() for _ in range(3)]
    + [f"glpat-{_s(20)}" for _ in range(2)]
    + [f"xoxb-{_s(11, '0123456789')}-{_s(24)}" for _ in range(2)]
)
#: Secrets without a shape (passwords, AWS secret keys, random API keys): redacted where a name says so.
NAMED = (
    [_s(40, _ALNUM + "/+") for _ in range(4)]  # AWS secret access keys
    + [_s(32, "0123456789abcdef") for _ in range(4)]  # hex API keys
    + [f"Pw{_s(10)}!{_s(3)}" for _ in range(4)]
    + [f"{_s(6)}#{_s(6)}%" for _ in range(3)]
    + [_s(24, _ALNUM + "-_") for _ in range(5)]
)
SECRETS = SHAPED + NAMED

#: Positions where a secret under a name is written (``{s}`` is the secret).
NAMED_POSITIONS = [
    "HF_TOKEN={s} python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct",
    "export HF_TOKEN2='{s}' && python3 -m sglang.launch_server --port 30000",
    'GH_PAT="{s}" git clone https://github.com/sgl-project/sglang',
    "env MYSQL_PWD={s} CUDA_VISIBLE_DEVICES=0,1 python -m x",
    "HF_TOKEN=$'{s}' python3 -m sglang.launch_server",
    "HF_TOKEN=$'ab\\'{s}' python3 -m sglang.launch_server",
    "HF_TOKEN=abc\\ {s} python3 -m sglang.launch_server",
    'OPENAI_API_KEY="ab\\"{s}" python3 bench.py',
    "python3 -m sglang.launch_server --model-path m --api-key {s} --port 30000",
    "python3 -m sglang.launch_server --model-path m --api-key={s} --port 30000",
    "sglang serve --admin-api-key '{s}' --model-path m",
    "python3 -m sglang.launch_server --ssl-keyfile /k.pem --ssl-keyfile-password {s}",
    "X-API-Key: {s}",
    "api-key: {s}",
    'curl -H "X-API-Key: {s}" http://127.0.0.1:30000/v1/models',
    'curl -H "Cookie: session={s}; theme=dark" http://127.0.0.1:30000/',
    "Set-Cookie: sid={s}; Path=/; HttpOnly",
    '{{"model": "m", "x-api-key": "{s}"}}',
    '{{"api_key": "ab\\"{s}", "port": 30000}}',
    '{{"body": "{{\\"api_key\\": \\"{s}\\"}}"}}',
    "{{'api_key': '{s}'}}",
    "aws_secret_access_key = {s}",
    "AWS_SECRET_ACCESS_KEY={s}",
    "db_password: {s}",
    "server_args=ServerArgs(model_path='m', api_key='{s}', admin_api_key=None, port=30000)",
    "curl https://alice:{s}@10.0.0.5:30000/health",
    "curl 'http://h:30000/v1/models?api_key={s}&x=1'",
    'curl -H "Authorization: Bearer {s}" http://h/v1/models',
    "Authorization: Token {s}",
]
#: Positions where only the secret's shape says it is one.
BARE_POSITIONS = [
    "downloading with {s} now",
    "[2026-11-30 09:12:13] WARNING: token {s} rejected",
    '"{s}"',
    "{s}",
]


def cases() -> list[tuple[str, str]]:
    """(text, secret) pairs: every secret in every named position, every shaped secret also in bare positions."""
    out = [(pos.format(s=secret), secret) for secret in SECRETS for pos in NAMED_POSITIONS]
    out += [(pos.format(s=secret), secret) for secret in SHAPED for pos in BARE_POSITIONS]
    return out
