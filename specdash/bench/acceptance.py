"""Chain acceptance model for speculative decoding: accept length <-> per-token acceptance rate alpha.

Model (Leviathan, Kalman, Matias 2023, "Fast Inference from Transformers via Speculative Decoding", eq. 1):
each drafted token is accepted independently with probability ``alpha`` and drafting stops at the first
rejection; a verify step then yields the accepted drafts plus one token from the target (the "bonus"/correction
token). With ``k`` draft tokens beyond the root, the expected tokens per verify step is

    E(alpha, k) = (1 - alpha**(k + 1)) / (1 - alpha)        (= k + 1 when alpha == 1)

which is what SGLang reports as "accept len" (accepted drafts + 1 per verify forward; SGLang
``scheduler_metrics_mixin.py``) and what ``completion_tokens / spec_verify_ct`` measures per request (§9, source MT).
For SGLang chains
(``speculative_eagle_topk == 1``) ``k = speculative_num_steps = speculative_num_draft_tokens - 1``.
The model ignores tree drafting (topk > 1) and position-dependent acceptance; it is a guide for choosing a depth,
not a promise.
"""

from __future__ import annotations

import dataclasses

#: Accept length below which a draft "barely helps" (ours; about 1 extra token every 3 verify steps).
LOW_ACCEPT_LENGTH = 1.3
#: ... flagged only when the server drafts at least this many tokens (SGLang speculative_num_draft_tokens).
LOW_ACCEPT_MIN_DRAFT_TOKENS = 4
LOW_ACCEPT_ADVICE = "check draft/target pairing: hidden-state layers, tokenizer, chat template, revision"


def expected_accept_length(alpha: float, draft_tokens_beyond_root: int) -> float:
    """Expected tokens per verify step for a chain of ``draft_tokens_beyond_root`` drafts (Leviathan et al. 2023).

    ``alpha`` in [0, 1]; ``draft_tokens_beyond_root`` >= 0 (SGLang ``speculative_num_steps`` for topk 1).
    Returns a value in [1, k + 1]. Raises ``ValueError`` for alpha outside [0, 1] or negative k.
    """
    k = draft_tokens_beyond_root
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be within [0, 1], got {alpha}")
    if k < 0:
        raise ValueError(f"draft tokens beyond the root must be >= 0, got {k}")
    if alpha >= 1.0:
        return float(k + 1)
    return (1.0 - alpha ** (k + 1)) / (1.0 - alpha)


def estimate_alpha(accept_length: float, draft_tokens_beyond_root: int) -> float:
    """Invert :func:`expected_accept_length`: the alpha that explains ``accept_length`` at depth ``k``.

    Accept lengths at or below 1 give 0.0; at or above ``k + 1`` give 1.0 (the model's bounds). Solved by
    bisection to 1e-12 (E is strictly increasing in alpha for k >= 1). Raises ``ValueError`` when ``k < 1``
    (with no drafts there is nothing to estimate).
    """
    k = draft_tokens_beyond_root
    if k < 1:
        raise ValueError("alpha needs at least one draft token beyond the root")
    if accept_length <= 1.0:
        return 0.0
    if accept_length >= k + 1:
        return 1.0
    low, high = 0.0, 1.0
    for _ in range(200):
        mid = (low + high) / 2.0
        if expected_accept_length(mid, k) < accept_length:
            low = mid
        else:
            high = mid
        if high - low < 1e-12:
            break
    return (low + high) / 2.0


@dataclasses.dataclass(frozen=True)
class AcceptancePrediction:
    """Predicted accept length at one depth. ``draft_tokens_beyond_root`` = k; ``num_draft_tokens`` = k + 1
    (SGLang's ``speculative_num_draft_tokens`` for a chain); ``accept_length`` = E(alpha, k)."""

    draft_tokens_beyond_root: int
    num_draft_tokens: int
    accept_length: float


@dataclasses.dataclass(frozen=True)
class AcceptanceModel:
    """A fitted chain model: ``alpha`` estimated from ``measured_accept_length`` at ``measured_depth`` (k).

    ``low_acceptance`` is True when the measurement trips the "barely helps" rule (:func:`low_acceptance_warning`);
    ``warning`` then holds the one-line advice, else ``None``.
    """

    alpha: float
    measured_accept_length: float
    measured_depth: int
    low_acceptance: bool
    warning: str | None

    def predict(self, draft_tokens_beyond_root: int) -> AcceptancePrediction:
        """Predicted accept length with ``draft_tokens_beyond_root`` drafts (chain, topk 1)."""
        k = draft_tokens_beyond_root
        return AcceptancePrediction(k, k + 1, expected_accept_length(self.alpha, k))


def fit_chain_model(accept_length: float, num_draft_tokens: int) -> AcceptanceModel:
    """Fit the chain model to one measurement.

    ``accept_length``: measured accept length for the run (tokens per verify step, bonus included);
    ``num_draft_tokens``: SGLang ``speculative_num_draft_tokens`` of the run (root included, so k = n - 1; for
    topk 1 SGLang's server_args.py forces n = speculative_num_steps + 1). Raises ``ValueError`` for n < 2.
    """
    k = num_draft_tokens - 1
    alpha = estimate_alpha(accept_length, k)
    warning = low_acceptance_warning(accept_length, num_draft_tokens)
    return AcceptanceModel(alpha, accept_length, k, warning is not None, warning)


def low_acceptance_warning(accept_length: float | None, num_draft_tokens: int | None) -> str | None:
    """Return a one-line warning when a draft barely helps, else ``None``.

    Rule (ours, from cases where accept length stayed near 1.0 out of a possible 4-5 because of a mispaired
    draft, e.g. SpecForge #310): accept length < 1.3 while ``speculative_num_draft_tokens`` >= 4.
    """
    if accept_length is None or num_draft_tokens is None:
        return None
    if num_draft_tokens >= LOW_ACCEPT_MIN_DRAFT_TOKENS and accept_length < LOW_ACCEPT_LENGTH:
        return (
            f"accept length {accept_length:.2f} with {num_draft_tokens} draft tokens: the draft barely helps; "
            f"{LOW_ACCEPT_ADVICE}"
        )
    return None


def accept_rate_from_length(accept_length: float, speculative_num_steps: int) -> float:
    """Accepted drafts per drafted position, ``(accept_length - 1) / speculative_num_steps``, for chains.

    This is the version-independent definition (NVIDIA NeMo's reading); SGLang's own
    "accept rate" field changed definition between versions (``accept len / draft tokens`` from ~0.5.3,
    ``(accept len - 1) / steps`` before), so compare this one instead.
    Raises ``ValueError`` when ``speculative_num_steps`` < 1.
    """
    if speculative_num_steps < 1:
        raise ValueError("speculative_num_steps must be >= 1")
    return (accept_length - 1.0) / speculative_num_steps
