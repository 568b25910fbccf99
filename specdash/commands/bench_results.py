"""The result actions of ``specdash bench``: ``import FILE|-``, ``list``, ``compare A B`` (each with ``--json``).

* ``import``: find benchmark outputs in a text (:func:`specdash.bench.imported.find_results`), print each record
  with what is known and unknown, recomputed figures, findings and the depth ranking; store the records beside
  specdash's own runs (``--no-save`` to only read). Exit 1 when nothing was found. A result file specdash saved
  (``run-*.json``, from this or another state folder) is stored as it is, unless the store already holds it
  (then its id is named and nothing is stored twice).
* ``list``: stored runs and imported records in groups of comparable results (same model, workload, API,
  concurrency, ...), each group ranked by output throughput with shared ranks within noise (never by accept
  length).
* ``compare A B``: A and B are stored ids (see ``list``), result files specdash saved (the path the console prints
  after a benchmark), files of pasted output (``FILE`` or ``FILE:LINE`` to pick the record of that line), or launch
  commands (a file holding one, or the command text itself). Results are
  compared figure by figure, commands flag by flag.

Errors a user can cause (a missing file, an unknown id, nothing comparable) are one line and exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def add_actions(parser: argparse.ArgumentParser) -> None:
    """Register ``import``, ``list`` and ``compare`` under ``specdash bench``."""
    sub = parser.add_subparsers(dest="bench_action", metavar="ACTION")
    imp = sub.add_parser("import", help="read pasted benchmark output (bench_serving, bench_speculative, vLLM bench "
                                        "serve, tables, one-line reports), or a result file specdash saved, into "
                                        "stored results")
    imp.add_argument("file", metavar="FILE", help="text file, or - for standard input")
    imp.add_argument("--no-save", action="store_true", help="only print; do not store the records")
    imp.add_argument("--json", action="store_true", help="print the results as JSON")
    lst = sub.add_parser("list", help="stored runs and imported results, ranked by output throughput")
    lst.add_argument("--json", action="store_true", help="print JSON")
    cmp_ = sub.add_parser("compare", help="compare two results or two launch commands side by side")
    cmp_.add_argument("a", metavar="A", help="stored id, a result file specdash saved, FILE[:LINE] of pasted output, "
                                             "or a launch command / file")
    cmp_.add_argument("b", metavar="B", help="the same for the other side")
    cmp_.add_argument("--json", action="store_true", help="print JSON")


def run_action(args: argparse.Namespace) -> int:
    action = args.bench_action
    if action == "import":
        return _import(args)
    if action == "list":
        return _list(args)
    return _compare(args)


def _read_text(name: str) -> str:
    from specdash.cli import UsageError

    if name == "-":
        return sys.stdin.buffer.read().decode("utf-8", "replace")
    try:
        return Path(name).read_bytes().decode("utf-8", "replace")
    except IsADirectoryError:
        raise UsageError(f"{name} is a directory, not a text file") from None
    except OSError as exc:
        raise UsageError(f"cannot read {name}: {exc.strerror or exc}") from None


def _import(args: argparse.Namespace) -> int:
    from specdash.bench.imported import find_results
    from specdash.bench.imported.report import result_text
    from specdash.text.display import clean

    own = _own_result_file(args.file)
    if own is not None:
        return _import_own(args, own)
    results = find_results(_read_text(args.file))
    saved: list[str] = []
    save_failed = False
    if results and not args.no_save:
        from specdash.bench.store import save_imported

        try:
            for result in results:
                for record in result.records:
                    if record.metrics:
                        saved.append(save_imported(record, args.file).stem)
        except (OSError, ValueError) as exc:
            sys.stderr.write(f"specdash bench import: results not saved: {exc}\n")
            save_failed = True
    if args.json:
        json.dump({"results": [r.to_dict() for r in results], "saved": saved}, sys.stdout, indent=1, default=str)
        sys.stdout.write("\n")
    elif not results:
        sys.stdout.write("no benchmark output found (looked for SGLang bench_serving / bench_speculative, vLLM "
                         "bench serve, markdown/CSV result tables, 'speed: ... token/s' lines)\n")
    else:
        text = "\n\n".join(result_text(r) for r in results)
        sys.stdout.write(clean(text, newlines=True) + "\n")
        if saved:
            sys.stdout.write(f"\nstored {len(saved)} record{'s' if len(saved) != 1 else ''} (see 'specdash bench "
                             "list')\n")
    return 0 if results and not save_failed else 1


def _own_result_file(name: str):
    """``name`` read as one of specdash's own result files (:func:`specdash.bench.store.read_result_file`), or
    None (standard input, not that shape). Raises UsageError for an unreadable or damaged one."""
    from specdash.bench.store import read_result_file
    from specdash.cli import UsageError

    if name == "-" or not Path(name).is_file():
        return None
    try:
        return read_result_file(Path(name))
    except OSError as exc:
        raise UsageError(f"cannot read {name}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _import_own(args: argparse.Namespace, own) -> int:
    """``bench import`` of a result file specdash saved (here or on another machine): say what it holds, store a
    copy unless the store already has it (then say which id), never a duplicate."""
    from specdash.bench.results import RunResult
    from specdash.bench.store import store_result_file, stored_copy
    from specdash.commands.bench import format_summary
    from specdash.text.display import clean

    already = stored_copy(own)
    saved: str | None = None
    failed = False
    if already is None and not args.no_save:
        try:
            saved = store_result_file(own).stem
        except OSError as exc:
            sys.stderr.write(f"specdash bench import: result not saved: {exc.strerror or exc}\n")
            failed = True
    if args.json:
        item = own.item
        json.dump({"specdash_result": str(own.path), "already_stored": already, "saved": [saved] if saved else [],
                   "result": item.summary_json() if isinstance(item, RunResult) else item.to_run_dict()},
                  sys.stdout, indent=1, default=str)
        sys.stdout.write("\n")
        return 1 if failed else 0
    kind = "a benchmark result saved by specdash" if isinstance(own.item, RunResult) else \
        "a benchmark record specdash imported"
    out = [f"{own.path}: {kind}"]
    if isinstance(own.item, RunResult):
        try:
            out.append(format_summary(own.item))
        except (TypeError, ValueError, KeyError, AttributeError) as exc:  # a hand-edited file: say so, go on
            out.append(f"(its settings cannot be shown: {type(exc).__name__})")
    else:
        record = own.item
        rate = record.metrics.get("output_tokens_per_s")
        out.append(f"{record.title()} ({record.tool}, line {record.line} of {record.settings.get('source_file')})"
                   + (f": {rate:.1f} output tokens/s" if isinstance(rate, float) else ""))
    if already is not None:
        out.append(f"already stored as {already} (see 'specdash bench list'): not stored again")
    elif saved:
        out.append(f"stored as {saved} (see 'specdash bench list')")
    sys.stdout.write(clean("\n".join(out), newlines=True) + "\n")
    return 1 if failed else 0


def _row(name: str, item: object) -> dict:
    from specdash.bench.compare import side_of_record, side_of_run
    from specdash.bench.imported.record import ImportedRecord
    from specdash.bench.results import RunResult

    if isinstance(item, RunResult):
        side = side_of_run(name, item)
        source = "specdash bench"
    else:
        assert isinstance(item, ImportedRecord)
        side = side_of_record(name, item)
        source = item.tool
    cfg = side.config

    def val(key: str) -> object:
        return cfg.get(key)

    depth = ("none" if isinstance(item, ImportedRecord) and item.baseline else
             "/".join("?" if val(k) is None else str(val(k)) for k in
                      ("speculative_num_steps", "speculative_eagle_topk", "speculative_num_draft_tokens")))
    def finite(value: object) -> object:  # a hand-edited NaN/Infinity is unknown (and --json stays strict JSON)
        return value if value is None or _finite(value) else None

    concurrency = cfg.get("concurrency", side.settings.get("concurrency"))
    if isinstance(concurrency, float) and not _finite(concurrency):
        concurrency = str(concurrency)
    return {"id": name, "source": source, "depth": depth, "concurrency": concurrency,
            "output_tokens_per_s": finite(side.figures.get("output_tokens_per_s")),
            # the median, as the console's "TPOT p50 ms" column: one definition wherever TPOT is one number
            "tpot_p50_ms": finite(side.figures.get("tpot_ms.p50")),
            "accept_length": finite(side.figures.get("accept_length")),
            "output_rate_se": finite(side.se.get("output_tokens_per_s"))}


def _list(args: argparse.Namespace) -> int:
    """Stored results in groups of comparable ones (:mod:`specdash.bench.comparable`), each group ranked by output
    throughput with shared ranks within noise (:mod:`specdash.bench.difference`)."""
    from specdash.bench.comparable import comparable_key, group_text
    from specdash.bench.difference import SINGLE_RUN_FLOOR_PCT, Measure, rank_items, rank_label
    from specdash.bench.store import load_stored
    from specdash.text.display import clean

    items, problems = load_stored()
    groups: dict[tuple, list[dict[str, Any]]] = {}
    keys: dict[tuple, dict[str, Any]] = {}
    for name, item in items:
        row = _row(name, item)
        key = comparable_key(item)
        frozen = tuple(key.values())
        keys[frozen] = key
        groups.setdefault(frozen, []).append(row)
    out_groups: list[dict[str, Any]] = []
    for frozen, rows in groups.items():
        known = [r for r in rows if _finite(r["output_tokens_per_s"])]
        ranked = rank_items(known, "output_tokens_per_s",
                            lambda r: Measure(float(r["output_tokens_per_s"]), se=r.get("output_rate_se")))
        ranks = [n for n, _ in ranked]
        for n, row in ranked:
            row["rank"] = rank_label(n, ranks)
        rest = [r for r in rows if not _finite(r["output_tokens_per_s"])]
        for row in rest:
            row["rank"] = None
        out_groups.append({"group": keys[frozen], "text": group_text(keys[frozen]),
                           "results": [r for _, r in ranked] + rest})
    out_groups.sort(key=lambda g: (-len(g["results"]), g["text"]))
    for problem in problems:
        sys.stderr.write(f"specdash bench list: {clean(problem, max_chars=300)}\n")
    if args.json:
        flat = [r | {"group": n} for n, g in enumerate(out_groups) for r in g["results"]]
        json.dump({"ranked_by": "output_tokens_per_s", "ranked_within": "groups", "noise_floor_pct":
                   SINGLE_RUN_FLOOR_PCT, "groups": [{"group": g["group"], "text": g["text"]} for g in out_groups],
                   "results": flat}, sys.stdout, indent=1, default=str)
        sys.stdout.write("\n")
        return 0
    if not items:
        sys.stdout.write("no stored results (run 'specdash bench --url ...' or 'specdash bench import FILE')\n")
        return 0

    def num(v: object) -> str:
        if not _finite(v):
            return "unknown"
        value = float(v)  # type: ignore[arg-type]
        return f"{value:.2f}" if abs(value) < 1e9 else f"{value:.3g}"

    out = [f"{len(out_groups)} group{'s' if len(out_groups) != 1 else ''} of comparable results (same model, "
           "workload, API, concurrency, request rate,",
           "output length, GPU and tool), each ranked on its own by output throughput (tok/s); results of "
           "different groups",
           f"are not ranked against each other. n= : within noise of each other (one run each: under "
           f"{SINGLE_RUN_FLOOR_PCT:g} % apart),", "they share a rank. depth = steps/topk/draft tokens"]
    for group in out_groups:
        out.append("")
        out.append(f"group: {group['text']}")
        if any(v is None for v in group["group"].values()):
            out.append("  (ranked as if what is not stated were the same for all of them)")
        out.append(f"{'#':>4} {'tok/s':>10} {'TPOT p50 ms':>11} {'accept':>7} {'conc':>5} {'depth':<10} id")
        for r in group["results"]:
            mark = f"{r['rank']:>4}" if r["rank"] else "   -"
            conc = "?" if r["concurrency"] is None else str(r["concurrency"])
            out.append(f"{mark} {num(r['output_tokens_per_s']):>10} {num(r['tpot_p50_ms']):>11} "
                       f"{num(r['accept_length']):>7} {conc:>5} {r['depth']:<10} {r['id']}")
        if len(group["results"]) == 1:
            out.append("  (only result of its kind: nothing to rank it against)")
    sys.stdout.write(clean("\n".join(out), newlines=True) + "\n")
    return 0


def _finite(value: object) -> bool:
    import math

    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _operand(text: str):
    """``("result", Side)`` or ``("command", text)`` for one compare operand. Raises UsageError."""
    from specdash.bench.compare import side_of_record, side_of_run
    from specdash.bench.imported import find_results
    from specdash.bench.imported.record import ImportedRecord
    from specdash.bench.results import RunResult
    from specdash.bench.store import find_stored
    from specdash.cli import UsageError

    path, line = text, None
    if not Path(text).exists() and ":" in text and text.rsplit(":", 1)[1].isdigit():
        path, line = text.rsplit(":", 1)[0], int(text.rsplit(":", 1)[1])
    own = _own_result_file(path) if line is None else None
    if own is not None:  # a result file specdash saved (a run-*.json from this or another state folder)
        if isinstance(own.item, RunResult):
            return "result", side_of_run(path, own.item)
        assert isinstance(own.item, ImportedRecord)
        return "result", side_of_record(f"{path} ({own.item.tool})", own.item)
    if path == "-" or Path(path).is_file():
        body = _read_text(path)
        records = [r for res in find_results(body) for r in res.records if r.metrics]
        if line is not None:
            records = [r for r in records if r.line == line]
            if not records:
                raise UsageError(f"{path} has no benchmark result at line {line}")
        if len(records) == 1:
            return "result", side_of_record(f"{path} line {records[0].line} ({records[0].tool})", records[0])
        if len(records) > 1:
            return "results", (path, records)
        return "command", body
    if "\n" not in text and not text.lstrip().startswith("-") and " " not in text.strip():
        item = find_stored(text)
        if isinstance(item, RunResult):
            return "result", side_of_run(text, item)
        if isinstance(item, ImportedRecord):
            return "result", side_of_record(f"{text} ({item.tool})", item)
        raise UsageError(f"{text}: no such file and no stored result with this id (see 'specdash bench list')")
    return "command", text


def _compare(args: argparse.Namespace) -> int:
    from specdash.bench.compare import command_flags, commands_text, compare_commands, compare_sides, results_text
    from specdash.cli import UsageError
    from specdash.text.display import clean

    kind_a, a = _operand(args.a)
    kind_b, b = _operand(args.b)
    if kind_a == kind_b == "results":
        return _compare_sets(a, b, args.json)
    for kind, operand in ((kind_a, a), (kind_b, b)):
        if kind == "results":
            path, records = operand
            where = ", ".join(str(r.line) for r in records[:12])
            raise UsageError(f"{path} holds {len(records)} results (lines {where}): pick one as {path}:LINE, or "
                             "compare it with another file of several results")
    if kind_a != kind_b:
        raise UsageError(f"A is a {kind_a} and B is a {kind_b}: compare two results or two launch commands")
    if kind_a == "command":
        for name, text in (("A", a), ("B", b)):
            if not command_flags(text)["found"]:
                raise UsageError(f"{name} is neither a benchmark result, a stored id nor a launch command")
        report = compare_commands(a, b)
        if args.json:
            json.dump({"kind": "commands"} | report, sys.stdout, indent=1, default=str)
            sys.stdout.write("\n")
        else:
            sys.stdout.write(clean(commands_text(report), newlines=True))
        return 0
    report = compare_sides(a, b)
    if args.json:
        json.dump({"kind": "results"} | report, sys.stdout, indent=1, default=str)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(clean(results_text(report), newlines=True))
    return 0


def _compare_sets(a: tuple, b: tuple, as_json: bool) -> int:
    """Two files of several results each: the configurations both hold, compared pair by pair."""
    from specdash.bench.compare import compare_sides, pair_records, results_text, side_of_record
    from specdash.text.display import clean

    (path_a, records_a), (path_b, records_b) = a, b
    pairs, only_a, only_b = pair_records(records_a, records_b)
    reports = [{"title": ra.title()} | compare_sides(side_of_record(f"{path_a} line {ra.line} ({ra.tool})", ra),
                                                     side_of_record(f"{path_b} line {rb.line} ({rb.tool})", rb))
               for ra, rb in pairs]
    if as_json:
        json.dump({"kind": "result sets", "pairs": reports, "only_a": [r.line for r in only_a],
                   "only_b": [r.line for r in only_b]}, sys.stdout, indent=1, default=str)
        sys.stdout.write("\n")
        return 0
    out = [f"{len(pairs)} configuration{'s' if len(pairs) != 1 else ''} in both files"]
    for report in reports:
        out.append(f"\n== {report['title']} ==")
        out.append(results_text(report).rstrip("\n"))
    for path, rest in ((path_a, only_a), (path_b, only_b)):
        if rest:
            out.append(f"\nonly in {path}: " + "; ".join(f"line {r.line} {r.title()}" for r in rest))
    sys.stdout.write(clean("\n".join(out), newlines=True) + "\n")
    return 0
