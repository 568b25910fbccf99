"""Data, attention-data and tensor parallel sizes as SGLang checks them before speculative decoding (0.5.23 and
later).

Read in the sglang 0.5.23 wheel, ``arg_groups/parallel_hook.py``: ``handle_deprecated_dp_attention`` turns the old
``--enable-dp-attention --dp-size N`` into ``--attn-dp-size N`` (and ``--dp-size 1``); ``handle_data_parallelism``
refuses ``--attn-dp-size`` < 1 and replicas combined with attention DP (ValueError), asserts that the TP size is a
multiple of the attention-DP size (bare AssertionError), and divides ``--chunked-prefill-size`` by it.
"""

from __future__ import annotations

from specdash.sglang.rules.context import Context


def attention_dp_layout(values: dict) -> tuple[int, int]:
    """``(attn_dp_size, dp_size)`` after ``handle_deprecated_dp_attention``: with ``--enable-dp-attention`` and no
    ``--attn-dp-size``, the ``--dp-size`` becomes the attention-DP width and the replica count is 1."""
    attn_dp = values.get("attn_dp_size") or 1
    dp = values.get("dp_size") or 1
    if values.get("enable_dp_attention") and attn_dp == 1:
        return dp, 1
    return attn_dp, dp


def check(ctx: Context) -> None:
    """Run the checks of the module docstring on ``ctx.values`` (0.5.23 and later; 0.5.5-0.5.10: see
    :func:`_check_055`)."""
    if ctx.profile.at_least("0.5.5") and not ctx.profile.at_least("0.5.11"):
        _check_055(ctx)
        return
    if not ctx.profile.at_least("0.5.23"):
        return
    v = ctx.values
    if "attn_dp_size" not in ctx.table.by_dest:
        return
    attn_dp, dp = attention_dp_layout(v)
    attn_opt, dp_opt, tp_opt = ctx.option("attn_dp_size"), ctx.option("dp_size"), ctx.option("tp_size")
    if attn_dp < 1:
        ctx.error("attn-dp-size-not-positive", attn_opt,
                  f"SGLang raises ValueError: --attn-dp-size must be positive (got {attn_dp}).", exception="ValueError",
                  fix=ctx.fix(f"set {attn_opt} 1", ctx.set_edit("attn_dp_size", 1)))
        return
    if attn_dp > 1 and dp > 1:
        ctx.error("dp-replicas-with-attention-dp", (dp_opt, attn_opt),
                  f"SGLang raises ValueError: --dp-size {dp} with --attn-dp-size {attn_dp}: data-parallel replicas "
                  "combined with attention data parallelism are not supported.", exception="ValueError",
                  fix=ctx.fix(f"set {dp_opt} 1", ctx.set_edit("dp_size", 1)))
        return
    tp = v.get("tp_size") or 1
    if attn_dp > 1 and tp % attn_dp:
        ctx.error("tp-not-multiple-of-attention-dp", (tp_opt, attn_opt),
                  f"{tp_opt} {tp} is not a multiple of the attention-DP size {attn_dp}: SGLang stops with a bare "
                  "AssertionError (tp_size % attn_dp_size == 0 in handle_data_parallelism).",
                  exception="AssertionError",
                  fix=ctx.fix(f"set {tp_opt} {attn_dp * max(1, tp // attn_dp)}",
                              ctx.set_edit("tp_size", attn_dp * max(1, tp // attn_dp))))


def _check_055(ctx: Context) -> None:
    """``_handle_data_parallelism`` as read in the 0.5.5 wheel: with ``--dp-size 1`` attention DP (and the DP LM
    head) is switched off silently; with attention DP the TP size must be a multiple of ``--dp-size`` (bare
    AssertionError)."""
    v = ctx.values
    dp = v.get("dp_size") or 1
    if dp == 1:
        if v.get("enable_dp_attention"):
            ctx.override("dp-attention-off-at-dp-1", "enable_dp_attention", False,
                         "with --dp-size 1 there is no attention data parallelism: SGLang switches it off")
        v["enable_dp_lm_head"] = False
        return
    tp = v.get("tp_size") or 1
    if v.get("enable_dp_attention") and tp % dp:
        tp_opt = ctx.option("tp_size")
        ctx.error("tp-not-multiple-of-attention-dp", (tp_opt, ctx.option("dp_size")),
                  f"{tp_opt} {tp} is not a multiple of --dp-size {dp} with --enable-dp-attention: SGLang stops with "
                  "a bare AssertionError (tp_size % dp_size == 0 in _handle_data_parallelism).",
                  exception="AssertionError",
                  fix=ctx.fix(f"set {tp_opt} {dp * max(1, tp // dp)}", ctx.set_edit("tp_size", dp * max(1, tp // dp))))
