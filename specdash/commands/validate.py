"""``specdash validate [--sglang-version V] [--host TARGET] [--json] -- <launch command...>`` (or ``FILE`` / ``-``).

Prints the diagnostics and the effective configuration of an SGLang launch command. Exit status: 0 when no
``error`` diagnostic, 1 when there is one, 2 for usage errors.
"""

from __future__ import annotations

import argparse
import sys

NAME = "validate"
HELP = "check an SGLang launch command before launch (flags, speculative rules, effective values)"
DESCRIPTION = (
    "Check an SGLang launch command as SGLang's own argument handling would, version by version: unknown or "
    "ambiguous flags (with other engines' names mapped to SGLang's), speculative-decoding rules that make SGLang "
    "refuse or crash, values SGLang silently overrides, and the effective configuration. Give the command after "
    "'--' (quote it or not), '-' to read it from standard input, or the name of a file holding it. The target's "
    "config.json is read from the model path (on --host when given) for architecture-dependent choices. Exit "
    "status: 0 no error, 1 an error finding, 2 usage error."
)

_SEVERITY_LABEL = {"error": "ERROR", "override": "OVERRIDE", "warning": "WARNING", "info": "info"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sglang-version", metavar="V",
                        help="SGLang version whose rules apply (e.g. 0.5.9); default: detected on --host, else the "
                             "newest known release (a newer version gets the newest rules and a notice saying so)")
    parser.add_argument("--host", metavar="TARGET",
                        help="read the model's config.json (and detect the SGLang version) on TARGET: 'local', "
                             "[user@]host[:port] or an ~/.ssh/config alias")
    parser.add_argument("-i", dest="identity_file", metavar="IDENTITY_FILE", help="SSH identity file for --host")
    parser.add_argument("--known-hosts", metavar="FILE",
                        help="known_hosts file for --host (default ~/.ssh/known_hosts)")
    parser.add_argument("--ssh-config", metavar="FILE", help="ssh config file for --host (default ~/.ssh/config)")
    parser.add_argument("--python", default="python3", metavar="PY",
                        help="python with SGLang installed on the host, for version detection (default python3)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("launch", nargs=argparse.REMAINDER, metavar="-- COMMAND",
                        help="the launch command (after '--'), '-' for standard input, or a file holding it")


def _command_text(args: argparse.Namespace) -> str:
    from specdash.cli import UsageError

    words = list(args.launch)
    if words and words[0] == "--":
        words = words[1:]
    if words == ["-"]:
        text = sys.stdin.read()
        if not text.strip():
            raise UsageError("no launch command on standard input")
        return text
    if not words:
        raise UsageError("no launch command given: specdash validate -- python -m sglang.launch_server ...")
    if len(words) == 1:
        from_file = _file_text(words[0])
        if from_file is not None:
            args.read_from = words[0]
            return from_file
        return words[0]
    import shlex

    return " ".join(shlex.quote(w) if (not w or any(c.isspace() or c in "'\"" for c in w)) else w for w in words)


#: Largest file ``validate FILE`` reads (a launch script or compose file is a few KB).
MAX_FILE_BYTES = 1_000_000
#: Endings of a file name that is not a one-word command.
_FILE_ENDINGS = (".sh", ".bash", ".txt", ".md", ".yaml", ".yml", ".json", ".log", ".cmd", ".env", ".conf", ".cfg",
                 ".toml", ".slurm", ".sbatch", ".job", ".py")


def _looks_like_path(word: str) -> bool:
    """True when the single argument ``word`` names a file rather than being a command: it has no blank, does not
    start with ``-``, and has a ``/`` or a file ending (``run.sh``, ``./launch``, ``~/cmd.txt``)."""
    if not word or any(c.isspace() for c in word) or word.startswith("-") or "=" in word:
        return False
    return "/" in word or word.lower().endswith(_FILE_ENDINGS)


def _file_text(word: str) -> str | None:
    """The text of the file the single argument names (as ``validate - < FILE`` reads it), None when ``word`` is a
    command. Raises UsageError when it looks like a path but cannot be read as a text file: missing, a directory,
    binary, too large, or empty."""
    import os
    from pathlib import Path

    from specdash.cli import UsageError

    if not word or word.startswith("-") or any(c.isspace() for c in word):
        return None  # a flag or a quoted command, never a file name
    path = Path(os.path.expanduser(word))
    how = ("give the file of a launch command (specdash validate FILE, or specdash validate - < FILE) or the "
           "command itself after --")
    try:
        exists = path.exists()
    except (OSError, ValueError):
        exists = False
    if not exists:
        if _looks_like_path(word):
            raise UsageError(f"{word}: no such file; {how}")
        return None
    if path.is_dir():
        raise UsageError(f"{word} is a directory, not a file holding a launch command; {how}")
    if not path.is_file():  # a device, a pipe, a socket: reading could block or never end
        raise UsageError(f"{word} is not a regular file; {how}")
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"cannot read {word}: {exc.strerror or exc}") from None
    if len(data) > MAX_FILE_BYTES:
        raise UsageError(f"{word} is larger than {MAX_FILE_BYTES // 1_000_000} MB: not a launch command file")
    if b"\0" in data[:65536]:
        raise UsageError(f"{word} is a binary file, not a launch command; {how}")
    text = data.decode("utf-8", "replace")
    if not text.strip():
        raise UsageError(f"{word} is empty: no launch command in it")
    return text


async def _gather(target: str | None, model_path: str | None, draft_path: str | None, python: str,
                  want_version: bool, ssh: dict | None = None) -> tuple:
    """Read config.json files, the SGLang version and the draft/target pairing inputs through a Host. Returns
    (model_config, draft_config, version, notes, pair_inputs) — pair_inputs is a
    :class:`specdash.sglang.pairing.PairInputs` when both models were readable, else None."""
    from specdash.hosts.base import Host, HostError
    from specdash.sglang.host_facts import facts_for

    notes: list[str] = []
    host: Host
    if target is None or target == "local":
        from specdash.hosts.local import LocalHost

        host = LocalHost()
    else:
        from specdash.hosts.target import open_host

        host = open_host(target, **{k: v for k, v in (ssh or {}).items() if v is not None})
    await host.connect()
    try:
        facts = facts_for(host)
        configs: list[dict | None] = []
        for path in (model_path, draft_path):
            if not path:
                configs.append(None)
                continue
            read = await facts.model_config(path)
            configs.append(read.value)
            if read.missing:
                if target is not None:
                    notes.append(f"could not read {read.path} on {host.name} (architecture-dependent values are "
                                 "guessed)")
            elif read.value is None:
                notes.append(f"{read.problem} on {host.name}")
        version = None
        if want_version:
            probe = await facts.sglang_version(python)
            version = probe.version
            if version is None:
                notes.append(f"{probe.problem}; using the newest known rules")
        pair_inputs = None
        if configs[0] is not None and configs[1] is not None and model_path and draft_path:
            from specdash.sglang.pairing import PairLoadError, load_pair_from_host

            try:  # the draft/target pairing check needs the safetensors header too (header bytes only)
                pair_inputs = await load_pair_from_host(host, model_path, draft_path)
            except (PairLoadError, HostError) as exc:
                notes.append(f"pairing check skipped: {exc}")
        return configs[0], configs[1], version, notes, pair_inputs
    finally:
        await host.close()


def _hidden_parts(report) -> str:
    """The parts of the pasted command the text does not show (``$EXTRA`` unresolved, ``[... trimmed]``), as words
    for "unless ... sets it"; "" when the whole command is shown."""
    return ", ".join(report.hidden)


def _missing_required(report) -> set[str]:
    """SGLang field names of the required flags the command lacks (from the ``required-flag-missing`` diagnostic;
    SGLang server_args: ``--model-path`` is ``required=True``, argparse exits 2 without it)."""
    out: set[str] = set()
    for diag in report.diagnostics:
        if diag.code == "required-flag-missing":
            out.update(flag.lstrip("-").replace("-", "_") for flag in diag.flags)
    return out


def _render(report, notes: list[str]) -> str:
    lines = []
    prof = report.profile
    arch = (f"; target {report.architecture} ({report.architecture_source})" if report.architecture else "")
    if getattr(report, "version_given", True):
        lines.append(f"SGLang {report.sglang_version} (rules of profile {prof.name}: {prof.releases}){arch}")
    else:  # the release is assumed: say so, as the known-issue lines below do
        lines.append(f"SGLang release not known (pass --sglang-version or --host): rules of the newest known, "
                     f"{report.sglang_version} (profile {prof.name}: {prof.releases}){arch}")
    notice = getattr(report, "version_notice", None)
    if notice:
        lines.append(f"notice: {notice}")
    for note in notes:
        lines.append(f"note: {note}")
    if not report.diagnostics:
        lines.append("no findings")
    for d in report.diagnostics:
        flags = f" [{', '.join(d.flags)}]" if d.flags else ""
        lines.append(f"{_SEVERITY_LABEL[d.severity]:<8} {d.code}{flags}: {d.message}")
        if d.fix is not None:
            lines.append(f"         fix: {d.fix.description}")
        if d.link:
            lines.append(f"         see: {d.link}")
    lines.append("")
    lines.append("effective configuration (typed -> effective; 'auto' = SGLang decides at launch):")
    width = max((len(k) for k in report.effective), default=10)
    missing = _missing_required(report)
    hidden = _hidden_parts(report)
    for key, value in report.effective.items():
        shown = "auto" if value is None else str(value)
        if key in missing and value is None:
            shown = "missing (required: SGLang refuses to start without it)"
        elif key in report.typed and report.typed[key] != value:
            shown = f"{report.typed[key]} -> {shown}"
        elif key in report.typed:
            shown = f"{shown} (typed)"
        elif hidden:
            shown = f"{shown} (unless {hidden} sets it)"
        lines.append(f"  {key:<{width}}  {shown}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    import asyncio
    import json

    from specdash.cli import UsageError
    from specdash.sglang.validate import validate_command
    from specdash.sglang.versions import parse_version

    args.read_from = None
    text = _command_text(args)
    if args.sglang_version:
        try:
            parse_version(args.sglang_version)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    first = validate_command(text, args.sglang_version)
    model_path = first.typed.get("model_path") or first.effective.get("model_path")
    draft_path = first.typed.get("speculative_draft_model_path")
    notes: list[str] = []
    model_config = draft_config = inputs = None
    version = args.sglang_version
    try:
        model_config, draft_config, detected, notes, inputs = asyncio.run(
            _gather(args.host, model_path, draft_path, args.python,
                    want_version=args.host is not None and not args.sglang_version,
                    ssh={"identity_file": args.identity_file, "known_hosts": args.known_hosts,
                         "config_file": args.ssh_config}))
        version = version or detected
    except ValueError as exc:  # bad TARGET
        raise UsageError(str(exc)) from None
    except Exception as exc:  # HostError and friends: one line, then validate without the files
        notes.append(f"host: {exc}")
    try:
        report = validate_command(text, version, model_config, draft_config=draft_config)
    except ValueError:
        notes.append(f"SGLang version {version!r} not understood; using the newest known rules")
        report = validate_command(text, None, model_config, draft_config=draft_config)
    if args.read_from:
        notes.insert(0, f"launch command read from the file {args.read_from}")
    pairing = None
    algorithm = str(report.effective.get("speculative_algorithm") or "").upper()
    if inputs is not None and algorithm in ("EAGLE", "EAGLE3", "STANDALONE"):
        try:
            pairing = inputs.analyze(algorithm, sglang_version=report.sglang_version)
        except ValueError as exc:
            notes.append(f"pairing check skipped: {exc}")
    if args.json:
        out = report.to_json()
        if pairing is not None:
            out["pairing"] = pairing.to_json()
        if notes:
            out["notes"] = notes
        sys.stdout.write(json.dumps(out, indent=2, default=str) + "\n")
    else:
        text_out = _render(report, notes)
        if pairing is not None:
            from specdash.sglang.pairing.text_report import render_text

            text_out += "\n\n" + render_text(pairing, title="draft/target pairing")
        sys.stdout.write(text_out + "\n")
    return 1 if report.has_errors or (pairing is not None and pairing.has_errors) else 0
