"""Side-by-side comparison of two benchmark results or two launch commands, every difference listed.

Results (a stored specdash run, a stored imported record, or a pasted output) are compared figure by figure
(:func:`flat_figures`: the same keys for all of them) with ``delta = B - A`` and ``delta_pct = delta / A * 100``;
their configurations and settings key by key. Launch commands are read with the one launch-command model
(:func:`specdash.sglang.command.parse_command`, :func:`specdash.sglang.arguments.parse_arguments` against the
current release's flag table) so ``--tp 8`` and ``--tp-size 8`` are the same flag; every flag that differs is
listed, speculative or not, and so are environment variables, the launcher and the model positional.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from specdash.bench.comparable import comparable_key
from specdash.bench.difference import REPEATS_RULE, SINGLE_RUN_RULE, Measure, judge
from specdash.bench.imported.record import ImportedRecord
from specdash.bench.results import RunResult

#: figure keys in the order they are shown (others follow sorted)
ORDER: tuple[str, ...] = (
    "output_tokens_per_s", "speed_tokens_per_s", "requests_per_s", "tpot_ms.mean", "tpot_ms.p50", "tpot_ms.p99",
    "itl_ms.mean", "itl_ms.p50", "itl_ms.p99", "ttft_ms.mean", "ttft_ms.p50", "ttft_ms.p99", "e2e_ms.mean",
    "e2e_ms.p50", "accept_length", "accept_rate_pct", "speedup", "step_time_ms", "completed", "errors",
    "duration_s", "total_output_tokens",
)


@dataclasses.dataclass
class Side:
    """One compared result: ``name`` (how the user named it), ``figures`` (flat key -> value; recomputed ones
    included and listed in ``recomputed``), ``config`` and ``settings``."""

    name: str
    figures: dict[str, float]
    config: dict[str, Any]
    settings: dict[str, Any]
    recomputed: set[str] = dataclasses.field(default_factory=set)
    #: within-run standard errors of figures (key -> same unit), where known
    se: dict[str, float] = dataclasses.field(default_factory=dict)
    #: what makes results comparable (:func:`specdash.bench.comparable.comparable_key`), where known
    comparable: dict[str, Any] = dataclasses.field(default_factory=dict)

    def measure(self, key: str) -> Measure | None:
        """The figure as a single-run :class:`~specdash.bench.difference.Measure` (None when unknown)."""
        value = self.figures.get(key)
        return None if value is None else Measure(value, se=self.se.get(key))


def side_of_run(name: str, run: RunResult) -> Side:
    """A specdash run as a :class:`Side`."""
    figures: dict[str, float] = {}
    for key in ("output_tokens_per_s", "requests_per_s", "duration_s", "accept_length"):
        value = getattr(run, key)
        if value is not None:
            figures[key] = float(value)
    figures["completed"] = float(run.completed)
    figures["errors"] = float(run.errors)
    figures["total_output_tokens"] = float(run.total_output_tokens)
    for metric in ("ttft", "tpot", "itl", "e2e"):
        dist = getattr(run, f"{metric}_ms")
        for stat in ("mean", "p50", "p90", "p99", "max"):
            value = getattr(dist, stat)
            if value is not None:
                figures[f"{metric}_ms.{stat}"] = float(value)
    settings = {k: v for k, v in run.settings.items() if k not in ("prompts",)}
    se = {"output_tokens_per_s": float(run.output_rate_se)} if run.output_rate_se else {}
    return Side(name, figures, dict(run.effective_config), settings, se=se, comparable=comparable_key(run))


def side_of_record(name: str, record: ImportedRecord) -> Side:
    """An imported record as a :class:`Side`: recomputed figures fill what the text did not print and replace
    pasted derived figures that disagree with their raw ones."""
    figures = dict(record.metrics)
    recomputed = set()
    for key, value in record.derived.items():  # missing from the text, or stated wrongly there
        figures[key] = value
        recomputed.add(key)
    config = dict(record.config)
    if record.baseline:
        config["speculative_algorithm"] = None
    return Side(name, figures, config, dict(record.settings) | {"source tool": record.tool}, recomputed,
                comparable=comparable_key(record))


def compare_sides(a: Side, b: Side) -> dict:
    """``{"a", "b", "figures": [{"key", "a", "b", "delta", "delta_pct", "better", "verdict", "noise",
    "recomputed"}], "config": [{"key", "a", "b"}] (differences only), "settings": [...] (differences only),
    "same_config": [keys], "rule": the noise rule in words, "not_comparable": [{"key", "a", "b"}] (what makes
    results comparable, stated on both sides and different: :func:`specdash.bench.comparable.comparable_key`)}``.
    ``verdict`` (:func:`specdash.bench.difference.judge`) is ``"A"``/``"B"`` only beyond noise, else ``"within
    noise"``, ``"not judged"`` or ``""``; ``better`` is ``"A"``, ``"B"`` or ``""`` (accept length, counts and
    duration are shown, not judged)."""
    keys = [k for k in ORDER if k in a.figures or k in b.figures]
    keys += sorted(k for k in set(a.figures) | set(b.figures) if k not in keys)
    figures = []
    for key in keys:
        va, vb = a.figures.get(key), b.figures.get(key)
        delta = None if va is None or vb is None else vb - va
        pct = None if delta is None or not va else delta / va * 100.0
        verdict = judge(key, a.measure(key), b.measure(key))
        figures.append({"key": key, "a": va, "b": vb, "delta": delta, "delta_pct": pct,
                        "better": verdict.better, "verdict": verdict.verdict, "noise": verdict.noise,
                        "recomputed": sorted(s for s, side in (("A", a), ("B", b)) if key in side.recomputed)})
    config = [{"key": k, "a": a.config.get(k), "b": b.config.get(k)}
              for k in sorted(set(a.config) | set(b.config), key=str) if a.config.get(k) != b.config.get(k)]
    same = sorted(k for k in set(a.config) & set(b.config) if a.config[k] == b.config[k] and a.config[k] is not None)
    settings = [{"key": k, "a": a.settings.get(k), "b": b.settings.get(k)}
                for k in sorted(set(a.settings) | set(b.settings), key=str)
                if a.settings.get(k) != b.settings.get(k) and k not in ("url",)]
    judged = [str(row["key"]) for row in figures if row["verdict"]]
    rule = SINGLE_RUN_RULE if judged else ""
    if judged and all(judge(key, a.measure(key), b.measure(key)).basis == "repeats" for key in judged):
        rule = REPEATS_RULE
    differ = [k for k in a.comparable if k in b.comparable and a.comparable[k] is not None
              and b.comparable[k] is not None and a.comparable[k] != b.comparable[k]]
    return {"a": a.name, "b": b.name, "figures": figures, "config": config, "settings": settings,
            "same_config": same, "rule": rule,
            "not_comparable": [{"key": k, "a": a.comparable[k], "b": b.comparable[k]} for k in differ]}


def _value_text(occurrences: list) -> str:
    occ = occurrences[-1]
    if not occ.values:
        return "on"
    return " ".join(occ.values)


def command_flags(text: str) -> dict[str, Any]:
    """``{"found", "launcher", "positional", "flags": {canonical: value text}, "env": {name: value}}`` of a pasted
    launch command. Unknown flags are kept as typed; a value from an unset shell variable stays as typed."""
    from specdash.sglang.arguments import parse_arguments
    from specdash.sglang.command import parse_command
    from specdash.sglang.flags import load_table
    from specdash.sglang.versions import FLAG_TABLE_RELEASES

    command = parse_command(text)
    parsed = parse_arguments(command.args, load_table(FLAG_TABLE_RELEASES[-1]))
    flags: dict[str, str] = {}
    for dest, occurrences in parsed.by_dest.items():
        spec = occurrences[-1].spec
        flags[spec.canonical if spec else dest] = _value_text(occurrences)
    for occ in parsed.unknown + parsed.errors:
        flags[occ.typed] = " ".join(occ.values) or "on"
    env = {e.name: e.value for e in command.env}
    return {"found": command.found, "launcher": command.launcher, "engine": command.engine,
            "positional": " ".join(w.text for w in command.positional), "flags": flags, "env": env}


def compare_commands(a_text: str, b_text: str) -> dict:
    """``{"flags": [{"flag", "a", "b"}], "env": [...], "launcher": {"a", "b"} | None, "positional": ... ,
    "same": [flags equal on both]}``; ``a``/``b`` are ``None`` where a side does not set it."""
    a, b = command_flags(a_text), command_flags(b_text)
    flags = [{"flag": k, "a": a["flags"].get(k), "b": b["flags"].get(k)}
             for k in sorted(set(a["flags"]) | set(b["flags"])) if a["flags"].get(k) != b["flags"].get(k)]
    env = [{"name": k, "a": a["env"].get(k), "b": b["env"].get(k)}
           for k in sorted(set(a["env"]) | set(b["env"])) if a["env"].get(k) != b["env"].get(k)]
    same = sorted(k for k in set(a["flags"]) & set(b["flags"]) if a["flags"][k] == b["flags"][k])
    out: dict[str, Any] = {"flags": flags, "env": env, "same": same, "launcher": None, "positional": None}
    if a["launcher"] != b["launcher"]:
        out["launcher"] = {"a": a["launcher"], "b": b["launcher"]}
    if a["positional"] != b["positional"]:
        out["positional"] = {"a": a["positional"] or None, "b": b["positional"] or None}
    out["effective"] = effective_differences(a_text, b_text)
    return out


def effective_differences(a_text: str, b_text: str) -> list[dict[str, Any]]:
    """``[{"field", "a", "b", "typed_a", "typed_b"}]``: the speculative settings each command runs with after
    SGLang's rewrites and automatic choices (:func:`specdash.sglang.validate.validate_command`, newest release's
    rules; e.g. topk 1 makes the draft tokens steps + 1), for each field whose effective values differ between the
    two commands or from what a side typed. ``typed_*`` is None where the command does not type it."""
    from specdash.sglang.launch_check import SPECULATIVE_FIELDS
    from specdash.sglang.validate import validate_command

    ra, rb = validate_command(a_text), validate_command(b_text)
    rows = []
    for field in SPECULATIVE_FIELDS:
        ea, eb = ra.effective.get(field), rb.effective.get(field)
        ta, tb = ra.typed.get(field), rb.typed.get(field)
        if ea is None and eb is None:
            continue
        if ea != eb or (ta is not None and ta != ea) or (tb is not None and tb != eb):
            rows.append({"field": field, "a": ea, "b": eb, "typed_a": ta, "typed_b": tb})
    return rows


def _num(value: float | None) -> str:
    if value is None:
        return "unknown"
    return f"{int(value)}" if value == int(value) and abs(value) < 1e15 else f"{value:.2f}"


def results_text(report: dict) -> str:
    """:func:`compare_sides` as a table the user reads."""
    out = [f"A: {report['a']}", f"B: {report['b']}"]
    if report.get("not_comparable"):
        what = "; ".join(f"{row['key']} A {_short(row['a'])}, B {_short(row['b'])}" for row in report["not_comparable"])
        out.append(f"not like for like: {what}. A difference below may come from that, not from the speculative "
                   "configuration")
    out += ["",
           f"{'figure':<22} {'A':>12} {'B':>12} {'B - A':>12} {'%':>8}  better"]
    for row in report["figures"]:
        delta = "" if row["delta"] is None else f"{row['delta']:+.2f}"
        pct = "" if row["delta_pct"] is None else f"{row['delta_pct']:+.1f}%"
        mark = " (recomputed: " + ", ".join(row["recomputed"]) + ")" if row["recomputed"] else ""
        out.append(f"{row['key']:<22} {_num(row['a']):>12} {_num(row['b']):>12} {delta:>12} {pct:>8}  "
                   f"{row.get('verdict', row['better'])}{mark}")
    if report.get("rule"):
        import textwrap

        out.extend(textwrap.wrap(f"better = beyond noise; {report['rule']}", 110))
    out.append("")
    if report["config"]:
        out.append("configuration differences:")
        for row in report["config"]:
            out.append(f"  {row['key']}: A {_cfg(row['a'])}, B {_cfg(row['b'])}")
    else:
        out.append("configuration: no difference in what both state")
    if report["settings"]:
        out.append("benchmark setting differences:")
        for row in report["settings"]:
            out.append(f"  {row['key']}: A {_cfg(row['a'])}, B {_cfg(row['b'])}")
    return "\n".join(out) + "\n"


def _short(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else _cfg(value)


def _cfg(value: Any) -> str:
    return "unknown" if value is None else str(value)


def commands_text(report: dict) -> str:
    """:func:`compare_commands` as lines the user reads."""
    out: list[str] = []
    if report["launcher"]:
        out.append(f"launcher: A {report['launcher']['a'] or '(none)'}, B {report['launcher']['b'] or '(none)'}")
    if report["positional"]:
        out.append(f"model positional: A {report['positional']['a']}, B {report['positional']['b']}")
    if report["flags"]:
        out.append(f"{len(report['flags'])} flag{'s' if len(report['flags']) != 1 else ''} differ:")
        for row in report["flags"]:
            out.append(f"  {row['flag']}: A {row['a'] if row['a'] is not None else 'not set'}, "
                       f"B {row['b'] if row['b'] is not None else 'not set'}")
    else:
        out.append("flags: no difference")
    for row in report["env"]:
        out.append(f"  env {row['name']}: A {row['a'] if row['a'] is not None else 'not set'}, "
                   f"B {row['b'] if row['b'] is not None else 'not set'}")
    if report.get("effective"):
        out.append("effective (what SGLang runs after its rewrites, by the newest release's rules):")
        for row in report["effective"]:
            def side(value: Any, typed: Any) -> str:
                text = "not used" if value is None else str(value)
                return text + (f" (typed {typed})" if typed is not None and typed != value else "")
            out.append(f"  {row['field']}: A {side(row['a'], row['typed_a'])}, B {side(row['b'], row['typed_b'])}")
    out.append(f"{len(report['same'])} flags are the same on both")
    return "\n".join(out) + "\n"


def _depth_key(record: ImportedRecord) -> tuple:
    c = record.config
    return (record.baseline, c.get("speculative_num_steps"), c.get("speculative_eagle_topk"),
            c.get("speculative_num_draft_tokens"))


def pair_records(a: list[ImportedRecord], b: list[ImportedRecord]) -> tuple[
        list[tuple[ImportedRecord, ImportedRecord]], list[ImportedRecord], list[ImportedRecord]]:
    """Match two sets of results (e.g. two depth tables) by configuration: baseline, steps, topk and draft tokens
    equal (unknowns equal only to unknowns), and concurrency equal or unknown on one side (the comparison then
    shows that difference). A record with more than one candidate on the other side is not matched. Returns
    ``(pairs, only_a, only_b)``."""
    def compatible(ra: ImportedRecord, rb: ImportedRecord) -> bool:
        ca, cb = ra.config.get("concurrency"), rb.config.get("concurrency")
        return _depth_key(ra) == _depth_key(rb) and (ca is None or cb is None or ca == cb)

    pairs: list[tuple[ImportedRecord, ImportedRecord]] = []
    for ra in a:
        candidates = [rb for rb in b if compatible(ra, rb)]
        if len(candidates) == 1 and sum(1 for other in a if compatible(other, candidates[0])) == 1:
            pairs.append((ra, candidates[0]))
    paired = {id(r) for pair in pairs for r in pair}
    return pairs, [r for r in a if id(r) not in paired], [r for r in b if id(r) not in paired]
