"""The shape of one known issue: what it looks like (command pattern and/or log pattern), which releases it affects
and where SGLang's tracker discusses it.

Version keying (versions compared with :func:`specdash.sglang.versions.parse_version`):

- ``first_bad``: the first release known to have it (None: not known; the entry fires for every older release too);
- ``first_fixed``: the first release known to carry the fix (None: open, or fixed on main in ``fixed_by`` but the
  first release with that fix is not known here — the message then says so instead of guessing);
- ``reported_in``: releases the thread shows it on (facts from the thread, shown to the user).
"""

from __future__ import annotations

import dataclasses
import enum
import re
from collections.abc import Callable
from typing import Any

from specdash.sglang.versions import parse_version

#: A value condition on a ServerArgs field: ``True`` (set / on / > 1 for sizes), a tuple (one of these values,
#: compared case-insensitively for strings), :class:`AtLeast`, or a callable ``value -> bool``.
Condition = Any


@dataclasses.dataclass(frozen=True)
class AtLeast:
    """A numeric field at or above ``minimum`` (e.g. ``pp_size`` >= 2)."""

    minimum: float


@dataclasses.dataclass(frozen=True)
class CommandPattern:
    """What a launch command must show for the entry to apply.

    ``algorithms``: effective ``speculative_algorithm`` values (upper case; empty: any, including none);
    ``values``: ``{ServerArgs field: Condition}``, every one must hold on the effective values; ``env``:
    ``{variable: regex}`` fully matched against the launch environment's value (``None`` as regex: the variable is
    set at all); ``env_absent``: variables that must not be set; ``hardware``: a GPU family the issue needs
    (``"AMD ROCm"``, ``"Blackwell"``, ``"Ampere"``) — the command rarely proves it, so without ``hardware_evidence``
    the entry is reported at info level naming the condition; ``hardware_evidence``: ``{field or env: regex}``
    whose match proves the family (e.g. ``attention_backend`` ``aiter`` proves AMD); ``evidence_required``: report
    the entry only with that evidence (AMD deployments show themselves in the command: the aiter backend,
    ``SGLANG_USE_AITER``, ``HIP_VISIBLE_DEVICES``; a command without any of them is taken as not AMD's, so NVIDIA
    commands are not buried under ROCm notes); ``architectures``: target architectures the issue needs."""

    algorithms: tuple[str, ...] = ()
    values: dict[str, Condition] = dataclasses.field(default_factory=dict)
    env: dict[str, str | None] = dataclasses.field(default_factory=dict)
    env_absent: tuple[str, ...] = ()
    hardware: str | None = None
    hardware_evidence: dict[str, str] = dataclasses.field(default_factory=dict)
    evidence_required: bool = False
    architectures: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class LogPattern:
    """A server-log line that shows the issue: ``needle`` (a literal every matching line contains, checked first so
    most lines cost one substring test) and ``regex`` (searched in the line)."""

    needle: str
    regex: str

    @property
    def compiled(self) -> re.Pattern[str]:
        return _compile(self.regex)


_CACHE: dict[str, re.Pattern[str]] = {}


def _compile(regex: str) -> re.Pattern[str]:
    pattern = _CACHE.get(regex)
    if pattern is None:
        pattern = _CACHE[regex] = re.compile(regex)
    return pattern


class VersionVerdict(enum.Enum):
    """How a release relates to an entry: ``affected`` (in range, or the range is not known), ``fixed`` (at or past
    ``first_fixed``), ``before`` (older than ``first_bad``), ``unknown`` (no release given)."""

    affected = "affected"
    fixed = "fixed"
    before = "before"
    unknown = "unknown"


@dataclasses.dataclass(frozen=True)
class KnownIssue:
    """One entry of the table.

    ``id`` (stable, kebab-case), ``area`` (``dp-attention``, ``pipeline``, ``pd-disaggregation``, ``spec-v2``,
    ``adaptive-depth``, ``attention-backend``, ``amd-rocm``, ``env-benchmark``, ``multi-node``, ``draft-model``,
    ``other``), ``title``, ``symptom`` (what the user sees), ``links`` (public SGLang issue/PR URLs, first = the
    thread it was read from), ``workaround``; ``command`` / ``logs``: the patterns (at least one); ``severity``:
    ``warning`` or ``info`` (never ``error``: a known bug is a risk, not SGLang refusing the command);
    ``first_bad`` / ``first_fixed`` / ``fixed_by`` / ``reported_in``: see the module docstring; ``status``: the
    thread's state in words (``open``, ``closed as inactive``, ``fixed``, ``by design`` for a documented behaviour
    that misleads, e.g. a benchmark knob); ``when``: an extra condition on the
    validation context (e.g. a flag the user did not type), None for none."""

    id: str
    area: str
    title: str
    symptom: str
    links: tuple[str, ...]
    workaround: str
    command: CommandPattern | None = None
    logs: tuple[LogPattern, ...] = ()
    severity: str = "warning"
    first_bad: str | None = None
    first_fixed: str | None = None
    fixed_by: str | None = None
    reported_in: tuple[str, ...] = ()
    status: str = "open"
    when: Callable[[Any], bool] | None = None

    @property
    def link(self) -> str:
        """The thread the entry was read from."""
        return self.links[0]

    def verdict(self, version: str | None) -> VersionVerdict:
        """Where ``version`` stands (None or text that is not a version: ``unknown``)."""
        if not version:
            return VersionVerdict.unknown
        try:
            key = parse_version(version)
        except ValueError:
            return VersionVerdict.unknown
        if self.first_fixed is not None and key >= parse_version(self.first_fixed):
            return VersionVerdict.fixed
        if self.first_bad is not None and key < parse_version(self.first_bad):
            return VersionVerdict.before
        return VersionVerdict.affected

    def severity_for(self, verdict: VersionVerdict) -> str:
        """The severity to report at ``verdict``: ``info`` for a fixed release, for an unknown release when only some
        releases have it, and when a fix was merged on main but its first release is not known (whether this
        release has it is then not known either); else the entry's own severity."""
        if verdict is VersionVerdict.fixed:
            return "info"
        if verdict is VersionVerdict.unknown and (self.first_bad or self.first_fixed):
            return "info"
        if self.first_fixed is None and self.fixed_by is not None:
            return "info"
        return self.severity

    def releases_text(self) -> str:
        """The affected releases in words, e.g. ``"0.5.2 to before 0.5.11"``, ``"reported on 0.5.17; fix release
        unknown (fixed on main by PR #16310)"`` or ``"open; fix release unknown"``."""
        parts: list[str] = []
        if self.first_bad and self.first_fixed:
            parts.append(f"releases {self.first_bad} to before {self.first_fixed}")
        elif self.first_bad:
            parts.append(f"releases from {self.first_bad}")
        if self.reported_in:
            parts.append(f"reported on {', '.join(self.reported_in)}")
        if self.first_fixed:
            parts.append(f"fixed in {self.first_fixed}")
        elif self.fixed_by:
            parts.append(f"fixed on main by {self.fixed_by}; the first release with the fix is not known here")
        elif self.status == "by design":
            parts.append("by design: every release that has it")
        elif self.status == "open":
            parts.append("open / fix release unknown")
        else:
            parts.append(f"{self.status} / fix release unknown")
        return "; ".join(parts)
