"""Match a validated launch command against the known-issues table.

``match_command(ctx, version)`` adds one diagnostic per matching entry to the rule context ``ctx``
(:class:`specdash.sglang.rules.context.Context`, after SGLang's resolution has filled ``ctx.values``): the entry's
severity (``warning`` or ``info``, never ``error``) for an affected release, ``info`` saying "fixed in X" for a
release at or past the known fix, ``info`` naming the condition when a fact the entry needs is missing (the
release, the GPU family, the target's architecture). ``version`` is the release the user gave or specdash read on
the host, None when neither (the rules then use the newest known release, but a known issue is not asserted for a
release nobody named).
"""

from __future__ import annotations

import re
from typing import Any

from specdash.sglang.known_issues.model import AtLeast, CommandPattern, KnownIssue, VersionVerdict
from specdash.sglang.known_issues.table import KNOWN_ISSUES


def _holds(condition: Any, value: Any) -> bool:
    if callable(condition) and not isinstance(condition, (AtLeast, tuple)):
        try:
            return bool(condition(value))
        except (TypeError, ValueError):
            return False
    if condition is True:
        return bool(value) and value not in ("0", "false", "False")
    if isinstance(condition, AtLeast):
        try:
            return value is not None and float(value) >= condition.minimum
        except (TypeError, ValueError):
            return False
    if isinstance(condition, tuple):
        shown = value.lower() if isinstance(value, str) else value
        return shown in tuple(c.lower() if isinstance(c, str) else c for c in condition)
    return value == condition


def _env_holds(pattern: CommandPattern, env: dict[str, str]) -> bool:
    for name, regex in pattern.env.items():
        if name not in env:
            return False
        if regex is not None and not re.fullmatch(regex, env[name].strip(), re.IGNORECASE):
            return False
    return not any(name in env for name in pattern.env_absent)


def _evidence(pattern: CommandPattern, values: dict, env: dict[str, str]) -> bool:
    for key, regex in pattern.hardware_evidence.items():
        value = env.get(key) if key.isupper() else values.get(key)
        if value is not None and re.fullmatch(regex, str(value).strip(), re.IGNORECASE):
            return True
    return False


def pattern_matches(pattern: CommandPattern, values: dict, env: dict[str, str]) -> bool:
    """True when every condition of ``pattern`` but the hardware and architecture holds on ``values`` (effective
    ServerArgs fields) and ``env``."""
    algo = str(values.get("speculative_algorithm") or "").upper()
    if pattern.algorithms and algo not in pattern.algorithms:
        return False
    if not all(_holds(cond, values.get(field)) for field, cond in pattern.values.items()):
        return False
    return _env_holds(pattern, env)


def _hardware(entry: KnownIssue) -> str:
    return (entry.command.hardware if entry.command is not None else None) or "some"


def _message(entry: KnownIssue) -> str:
    return (f"known SGLang issue: {entry.title}. {entry.symptom} ({entry.releases_text()}). "
            f"Workaround: {entry.workaround}")


def match_command(ctx, version: str | None, table: tuple[KnownIssue, ...] = KNOWN_ISSUES) -> None:
    """Add the known-issue diagnostics for ``ctx`` (codes ``known-issue:<id>``; each carries the thread's link).

    Entries that need a GPU family the command does not show are gathered into one ``info`` diagnostic
    (``known-issues-gpu-dependent``) naming each family and link, so a command is not buried under notes about GPUs
    it may not use. An entry limited to some architectures is skipped when config.json names another one, or when
    the name-based guess is another one (a guess is not a fact, so it never makes an entry fire at warning level)."""
    values, env = ctx.values, ctx.env
    gpu_dependent: list[KnownIssue] = []
    for entry in table:
        pattern = entry.command
        if pattern is None or not pattern_matches(pattern, values, env):
            continue
        if entry.when is not None and not entry.when(ctx):
            continue
        verdict = entry.verdict(version)
        if verdict is VersionVerdict.before:
            continue
        notes: list[str] = []
        if pattern.architectures and ctx.arch not in pattern.architectures:
            if ctx.arch is not None:
                continue  # config.json (or the name) points at another architecture: not this issue
            notes.append(f"it applies only to {', '.join(pattern.architectures)} targets and the target's "
                         "architecture is not known here (give the model's config.json, e.g. validate --host)")
        elif pattern.architectures and ctx.arch_source != "config.json":
            notes.append(f"the target's architecture {ctx.arch} was only guessed from the model name")
        if pattern.evidence_required and not _evidence(pattern, values, env):
            continue
        flags = tuple(ctx.option(f) for f in pattern.values if ctx.typed(f)) + tuple(pattern.env)
        code = f"known-issue:{entry.id}"
        if verdict is VersionVerdict.fixed:
            ctx.add("info", code, flags, f"known SGLang issue fixed in {entry.first_fixed} (this is {version}): "
                    f"{entry.title}.", link=entry.link)
            continue
        if pattern.hardware and not _evidence(pattern, values, env):
            if not pattern.evidence_required:
                gpu_dependent.append(entry)
            continue
        if verdict is VersionVerdict.unknown and (entry.first_bad or entry.first_fixed):
            notes.append("it applies only to some releases and the release is not known here: pass --sglang-version "
                         "or --host to decide")
        severity = "info" if notes else entry.severity_for(verdict)
        message = _message(entry) + (" — " + "; ".join(notes) if notes else "")
        ctx.add(severity, code, flags, message, link=entry.link)
    if gpu_dependent:
        listed = "; ".join(f"{e.title} (only on {_hardware(e)} GPUs: {e.link})" for e in gpu_dependent)
        ctx.add("info", "known-issues-gpu-dependent", (),
                f"{len(gpu_dependent)} known SGLang issue(s) match this command on some GPUs only, and the command "
                f"does not show this host's GPU family: {listed}", link=gpu_dependent[0].link)
