"""Extract SGLang's launch-flag table from a release's ``server_args.py`` without importing it.

Usage: ``python tools/sglang_oracle/extract_flags.py VERSION path/to/server_args.py > flags.json``

Reads every ``parser.add_argument(...)`` call with the ``ast`` module and writes a JSON object
``{"version": VERSION, "flags": [{"options": [...], "dest", "type", "action", "choices", "default", "nargs",
"required"}]}`` (``required`` only when True).
``default=ServerArgs.field`` is resolved from the dataclass field defaults; ``choices`` given by a module-level
list/tuple name is resolved when it is a literal, else null (= not checked). Source of the flag tables in
``specdash/sglang/data/flags_*.json``: the server_args.py of the SGLang wheel on PyPI for that release.
For releases whose flags are declared as msgspec fields (2026 ``arg_groups``), use ``dump_parser.py`` inside the
oracle venv instead.
"""

from __future__ import annotations

import ast
import json
import sys


def _literal(node: ast.AST, names: dict[str, object], fields: dict[str, object]):
    try:
        return ast.literal_eval(node)
    except Exception:
        pass
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "ServerArgs":
        return fields.get(node.attr, "<unknown>")
    return "<unknown>"


#: argparse dests that ServerArgs.from_cli_args renames to the dataclass field (e.g. ``--tensor-parallel-size``
#: listed first gives dest ``tensor_parallel_size``; SGLang copies it to ``tp_size``).
CLI_DEST_TO_FIELD = {"tensor_parallel_size": "tp_size", "data_parallel_size": "dp_size",
                     "expert_parallel_size": "ep_size", "pipeline_parallel_size": "pp_size"}


def extract(source: str) -> list[dict]:
    tree = ast.parse(source)
    names: dict[str, object] = {}
    fields: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                names[node.targets[0].id] = ast.literal_eval(node.value)
            except Exception:
                pass
        if isinstance(node, ast.ClassDef) and node.name == "ServerArgs":
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and item.value is not None:
                    try:
                        fields[item.target.id] = ast.literal_eval(item.value)
                    except Exception:
                        fields[item.target.id] = "<unknown>"
    out = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"):
            continue
        options = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if not options or not options[0].startswith("-"):
            continue
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        entry: dict[str, object] = {"options": options}
        long_opts = [o for o in options if o.startswith("--")]
        entry["dest"] = (
            _literal(kw["dest"], names, fields) if "dest" in kw else (long_opts or options)[0].lstrip("-").replace("-", "_")
        )
        entry["dest"] = CLI_DEST_TO_FIELD.get(entry["dest"], entry["dest"])
        entry["action"] = _literal(kw["action"], names, fields) if "action" in kw else "store"
        if isinstance(entry["action"], str) and entry["action"] == "<unknown>":
            entry["action"] = ast.unparse(kw["action"])
        t = kw.get("type")
        entry["type"] = ast.unparse(t) if t is not None else None
        entry["choices"] = _literal(kw["choices"], names, fields) if "choices" in kw else None
        if entry["choices"] == "<unknown>":
            entry["choices"] = None
        elif entry["choices"] is not None:
            entry["choices"] = list(entry["choices"])
        entry["default"] = _literal(kw["default"], names, fields) if "default" in kw else None
        entry["nargs"] = _literal(kw["nargs"], names, fields) if "nargs" in kw else None
        if "required" in kw and _literal(kw["required"], names, fields) is True:
            entry["required"] = True
        out.append(entry)
    return out


def main() -> int:
    version, path = sys.argv[1], sys.argv[2]
    with open(path, encoding="utf-8") as fh:
        flags = extract(fh.read())
    json.dump({"version": version, "source": "PyPI wheel sglang==" + version + " server_args.py", "flags": flags},
              sys.stdout, indent=0, default=str)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
