"""How long a test waits before it gives up on something it expects: a guard against a hang, never a tolerance
(what a test asserts does not depend on it). Every wait helper scales its timeout by :data:`SLOWDOWN`, so the suite
passes on a machine several times slower than a quiet developer laptop (CI on 2 busy cores) and a passing test waits
no longer than it did."""

from __future__ import annotations

#: how much slower than a quiet machine the suite still passes on
SLOWDOWN = 4.0


def guard(timeout_s: float) -> float:
    """``timeout_s`` (seconds, as written for a quiet machine) scaled by :data:`SLOWDOWN`."""
    return timeout_s * SLOWDOWN
