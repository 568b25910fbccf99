"""The state one validation run works on: the parsed command, the profile, the values, and the findings."""

from __future__ import annotations

import dataclasses
from typing import Any

from specdash.sglang.arguments import ParsedArguments
from specdash.sglang.command import LaunchCommand
from specdash.sglang.diagnostics import Diagnostic, Edit, Fix
from specdash.sglang.flags import FlagTable
from specdash.sglang.versions import Profile


@dataclasses.dataclass
class Context:
    """Everything the rules read and write.

    ``values``: ServerArgs fields as SGLang sees them at the start of its resolution (flag defaults of the release
    overlaid with the typed values), rewritten by the resolution rules into the effective configuration;
    ``arch``: the target's architecture (``arch_source`` says ``config.json``, ``guessed from the model name`` or
    None); ``env``: environment variables of the launch; ``stopped``: set when SGLang would have raised, so later
    resolution steps (which SGLang never reaches) are skipped.
    """

    profile: Profile
    table: FlagTable
    command: LaunchCommand
    parsed: ParsedArguments
    env: dict[str, str]
    arch: str | None
    arch_source: str | None
    values: dict[str, Any]
    diagnostics: list[Diagnostic] = dataclasses.field(default_factory=list)
    stopped: bool = False
    notes: dict[str, Any] = dataclasses.field(default_factory=dict)

    # -- helpers ------------------------------------------------------------------------------------
    def typed(self, dest: str) -> bool:
        """True when the user gave a flag for ``dest``."""
        return dest in self.parsed.typed

    def option(self, dest: str, fallback: str | None = None) -> str:
        """Canonical spelling of the flag for ``dest`` in this release (e.g. ``--speculative-num-steps``)."""
        spec = self.table.by_dest.get(dest)
        if spec is not None:
            return spec.canonical
        return fallback or "--" + dest.replace("_", "-")

    def fix(self, description: str, *edits: Edit) -> Fix:
        """A :class:`Fix` bound to this release's flag table."""
        return Fix(description, tuple(edits), self.table.release)

    def set_edit(self, dest: str, value: Any) -> Edit:
        """Edit giving ``dest``'s flag the value ``value`` (None for a switch)."""
        return Edit("set", option=self.option(dest), value=value, dest=dest)

    def add(self, severity: str, code: str, flags, message: str, fix: Fix | None = None, **extra) -> Diagnostic:
        """Record a :class:`Diagnostic` (``flags``: an option string or a sequence of them)."""
        if isinstance(flags, str):
            flags = (flags,)
        diag = Diagnostic(severity, code, tuple(flags), message, fix, **extra)
        self.diagnostics.append(diag)
        return diag

    def error(self, code: str, flags, message: str, *, exception: str, stage: str = "server_args",
              fix: Fix | None = None, stop: bool = True, hardware_dependent: bool = False) -> Diagnostic:
        """Record an ``error`` SGLang raises (``exception`` type name, ``stage``); ``stop`` ends the resolution as
        SGLang's would; ``hardware_dependent`` when some GPUs avoid it."""
        diag = self.add("error", code, flags, message, fix, stage=stage, exception=exception,
                        hardware_dependent=hardware_dependent)
        if stop and stage in ("argparse", "server_args"):
            self.stopped = True
        return diag

    def override(self, code: str, dest: str, new: Any, why: str, fix: Fix | None = None,
                 flags=None) -> None:
        """SGLang replaces ``dest``'s value by ``new``: an ``override`` when the user typed a different value, an
        ``info`` when the old value was only a default; either way ``values[dest]`` becomes ``new``."""
        old = self.values.get(dest)
        self.values[dest] = new
        if old == new:
            return
        flags = flags or (self.option(dest),)
        if self.typed(dest):
            self.add("override", code, flags, f"{self.option(dest)} {_show(old)} -> {_show(new)}: {why}", fix,
                     field=dest, from_value=old, to_value=new)
        else:
            default = "" if old is None else f" (default {_show(old)})"
            self.add("info", code, flags, f"{dest} = {_show(new)}{default}: {why}", fix,
                     field=dest, from_value=old, to_value=new)


def _show(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)
