"""What the launched server runs against what specdash predicted for its command.

specdash predicts a launch command's effective speculative settings by SGLang's rules (``ServerArgs`` post-init
rewrites in ``python/sglang/srt/server_args.py``, e.g. ``_handle_speculative_decoding``: with
``--speculative-eagle-topk 1`` the draft tokens become ``--speculative-num-steps + 1``). The server states what it
really runs in its start-up line ``server_args=ServerArgs(...)`` (and ``/server_info``). When the two differ, the
server's own figures are the truth (benchmarks are filed under them) and the prediction was wrong for this server
(another SGLang build, a patched ``server_args.py``, a rule specdash does not know): the user must be told, never
shown the prediction as fact.
"""

from __future__ import annotations

from typing import Any

#: ServerArgs fields compared (SGLang's names): the speculative settings a benchmark is filed under.
SPECULATIVE_FIELDS = ("speculative_algorithm", "speculative_num_steps", "speculative_eagle_topk",
                      "speculative_num_draft_tokens")


def _norm(value: Any) -> Any:
    """``"EAGLE3"``/``"eagle3"`` -> ``"EAGLE3"``; ``4``/``4.0``/``"4"`` -> ``4``; None and ``"None"`` -> None."""
    if value is None or (isinstance(value, str) and value.strip() in ("", "None", "null")):
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return int(value) if float(value).is_integer() else float(value)
    text = str(value).strip().strip("'\"")
    try:
        number = float(text)
    except ValueError:
        return text.upper()
    return int(number) if number.is_integer() else number


def config_mismatches(predicted: dict[str, Any], reported: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """``[(field, server's value, predicted value)]`` for each of :data:`SPECULATIVE_FIELDS` that both state (not
    None) and that differ. Never raises.

    >>> config_mismatches({"speculative_num_draft_tokens": 2}, {"speculative_num_draft_tokens": 16})
    [('speculative_num_draft_tokens', 16, 2)]
    >>> config_mismatches({"speculative_algorithm": "eagle3"}, {"speculative_algorithm": "EAGLE3"})
    []
    """
    out = []
    for field in SPECULATIVE_FIELDS:
        want, got = _norm(predicted.get(field)), _norm(reported.get(field))
        if want is not None and got is not None and want != got:
            out.append((field, got, want))
    return out


def mismatch_message(mismatches: list[tuple[str, Any, Any]]) -> str:
    """One line: ``the server runs speculative_num_draft_tokens 16, the command predicted 2`` (several fields
    joined with ``;``)."""
    return "; ".join(f"the server runs {field} {got}, the command predicted {want}" for field, got, want in mismatches)


MISMATCH_EXPLANATION = (
    "specdash predicted these values from the launch command by SGLang's rules (server_args.py); the server's own "
    "server_args line says otherwise, and the server's figures are what runs: benchmarks are filed under them. The "
    "prediction did not hold for this server (another SGLang build or release than the builder assumed, a patched "
    "server_args.py, or a rule specdash does not know): check the release in the builder (F3) before trusting its "
    "typed -> effective table.")
