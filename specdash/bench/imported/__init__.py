"""Benchmark results pasted or opened as text, read into the records ``specdash bench`` stores.

:func:`find_results` finds, inside any text (an issue body, a terminal capture, a log with other lines around),
the outputs of SGLang ``bench_serving`` and vLLM ``vllm bench serve`` (:mod:`.serving`), SGLang
``bench_speculative`` (:mod:`.speculative`), markdown / CSV tables of per-depth results (:mod:`.table`) and
one-line reports (:mod:`.oneline`). Each found part is an :class:`ImportedResult` naming the lines it covers, so a
segmenter can claim them. Derived figures are recomputed and checked by :mod:`.checks`.
"""

from __future__ import annotations

import dataclasses

from specdash.bench.imported import oneline, result_json, serving, speculative, table
from specdash.bench.imported.checks import check_group, rank
from specdash.bench.imported.context import attach
from specdash.bench.imported.record import Finding, ImportedRecord

__all__ = ["Finding", "ImportedRecord", "ImportedResult", "find_results", "split_lines"]

#: Parsers in order of precedence: a line claimed by an earlier one is not offered to a later one.
_PARSERS = (serving.parse, result_json.parse, speculative.parse, table.parse, oneline.parse)
#: Longest line looked at (longer ones are not benchmark output), except a JSON object line (a result file with
#: per-request lists can be long) up to :data:`MAX_JSON_LINE`.
MAX_LINE = 2000
MAX_JSON_LINE = 20_000_000


@dataclasses.dataclass
class ImportedResult:
    """One benchmark output found in a text: lines ``first_line``..``last_line`` (1-based, inclusive), the
    ``tool`` that printed it (see :class:`ImportedRecord`), and its ``records`` (one per configuration or row),
    already checked (:func:`specdash.bench.imported.checks.check_group`)."""

    first_line: int
    last_line: int
    tool: str
    records: list[ImportedRecord]

    def ranking(self) -> list[dict]:
        """:func:`specdash.bench.imported.checks.rank` of the records (empty when fewer than two are comparable)."""
        return rank(self.records)

    def findings(self) -> list[Finding]:
        """Every record's findings, in line order."""
        return sorted((f for r in self.records for f in r.findings), key=lambda f: f.line)

    def to_dict(self) -> dict:
        """JSON-ready: ``first_line``, ``last_line``, ``tool``, ``records`` (each as ``to_run_dict``),
        ``ranking`` (per group: ``concurrency``, ``basis``, ``order`` as record line numbers, ``note``)."""
        return {
            "first_line": self.first_line, "last_line": self.last_line, "tool": self.tool,
            "records": [r.to_run_dict() for r in self.records],
            "ranking": [{"concurrency": g["concurrency"], "basis": g["basis"], "basis_text": g["basis_text"],
                         "order": [r.line for r in g["order"]], "unranked": [r.line for r in g["unranked"]],
                         "note": g["note"]} for g in self.ranking()],
        }


def split_lines(text: str) -> tuple[list[str], int]:
    """``(lines, complete)``: the lines of ``text`` (``\\r`` dropped; lines over :data:`MAX_LINE` characters
    blanked unless they are JSON objects) and how many of them are whole: all when the text ends with a newline,
    else all but the last (which may be cut)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    ends_whole = text.endswith(("\n", "\r"))
    if ends_whole:
        lines.pop()
    lines = [line if len(line) <= MAX_LINE or (len(line) <= MAX_JSON_LINE and line.lstrip().startswith("{"))
             else "" for line in lines]
    return lines, len(lines) if ends_whole else max(len(lines) - 1, 0)


def find_results(text: str) -> list[ImportedResult]:
    """Every benchmark output in ``text``, in line order, non-overlapping. Never raises for any string."""
    lines, complete = split_lines(text)
    claimed = [False] * len(lines)
    found: list[ImportedResult] = []
    for parse in _PARSERS:
        visible = [line if not claimed[i] else "" for i, line in enumerate(lines)]
        for first, last, records in parse(visible, complete):
            if any(claimed[first - 1:last]) or not records:
                continue
            for i in range(first - 1, last):
                claimed[i] = True
            tools = sorted({r.tool for r in records})
            found.append(ImportedResult(first, last, tools[0] if len(tools) == 1 else " + ".join(tools), records))
    found.sort(key=lambda r: r.first_line)
    if found:
        rest = "\n".join("" if claimed[i] else line for i, line in enumerate(lines))
        try:
            attach(rest, [r for result in found for r in result.records])
        except (ValueError, RecursionError, OSError):  # the command reader never raises on text; belt and braces
            pass
    for result in found:
        check_group(result.records)
    return found
