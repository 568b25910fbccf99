"""SGLang's launch-flag tables per release, argparse-faithful option lookup, and "did you mean".

The tables in ``specdash/sglang/data/flags_<release>.json`` were extracted from each release's PyPI wheel
(``tools/sglang_oracle/extract_flags.py`` reads ``server_args.py`` with ``ast``; ``dump_parser.py`` dumps the real
parser of an installed release). SGLang builds a plain ``argparse.ArgumentParser`` with the default
``allow_abbrev=True`` in every release, so :meth:`FlagTable.lookup` follows CPython 3.11's
``ArgumentParser._parse_optional`` / ``_get_option_tuples``: an exact option string wins; ``--opt=value`` splits at
the first ``=``; otherwise every option string that starts with the typed text is a match, one match is accepted,
several matches are the argparse error ``ambiguous option: X could match A, B`` (two spellings of the same option
count as two matches, as in CPython 3.11).
"""

from __future__ import annotations

import bisect
import dataclasses
import decimal
import difflib
import functools
import json
import re
from importlib import resources
from typing import Any

_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")


@dataclasses.dataclass(frozen=True)
class FlagSpec:
    """One ``add_argument`` call: ``options`` (spellings, the first long one is canonical), ``dest`` (the
    ServerArgs field), ``action`` (``store``, ``store_true``, ``store_false``, ``DeprecatedAction``, ...),
    ``nargs`` (None = one value, ``"+"``, ``"*"``, ``"?"``), ``choices`` (None = unchecked), ``type``
    (``"int"``, ``"float"``, ``"str"`` or another callable's name), ``default``, ``required`` (argparse refuses
    a command without it: ``--model-path`` in every release)."""

    options: tuple[str, ...]
    dest: str
    action: str = "store"
    nargs: Any = None
    choices: tuple[Any, ...] | None = None
    type: str | None = None
    default: Any = None
    required: bool = False

    @property
    def canonical(self) -> str:
        """The long spelling that names the ServerArgs field (``--tp-size`` for ``("--tensor-parallel-size",
        "--tp-size")`` with dest ``tp_size``), else the first long spelling."""
        longs = [o for o in self.options if o.startswith("--")]
        for option in longs:
            if option[2:].replace("-", "_") == self.dest:
                return option
        return longs[0] if longs else self.options[0]

    @property
    def takes_value(self) -> bool:
        """False for flags that consume no value (``store_true``/``store_false``/``store_const``/deprecated)."""
        if self.action in ("store_true", "store_false", "store_const", "count", "help", "version",
                           "BooleanOptionalAction"):
            return False
        # SGLang's Deprecated* actions (arg_groups/argparse_actions.py) default to nargs=0, but a retired valued
        # flag keeps one value: ``--monokernel-backend amd`` (DeprecatedStoreConstAction, nargs=None) in 0.5.23
        return self.nargs != 0

    def convert(self, raw: str) -> Any:
        """Convert one typed value the way argparse's ``type`` does. Raises ValueError with argparse's words:
        ``invalid int value: 'x'``."""
        if self.type == "int":
            try:
                return int(raw)
            except ValueError:
                raise ValueError(f"invalid int value: {raw!r}") from None
        if self.type == "float":
            try:
                return float(raw)
            except ValueError:
                raise ValueError(f"invalid float value: {raw!r}") from None
        if self.type == "human_readable_int":
            return human_readable_int(raw)
        return raw


_SI = {"k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
_IEC = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
_HUMAN_INT = re.compile(r"(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)")


def human_readable_int(raw: str) -> int:
    """SGLang's ``human_readable_int`` argument type (``sglang/srt/utils/common.py``, 0.5.23: ``--context-length``,
    ``--max-total-tokens``, ...): a plain integer or one with an SI (``2k`` = 2000, ``25.6k``) or IEC (``1Ki`` =
    1024) suffix, case-sensitive (``8K`` is refused). Raises ValueError with SGLang's words."""
    value = raw.strip()
    match = _HUMAN_INT.fullmatch(value)
    if match:
        number, suffix = match.groups()
        if suffix in _IEC:
            if "." in number:
                raise ValueError(f"Decimals are not allowed with IEC suffixes like '{suffix}'.")
            return int(number) * _IEC[suffix]
        return int(decimal.Decimal(number) * _SI[suffix])
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"Invalid integer value: '{value}'. Use a plain integer, SI suffixes (1k, 1M), or IEC "
                         "suffixes (1Ki, 1Mi). Suffixes are case-sensitive.") from None


@dataclasses.dataclass(frozen=True)
class Lookup:
    """Result of :meth:`FlagTable.lookup`: ``kind`` is ``exact``, ``prefix`` (a unique abbreviation),
    ``ambiguous``, ``unknown`` or ``positional``; ``spec`` the matched flag (exact/prefix), ``option`` the option
    string it matched, ``explicit`` the text after ``=`` (or None), ``matches`` the candidates when ambiguous."""

    kind: str
    spec: FlagSpec | None = None
    option: str | None = None
    explicit: str | None = None
    matches: tuple[str, ...] = ()


class FlagTable:
    """All launch flags of one SGLang release (``release``), indexed by option string and by dest."""

    def __init__(self, release: str, specs: list[FlagSpec], source: str = "") -> None:
        self.release = release
        self.source = source
        self.specs = specs
        self.by_option: dict[str, FlagSpec] = {}
        self.by_dest: dict[str, FlagSpec] = {}
        for spec in specs:
            for option in spec.options:
                self.by_option[option] = spec
            self.by_dest.setdefault(spec.dest, spec)
        self._options_sorted = tuple(sorted(self.by_option))
        self._lookup_cache: dict[str, Lookup] = {}

    def __contains__(self, option: str) -> bool:
        return option in self.by_option

    def _starting_with(self, prefix: str) -> list[str]:
        options = self._options_sorted
        i = bisect.bisect_left(options, prefix)
        out = []
        while i < len(options) and options[i].startswith(prefix):
            out.append(options[i])
            i += 1
        return out

    def lookup(self, arg: str) -> Lookup:
        """Classify one command-line word as argparse (CPython 3.11) would. See the module docstring."""
        cached = self._lookup_cache.get(arg)
        if cached is None:
            cached = self._lookup(arg)
            if len(self._lookup_cache) > 4096:
                self._lookup_cache.clear()
            self._lookup_cache[arg] = cached
        return cached

    def _lookup(self, arg: str) -> Lookup:
        if not arg or arg[0] != "-":
            return Lookup("positional")
        if arg in self.by_option:
            return Lookup("exact", self.by_option[arg], arg)
        if len(arg) == 1:
            return Lookup("positional")
        explicit = None
        if "=" in arg:
            head, explicit = arg.split("=", 1)
            if head in self.by_option:
                return Lookup("exact", self.by_option[head], head, explicit)
        matches: list[str] = []
        if arg.startswith("--"):
            prefix = arg.split("=", 1)[0]
            matches = self._starting_with(prefix)
        else:
            matches = [o for o in self._options_sorted if o == arg[:2]] + self._starting_with(arg)
            explicit = None
        if len(matches) > 1:
            return Lookup("ambiguous", None, None, explicit, tuple(matches))
        if len(matches) == 1:
            return Lookup("prefix", self.by_option[matches[0]], matches[0], explicit)
        if _NEGATIVE_NUMBER.match(arg):
            return Lookup("positional")
        if " " in arg:
            return Lookup("positional")
        return Lookup("unknown", None, None, explicit)

    def is_option_like(self, word: str) -> bool:
        """True when argparse would treat ``word`` as an option (so it cannot be a flag's value)."""
        return self.lookup(word).kind != "positional"

    def suggest(self, option: str, limit: int = 3) -> list[str]:
        """Close long spellings of ``option`` in this release (difflib), best first (cached per spelling)."""
        return list(_suggest(self, option, limit))

    def close_enough(self, option: str, suggestion: str) -> bool:
        """True when ``suggestion`` is so close to ``option`` (difflib ratio >= :data:`RENAME_FLOOR`) that offering
        it as a one-key fix is safe: a typo, not a different feature."""
        name = option.split("=", 1)[0].replace("_", "-")
        if not name.startswith("--"):
            name = "--" + name.lstrip("-")
        return difflib.SequenceMatcher(None, name, suggestion).ratio() >= RENAME_FLOOR

    def __hash__(self) -> int:
        return hash(self.release)

    def _suggest_uncached(self, option: str, limit: int) -> tuple[str, ...]:
        name = option.split("=", 1)[0]
        if not name.startswith("--"):
            name = "--" + name.lstrip("-")
        name = name.replace("_", "-")
        longs = [o for o in self._options_sorted
                 if o.startswith("--") and abs(len(o) - len(name)) <= len(name) // 2 + 2]
        return tuple(difflib.get_close_matches(name, longs, n=limit, cutoff=0.72))


#: Similarity (difflib ratio) above which a suggestion becomes a rename fix; below it a "did you mean" is only
#: text (``--enable-flashinfer-mla`` is not ``--enable-linker-mla-dedup``, ratio 0.74).
RENAME_FLOOR = 0.86


@functools.lru_cache(maxsize=4096)
def _suggest(table: FlagTable, option: str, limit: int) -> tuple[str, ...]:
    return table._suggest_uncached(option, limit)


def _spec_from_json(entry: dict, dumped: bool) -> FlagSpec:
    """One table entry. ``dumped``: the table was read from the real parser (every nargs is as argparse holds it);
    tables read from source with ``ast`` leave out the nargs=0 that SGLang's Deprecated* actions default to."""
    choices = entry.get("choices")
    action = entry.get("action", "store")
    nargs = entry.get("nargs")
    if nargs is None and not dumped and action.startswith("Deprecated"):
        nargs = 0
    return FlagSpec(
        options=tuple(entry["options"]),
        dest=entry["dest"],
        action=action,
        nargs=nargs,
        choices=tuple(choices) if choices is not None else None,
        type=entry.get("type"),
        default=entry.get("default"),
        required=bool(entry.get("required", False)),
    )


@functools.cache
def load_table(release: str) -> FlagTable:
    """The :class:`FlagTable` of a shipped release (see ``versions.FLAG_TABLE_RELEASES``).

    Raises FileNotFoundError for a release without a table.
    """
    path = resources.files("specdash.sglang").joinpath("data").joinpath(f"flags_{release}.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    source = data.get("source", "")
    dumped = source.startswith("argparse parser")
    return FlagTable(release, [_spec_from_json(e, dumped) for e in data["flags"]], source)


@dataclasses.dataclass(frozen=True)
class ForeignFlag:
    """A flag from another engine (or a pre-release SGLang branch): ``engine`` that spells it so,
    ``sglang`` the SGLang replacement flag (None = no equivalent, drop it), ``note`` in plain words, and
    ``value_map`` how to translate the value (``same`` or ``ngram-marker``)."""

    engine: str
    sglang: str | None
    note: str
    value_map: str = "same"


#: Other engines' spellings -> SGLang's. Sources: vLLM docs v0.5.1-v0.11 and vllm/config/speculative.py;
#: TensorRT-LLM speculative-decoding docs; SGLang issue #555 and PR #1498 (pre-merge EAGLE branch names).
#: Keys are normalised: lower case, ``_`` -> ``-``.
FOREIGN_FLAGS: dict[str, ForeignFlag] = {
    "--speculative-model": ForeignFlag(
        "vLLM <= 0.7", "--speculative-draft-model-path",
        "vLLM's draft model flag; in SGLang the draft goes in --speculative-draft-model-path "
        "(the vLLM value '[ngram]' means n-gram drafting: use --speculative-algorithm NGRAM instead)",
        "ngram-marker"),
    "--num-speculative-tokens": ForeignFlag(
        "vLLM <= 0.7", "--speculative-num-steps",
        "vLLM's draft length; in SGLang a chain of N draft tokens is --speculative-num-steps N "
        "--speculative-eagle-topk 1 --speculative-num-draft-tokens N+1 (for NGRAM use --speculative-num-draft-tokens)"),
    "--speculative-config": ForeignFlag(
        "vLLM >= 0.8", None,
        "vLLM's JSON speculative config; SGLang takes separate flags: --speculative-algorithm, "
        "--speculative-draft-model-path, --speculative-num-steps / --speculative-eagle-topk / "
        "--speculative-num-draft-tokens"),
    "--ngram-prompt-lookup-max": ForeignFlag(
        "vLLM <= 0.7", None,
        "vLLM's n-gram window; SGLang has no 1:1 equivalent: use --speculative-algorithm NGRAM and its "
        "--speculative-ngram-* options"),
    "--ngram-prompt-lookup-min": ForeignFlag(
        "vLLM <= 0.7", None,
        "vLLM's n-gram window; SGLang has no 1:1 equivalent: use --speculative-algorithm NGRAM and its "
        "--speculative-ngram-* options"),
    "--use-v2-block-manager": ForeignFlag("vLLM <= 0.6", None, "vLLM-only switch with no SGLang equivalent: drop it"),
    "--speculative-max-model-len": ForeignFlag("vLLM <= 0.7", None, "no SGLang equivalent: drop it"),
    "--speculative-draft-tensor-parallel-size": ForeignFlag(
        "vLLM <= 0.7", None, "SGLang runs the draft with the target's tensor parallelism: drop it"),
    "--gpu-memory-utilization": ForeignFlag(
        "vLLM", "--mem-fraction-static",
        "vLLM's memory target; SGLang's nearest flag is --mem-fraction-static (a fraction for weights + KV "
        "cache, not the same meaning)"),
    "--max-model-len": ForeignFlag("vLLM", "--context-length",
                                   "vLLM's context limit; SGLang calls it --context-length"),
    "--max-num-seqs": ForeignFlag("vLLM", "--max-running-requests",
                                  "vLLM's concurrency cap; SGLang calls it --max-running-requests"),
    "-tp": ForeignFlag("vLLM", "--tp-size", "vLLM's short tensor-parallel flag; SGLang spells it --tp-size"),
    "--tensor-parallel-size": ForeignFlag("vLLM", "--tp-size",
                                          "vLLM's tensor-parallel flag; SGLang spells it --tp-size"),
    "--block-size": ForeignFlag("vLLM", "--page-size", "vLLM's KV block size; SGLang calls it --page-size"),
    "--draft-model-path": ForeignFlag(
        "SGLang pre-merge EAGLE branch (PR #1498)", "--speculative-draft-model-path",
        "name from the unmerged EAGLE branch; released SGLang spells it --speculative-draft-model-path"),
    "--num-speculative-steps": ForeignFlag(
        "SGLang pre-merge EAGLE branch (PR #1498)", "--speculative-num-steps",
        "name from the unmerged EAGLE branch; released SGLang spells it --speculative-num-steps"),
    "--eagle-topk": ForeignFlag(
        "SGLang pre-merge EAGLE branch (PR #1498)", "--speculative-eagle-topk",
        "name from the unmerged EAGLE branch; released SGLang spells it --speculative-eagle-topk"),
    "--num-draft-tokens": ForeignFlag(
        "SGLang pre-merge EAGLE branch (PR #1498)", "--speculative-num-draft-tokens",
        "name from the unmerged EAGLE branch; released SGLang spells it --speculative-num-draft-tokens"),
    "--max-draft-len": ForeignFlag(
        "TensorRT-LLM", "--speculative-num-steps",
        "TensorRT-LLM's draft length; with --speculative-eagle-topk 1 SGLang's --speculative-num-steps is the same "
        "chain depth"),
    "--speculative-model-dir": ForeignFlag(
        "TensorRT-LLM", "--speculative-draft-model-path", "TensorRT-LLM's draft directory"),
    "--decoding-type": ForeignFlag(
        "TensorRT-LLM", "--speculative-algorithm", "TensorRT-LLM's decoding type (Eagle -> EAGLE/EAGLE3)"),
    "--speculative-method": ForeignFlag("vLLM", "--speculative-algorithm", "vLLM speculative_config 'method'"),
}


def normalise_foreign(option: str) -> str:
    """``--num_speculative_tokens=3`` -> ``--num-speculative-tokens`` (key into :data:`FOREIGN_FLAGS`)."""
    name = option.split("=", 1)[0].lower()
    if name.startswith("--"):
        return "--" + name[2:].replace("_", "-")
    return name.replace("_", "-")


#: vLLM ``speculative_config["method"]`` values -> SGLang ``--speculative-algorithm`` (None = no builtin).
VLLM_METHODS: dict[str, str | None] = {
    "eagle": "EAGLE", "eagle3": "EAGLE3", "draft_model": "STANDALONE", "ngram": "NGRAM", "dflash": "DFLASH",
    "dspark": "DSPARK", "mtp": "NEXTN", "deepseek_mtp": "NEXTN", "qwen3_next_mtp": "NEXTN",
    "glm4_moe_mtp": "NEXTN", "medusa": None, "mlp_speculator": None, "suffix": None,
}
