"""Split a mixed text (a GitHub issue body, a chat message) into ordered parts, each for one analyzer.

A part is a range of lines of one kind:

* ``command`` — a shell script or command line with an SGLang launch command (``python3 -m sglang.launch_server``,
  ``sglang serve``, ``docker run ... sglang.launch_server``), with its ``export``/``VAR=`` lines and continuations;
* ``shell`` — shell lines without a launch command (``pip install``, ``python3 -m sglang.bench_serving``);
* ``log`` — server-log lines (SGLang's ``[2025-08-12 16:25:00 TP0]`` prefix, tracebacks, tqdm bars, uvicorn);
* ``gpu`` — ``nvidia-smi`` output: its table or its CSV query outputs;
* ``bench`` — benchmark output (``bench_serving``, ``bench_speculative``, ``vllm bench serve``, result tables), found
  by :func:`specdash.bench.imported.find_results` when that module is present;
* ``prose`` — everything else.

Markdown is read as GitHub renders it: a fenced block (three or more backticks or tildes) is a hard boundary
(no part crosses its fence lines), quoted lines (``> ...``, nested ``> > ...``) are read without their markers, and
``<details>`` / ``<summary>`` / ``<pre>`` tag lines are markup, not content. Line numbers are 1-based in the
original text; fence and tag lines belong to no part.

The detectors are a table (:data:`DETECTORS`), tried in order; a line claimed by an earlier detector is not offered
to a later one. Never raises for any text.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

from specdash.logs.parser import LineKind, LogParser

#: Lines read at most (a longer text is cut here; the parts say so through ``Segmentation.cut``).
MAX_LINES = 200_000
#: Characters of one line looked at (longer lines are read cut).
MAX_LINE_CHARS = 8_192

KINDS: tuple[str, ...] = ("command", "shell", "log", "gpu", "bench", "prose")
LABELS = {"command": "launch command", "shell": "shell commands", "log": "log excerpt", "gpu": "nvidia-smi output",
          "bench": "benchmark output", "prose": "other text"}


@dataclasses.dataclass(frozen=True)
class Part:
    """One part: ``kind`` (one of :data:`KINDS`), ``first_line`` / ``last_line`` (1-based, inclusive, in the
    original text; both are non-blank content lines), ``lines`` (the content of lines ``first_line`` ..
    ``last_line``: quote markers removed, markup lines and lines of other parts blanked, so that line ``k`` of the
    part is line ``first_line + k - 1`` of the text) and ``data`` (what the detector found, e.g. the benchmark
    result object; None for most kinds)."""

    kind: str
    first_line: int
    last_line: int
    lines: tuple[str, ...]
    data: object = None

    @property
    def label(self) -> str:
        return LABELS[self.kind]

    @property
    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


@dataclasses.dataclass(frozen=True)
class Segmentation:
    """``parts`` in text order, ``lines`` (how many lines the text has), ``content`` (every line's content, as in
    :attr:`Part.lines`), ``markdown`` (True when fences, quotes or tags were seen) and ``cut`` (True when the text
    was longer than :data:`MAX_LINES`)."""

    parts: tuple[Part, ...]
    lines: int
    content: tuple[str, ...]
    markdown: bool
    cut: bool


#: a detector: (content lines, region id of every line) -> [(first, last, data)] as 0-based inclusive indices;
#: lines that are None were claimed by an earlier detector (or are markup) and must not be taken
Detector = Callable[[list["str | None"], list[int]], list[tuple[int, int, object]]]

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})\s*([\w+-]*)")
_QUOTE = re.compile(r"^\s{0,3}(?:>\s?)+")
_TAG_LINE = re.compile(r"^\s*(?:</?(?:details|summary|pre|code|p|br|hr|div|sub|sup)\b[^>]*>\s*)+"
                       r"(?:[^<]*</summary>\s*)?$", re.IGNORECASE)
_SUMMARY = re.compile(r"^\s*<summary>.*</summary>\s*$", re.IGNORECASE)


def split_text(text: str) -> list[str]:
    """Lines of ``text`` as files have them: ``\\r\\n`` and ``\\r`` end lines, no other separator does."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _markup(lines: list[str]) -> tuple[list[str | None], list[int], bool]:
    """``(content, region, markdown)``: each line without quote markers (None for fence and tag lines) and the id
    of the fenced/unfenced region it is in (every fence line starts a new region)."""
    content: list[str | None] = []
    region: list[int] = []
    current = 0
    fence: str | None = None
    markdown = False
    for line in lines:
        line = line[:MAX_LINE_CHARS]
        quote = _QUOTE.match(line)
        body = line[quote.end():] if quote else line
        markdown = markdown or bool(quote)
        fence_match = _FENCE.match(body)
        if fence_match and (fence is None or (fence_match.group(1)[0] == fence[0]
                                              and len(fence_match.group(1)) >= len(fence)
                                              and not fence_match.group(2))):
            fence = fence_match.group(1) if fence is None else None
            current += 1
            markdown = True
            content.append(None)
            region.append(current)
            current += 1
            continue
        if fence is None and (_TAG_LINE.match(body) or _SUMMARY.match(body)):
            markdown = True
            content.append(None)
            region.append(current)
            continue
        content.append(body)
        region.append(current)
    return content, region, markdown


# --- detectors -------------------------------------------------------------------------------------------------

_LAUNCH = re.compile(r"(sglang\.launch_server|sglang_router\.launch_server|sglang/launch_server\.py|"
                     r"(?:^|[\s/])sglang\s+serve\b)")
_PROMPT = re.compile(r"^\s*(?:\$|#\s|[\w.@-]+[@:][\w.~/-]*[$#])\s+")
_SHELL_START = re.compile(
    r"^\s*(?:export\s+\w+=|[A-Za-z_]\w*=\S*(?:\s|$)|#!/|(?:sudo\s+)?(?:nohup|docker|podman|srun|torchrun|mpirun|"
    r"apptainer|singularity|python3?(?:\.\d+)?|uv|pip3?|sglang|vllm|CUDA_VISIBLE_DEVICES=\S*|bash|sh|cd|set|"
    r"huggingface-cli|hf|git|conda|source)\b\s*(?:\S|$))")
_FLAG_LINE = re.compile(r"^\s*--?[A-Za-z][\w-]*")
_COMMENT = re.compile(r"^\s*#")


#: subcommands that make a bare ``docker pull x`` / ``pip install y`` a shell line without any flag
_VERBS = frozenset({"run", "exec", "pull", "install", "clone", "create", "activate", "download", "login", "serve",
                    "compose", "build", "uninstall", "checkout"})


def _shell_line(text: str) -> bool:
    body = _PROMPT.sub("", text, count=1)
    if _LAUNCH.search(body):
        return True
    if not _SHELL_START.match(body):
        return False
    words = body.split()
    if len(words) == 1 or "=" in words[0] or words[0] in ("export", "#!/bin/bash", "#!/usr/bin/env"):
        return True
    # prose that happens to start with a word like "set" or "python": a shell line has flags, paths, '=' or a verb
    return words[1] in _VERBS or any(w.startswith(("-", "/", "./", "$", "~")) or "=" in w
                                     or w.endswith((".py", ".sh", ".yaml", ".json")) for w in words[1:])


def detect_commands(content: list[str | None], region: list[int]) -> list[tuple[int, int, object]]:
    """Shell lines: a line that starts a command (a launcher, ``export``, ``VAR=``, ``docker``, ``python3``, ...),
    the lines its trailing backslash continues, lines of flags right after it (a broken continuation, which the
    validator reports), and ``#`` comments inside such a run. Data: True when a launch command is in it."""
    found: list[tuple[int, int, object]] = []
    i, n = 0, len(content)
    while i < n:
        line = content[i]
        if line is None or not _shell_line(line):
            i += 1
            continue
        first = last = i
        launch = bool(_LAUNCH.search(line))
        continued = line.rstrip().endswith("\\")
        j = i + 1
        while j < n and content[j] is not None and region[j] == region[i]:
            nxt = content[j] or ""
            if continued or _FLAG_LINE.match(nxt) or _shell_line(nxt) or (_COMMENT.match(nxt) and nxt.strip()):
                if _COMMENT.match(nxt) and not continued and j + 1 < n and not content[j + 1]:
                    break  # a markdown heading after a command, not a comment of it
                last = j
                launch = launch or bool(_LAUNCH.search(nxt))
                continued = nxt.rstrip().endswith("\\")
                j += 1
                continue
            if not nxt.strip():  # blank lines inside one script: keep going when a shell line follows
                k = j
                while k < n and content[k] is not None and region[k] == region[i] and not (content[k] or "").strip():
                    k += 1
                if k < n and content[k] is not None and region[k] == region[i] and _shell_line(content[k] or ""):
                    j = k
                    continued = False
                    continue
            break
        found.append((first, last, launch))
        i = last + 1
    return found


_LOG_START = re.compile(
    r"^\s*(?:\[\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d|\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d|\(\w+ pid=\d+\)|"
    r"(?:INFO|WARNING|ERROR|DEBUG|CRITICAL):\s|\[rank\d+\]|[IWEF]\d{4} \d\d:\d\d:\d\d|Traceback \(most recent|"
    r"File \"[^\"]+\", line \d+|\[gpu_id=\d+\])")
_EXCEPTION_LINE = re.compile(r"^(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Interrupt|Exit|Failure|Warning)(?::|$)")


#: line kinds that make a line without a log prefix a log line; warnings, overrides and error phrases are not
#: among them, since prose says "is disabled by default" or "a CUDA error" too
_LOG_KINDS = frozenset({
    LineKind.traceback, LineKind.decode, LineKind.prefill, LineKind.dist_begin, LineKind.dist_end,
    LineKind.weights_begin, LineKind.weights_end, LineKind.kv_cache, LineKind.graph_begin, LineKind.graph_end,
    LineKind.graph_progress, LineKind.progress, LineKind.ready, LineKind.retract, LineKind.server_args,
    LineKind.capacity, LineKind.timings, LineKind.http,
})


def detect_logs(content: list[str | None], region: list[int]) -> list[tuple[int, int, object]]:
    """Log lines: lines with a log timestamp prefix, traceback and exception lines, and lines
    :class:`specdash.logs.parser.LogParser` reads as SGLang's own (:data:`_LOG_KINDS`: decode, start-up, tqdm,
    uvicorn ...); indented lines and up to two other lines between
    log lines of the same region stay in the part (a traceback's source lines, a wrapped message)."""
    parser = LogParser()
    is_log: list[bool] = []
    for line in content:
        if line is None or not line.strip():
            is_log.append(False)
            continue
        kind = parser.feed(line).kind
        is_log.append(bool(_LOG_START.match(line) or _EXCEPTION_LINE.match(line.strip()) or kind in _LOG_KINDS))
    found: list[tuple[int, int, object]] = []
    i, n = 0, len(content)
    while i < n:
        if not is_log[i]:
            i += 1
            continue
        first = last = i
        j = i + 1
        gap = 0
        while j < n and content[j] is not None and region[j] == region[i]:
            if is_log[j]:
                last, gap = j, 0
            elif (content[j] or "").startswith((" ", "\t")) and (content[j] or "").strip() and gap == 0 \
                    and last == j - 1:
                last = j  # a traceback's source line, a wrapped message
            elif (content[j] or "").strip():
                gap += 1
                if gap > 2:
                    break
            j += 1
        found.append((first, last, None))
        i = last + 1
    return found


_SMI_START = re.compile(r"NVIDIA-SMI \S+\s+Driver Version|^\|\s*Processes:|^\|\s*MIG devices:")
_SMI_DATE = re.compile(r"^\s*\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}\s*$")
_SMI_CSV_HEADER = re.compile(r"^\s*(?:pid|index|process_name|name|uuid|gpu_uuid|timestamp|gpu_name),\s")
_TABLE_LINE = re.compile(r"^\s*[|+]")


def detect_gpu(content: list[str | None], region: list[int]) -> list[tuple[int, int, object]]:
    """nvidia-smi output: its table (from the date line or the top border before the ``NVIDIA-SMI`` header, or
    from a ``Processes:`` / ``MIG devices:`` box, through the following ``|``/``+`` lines and the blank line
    between its boxes) and its CSV outputs (a header line such as ``pid, process_name, used_gpu_memory [MiB]``
    and the rows after it)."""
    found: list[tuple[int, int, object]] = []
    i, n = 0, len(content)
    while i < n:
        line = content[i]
        if line is None:
            i += 1
            continue
        if _SMI_START.search(line):
            first = i
            while first > 0 and content[first - 1] is not None and region[first - 1] == region[i] and (
                    _TABLE_LINE.match(content[first - 1] or "") or _SMI_DATE.match(content[first - 1] or "")):
                first -= 1
            last = i
            j = i + 1
            while j < n and content[j] is not None and region[j] == region[i]:
                text = content[j] or ""
                if _TABLE_LINE.match(text):
                    last = j
                elif not text.strip() and j + 1 < n and _TABLE_LINE.match(content[j + 1] or ""):
                    pass
                else:
                    break
                j += 1
            if found and first <= found[-1][1]:
                first = found[-1][1] + 1
            if first <= last:
                found.append((first, last, None))
            i = last + 1
            continue
        if _SMI_CSV_HEADER.match(line):
            last = i
            j = i + 1
            while j < n and content[j] is not None and region[j] == region[i] and ", " in (content[j] or ""):
                last = j
                j += 1
            if last > i:
                found.append((i, last, None))
            i = last + 1
            continue
        i += 1
    return found


def detect_bench(content: list[str | None], region: list[int]) -> list[tuple[int, int, object]]:
    """Benchmark outputs found by ``specdash.bench.imported.find_results`` (data: its ``ImportedResult``); parts
    stay inside one region."""
    from specdash.bench.imported import find_results

    text = "\n".join(line or "" for line in content) + "\n"
    try:
        results = find_results(text)
    except Exception:  # a reader's bug must not take the other parts down  # noqa: BLE001
        return []
    found: list[tuple[int, int, object]] = []
    for result in results:
        first, last = int(result.first_line) - 1, int(result.last_line) - 1
        if 0 <= first <= last < len(content) and region[first] == region[last]:
            found.append((first, last, result))
    return found


#: (kind, detector) in order of precedence; ``command`` parts without a launch command become ``shell``
DETECTORS: list[tuple[str, Detector]] = [
    ("bench", detect_bench),
    ("gpu", detect_gpu),
    ("command", detect_commands),
    ("log", detect_logs),
]


def _owned_by(owner: tuple[str, object] | None, kind: str) -> bool:
    return owner is None or owner[0] == kind


def segment(text: str) -> Segmentation:
    """Split ``text`` into :class:`Part` s (see the module docstring). Never raises."""
    lines = split_text(text)
    cut = len(lines) > MAX_LINES
    lines = lines[:MAX_LINES]
    content, region, markdown = _markup(lines)
    owner: list[tuple[str, object] | None] = [None] * len(lines)
    spans: list[tuple[int, int, str, object]] = []
    for kind, detect in DETECTORS:
        visible = [c if owner[i] is None else None for i, c in enumerate(content)]
        for first, last, data in detect(visible, region):
            if first > last or any(owner[k] is not None for k in range(first, last + 1)):
                continue
            if kind == "command" and not data:
                kind_here, data = "shell", None
            else:
                kind_here = kind
            for k in range(first, last + 1):
                owner[k] = (kind_here, data)
            spans.append((first, last, kind_here, data if kind_here == "bench" else None))
    i = 0
    while i < len(lines):  # the rest is prose, one part per run of unclaimed content lines
        if owner[i] is not None or content[i] is None or not (content[i] or "").strip():
            i += 1
            continue
        first = i
        while i < len(lines) and owner[i] is None and content[i] is not None and region[i] == region[first]:
            i += 1
        spans.append((first, i - 1, "prose", None))
    parts = []
    for first, last, kind, data in sorted(spans):
        while last > first and not (content[last] or "").strip():
            last -= 1
        while first < last and not (content[first] or "").strip():
            first += 1
        body = tuple((content[k] or "") if _owned_by(owner[k], kind) else "" for k in range(first, last + 1))
        parts.append(Part(kind, first + 1, last + 1, body, data))
    return Segmentation(tuple(parts), len(lines), tuple(c or "" for c in content), markdown, cut)
