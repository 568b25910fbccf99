"""Configuration of imported results taken from the one SGLang launch command in the same text.

A benchmark output does not print the server's depth; an issue body or a terminal capture often holds the launch
command too. When the text (benchmark lines left out) holds exactly one ``sglang.launch_server`` / ``sglang
serve`` command, its ``--speculative-algorithm``, ``--speculative-num-steps``, ``--speculative-eagle-topk``,
``--speculative-num-draft-tokens``, ``--attention-backend`` and ``--disable-cuda-graph`` fill what the records do
not state themselves (read with :func:`specdash.sglang.command.parse_command` and the current release's flag
table; a value from an unset shell variable stays unknown). The records say where it came from
(``settings["config_source"]`` and an info finding). With two or more launch commands nothing is taken: which one
produced the output is not known. A ``bench_serving`` run without an ``Accept length:`` line, in a text where
another run has one, gets nothing from a speculative command (its server had no speculative decoding).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from specdash.bench.imported.record import Finding, ImportedRecord

_LAUNCH = re.compile(r"sglang\.launch_server\b|\bsglang\s+serve\b")
#: flag dest -> record config key
_FLAGS = {"speculative_algorithm": "speculative_algorithm", "speculative_num_steps": "speculative_num_steps",
          "speculative_eagle_topk": "speculative_eagle_topk",
          "speculative_num_draft_tokens": "speculative_num_draft_tokens", "attention_backend": "attention_backend"}
_SERVING = "sglang bench_serving"
#: Longest text searched for a launch command (an issue body, not a whole log).
MAX_CHARS = 200_000


def command_config(text: str) -> tuple[dict, int] | None:
    """``(config, line)`` from the only launch command in ``text`` (1-based line where it starts), else None."""
    if len(text) > MAX_CHARS or len(_LAUNCH.findall(text)) != 1:
        return None
    from specdash.sglang.arguments import Unresolved, parse_arguments
    from specdash.sglang.command import parse_command
    from specdash.sglang.flags import load_table
    from specdash.sglang.versions import FLAG_TABLE_RELEASES

    command = parse_command(text)
    if not command.found or command.engine != "sglang" or not _LAUNCH.search(command.launcher):
        return None
    parsed = parse_arguments(command.args, load_table(FLAG_TABLE_RELEASES[-1]))
    config: dict = {}
    for dest, key in _FLAGS.items():
        value = parsed.typed.get(dest)
        if value is not None and not isinstance(value, Unresolved) and dest not in parsed.unresolved:
            config[key] = value
    if parsed.typed.get("disable_cuda_graph") is True:
        config["cuda_graph"] = False
    return config, text.count("\n", 0, command.start) + 1


def attach(text: str, records: Sequence[ImportedRecord]) -> None:
    """Fill unknown configuration of ``records`` from the only launch command in ``text`` (in place)."""
    if not records or any(r.tool == "sglang bench_speculative" for r in records):
        return  # bench_speculative launches its own servers with the depth it prints
    found = command_config(text)
    if found is None or not found[0]:
        return
    config, line = found
    # SGLang's bench_serving prints "Accept length:" only when the server reports one (``if accept_length:`` in
    # ``benchmark()``): in a text where one run printed it, a whole block of that tool without it (its
    # "Concurrency:" line, printed just before, is there) ran against a server without speculative decoding, so
    # not the one this command launches
    speculative_runs = any(r.tool == _SERVING and "accept_length" in r.metrics for r in records)
    for record in records:
        if record.baseline:
            continue
        if (speculative_runs and record.tool == _SERVING and "accept_length" not in record.metrics
                and "concurrency_measured" in record.metrics and config.get("speculative_algorithm")):
            record.findings.append(Finding(
                "info", "config-not-from-command",
                f"the launch command on line {line} is not taken for this run: it printed no accept length while "
                "another run in the text did, so its server had no speculative decoding", record.line))
            continue
        added = [k for k in config if record.config.get(k) is None]
        if not added:
            continue
        for key in added:
            record.config[key] = config[key]
        record.settings["config_source"] = f"the launch command on line {line}"
        names = ", ".join(k.removeprefix("speculative_").replace("_", " ") for k in added)
        record.findings.append(Finding(
            "info", "config-from-command",
            f"{names} taken from the launch command on line {line}, the only one in the text", record.line))
