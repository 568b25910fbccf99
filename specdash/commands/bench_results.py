"""The result actions of ``specdash bench``: ``import FILE|-``, ``list``, ``compare A B`` (each with ``--json``).

* ``import``: find benchmark outputs in a text (:func:`specdash.bench.imported.find_results`), print each record
  with what is known and unknown, recomputed figures, findings and the depth ranking; store the records beside
  specdash's own runs (``--no-save`` to only read). Exit 1 when nothing was found.
* ``list``: stored runs and imported records, ranked by output throughput (never by accept length).
* ``compare A B``: A and B are stored ids (see ``list``), files of pasted output (``FILE`` or ``FILE:LINE`` to pick
  the record of that line), or launch commands (a file holding one, or the command text itself). Results are
  compared figure by figure, commands flag by flag.

Errors a user can cause (a missing file, an unknown id, nothing comparable) are one line and exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_actions(parser: argparse.ArgumentParser) -> None:
    """Register ``import``, ``list`` and ``compare`` under ``specdash bench``."""
    sub = parser.add_subparsers(dest="bench_action", metavar="ACTION")
    imp = sub.add_parser("import", help="read pasted benchmark output (bench_serving, bench_speculative, vLLM bench "
                                        "serve, tables, one-line reports) into stored results")
    imp.add_argument("file", metavar="FILE", help="text file, or - for standard input")
    imp.add_argument("--no-save", action="store_true", help="only print; do not store the records")
    imp.add_argument("--json", action="store_true", help="print the results as JSON")
    lst = sub.add_parser("list", help="stored runs and imported results, ranked by output throughput")
    lst.add_argument("--json", action="store_true", help="print JSON")
    cmp_ = sub.add_parser("compare", help="compare two results or two launch commands side by side")
    cmp_.add_argument("a", metavar="A", help="stored id, FILE[:LINE] of pasted output, or a launch command / file")
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
    return {"id": name, "source": source, "depth": depth, "concurrency": cfg.get("concurrency",
                                                                                  side.settings.get("concurrency")),
            "output_tokens_per_s": side.figures.get("output_tokens_per_s"),
            # the median, as the console's "TPOT p50 ms" column: one definition wherever TPOT is one number
            "tpot_p50_ms": side.figures.get("tpot_ms.p50"),
            "accept_length": side.figures.get("accept_length")}


def _list(args: argparse.Namespace) -> int:
    from specdash.bench.store import load_stored
    from specdash.text.display import clean

    items, problems = load_stored()
    rows = [_row(name, item) for name, item in items]
    ranked = sorted((r for r in rows if r["output_tokens_per_s"] is not None),
                    key=lambda r: -float(r["output_tokens_per_s"]))
    rest = [r for r in rows if r["output_tokens_per_s"] is None]
    for problem in problems:
        sys.stderr.write(f"specdash bench list: {clean(problem, max_chars=300)}\n")
    if args.json:
        json.dump({"ranked_by": "output_tokens_per_s", "results": ranked + rest}, sys.stdout, indent=1, default=str)
        sys.stdout.write("\n")
        return 0
    if not rows:
        sys.stdout.write("no stored results (run 'specdash bench --url ...' or 'specdash bench import FILE')\n")
        return 0

    def num(v: object) -> str:
        return "unknown" if v is None else f"{float(v):.2f}"  # type: ignore[arg-type]

    out = ["ranked by output throughput (tok/s); depth = steps/topk/draft tokens",
           f"{'#':>3} {'tok/s':>10} {'TPOT p50 ms':>11} {'accept':>7} {'conc':>5} {'depth':<10} {'source':<26} id"]
    for n, r in enumerate(ranked + rest, 1):
        mark = f"{n:>3}" if r in ranked else "  -"
        out.append(f"{mark} {num(r['output_tokens_per_s']):>10} {num(r['tpot_p50_ms']):>11} "
                   f"{num(r['accept_length']):>7} "
                   f"{'?' if r['concurrency'] is None else r['concurrency']!s:>5} {r['depth']:<10} "
                   f"{r['source']:<26} {r['id']}")
    sys.stdout.write(clean("\n".join(out), newlines=True) + "\n")
    return 0


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
