"""What reading the pasted text as a shell script tells: lines that end the command early, values the script
does not decide, defaults used, Hugging Face cache paths.

Shell facts (POSIX sh / bash): a newline ends a simple command unless the line ends with a backslash, so the
``--flags`` on the lines after a line without one run as a separate command (``--port: command not found``) and
never reach SGLang; ``${NAME:-default}`` expands to the default when NAME is unset or empty. An unresolved value
(a variable the text never sets) is unknown: rules that need it are reported as what they would check, at info
level, never as errors.
"""

from __future__ import annotations

import dataclasses
import re

from specdash.sglang.diagnostics import Edit
from specdash.sglang.rules.context import Context

_HF_CACHE = re.compile(r"(?:^|/)models--(?P<org>[^/]+?)--(?P<name>[^/]+)(?:/snapshots/(?P<rev>[^/]+))?")
#: the bare ``org--name`` form (a cache or mirror directory named after the repo without ``models--``): Hugging Face
#: repo ids never contain ``--`` (``huggingface_hub.utils.validate_repo_id``), so one ``--`` between two valid parts
#: splits it one way only
_HF_BARE = re.compile(r"^(?P<org>[A-Za-z0-9](?:[\w.]|-(?!-))*[A-Za-z0-9_])--(?P<name>[A-Za-z0-9](?:[\w.]|-(?!-))*)$")
_PATH_DESTS = ("model_path", "speculative_draft_model_path", "tokenizer_path")
_OWN_CODES = {"broken-continuation", "unresolved-value", "unresolved-args", "unresolved-env", "shell-default",
              "hf-cache-path", "trimmed-command"}


def check(ctx: Context) -> None:
    """Add the script-level diagnostics: ``broken-continuation`` (error), ``unresolved-value``,
    ``unresolved-args``, ``unresolved-env``, ``shell-default`` and ``hf-cache-path`` (info)."""
    cmd = ctx.command
    if cmd.lost_args:
        _broken_continuation(ctx)
    for dest, occ in ctx.parsed.unresolved.items():
        names = ", ".join(occ.value.names)
        ctx.add("info", "unresolved-value", ctx.option(dest),
                f"{ctx.option(dest)} {occ.value}: {names} is not set in the pasted text, so its value is unknown "
                "here; rules that need it are listed as what they would check.")
    for word in ctx.parsed.unresolved_words:
        ctx.add("info", "unresolved-args", (),
                f"{word.raw}: {', '.join(word.unresolved)} is not set in the pasted text; whatever flags it "
                "expands to are not checked.")
    for line, marker in cmd.trimmed:
        ctx.add("info", "trimmed-command", (),
                f"line {line}: {marker} — part of the command is not shown; the flags cut there are not checked, "
                "and a flag this text does not show may be among them.")
    for env in cmd.unresolved_env:
        ctx.add("info", "unresolved-env", env.name,
                f"{env.name}={env.value}: {', '.join(env.unresolved)} is not set in the pasted text, so "
                f"{env.name} is unknown here and rules that read it are not checked.")
    for name, default in dict(cmd.defaults).items():
        ctx.add("info", "shell-default", (),
                f"${{{name}:-...}}: {name} is not set in the pasted text, so its default {default!r} is used "
                "(as the shell does when it is unset in the environment too).")
    for dest in _PATH_DESTS:
        value = ctx.parsed.typed.get(dest)
        if not isinstance(value, str):
            continue
        match = _HF_CACHE.search(value)
        if match:
            rev = f", snapshot {match.group('rev')}" if match.group("rev") else ""
            ctx.add("info", "hf-cache-path", ctx.option(dest),
                    f"{ctx.option(dest)} is a Hugging Face cache directory of {match.group('org')}/"
                    f"{match.group('name')}{rev}; the repo id {match.group('org')}/{match.group('name')} names "
                    "the same model on another host.")
            continue
        bare = bare_repo_id(value)
        if bare:
            ctx.add("info", "hf-cache-path", ctx.option(dest),
                    f"{ctx.option(dest)} ends in {bare.replace('/', '--')}, the form Hugging Face gives the repo "
                    f"{bare} in cache directory names; if it is that model, the repo id {bare} names it on "
                    "another host.")


def bare_repo_id(path: str) -> str | None:
    """``org/name`` when the last component of ``path`` is the bare ``org--name`` form with exactly one ``--``
    between two parts that are valid repo-id parts (``/data/Qwen--Qwen3-8B`` -> ``Qwen/Qwen3-8B``), else None
    (no ``--``, more than one, an empty or invalid side, a ``models--`` cache path, a ``--flag``)."""
    component = path.rstrip("/").rsplit("/", 1)[-1]
    if component.startswith(("models--", "datasets--", "spaces--", "-")) or len(component) > 200:
        return None
    match = _HF_BARE.match(component)
    if not match or ".." in component:
        return None
    return f"{match.group('org')}/{match.group('name')}"


def _broken_continuation(ctx: Context) -> None:
    cmd = ctx.command
    text = cmd.text
    flags = [w.text for w in cmd.lost_args if w.text.startswith("-")]
    n = len(flags)
    line_start = 0
    for _ in range(cmd.broken_line - 1):
        line_start = text.find("\n", line_start) + 1
    line_end = text.find("\n", line_start)
    line_end = len(text) if line_end < 0 else line_end
    if cmd.broken_by_comment:
        where = f"line {cmd.broken_line} (a # comment inside the continuation, which swallows its backslash)"
        fixed = text[:line_start] + text[line_end + 1:]
        fix = ctx.fix(f"delete the comment line {cmd.broken_line}", Edit("replace_all", value=fixed))
    else:
        where = f"line {cmd.broken_line}"
        fixed = text[:line_end].rstrip(" \t\r") + " \\" + text[line_end:]
        fix = ctx.fix(f"end line {cmd.broken_line} with a backslash", Edit("replace_all", value=fixed))
    ctx.add("error", "broken-continuation", tuple(flags),
            f"{where} ends the command: the {n} flag{'s' if n != 1 else ''} after it ({' '.join(flags)}) "
            f"run{'' if n != 1 else 's'} as a separate command and {'are' if n != 1 else 'is'} lost; the findings "
            "below are about the command without them.", fix)


def demote_unresolved(ctx: Context) -> None:
    """Diagnostics about a flag (or environment variable) whose value is unresolved become ``info`` notes of what
    would be checked; their fixes are dropped (they assumed a value)."""
    options = {ctx.option(dest): occ for dest, occ in ctx.parsed.unresolved.items()}
    env_names = {e.name: e for e in ctx.command.unresolved_env}
    for i, diag in enumerate(ctx.diagnostics):
        if diag.code in _OWN_CODES or diag.code in ("abbreviation", "alias"):
            continue
        about = [f for f in diag.flags if f in options or f in env_names]
        if not about:
            continue
        shown = ", ".join(f"{f} {options[f].value}" if f in options else f"{f}={env_names[f].value}"
                          for f in about)
        ctx.diagnostics[i] = dataclasses.replace(
            diag, severity="info", fix=None, stage=None, exception=None,
            message=f"not checked ({shown} unresolved); with its value known specdash would check: "
                    f"{diag.message}")
    _demote_unseen(ctx)


def _demote_unseen(ctx: Context) -> None:
    """When the text hides some of the command's words (``$EXTRA`` unresolved, a ``[... trimmed]`` marker), a
    finding that rests on a flag the text does not show (missing, or at its default: an error, a warning, or an
    info such as "max_running_requests = 48") may be wrong: those become ``info`` notes saying what holds if the
    hidden part does not set that flag; fixes are dropped."""
    hidden = [w.raw for w in ctx.parsed.unresolved_words] + [marker for _, marker in ctx.command.trimmed]
    if not hidden:
        return
    where = ", ".join(hidden[:3]) + (" ..." if len(hidden) > 3 else "")
    shown = {ctx.option(dest) for dest in ctx.parsed.typed}
    typed_command = ctx.notes.get("typed_command", ctx.command)  # before other engines' flags were renamed
    shown |= {w.text.split("=", 1)[0] for w in typed_command.args if w.text.startswith("-")}
    for i, diag in enumerate(ctx.diagnostics):
        if diag.code in _OWN_CODES or diag.message.startswith(("not certain", "not checked")):
            continue
        unseen = [f for f in diag.flags if f.startswith("--") and f not in shown]
        if not unseen:
            continue
        ctx.diagnostics[i] = dataclasses.replace(
            diag, severity="info", fix=None, stage=None, exception=None,
            message=f"not certain ({where} may set {', '.join(unseen)}); if it does not: {diag.message}")
