"""Dump the launch-flag table of the SGLang installed in the running interpreter (run it with the oracle venv).

Usage: ``~/.cache/specdash-oracle/bin/python tools/sglang_oracle/dump_parser.py > specdash/sglang/data/flags_X.json``

Builds SGLang's own parser (``ServerArgs.add_cli_args``) and writes every action as
``{"options", "dest", "action", "nargs", "choices", "type", "default"}`` in the format of extract_flags.py.
"""

from __future__ import annotations

import argparse
import json
import sys


def main() -> int:
    import sglang
    from sglang.srt.server_args import ServerArgs

    parser = argparse.ArgumentParser()
    ServerArgs.add_cli_args(parser)
    flags = []
    for action in parser._actions:
        if not action.option_strings or action.dest == "help":
            continue
        kind = type(action).__name__
        name = {"_StoreAction": "store", "_StoreTrueAction": "store_true", "_StoreFalseAction": "store_false",
                "_StoreConstAction": "store_const", "_AppendAction": "append", "_CountAction": "count",
                "BooleanOptionalAction": "BooleanOptionalAction"}.get(kind, kind)
        entry = {"options": list(action.option_strings), "dest": action.dest}
        if name != "store":
            entry["action"] = name
        if action.nargs is not None and name not in ("store_true", "store_false", "store_const"):
            entry["nargs"] = action.nargs
        if name not in ("store", "append") and action.nargs == 0 and "action" not in entry:
            entry["action"] = "store_const"
        if action.required:
            entry["required"] = True
        if action.choices is not None:
            entry["choices"] = list(action.choices)
        if action.type is not None:
            entry["type"] = getattr(action.type, "__name__", str(action.type))
        if action.default is not None and action.default is not argparse.SUPPRESS:
            try:
                json.dumps(action.default)
                entry["default"] = action.default
            except TypeError:
                entry["default"] = str(action.default)
        flags.append(entry)
    version = getattr(sglang, "__version__", "unknown")
    json.dump({"version": version, "source": f"argparse parser of installed sglang=={version}", "flags": flags},
              sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
