"""specdash's own HTTP requests to the server, marked so that their access-log lines can be told apart.

SGLang logs every request through uvicorn's access logger with the format set by SGLang's
``set_uvicorn_logging_configs`` (``python/sglang/srt/utils``, all releases since 0.4):
``[%(asctime)s] %(levelprefix)s %(client_addr)s - "%(request_line)s" %(status_code)s``, e.g.
``[2025-06-01 10:00:00] INFO:     127.0.0.1:51234 - "GET /health?specdash=poll HTTP/1.1" 200 OK``. The request line
holds the path *with* its query string (uvicorn's ``get_path_with_query_string``), and no User-Agent, so the
marker is a query parameter: FastAPI ignores query parameters a route does not declare, and SGLang's ``/health``,
``/server_info`` and ``/get_server_info`` declare none. A line is ours only when its request line carries the
marker; the user's own ``GET /health`` is never hidden.
"""

from __future__ import annotations

import re

#: The query parameter on every request of the status poll.
POLL_QUERY = "specdash=poll"

# ' - "' then the request line (uvicorn may colour it: an SGR escape right after the quote), method, a path whose
# query string holds the marker as a whole parameter, and the HTTP version
_OWN_LINE = re.compile(r' - "(?:\x1b\[[0-9;]*m)?[A-Z]{3,7} /[^ "?]*\?(?:[^ "]*&)?specdash=poll(?:&[^ "]*)? HTTP/\d')


def marked(path: str) -> str:
    """``/health`` → ``/health?specdash=poll`` (a path that has a query already gets ``&specdash=poll``)."""
    return f"{path}{'&' if '?' in path else '?'}{POLL_QUERY}"


def is_own_access_line(line: str) -> bool:
    """True when ``line`` is an access-log line of a request specdash's status poll made (marked with
    :data:`POLL_QUERY`). Never raises."""
    return "specdash=poll" in line and _OWN_LINE.search(line) is not None


def without_own_lines(lines: list[str]) -> tuple[list[str], int]:
    """``lines`` without specdash's own access lines, and how many were left out."""
    if not any("specdash=poll" in line for line in lines):
        return lines, 0
    kept = [line for line in lines if not is_own_access_line(line)]
    return kept, len(lines) - len(kept)
