"""The rule engine: argparse-level checks, SGLang's own speculative resolution per version, and advice.

``run_rules(ctx)`` runs them in order: :mod:`~specdash.sglang.rules.argparse_level`,
:mod:`~specdash.sglang.rules.backends` (attention backend and page size), :mod:`~specdash.sglang.rules.parallel`,
:mod:`~specdash.sglang.rules.speculative`, :mod:`~specdash.sglang.rules.advice`.
"""

from __future__ import annotations

from specdash.sglang.rules import advice, argparse_level, backends, parallel, speculative
from specdash.sglang.rules.context import Context

__all__ = ["Context", "run_rules"]


def run_rules(ctx: Context) -> None:
    """Fill ``ctx.diagnostics`` and rewrite ``ctx.values`` into the effective configuration."""
    argparse_level.check(ctx)
    for step in (backends.resolve, parallel.check, backends.pipeline_overlap):
        if not ctx.stopped:
            step(ctx)
    speculative.resolve(ctx)
    advice.check(ctx)
