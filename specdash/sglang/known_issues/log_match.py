"""Match server-log lines against the known-issues table.

``KnownIssueLogScanner(version)``: ``feed(number, text)`` per line, then ``findings()`` — a list of dicts in the
shape of :meth:`specdash.logs.findings.Finding.as_dict` (``kind`` ``known_issue``, ``data`` with the entry ``id``
and ``link``), one per entry (repeats count up); ``finding_objects()`` gives them as ``Finding`` objects
(the log pane lists them next to the analyzer's findings). A release at or past an entry's known fix gives an ``info``
finding saying "fixed in X"; an unknown release keeps the entry's severity when the range is unknown anyway, and
drops to ``info`` when only some releases have it.
"""

from __future__ import annotations

from typing import Any

from specdash.logs.findings import Finding
from specdash.sglang.known_issues.model import KnownIssue, VersionVerdict
from specdash.sglang.known_issues.table import KNOWN_ISSUES

#: Characters of a line searched (a pathological multi-megabyte line is not scanned in full).
MAX_LINE_CHARS = 4096


class KnownIssueLogScanner:
    """Log-line matcher over ``table`` for SGLang release ``version`` (None: not known)."""

    def __init__(self, version: str | None = None, table: tuple[KnownIssue, ...] = KNOWN_ISSUES) -> None:
        self._table = table
        self._found: dict[str, dict[str, Any]] = {}
        self.set_version(version)

    def set_version(self, version: str | None) -> None:
        """Match the lines that follow for release ``version``; what matched so far is kept as it was reported."""
        self.version = version
        self._patterns = [(entry, p.needle, p.compiled) for entry in self._table for p in entry.logs
                          if entry.verdict(version) is not VersionVerdict.before]

    def feed(self, number: int, text: str) -> None:
        """Look at line ``number`` (1-based) with ``text``."""
        text = text[:MAX_LINE_CHARS]
        for entry, needle, regex in self._patterns:
            if needle not in text or regex.search(text) is None:
                continue
            seen = self._found.get(entry.id)
            if seen is not None:
                seen["count"] += 1
                seen["last_line"] = number
                continue
            self._found[entry.id] = self._finding(entry, number, text)

    def _finding(self, entry: KnownIssue, number: int, text: str) -> dict[str, Any]:
        verdict = entry.verdict(self.version)
        severity = entry.severity_for(verdict)
        if verdict is VersionVerdict.fixed:
            severity = "info"
            message = (f"matches a known SGLang issue fixed in {entry.first_fixed}, but this log is from "
                       f"{self.version}, so the cause may be another: {entry.title}")
        else:
            message = f"known SGLang issue: {entry.title}"
            if verdict is VersionVerdict.unknown and (entry.first_bad or entry.first_fixed):
                message += " (only some releases have it; the release is not known: scan --sglang-version V)"
        explanation = (f"{entry.symptom} ({entry.releases_text()}). Workaround: {entry.workaround}. "
                       f"See {entry.link}  Log: “{text.strip()[:300]}”")
        return {"kind": "known_issue", "severity": severity, "line": number, "last_line": number, "count": 1,
                "time": None, "message": message, "explanation": explanation, "flag": None, "fix": None,
                "data": {"id": entry.id, "link": entry.link}}

    def findings(self) -> list[dict[str, Any]]:
        """The findings so far, in order of first line."""
        return sorted(self._found.values(), key=lambda f: f["line"])

    @property
    def matched(self) -> int:
        """Entries matched so far (cheap: a UI polls it to know whether anything changed)."""
        return len(self._found)

    def finding_objects(self) -> list[Finding]:
        """The findings as :class:`specdash.logs.findings.Finding` (``key`` ``known_issue:<id>``), for a view that
        lists them next to the log analyzer's own; ``data["link"]`` is the thread's URL."""
        return [Finding(kind=f["kind"], severity=f["severity"], line=f["line"], message=f["message"],
                        explanation=f["explanation"], count=f["count"], last_line=f["last_line"],
                        key=f"known_issue:{f['data']['id']}", data=dict(f["data"]))
                for f in self.findings()]
