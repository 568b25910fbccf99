"""Validate an SGLang launch command: the public entry point of the rule engine.

``validate_command(text, sglang_version=None, model_config=None) -> ValidationReport``: parses the pasted command,
matches it against the release's flag table as argparse would, runs SGLang's own speculative resolution for that
version and the advisory rules, and returns the diagnostics plus the effective configuration (SGLang field names)
next to what the user typed. Pure: no I/O, no Textual; typically well under 1 ms (benchmarks/bench_validate.py).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from specdash.sglang.architectures import architecture_from_config, guess_architecture
from specdash.sglang.arguments import Unresolved, parse_arguments
from specdash.sglang.command import LaunchCommand, parse_command
from specdash.sglang.diagnostics import SEVERITY_RANK, Diagnostic, Edit, Fix
from specdash.sglang.flags import load_table
from specdash.sglang.known_issues import match_command as match_known_issues
from specdash.sglang.rules import Context, advice, argparse_level, backends, launch_checks, parallel, shell, speculative
from specdash.sglang.rules.advice import check_pairing
from specdash.sglang.versions import CURRENT_RELEASE, Profile, is_version, profile_notice, profile_or_newest

#: Fields always shown in the effective configuration (when the release has them).
EFFECTIVE_FIELDS: tuple[str, ...] = (
    "speculative_algorithm",
    "speculative_draft_model_path",
    "speculative_draft_model_revision",
    "speculative_num_steps",
    "speculative_eagle_topk",
    "speculative_num_draft_tokens",
    "max_running_requests",
    "disable_overlap_schedule",
    "enable_mixed_chunk",
    "page_size",
    "attention_backend",
    "disable_radix_cache",
    "chunked_prefill_size",
    "disable_cuda_graph",
    "cuda_graph_max_bs",
    "tp_size",
    "mem_fraction_static",
    "model_path",
)


@dataclasses.dataclass
class ValidationReport:
    """What :func:`validate_command` found.

    ``sglang_version``: the version the rules used (the one asked for, else the newest known release);
    ``profile``: its :class:`~specdash.sglang.versions.Profile`; ``diagnostics``: list of
    :class:`~specdash.sglang.diagnostics.Diagnostic`, most severe first; ``effective``: ``{ServerArgs field: value}``
    SGLang will use (None = chosen by SGLang at launch from the GPU/model); ``typed``: ``{field: value}`` as the
    user typed them (converted like argparse does); ``architecture`` / ``architecture_source``: the target's HF
    architecture and where it came from (``config.json`` or ``guessed from the model name``); ``command``: the
    parsed :class:`~specdash.sglang.command.LaunchCommand`; ``version_notice``: one line when ``sglang_version`` is
    newer than every release the rules were checked against (:data:`~specdash.sglang.versions.CURRENT_RELEASE`),
    naming that release; None otherwise (see :func:`~specdash.sglang.versions.version_notice`); ``hidden``: the
    parts of the command the text does not show (an unresolved ``$EXTRA`` word, a ``[... trimmed]`` marker), as
    pasted: a field not typed may still be set there; ``version_given``: False when no release was given (or it
    was not a version string): ``sglang_version`` is then the newest known release, an assumption, not the host's.
    """

    sglang_version: str
    profile: Profile
    diagnostics: list[Diagnostic]
    effective: dict[str, Any]
    typed: dict[str, Any]
    architecture: str | None = None
    architecture_source: str | None = None
    command: LaunchCommand | None = None
    version_notice: str | None = None
    hidden: list[str] = dataclasses.field(default_factory=list)
    version_given: bool = True

    @property
    def has_errors(self) -> bool:
        """True when any diagnostic is an ``error``."""
        return any(d.severity == "error" for d in self.diagnostics)

    def by_severity(self, severity: str) -> list[Diagnostic]:
        """The diagnostics of one severity, in order."""
        return [d for d in self.diagnostics if d.severity == severity]

    def codes(self) -> list[str]:
        """The diagnostics' codes, in order (handy for tests and scripts)."""
        return [d.code for d in self.diagnostics]

    def find(self, code: str) -> Diagnostic | None:
        """The first diagnostic with ``code``, or None."""
        return next((d for d in self.diagnostics if d.code == code), None)

    def to_json(self) -> dict[str, Any]:
        """The ``specdash validate --json`` object: ``{"sglang_version", "profile", "diagnostics": [{"severity",
        "code", "flags", "message", "fix"}...], "effective": {...}, "typed": {...}, "architecture",
        "architecture_source", "newest_known_release", "version_notice", "hidden"}`` (``version_notice`` null unless the
        version is newer than ``newest_known_release``, the newest release the rules were checked against;
        ``hidden``: parts of the command the text does not show, which may set any field not in ``typed``)."""
        return {
            "sglang_version": self.sglang_version,
            "profile": f"{self.profile.name} ({self.profile.releases})",
            "diagnostics": [d.to_json() for d in self.diagnostics],
            "effective": dict(self.effective),
            "typed": dict(self.typed),
            "architecture": self.architecture,
            "architecture_source": self.architecture_source,
            "newest_known_release": CURRENT_RELEASE,
            "version_notice": self.version_notice,
            "hidden": list(self.hidden),
        }


def _initial_values(table, typed: dict[str, Any]) -> dict[str, Any]:
    values = dict(_defaults(table))
    values.update({k: v for k, v in typed.items() if not isinstance(v, Unresolved)})
    return values


@functools.cache
def _defaults(table) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for spec in table.specs:
        if spec.dest in values:
            continue
        default = spec.default
        if default is None and spec.action in ("store_true",):
            default = False
        values[spec.dest] = default
    return values


def validate_command(command_text: str, sglang_version: str | None = None, model_config: dict | None = None,
                     *, draft_config: dict | None = None) -> ValidationReport:
    """Validate ``command_text`` (a pasted launch command, see :mod:`specdash.sglang.command`) for SGLang
    ``sglang_version`` (e.g. ``"0.5.9"``; None = newest known release) and the target's HF ``config.json`` dict
    ``model_config`` (for architecture-dependent choices; without it the architecture is guessed from the model
    name and labelled so). ``draft_config`` (the draft's config.json) enables the STANDALONE tokenizer check.
    Known SGLang issues (:mod:`specdash.sglang.known_issues`) are matched for ``sglang_version`` as given: with None
    they are reported at info level, saying the release decides.

    A ``sglang_version`` that is not a version string (``"unknown"``, as a source build may report) gives the newest
    rules and a ``version_notice`` saying so; never raises for any text.
    """
    profile = profile_or_newest(sglang_version)
    table = load_table(profile.flag_release)
    command = parse_command(command_text)
    parsed = parse_arguments(command.args, table)
    model_path = parsed.typed.get("model_path")
    if model_path is None and command.positional and not command.positional[0].unresolved:
        model_path = command.positional[0].text
    if isinstance(model_path, Unresolved):
        model_path = None
    arch = architecture_from_config(model_config)
    arch_source = "config.json" if arch else None
    if arch is None:
        arch = guess_architecture(model_path)
        arch_source = GUESSED if arch else None
    ctx = _evaluate(command_text, sglang_version, profile, table, command, parsed, model_path, arch, arch_source,
                    model_config, draft_config)
    if arch_source == GUESSED:
        unguessed = _evaluate(command_text, sglang_version, profile, table, command, parsed, model_path, None, None,
                              model_config, draft_config)
        _soften_guessed_errors(ctx, unguessed, arch)
    effective = {f: ctx.values.get(f) for f in EFFECTIVE_FIELDS if f in ctx.values}
    for dest in ctx.parsed.typed:
        effective.setdefault(dest, ctx.values.get(dest))
    for dest, occ in ctx.parsed.unresolved.items():
        effective[dest] = occ.value
    diagnostics = sorted(ctx.diagnostics, key=lambda d: SEVERITY_RANK[d.severity])
    return ValidationReport(
        sglang_version=profile.version,
        profile=profile,
        diagnostics=diagnostics,
        effective=effective,
        typed=dict(parsed.typed),
        architecture=arch,
        architecture_source=arch_source,
        command=command,
        version_notice=profile_notice(profile),
        hidden=list(dict.fromkeys([w.raw for w in parsed.unresolved_words] + [m for _, m in command.trimmed])),
        version_given=is_version(sglang_version),
    )


def _evaluate(command_text: str, sglang_version: str | None, profile: Profile, table, command: LaunchCommand, parsed,
              model_path: str | None, arch: str | None, arch_source: str | None, model_config: dict | None,
              draft_config: dict | None) -> Context:
    """Run the rules on one parsed command for architecture ``arch`` (None: not known); returns the context with the
    diagnostics and the resolved values."""
    values = _initial_values(table, parsed.typed)
    if model_path is not None:
        values["model_path"] = model_path
    ctx = Context(profile=profile, table=table, command=command, parsed=parsed, env=command.env_dict(), arch=arch,
                  arch_source=arch_source, values=values)
    if not command.found:
        if command_text.strip():
            ctx.add("error", "no-launch-command", (),
                    "no SGLang launch command found (expected `python -m sglang.launch_server ...`, `sglang serve "
                    "...` or a list of --flags)")
    else:
        if command.engine != "sglang":
            _foreign_engine(ctx)
        if command.other_commands:
            ctx.add("info", "more-commands", (),
                    f"the text holds {command.other_commands + 1} SGLang launch commands; this report is about the "
                    "first one with speculative flags (edit the text to check another)")
        if command.from_error_line:
            ctx.add("info", "from-error-line", (),
                    "taken from an argparse 'unrecognized arguments' line: every flag listed there was rejected")
        shell.check(ctx)
        argparse_level.check(ctx)
        ctx = _with_renames(ctx)
        stopped_by_argparse = ctx.stopped
        for step in (backends.resolve, parallel.check, backends.pipeline_overlap):
            if not ctx.stopped:
                step(ctx)
        if stopped_by_argparse or not ctx.stopped:
            speculative.resolve(ctx)
            backends.deterministic_after_speculative(ctx)
            launch_checks.check(ctx)
        advice.check(ctx)
        check_pairing(ctx, model_config, draft_config)
        shell.demote_unresolved(ctx)
        if not ctx.stopped:
            match_known_issues(ctx, sglang_version if is_version(sglang_version) else None)
    return ctx


#: ``arch_source`` of an architecture taken from the model's name, not from its config.json.
GUESSED = "guessed from the model name"


def _soften_guessed_errors(ctx: Context, unguessed: Context, arch: str | None) -> None:
    """An error that holds only under the architecture guessed from the model name (it is absent when the
    architecture is unknown) depends on a fact the input does not carry: it becomes a ``warning`` that says so and
    how to supply the fact. Errors that hold whatever the architecture stay errors."""
    robust = {(d.code, d.flags) for d in unguessed.diagnostics if d.severity == "error"}
    for index, diag in enumerate(ctx.diagnostics):
        if diag.severity == "error" and (diag.code, diag.flags) not in robust:
            ctx.diagnostics[index] = dataclasses.replace(
                diag, severity="warning",
                message=f"{diag.message} — only if the target is {arch}, which is guessed from the model name: give "
                        "the model's config.json (validate --host TARGET reads it) to decide")


def _with_renames(ctx: Context) -> Context:
    """When other engines' flags or ambiguous abbreviations were found and can be renamed (or the whole command is
    another engine's and was translated), resolve the command as fixed, so the effective values show what the fixed
    command will do. Diagnostics keep accumulating in the same list."""
    fixed_text = None
    if ctx.command.engine != "sglang":
        for diag in ctx.diagnostics:
            if diag.code == "not-sglang" and diag.fix is not None:
                fixed_text = diag.fix.edits[0].value
    else:
        edits: list[Edit] = []
        for diag in ctx.diagnostics:
            if diag.code in ("foreign-flag", "ambiguous-flag", "fused-flags") and diag.fix is not None:
                if any(e.kind in ("rename", "set") for e in diag.fix.edits):
                    edits.extend(diag.fix.edits)
        if edits:
            edits.sort(key=lambda e: e.kind != "rename")  # renames first: applied together on one parse
            fixed_text = Fix("", tuple(edits), ctx.table.release).apply(ctx.command.text)
    if fixed_text is None:
        return ctx
    command = parse_command(fixed_text)
    parsed = parse_arguments(command.args, ctx.table)
    values = _initial_values(ctx.table, parsed.typed)
    values["model_path"] = parsed.typed.get("model_path", ctx.values.get("model_path"))
    if isinstance(values["model_path"], Unresolved):
        values["model_path"] = None
    ctx.add("info", "resolved-as-fixed", (),
            "the effective values below assume the flags above are renamed as suggested")
    new = Context(profile=ctx.profile, table=ctx.table, command=command, parsed=parsed, env=command.env_dict(),
                  arch=ctx.arch, arch_source=ctx.arch_source, values=values)
    new.diagnostics = ctx.diagnostics
    new.notes["typed_command"] = ctx.notes.get("typed_command", ctx.command)  # the flags as the user typed them
    return new


def _foreign_engine(ctx: Context) -> None:
    """A vLLM / TensorRT-LLM command: say so and offer the whole command translated to SGLang."""
    cmd = ctx.command
    text = cmd.text
    first_arg = cmd.args[0].start if cmd.args else cmd.end
    model = cmd.positional[0].text if cmd.positional else None
    head = "python -m sglang.launch_server" + (f" --model-path {model}" if model else "")
    translated = text[:cmd.launcher_start] + head + (" " if cmd.args else "") + text[first_arg:]
    translated = translated[: len(translated) - (len(text) - cmd.end)] if cmd.end < len(text) else translated
    from specdash.sglang.rules import argparse_level  # local: the same helpers produce the per-flag fixes

    probe = Context(profile=ctx.profile, table=ctx.table, command=ctx.command, parsed=ctx.parsed, env=ctx.env,
                    arch=ctx.arch, arch_source=ctx.arch_source, values=dict(ctx.values))
    argparse_level.check(probe)
    edits: list[Edit] = []
    for diag in probe.diagnostics:
        if diag.code in ("foreign-flag", "unknown-flag") and diag.fix is not None:
            edits.extend(diag.fix.edits)
    fixed = Fix("", tuple(edits), ctx.table.release).apply(translated.strip())
    engine = {"vllm": "vLLM", "trtllm": "TensorRT-LLM"}.get(cmd.engine, cmd.engine)
    ctx.add("error", "not-sglang", (), f"this is a {engine} command ({cmd.launcher}), not SGLang's; its "
            f"speculative flags are translated below. SGLang equivalent: {fixed}",
            Fix("replace the whole command with its SGLang equivalent", (Edit("replace_all", value=fixed),),
                ctx.table.release), stage="argparse", exception="SystemExit(2)")
