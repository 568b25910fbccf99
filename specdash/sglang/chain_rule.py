"""SGLang's topk-1 chain rule, worded once for every place that explains it.

With ``--speculative-eagle-topk 1`` the draft is a chain: SGLang verifies ``num_steps + 1`` tokens and, when
``--speculative-num-draft-tokens`` says otherwise, resets it to that and logs :data:`LOG_LINE` (SGLang
``python/sglang/srt/server_args.py``: the speculative block of ``ServerArgs.__post_init__``, later
``ServerArgs._handle_speculative_decoding``; from 0.5.16 ``arg_groups/speculative_hook.py``).

The validator (``specdash validate``, the builder) knows the typed values and offers the fix for them
(:func:`chain_fix` with the typed draft tokens, and :func:`tree_alternative`); a log read by ``specdash scan`` or
the log pane shows only that the reset happened, not what was meant, so it gives the same two choices in general
terms (:func:`general_fix`).
"""

from __future__ import annotations

from specdash.text.article import with_article

#: The part of SGLang's warning that identifies it (the log pattern).
LOG_PHRASE = "speculative_num_draft_tokens is adjusted to speculative_num_steps + 1"
#: SGLang's whole warning line.
LOG_LINE = f"{LOG_PHRASE} when speculative_eagle_topk == 1"
#: Why the value is reset, in plain words.
WHY = "with topk 1 the draft is a chain, so SGLang verifies num_steps + 1 tokens"

STEPS_FLAG = "--speculative-num-steps"
TOPK_FLAG = "--speculative-eagle-topk"
DRAFT_FLAG = "--speculative-num-draft-tokens"


def chain_fix(draft: int | None, steps_flag: str = STEPS_FLAG) -> str:
    """The chain choice: ``set --speculative-num-steps 15 (a chain of 15 draft steps)`` for
    ``draft`` typed draft tokens (> 1); with ``draft`` None (not known, e.g. from a log) the same in general terms.
    ``steps_flag``: the spelling the user typed (an accepted abbreviation), default the full flag."""
    if draft is None or draft < 2:
        return f"set {steps_flag} to the number of draft tokens wanted - 1 (a chain of num_steps draft steps)"
    return f"set {steps_flag} {draft - 1} (a chain of {draft - 1} draft steps)"


def tree_alternative(draft: int | None, topk_flag: str = TOPK_FLAG, draft_flag: str = DRAFT_FLAG) -> str:
    """The tree choice: ``if a 16-token tree was intended, raise --speculative-eagle-topk above 1 instead``; with
    ``draft`` None, a tree of ``--speculative-num-draft-tokens`` tokens."""
    size = f"{with_article(draft)}-token tree" if draft is not None else f"a tree of {draft_flag} tokens"
    return f"if {size} was intended, raise {topk_flag} above 1 instead"


def general_fix() -> str:
    """Both choices when the typed values are not known (a log): the chain fix, then the tree alternative."""
    return f"{chain_fix(None)}; {tree_alternative(None)}"
