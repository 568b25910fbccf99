"""Secret redaction: the one set of rules applied to everything specdash stores or copies — session files, replay
summaries, the run files on the host (``command.txt``, ``run.json``), exports and the log pane's copy.

Each secret is replaced by :data:`REDACTED`; the name, flag, header or scheme before it is kept so the story stays
readable (``HF_TOKEN=<redacted> python3 -m sglang.launch_server --api-key <redacted>``).

**Secret names** (:func:`is_secret_name`, case-insensitive, ``-`` and ``_`` alike): a name containing ``TOKEN``,
``KEY``, ``SECRET``, ``PASSWORD``/``PASSWD``, ``PWD``, ``COOKIE``, ``CREDENTIAL``, ``SIGNATURE`` or
``AUTHORIZATION``, or with a ``PAT``/``AUTH`` part (``GH_PAT``, ``MY_PAT2``, ``X_AUTH``). Known non-secrets are not
names of secrets: ``PWD``/``OLDPWD`` (the shell's working directory), ``*PATH*``, ``*TOKENS*`` (counts such as
``max_total_tokens``), ``*TOKENIZER*``, ``*TOKEN_MAP*`` (SGLang's ``--speculative-token-map``, a path),
``*TOKEN_ID*``, ``*TOKEN_USAGE*``, ``*KEYFILE*`` (``--ssl-keyfile``, a path; ``--ssl-keyfile-password`` is a
secret), ``*KEYBOARD*``.

**Where a value under such a name is found**:

* shell assignments ``NAME=value`` (also after ``export``/``env``), the value a whole shell word: quoted
  (``'...'``, ``"..."`` with ``\\"`` escapes, ``$'...'`` with ``\\'`` escapes), backslash escapes (``abc\\ X``) and
  concatenations (``a"b c"d``) included;
* flags ``--api-key X``, ``--api-key=X``, ``--hf-token X``, ``--ssl-keyfile-password X`` (SGLang ``server_args.py``
  has ``--api-key``, ``--admin-api-key``, ``--ssl-keyfile-password``); a following ``--flag`` is never the value;
* key/value forms: Python repr (``api_key='X'``, as in SGLang's start-up line ``server_args=ServerArgs(...)``),
  JSON (``"x-api-key": "X"``, escaped quotes inside the value, and JSON inside a JSON string:
  ``\\"api_key\\": \\"X\\"``), YAML/INI (``api_key: X``, ``aws_secret_access_key = X``), HTTP headers
  (``X-API-Key: X``, ``api-key: X``, ``Cookie: a=1; b=2`` — the whole cookie list, ``Authorization: Bearer X``);
  a value that is a bare number after ``:`` is kept (SGLang decode lines say ``#token: 43210``);
* URLs: the password of ``scheme://user:pass@host``, query parameters under secret names (``?token=X``).

**Token shapes anywhere**: Hugging Face ``hf_...``, OpenAI-style ``sk-...`` (``sk-proj-...``), GitHub ``ghp_``,
``gho_``, ``ghu_``, ``ghs_``, ``ghr_``, ``github_pat_...``, GitLab ``glpat-...``, Slack ``xox?-...``, AWS access key
ids (``AKIA``/``ASIA`` + 16), JSON Web Tokens (``eyJ...``.``eyJ...``.``...``), ``Bearer X`` and ``Basic X``.

Cost: a string with none of the trigger words (checked with a few substring scans of the lower-cased text) is
returned as it is without running the rules — SGLang's decode and prefill lines (``#token: N``, ``#new-token: N``,
``token usage``) have none. ``benchmarks/bench_redaction.py`` prints lines/s.

:func:`redact_text` works on one string; :func:`redact_lines` on a batch of log lines (the same result, the pre-check
once per line shape); :func:`redact_value` walks dicts/lists and also replaces whole string values
under secret keys (``{"env": {"HF_TOKEN": "x"}}``). Both are pure and idempotent.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

REDACTED = "<redacted>"

# -- names -------------------------------------------------------------------------------------------------------

_NOT_SECRET_PARTS_RE = re.compile(
    r"TOKENIZER|TOKENS|TOKEN_?(?:MAP|IDS?|USAGE|LEN(?:GTH)?|NUM|COUNT|BUDGET|RATIO|LIMIT)|NUM_?TOKEN"
    r"|KEY_?FILE(?!_?PASS)|KEYBOARD|PATH|PATTERN"
)
_SECRET_PART_RE = re.compile(
    r"TOKEN|KEY|SECRET|PASSW(?:OR)?D|PWD|COOKIE|CREDENTIAL|SIGNATURE|AUTHORIZATION"
    r"|(?:^|_)(?:PAT|AUTH)\d*(?:_|$)"
)
_NOT_SECRET_NAMES = frozenset({"PWD", "OLDPWD"})


def is_secret_name(name: str) -> bool:
    """True when an environment variable, flag (without dashes), header, dict key or field name holds a secret by
    the rules of the module doc (``HF_TOKEN``, ``HF_TOKEN2``, ``GH_PAT``, ``MYSQL_PWD``, ``X-API-Key``, ``Cookie``,
    ``aws_secret_access_key``); False for e.g. ``CUDA_VISIBLE_DEVICES``, ``max_total_tokens``,
    ``speculative_token_map``, ``PATH``, ``PWD``, ``ssl_keyfile``."""
    upper = name.upper().replace("-", "_").strip("_")
    if not upper or upper in _NOT_SECRET_NAMES:
        return False
    upper = _NOT_SECRET_PARTS_RE.sub("_", upper)
    return _SECRET_PART_RE.search(upper) is not None


# -- values ------------------------------------------------------------------------------------------------------

# One shell word: $'..' (with \' escapes), '..', ".." (with \" escapes), backslash escapes, plain characters; a
# quoted part never runs past the end of its line (an unclosed quote in one log line must not swallow the next).
_SHELL_WORD = r"""(?:\$'(?:[^'\\\n]|\\.)*'?|'[^'\n]*'?|"(?:[^"\\\n]|\\.)*"?|\\.|[^\s'"\\;&|<>()`])+"""
# A value in a key/value form: JSON escaped inside JSON, double/single quoted with escapes, or a bare run.
_KV_VALUE = r"""(?:\\"(?:(?!\\")[^\n])*(?:\\")?|"(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?|[^\s,;'"(){}\[\]<>]+)"""

_NONE_VALUES = frozenset({"none", "null", "~", "", "true", "false", REDACTED})


def _redacted_like(value: str) -> str:
    """``<redacted>`` in the same quotes as ``value``: ``'x'`` → ``'<redacted>'``, ``\\"x\\"`` →
    ``\\"<redacted>\\"``."""
    if value.startswith('\\"'):
        return f'\\"{REDACTED}\\"'
    if value.startswith("$'"):
        return f"$'{REDACTED}'"
    if value[:1] in ("'", '"') and len(value) >= 2 and value[-1] == value[0]:
        return value[0] + REDACTED + value[0]
    return REDACTED


def _is_empty_value(value: str) -> bool:
    return value.strip("\\'\"$").strip().lower() in _NONE_VALUES


def _secret_value(value: str) -> str:
    return value if _is_empty_value(value) else _redacted_like(value)


# NAME=shell-word (env assignments, flags --x=y, Python kwargs, query parameters): the name decides.
_ASSIGN_RE = re.compile(rf"(?<![\w\-.])(-{{0,2}}[A-Za-z_][\w\-.]*)=({_SHELL_WORD})")
# --flag value
# --flag value; the value may start with one "-" ("--api-key -x7Q...") but is never a flag ("--port", "-v")
_FLAG_SPACE_RE = re.compile(rf"(?<![\w-])(--?[A-Za-z][\w-]*)([ \t]+)(?!--|-[A-Za-z]?(?:\s|$))({_SHELL_WORD})")
# key: value / key = value / "key": "value" / \"key\": \"value\" / 'key': 'value' / Header: value. Only the
# key and separator are matched, so that a value that is not a secret is scanned further (JSON inside JSON).
_KV_KEY_RE = re.compile(r"(?<![\w#\-.])(\\?[\"']?)([A-Za-z_][\w\-.]*)(\1)([ \t]*[:=][ \t]*)")
_KV_VALUE_RE = re.compile(_KV_VALUE)
_AUTH_HEADER_RE = re.compile(
    r"(?i)(\b(?:proxy-)?authorization\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?[ \t]*)"
    r"(?:(bearer|basic|token|digest|negotiate|apikey)[ \t]+)?([^\s'\"\\,}]+)"
)
_COOKIE_RE = re.compile(r"(?i)(\b(?:set-)?cookie\\?[\"']?[ \t]*[:=][ \t]*)(\\?[\"']?)([^\n\"'\\]+)")
_AUTH_SCHEME_RE = re.compile(r"(?i)^(bearer|basic|token|digest|negotiate)$")
_NUMBER_RE = re.compile(r"[+-]?\d+(?:\.\d*)?(?:[eE][+-]?\d+)?%?")
# scheme://user:password@host — the password may hold "/" but is not a port ("host:30000/path@x" is no password)
_URL_PASSWORD_RE = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*://[^/\s:@'\"]+):(?!\d*(?:[/\s'\"]|$))([^@\s'\"]+)@")
_BEARER_RE = re.compile(r"\b([Bb]earer[ \t]+)(?!<redacted>)([A-Za-z0-9._~+/=\-]{8,})")
_BASIC_RE = re.compile(r"\b([Bb]asic[ \t]+)(?=[A-Za-z+/=]*[0-9+/=])([A-Za-z0-9+/]{8,}={0,2})")
_TOKEN_SHAPES_RE = re.compile(
    r"\b(?:hf_[A-Za-z0-9]{30,}"
    r"|sk-(?:proj-|ant-|live-|test-)?[A-Za-z0-9_\-]{20,}"
    r"|gh[pousr]_[A-Za-z0-9]{30,}"
    r"|github_pat_[A-Za-z0-9_]{22,}"
    r"|glpat-[A-Za-z0-9_\-]{20,}"
    r"|xox[abposr]-[A-Za-z0-9\-]{10,}"
    r"|(?:AKIA|ASIA)[A-Z0-9]{16}"
    r"|eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*)"
)


_QUOTED_PREFIX_RE = re.compile(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"")
_TRAILING_PUNCT_RE = re.compile(r"[,)\]}]+$")


def _split_word(value: str) -> tuple[str, str]:
    """A shell word as (value, rest): in Python repr / JSON text the word runs on past the value
    (``'x',`` in ``ServerArgs(api_key='x', port=1)``, ``None,``): the closing punctuation is not the value."""
    if value[:1] in ("'", '"'):
        m = _QUOTED_PREFIX_RE.match(value)
        if m and value[m.end():m.end() + 1] in (",", ")", "}", "]"):
            return value[:m.end()], value[m.end():]
        return value, ""
    m = _TRAILING_PUNCT_RE.search(value)
    if m and m.start() > 0:
        return value[:m.start()], value[m.start():]
    return value, ""


def _assign(m: re.Match[str]) -> str:
    name, value = m.group(1), m.group(2)
    if not is_secret_name(name.lstrip("-")):
        return m.group(0)
    value, rest = _split_word(value)
    return f"{name}={_secret_value(value)}{rest}"


def _flag_space(m: re.Match[str]) -> str:
    flag, space, value = m.groups()
    if not flag.startswith("--") or not is_secret_name(flag.lstrip("-")):
        return m.group(0)
    value, rest = _split_word(value)
    return f"{flag}{space}{_secret_value(value)}{rest}"


def _kv_value(sep: str, value: str) -> str:
    bare = value[:1] not in ("'", '"', "\\")
    if bare and ":" in sep and _NUMBER_RE.fullmatch(value):
        return value  # "#token: 43210", "key: 3" — counts, not secrets
    if bare and _AUTH_SCHEME_RE.match(value):
        return value  # "Authorization: Bearer X": the header rule redacts X
    if bare and value.startswith(("http://", "https://", "/")):
        return value  # a URL or path under a key name (its password is redacted by the URL rule)
    return _secret_value(value)


def _kv_sub(text: str) -> str:
    out: list[str] = []
    pos = 0
    for key in _KV_KEY_RE.finditer(text):
        if key.start() < pos or not is_secret_name(key.group(2)):
            continue
        value = _KV_VALUE_RE.match(text, key.end())
        if value is None:
            continue
        out.append(text[pos:key.end()])
        out.append(_kv_value(key.group(4), value.group()))
        pos = value.end()
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


def _cookie(m: re.Match[str]) -> str:
    return f"{m.group(1)}{m.group(2)}{REDACTED}" if m.group(3).strip() != REDACTED else m.group(0)


_RULES: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str] | str], ...] = (
    (_URL_PASSWORD_RE, lambda m: f"{m.group(1)}:{REDACTED}@" if m.group(2) != REDACTED else m.group(0)),
    (_COOKIE_RE, _cookie),
    (_BEARER_RE, lambda m: f"{m.group(1)}{REDACTED}"),
    (_BASIC_RE, lambda m: f"{m.group(1)}{REDACTED}"),
    (_ASSIGN_RE, _assign),
    (_FLAG_SPACE_RE, _flag_space),
    (_AUTH_HEADER_RE, lambda m: m.group(0) if m.group(3).startswith(REDACTED) else
        f"{m.group(1)}{(m.group(2) + ' ') if m.group(2) else ''}{REDACTED}"),
    (_TOKEN_SHAPES_RE, REDACTED),
)

# -- the cheap pre-check -----------------------------------------------------------------------------------------

_TRIGGERS = ("key", "secret", "passw", "pwd", "cookie", "auth", "bearer", "basic", "hf_", "sk-", "_pat", "pat_",
             "gh", "glpat", "xox", "akia", "asia", "eyj", "credential", "signature", "://")
# "token" only when not one of SGLang's counters: "#token: 43210", "#new-token: 12", "token usage", "(token/s)",
# "max_total_tokens", "tokenizer", "#new_token_ratio: 0.9998 -> 1.0000" (the retract line of SGLang's scheduler).
_TOKEN_TRIGGER_RE = re.compile(r"token(?!s|izer|/s| usage|: \d|_map|-map|_id|_ratio)")
_GH_TRIGGER_RE = re.compile(r"gh[pousr]_|github_pat")


def _may_hold_secret(text: str) -> bool:
    low = text.lower()
    for word in _TRIGGERS:
        if word in low:
            if word == "gh":
                if _GH_TRIGGER_RE.search(low):
                    return True
                continue
            return True
    return "token" in low and _TOKEN_TRIGGER_RE.search(low) is not None


def redact_text(text: str) -> str:
    """Return ``text`` with every secret (see module doc) replaced by ``<redacted>``; other text unchanged.

    Example: ``"HF_TOKEN=hf_x python -m sglang.launch_server --api-key s3 --port 30000"`` becomes
    ``"HF_TOKEN=<redacted> python -m sglang.launch_server --api-key <redacted> --port 30000"``.
    """
    if not text or not _may_hold_secret(text):
        return text
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return _kv_sub(text)


#: ASCII digits 1-9 as 0, for :func:`redact_lines`: a line and its digit-blind shape have the same pre-check answer
#: (no trigger word holds a digit, and the one rule that looks at digits, ``token: \d``, sees a digit either way).
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
#: Shapes (lines with their digits zeroed, UTF-8) known to pass / fail the pre-check; cleared when this big.
MAX_KNOWN_SHAPES = 4096
_CLEAN_SHAPES: set[bytes] = set()
_FLAGGED_SHAPES: set[bytes] = set()


def redact_lines(texts: list[str]) -> list[str]:
    """``[redact_text(t) for t in texts]`` for a batch of log lines (strings without line breaks), at a fraction of
    the cost: a busy log repeats a few line shapes that differ only in their numbers (SGLang's ``Decode batch,
    #running-req: 12, #token: 43210, ...``), so the pre-check of :func:`redact_text` runs once per *shape* (the line
    with each ASCII digit 1-9 read as 0), not once per line, and the shapes seen are remembered (at most
    :data:`MAX_KNOWN_SHAPES` of each answer). The result is exactly the per-line one: a line's shape passes the
    pre-check exactly when the line does (no trigger word holds a digit; ``token: \\d`` sees a digit either way),
    and every line whose shape does not pass goes through :func:`redact_text` in full. A secret appended to a
    decode line changes its shape, so it is checked like any other line. Texts holding a line break (or anything
    not a string) fall back to :func:`redact_text` one by one. Returns a new list; never raises."""
    try:
        shapes = "\n".join(texts).encode("utf-8", "surrogatepass").translate(_DIGITS_AS_ZERO).split(b"\n")
    except TypeError:  # not all strings
        return [redact_value(t) for t in texts]
    if len(shapes) != len(texts):  # a text holds a line break: its shape is not one line
        return [redact_text(t) for t in texts]
    unknown = set(shapes) - _CLEAN_SHAPES
    if not unknown:
        return list(texts)
    flagged = unknown & _FLAGGED_SHAPES
    clean: set[bytes] = set()
    for shape in unknown - flagged:
        if _may_hold_secret(shape.decode("utf-8", "surrogatepass")):
            flagged.add(shape)
        else:
            clean.add(shape)
    if len(_CLEAN_SHAPES) + len(clean) > MAX_KNOWN_SHAPES:
        _CLEAN_SHAPES.clear()
    _CLEAN_SHAPES.update(clean)
    if not flagged:
        return list(texts)
    if len(_FLAGGED_SHAPES) + len(flagged) > MAX_KNOWN_SHAPES:
        _FLAGGED_SHAPES.clear()
    _FLAGGED_SHAPES.update(flagged)
    return [redact_text(text) if shape in flagged else text for text, shape in zip(texts, shapes, strict=True)]


#: Dict fields named only ``key`` are identifiers in specdash's own records (a finding's de-duplication key, a
#: sweep's key), not secrets: their values still go through :func:`redact_text`, which redacts token-shaped values.
_PLAIN_FIELD_NAMES = frozenset({"key"})


def redact_value(value: Any) -> Any:
    """Redact recursively: strings through :func:`redact_text`; in dicts, a non-empty string value under a secret
    key (:func:`is_secret_name`; a field named just ``key`` is an identifier, see :data:`_PLAIN_FIELD_NAMES`) is
    replaced whole; lists/tuples element-wise (tuples become lists). Other values
    (numbers, None, bools) are returned unchanged. Returns a new structure; the input is not modified."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if isinstance(key, str) and isinstance(item, str) and item and is_secret_name(key) \
                    and key.lower() not in _PLAIN_FIELD_NAMES \
                    and not _is_empty_value(item) and not item.startswith(("/", "http://", "https://")):
                out[key] = REDACTED
            else:
                out[key] = redact_value(item)
        return out
    if isinstance(value, (list, tuple)):
        return [redact_value(item) for item in value]
    return value
