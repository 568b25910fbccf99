"""Secret redaction, applied to every string of an event BEFORE it is written to a session file.

What counts as a secret (each replaced by :data:`REDACTED`, the name/flag/scheme kept so the story stays readable):

* environment assignments ``NAME=value`` (also after ``export``/``env``) whose NAME is ``HF_TOKEN`` or ends with
  ``_TOKEN``, ``_KEY``, ``_SECRET`` or contains ``PASSWORD``/``PASSWD`` (case-insensitive), e.g.
  ``HF_TOKEN=hf_abc python -m sglang.launch_server ...``;
* flag values of flags whose name ends in ``-key``, ``-token``, ``-secret`` or contains ``password``/``passwd``:
  ``--api-key X``, ``--api-key=X``, ``--admin-api-key X``, ``--hf-token X`` (SGLang server_args has ``--api-key``
  and ``--admin-api-key``; huggingface-cli has ``--token``). A following ``--flag`` is never taken as the value;
* Python-repr / JSON / YAML style ``api_key='X'``, ``"hf_token": "X"``, ``api_key: X`` with the same name rule —
  SGLang logs ``server_args=ServerArgs(..., api_key='X', ...)`` at start-up, so log lines need this too;
* passwords in URLs: ``scheme://user:pass@host`` becomes ``scheme://user:<redacted>@host``; query parameters named
  like secrets (``?token=X``, ``&api_key=X``);
* ``Authorization: Bearer X`` / ``Basic X`` headers, and bare ``Bearer X``;
* well-known token shapes anywhere: Hugging Face ``hf_...`` (>= 30 characters) and OpenAI-style ``sk-...``.

Names that merely contain ``token``/``key`` but are not secrets stay: ``--speculative-token-map``,
``--max-total-tokens``, ``speculative_eagle_topk``, ``--ssl-keyfile`` (a path).

:func:`redact_text` works on one string; :func:`redact_value` walks dicts/lists and also redacts dict values whose
key is a secret name (``{"env": {"HF_TOKEN": "x"}}``). Both are pure and idempotent.
"""

from __future__ import annotations

import re
from typing import Any

REDACTED = "<redacted>"

# A name that holds a secret: HF_TOKEN, *_TOKEN, *_KEY, *_SECRET, *PASSWORD*, *PASSWD*, or exactly TOKEN/KEY/SECRET.
_SECRET_NAME = r"(?:[A-Za-z0-9_]*_)?(?:TOKEN|KEY|SECRET|APIKEY)|[A-Za-z0-9_]*PASS(?:WORD|WD)[A-Za-z0-9_]*"
_SECRET_NAME_RE = re.compile(rf"^(?:{_SECRET_NAME})$", re.IGNORECASE)

# A value: quoted (single/double) or a run of non-space characters.
_VALUE = r"(?:'[^']*'|\"[^\"]*\"|[^\s'\"]+)"

_ENV_ASSIGN_RE = re.compile(rf"(?<![\w\-./])((?:{_SECRET_NAME}))=({_VALUE})", re.IGNORECASE)

_FLAG_NAME = r"--?[A-Za-z0-9][A-Za-z0-9_-]*?(?:[-_](?:key|token|secret|apikey)|pass(?:word|wd)[A-Za-z0-9_-]*)|--(?:key|token|secret|password|passwd)"
_FLAG_EQ_RE = re.compile(rf"(?<![\w-])({_FLAG_NAME})=({_VALUE})", re.IGNORECASE)
_FLAG_SPACE_RE = re.compile(rf"(?<![\w-])({_FLAG_NAME})(\s+)(?!-)({_VALUE})", re.IGNORECASE)

# Python repr / JSON / YAML key-value: api_key='x', "hf_token": "x", api_key: x
_KV_QUOTED_RE = re.compile(
    rf"(?<![\w-])([\"']?)({_SECRET_NAME})\1(\s*[:=]\s*)('[^']*'|\"[^\"]*\")", re.IGNORECASE
)
# Unquoted YAML style needs a compound name (api_key, hf_token, db_password): bare "token: 123" is everywhere in
# SGLang logs ("#token: 43210" in every decode line) and is not a secret.
_COMPOUND_SECRET_NAME = r"[A-Za-z0-9]+(?:_[A-Za-z0-9]+)*_(?:TOKEN|KEY|SECRET|APIKEY)|[A-Za-z0-9_]*PASS(?:WORD|WD)[A-Za-z0-9_]*"
_KV_YAML_RE = re.compile(rf"(?<![\w#-])({_COMPOUND_SECRET_NAME})(:\s+)(?!['\"])([^\s,}}\]]+)", re.IGNORECASE)

_URL_PASSWORD_RE = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*://[^/\s:@]+):([^@\s/]+)@")
_URL_QUERY_RE = re.compile(
    r"([?&](?:[A-Za-z0-9_\-]*(?:token|key|secret|password|passwd|signature)))=([^&\s#'\"]+)", re.IGNORECASE
)
_AUTH_HEADER_RE = re.compile(
    r"(authorization[\"']?\s*[:=]\s*[\"']?\s*)(?:(bearer|basic|token)\s+)?([^\s'\",}]+)", re.IGNORECASE
)
_BEARER_RE = re.compile(r"\b(bearer\s+)([A-Za-z0-9._~+/=\-]{8,})", re.IGNORECASE)
_TOKEN_SHAPES_RE = re.compile(r"\b(?:hf_[A-Za-z0-9]{30,}|sk-[A-Za-z0-9_\-]{20,})\b")

_NONE_PREFIX_RE = re.compile(r"^(?:none|null|~)(?:[,;)\]}].*)?$", re.IGNORECASE)
_NONE_VALUES = {"none", "null", "''", '""', "~", REDACTED.lower()}

# Cheap pre-check: a string that matches none of these triggers cannot hold a secret by the rules above, so the
# rules are skipped (SGLang decode lines contain "#token: N" and "token usage" but no trigger).
_HINT_RE = re.compile(
    r"://|authori|bearer|hf_|sk-|pass(?:word|wd)"
    r"|(?:token|key|secret|apikey)(?:=|[\"']?\s*[:=]\s*[\"'])"
    r"|-(?:[\w-]*[-_])?(?:token|key|secret|apikey)|_(?:token|key|secret|apikey)\b",
    re.IGNORECASE,
)


def is_secret_name(name: str) -> bool:
    """True when an environment variable / dict key / field name holds a secret by the rules above
    (``HF_TOKEN``, ``OPENAI_API_KEY``, ``AWS_SECRET``, ``DB_PASSWORD``, ``api_key``); False for e.g.
    ``CUDA_VISIBLE_DEVICES``, ``max_total_tokens``, ``speculative_token_map``."""
    return bool(_SECRET_NAME_RE.match(name.replace("-", "_")))


def _keep_quotes(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[0] + REDACTED + value[0]
    return REDACTED


def _redact_value_text(value: str) -> str:
    if value.strip("'\"").lower() in _NONE_VALUES or _NONE_PREFIX_RE.match(value):
        return value
    return _keep_quotes(value)


def redact_text(text: str) -> str:
    """Return ``text`` with every secret (see module doc) replaced by ``<redacted>``; other text unchanged.

    Example: ``"HF_TOKEN=hf_x python -m sglang.launch_server --api-key s3 --port 30000"`` becomes
    ``"HF_TOKEN=<redacted> python -m sglang.launch_server --api-key <redacted> --port 30000"``.
    """
    if not text or not _HINT_RE.search(text):
        return text
    text = _URL_PASSWORD_RE.sub(lambda m: f"{m.group(1)}:{REDACTED}@", text)
    text = _URL_QUERY_RE.sub(lambda m: f"{m.group(1)}={REDACTED}", text)
    text = _AUTH_HEADER_RE.sub(
        lambda m: m.group(0) if m.group(3) == REDACTED else
        f"{m.group(1)}{(m.group(2) + ' ') if m.group(2) else ''}{REDACTED}",
        text,
    )
    text = _BEARER_RE.sub(lambda m: f"{m.group(1)}{REDACTED}", text)
    text = _ENV_ASSIGN_RE.sub(lambda m: f"{m.group(1)}={_redact_value_text(m.group(2))}", text)
    text = _FLAG_EQ_RE.sub(lambda m: f"{m.group(1)}={_redact_value_text(m.group(2))}", text)
    text = _FLAG_SPACE_RE.sub(lambda m: f"{m.group(1)}{m.group(2)}{_redact_value_text(m.group(3))}", text)
    text = _KV_QUOTED_RE.sub(
        lambda m: f"{m.group(1)}{m.group(2)}{m.group(1)}{m.group(3)}{_redact_value_text(m.group(4))}", text
    )
    text = _KV_YAML_RE.sub(lambda m: f"{m.group(1)}{m.group(2)}{_redact_value_text(m.group(3))}", text)
    text = _TOKEN_SHAPES_RE.sub(REDACTED, text)
    return text


def redact_value(value: Any) -> Any:
    """Redact recursively: strings through :func:`redact_text`; in dicts, a string value under a secret key
    (:func:`is_secret_name`) is replaced whole; lists/tuples element-wise (tuples become lists). Other values
    (numbers, None, bools) are returned unchanged. Returns a new structure; the input is not modified."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if isinstance(key, str) and isinstance(item, str) and item and is_secret_name(key):
                out[key] = REDACTED
            else:
                out[key] = redact_value(item)
        return out
    if isinstance(value, (list, tuple)):
        return [redact_value(item) for item in value]
    return value
