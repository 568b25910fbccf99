"""One severity scale for everything specdash reports (validator diagnostics, pairing checks, log findings), most
severe first:

- ``error``    it fails or produces garbage (SGLang refuses or crashes; a log line says it crashed);
- ``override`` SGLang silently uses another value than the one typed;
- ``warning``  legal but harmful, or likely wrong where the input cannot prove it;
- ``success``  good news in a log (the server is ready);
- ``info``     facts worth seeing.

Each producer uses the subset that applies to it.
"""

from __future__ import annotations

SEVERITIES: tuple[str, ...] = ("error", "override", "warning", "success", "info")
_RANK = {severity: index for index, severity in enumerate(SEVERITIES)}


def severity_rank(severity: str) -> int:
    """Sort key: 0 for ``error`` … 4 for ``info``; an unknown severity sorts last."""
    return _RANK.get(severity, len(SEVERITIES))
