"""The English indefinite article before a number written in digits: "an 8-token tree", "a 16-token tree".

The article follows how the number is read aloud: "an" when it starts with a vowel sound - "eight" (8, 80-89,
800-899, 8000 ...), "eleven" (11, 11000 ...) or "eighteen" (18, 18000 ...) - otherwise "a" ("a 1-", "a 100-"
read "a hundred"). Pure functions.
"""

from __future__ import annotations


def indefinite_article(number: int) -> str:
    """``"an"`` or ``"a"`` for ``number`` read aloud in English (1100 is read "one thousand one hundred": "a");
    negative numbers ("minus ...") take "a"."""
    if number < 0:
        return "a"
    digits = str(number)
    lead = digits[: len(digits) % 3 or 3]  # the first group of three digits: "eighteen thousand" -> "18"
    return "an" if lead.startswith("8") or lead in ("11", "18") else "a"


def with_article(number: int) -> str:
    """``"an 8"``, ``"a 16"``: the number with its article, for ``f"{with_article(n)}-token tree"``."""
    return f"{indefinite_article(number)} {number}"
