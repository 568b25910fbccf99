"""Rules at SGLang's argparse level: unknown flags (with other engines' names mapped to SGLang's), ambiguous
abbreviations, bad values, repeated flags, abbreviations and aliases.

Source: SGLang builds ``argparse.ArgumentParser()`` with the default ``allow_abbrev`` in every release
(server_args.py ``add_cli_args``); argparse exits with status 2 and ``error: unrecognized arguments: ...`` /
``error: ambiguous option: ...`` / ``error: argument X: invalid choice: ...`` before any SGLang rule runs.
"""

from __future__ import annotations

import functools
import json

from specdash.sglang.arguments import Occurrence
from specdash.sglang.diagnostics import Edit, Fix
from specdash.sglang.flags import FOREIGN_FLAGS, VLLM_METHODS, load_table, normalise_foreign
from specdash.sglang.rules.context import Context
from specdash.sglang.versions import FLAG_TABLE_RELEASES, has_speculative_decoding, is_version

_PREFERRED_AMBIGUOUS = ("speculative_draft_model_path", "speculative_algorithm", "mem_fraction_static",
                        "model_path")


@functools.lru_cache(maxsize=512)
def _releases_with(option: str) -> tuple[str, ...]:
    return tuple(r for r in FLAG_TABLE_RELEASES if option in load_table(r))


def check(ctx: Context) -> None:
    """Record argparse-level diagnostics for ``ctx.parsed`` (errors stop nothing: SGLang would exit, but the
    resolution still runs on the recognised flags so the user sees what the command will do once fixed)."""
    release = ctx.table.release
    if not has_speculative_decoding(ctx.profile.version):
        spec_flags = [o for o in ctx.parsed.occurrences if "specul" in o.typed or o.typed in FOREIGN_FLAGS]
        if spec_flags:
            ctx.error("no-speculative-support", [o.typed for o in spec_flags],
                      f"SGLang {ctx.profile.version} has no speculative decoding at all; speculative flags need an "
                      "SGLang release with speculative support (0.4.0 or later).",
                      exception="SystemExit(2)", stage="argparse", stop=False)
    if ctx.command.engine == "sglang" and not ctx.command.from_error_line:
        missing = [spec for spec in ctx.table.specs if spec.required and spec.dest not in ctx.parsed.typed
                   and not any(o.spec is spec for o in ctx.parsed.errors)]
        if missing:
            names = " ".join("/".join(spec.options) for spec in missing)
            ctx.error("required-flag-missing", [spec.canonical for spec in missing],
                      f"argparse error: the following arguments are required: {names}",
                      exception="SystemExit(2)", stage="argparse", stop=False)
    for occ in ctx.parsed.unknown:
        _unknown(ctx, occ, release)
    for occ in ctx.parsed.errors:
        _bad(ctx, occ)
    for word in ctx.parsed.stray:
        if word.text == "\\" and not word.raw:  # the text's last character: a continuation onto nothing
            why = ("the command ends in a backslash, a line continuation with nothing after it: the shell passes a "
                   "backslash that ends a file as a literal argument")
        else:
            why = "SGLang takes no positional arguments; a value without its flag?"
        ctx.error("stray-argument", word.text,
                  f"argparse error: unrecognized arguments: {word.text} ({why})", exception="SystemExit(2)",
                  stage="argparse", stop=False, fix=ctx.fix(f"remove {word.text}", Edit("remove", typed=word.text)))
    for occ in ctx.parsed.occurrences:
        if occ.error or occ.spec is None:
            continue
        if occ.lookup.kind == "prefix":
            ctx.add("info", "abbreviation", occ.spec.canonical,
                    f"{occ.typed} is argparse's abbreviation of {occ.spec.canonical} (accepted in {release}; "
                    "an abbreviation can become ambiguous when a later release adds a flag with the same prefix)",
                    ctx.fix(f"write {occ.spec.canonical} in full", Edit("rename", option=occ.spec.canonical,
                                                                        typed=occ.typed)))
        elif occ.lookup.option != occ.spec.canonical and occ.lookup.option is not None:
            ctx.add("info", "alias", occ.spec.canonical,
                    f"{occ.lookup.option} is an alias of {occ.spec.canonical}")
    if ctx.parsed.typed.get("config"):
        ctx.add("info", "config-file", ctx.option("config"),
                f"--config {ctx.parsed.typed['config']}: SGLang merges that YAML file into the arguments before "
                "parsing; specdash cannot see its values here, so the findings cover the command line only.")
    for dest, occs in ctx.parsed.by_dest.items():
        if len(occs) < 2:
            continue
        spellings = ", ".join(o.as_typed for o in occs)
        last = occs[-1]
        same = all(o.value == last.value for o in occs)
        canonical = occs[0].spec.canonical if occs[0].spec else dest
        effect = ("same value each time, so no effect" if same else
                  f"the earlier value{'s' if len(occs) > 2 else ''} "
                  f"{', '.join(str(o.value) for o in occs[:-1])} {'are' if len(occs) > 2 else 'is'} ignored")
        ctx.add("warning", "repeated-flag", canonical,
                f"{canonical} is set {len(occs)} times ({spellings}); argparse keeps the last one "
                f"({last.value}): {effect}",
                ctx.fix(f"keep only the last {canonical}", Edit("remove", dest=dest, value="keep_last")))


def _unknown(ctx: Context, occ: Occurrence, release: str) -> None:
    key = normalise_foreign(occ.typed)
    known_in = _releases_with(key) if key.startswith("--") else ()
    foreign = FOREIGN_FLAGS.get(key)
    version = ctx.profile.version
    # the release the user has, not only the flag table read for it (0.5.0rc0 is read with 0.4.10's table)
    named = release if version == release or not is_version(version) else f"{version} (flag table {release})"
    head = f"argparse error: unrecognized arguments: {occ.as_typed}. SGLang {named} has no {occ.typed}"
    fused = _fused_split(ctx, occ.typed)
    if fused:
        joined = " ".join(fused)
        ctx.error("fused-flags", occ.typed,
                  f"{head}: it is {len(fused)} flags of this release written without the space between them "
                  f"({joined}).", exception="SystemExit(2)", stage="argparse", stop=False,
                  fix=ctx.fix(f"split {occ.typed} into {joined}", Edit("rename", option=joined, typed=occ.typed)))
        return
    if foreign is not None and not (known_in and key == occ.typed):
        fix = _foreign_fix(ctx, occ, key, foreign)
        ctx.error("foreign-flag", occ.typed, f"{head}: it is a {foreign.engine} flag - {foreign.note}.",
                  exception="SystemExit(2)", stage="argparse", stop=False, fix=fix)
        return
    if known_in:
        span = known_in[0] if len(known_in) == 1 else f"{known_in[0]} ... {known_in[-1]}"
        # the flag is real, only not in this release: a similar-looking flag of this release is rarely its
        # replacement, so a rename is offered only for a near-identical spelling
        suggestions = [s for s in ctx.table.suggest(occ.typed) if ctx.table.close_enough(occ.typed, s)]
        hint = f" A close spelling in {release}: {' or '.join(suggestions)}." if suggestions else ""
        fix = (ctx.fix(f"replace {occ.typed} with {suggestions[0]}", Edit("rename", option=suggestions[0],
                                                                          typed=occ.typed))
               if suggestions else ctx.fix(f"remove {occ.as_typed}", Edit("remove", typed=occ.typed)))
        ctx.error("flag-not-in-version", occ.typed,
                  f"{head}: that flag exists only in other SGLang releases (flag tables {span}); check that "
                  f"--sglang-version matches the installed SGLang.{hint}",
                  exception="SystemExit(2)", stage="argparse", stop=False, fix=fix)
        return
    suggestions = ctx.table.suggest(occ.typed)
    if suggestions and not ctx.table.close_enough(occ.typed, suggestions[0]):
        ctx.error("unknown-flag", occ.typed,
                  f"{head}, and no flag of this release is a close spelling (nearest: {' or '.join(suggestions)}).",
                  exception="SystemExit(2)", stage="argparse", stop=False,
                  fix=ctx.fix(f"remove {occ.as_typed}", Edit("remove", typed=occ.typed)))
    elif suggestions:
        best = suggestions[0]
        ctx.error("unknown-flag", occ.typed, f"{head}. Did you mean {' or '.join(suggestions)}?",
                  exception="SystemExit(2)", stage="argparse", stop=False,
                  fix=ctx.fix(f"replace {occ.typed} with {best}", Edit("rename", option=best, typed=occ.typed)))
    else:
        ctx.error("unknown-flag", occ.typed, f"{head}.", exception="SystemExit(2)", stage="argparse", stop=False,
                  fix=ctx.fix(f"remove {occ.as_typed}", Edit("remove", typed=occ.typed)))


def _fused_split(ctx: Context, typed: str) -> list[str] | None:
    """``--a--b`` -> ``["--a", "--b"]`` when every part is an option spelled out in full in this release (a
    missing space between two flags), else None."""
    if not typed.startswith("--") or "--" not in typed[2:]:
        return None
    parts = ["--" + p for p in typed[2:].split("--")]
    if len(parts) < 2 or any(p == "--" or p not in ctx.table.by_option for p in parts):
        return None
    return parts


def _algorithm_typed(ctx: Context) -> str | None:
    algo = ctx.parsed.typed.get("speculative_algorithm")
    if algo:
        return str(algo).upper()
    for occ in ctx.parsed.unknown:
        if normalise_foreign(occ.typed) == "--speculative-model" and "[ngram]" in occ.values:
            return "NGRAM"
    return None


def _foreign_fix(ctx: Context, occ: Occurrence, key: str, foreign) -> Fix | None:
    value = " ".join(occ.values)
    algo_opt = ctx.option("speculative_algorithm")
    if key == "--speculative-model":
        if value.strip() == "[ngram]":
            return ctx.fix(f"replace {occ.as_typed} with {algo_opt} NGRAM",
                           Edit("rename", option=algo_opt, value="NGRAM", typed=occ.typed))
        edits = [Edit("rename", option=ctx.option("speculative_draft_model_path"), typed=occ.typed)]
        desc = f"replace {occ.typed} with {ctx.option('speculative_draft_model_path')}"
        if not ctx.typed("speculative_algorithm"):
            edits.append(ctx.set_edit("speculative_algorithm", "STANDALONE"))
            desc += f" and add {algo_opt} STANDALONE (a separate draft model)"
        return ctx.fix(desc, *edits)
    if key == "--num-speculative-tokens":
        try:
            n = int(value)
        except ValueError:
            return None
        if _algorithm_typed(ctx) == "NGRAM":
            opt = ctx.option("speculative_num_draft_tokens")
            return ctx.fix(f"replace {occ.as_typed} with {opt} {n}",
                           Edit("rename", option=opt, value=str(n), typed=occ.typed))
        steps, topk, draft = (ctx.option("speculative_num_steps"), ctx.option("speculative_eagle_topk"),
                              ctx.option("speculative_num_draft_tokens"))
        return ctx.fix(f"replace {occ.as_typed} with {steps} {n} {topk} 1 {draft} {n + 1} (a chain of {n})",
                       Edit("rename", option=steps, value=str(n), typed=occ.typed),
                       ctx.set_edit("speculative_eagle_topk", 1),
                       ctx.set_edit("speculative_num_draft_tokens", n + 1))
    if key == "--speculative-config":
        return _speculative_config_fix(ctx, occ, value)
    if foreign.sglang is None:
        return ctx.fix(f"remove {occ.as_typed}", Edit("remove", typed=occ.typed))
    target = foreign.sglang
    if target not in ctx.table and target == "--tp-size":
        target = "--tensor-parallel-size"
    return ctx.fix(f"replace {occ.typed} with {target}", Edit("rename", option=target, typed=occ.typed))


def _speculative_config_fix(ctx: Context, occ: Occurrence, value: str):
    try:
        cfg = json.loads(value)
    except ValueError:
        return ctx.fix(f"remove {occ.typed}", Edit("remove", typed=occ.typed))
    if not isinstance(cfg, dict):
        return None
    edits = [Edit("remove", typed=occ.typed)]
    parts = []
    method = str(cfg.get("method", "")).lower()
    algo = VLLM_METHODS.get(method)
    if method.endswith("mtp"):
        algo = "NEXTN"
    if algo:
        edits.append(ctx.set_edit("speculative_algorithm", algo))
        parts.append(f"{ctx.option('speculative_algorithm')} {algo}")
    if cfg.get("model"):
        edits.append(ctx.set_edit("speculative_draft_model_path", cfg["model"]))
        parts.append(f"{ctx.option('speculative_draft_model_path')} {cfg['model']}")
    n = cfg.get("num_speculative_tokens")
    if isinstance(n, int):
        if algo == "NGRAM":
            edits.append(ctx.set_edit("speculative_num_draft_tokens", n))
            parts.append(f"{ctx.option('speculative_num_draft_tokens')} {n}")
        else:
            edits += [ctx.set_edit("speculative_num_steps", n), ctx.set_edit("speculative_eagle_topk", 1),
                      ctx.set_edit("speculative_num_draft_tokens", n + 1)]
            parts.append(f"{ctx.option('speculative_num_steps')} {n} {ctx.option('speculative_eagle_topk')} 1 "
                         f"{ctx.option('speculative_num_draft_tokens')} {n + 1}")
    if method and algo is None:
        parts.append(f"(vLLM method {method!r} has no SGLang builtin)")
    return ctx.fix(f"replace {occ.typed} with " + " ".join(parts), *edits)


def _bad(ctx: Context, occ: Occurrence) -> None:
    message = occ.error or ""
    if occ.lookup.kind == "ambiguous":
        matches = occ.lookup.matches
        best = None
        for dest in _PREFERRED_AMBIGUOUS:
            for m in matches:
                spec = ctx.table.by_option.get(m)
                if spec is not None and spec.dest == dest:
                    best = spec.canonical
                    break
            if best:
                break
        best = best or min(matches, key=len)
        ctx.error("ambiguous-flag", occ.typed,
                  f"argparse error: {message}. Abbreviations are accepted only while they match one option; "
                  f"in SGLang {ctx.table.release} {occ.typed} is the prefix of {len(matches)} option spellings.",
                  exception="SystemExit(2)", stage="argparse", stop=False,
                  fix=ctx.fix(f"replace {occ.typed} with {best}", Edit("rename", option=best, typed=occ.typed)))
        return
    spec = occ.spec
    fix = None
    if spec is not None and spec.choices and occ.values:
        raw = occ.values[0]
        upper = [c for c in spec.choices if isinstance(c, str) and c.upper() == raw.upper()]
        if upper:
            fix = ctx.fix(f"write {spec.canonical} {upper[0]}", ctx.set_edit(spec.dest, upper[0]))
        elif spec.dest == "speculative_algorithm" and raw.upper() == "MTP":
            fix = ctx.fix(f"use {spec.canonical} NEXTN (SGLang's name for MTP)",
                          ctx.set_edit(spec.dest, "NEXTN"))
    ctx.error("bad-value", spec.canonical if spec else occ.typed, f"argparse error: {message}",
              exception="SystemExit(2)", stage="argparse", stop=False, fix=fix)
