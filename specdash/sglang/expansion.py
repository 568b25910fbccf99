"""Shell parameter expansion of one word of a pasted script, from the variables the script itself sets.

``expand(text, variables) -> Expansion``: ``$NAME``, ``${NAME}``, ``${NAME:-default}`` / ``${NAME-default}`` /
``${NAME:=default}`` take their value from ``variables`` (the script's earlier ``NAME=value`` and ``export`` lines)
or the default; ``$((expression))`` is evaluated (integer ``+ - * / % **`` and parentheses, as bash's arithmetic)
when every operand is known. Anything else the text does not decide (a variable never set, ``$(command)``,
`` `command` ``, ``$1``, ``$@``) leaves the word unresolved: its value is unknown, never guessed. Never raises.
"""

from __future__ import annotations

import ast
import dataclasses
import operator
import re

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_TOKEN = re.compile(rf"\$\(\((?P<arith>.*?)\)\)"
                    rf"|\$\{{(?P<braced>{_NAME})(?P<op>:?[-=+?])?(?P<default>(?:[^{{}}]|\$\{{[^{{}}]*\}})*)\}}"
                    rf"|\$(?P<plain>{_NAME})|\$\{{[^}}]*\}}?|\$\([^)]*\)?|\$[0-9@*#?!$-]|`[^`]*`?")
_ARITH_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Mod: operator.mod,
              ast.FloorDiv: operator.floordiv, ast.Div: operator.floordiv, ast.Pow: operator.pow}


@dataclasses.dataclass(frozen=True)
class Expansion:
    """``text``: the expanded word (the typed word when anything is unresolved); ``unresolved``: what the text
    does not decide (``$model_path``, ``$(hostname)``), empty when fully expanded; ``defaults``: ``(name,
    default)`` pairs where a ``${NAME:-default}`` default was used because the script never sets NAME."""

    text: str
    unresolved: tuple[str, ...] = ()
    defaults: tuple[tuple[str, str], ...] = ()


def expand(text: str, variables: dict[str, str | None]) -> Expansion:
    """Expand ``text`` with ``variables`` (``{name: value}``; a value None means the variable is set to something
    unknown). See the module docstring."""
    unresolved: list[str] = []
    defaults: list[tuple[str, str]] = []

    def value_of(name: str) -> str | None:
        value = variables.get(name)
        if value is None:
            unresolved.append("$" + name)
        return value

    def substitute(match: re.Match) -> str:
        if match.group("arith") is not None:
            result = _arithmetic(match.group("arith"), variables)
            if result is None:
                unresolved.append(match.group(0))
                return match.group(0)
            return str(result)
        name = match.group("braced") or match.group("plain")
        if name is None:
            unresolved.append(match.group(0))
            return match.group(0)
        op = match.group("op") if match.group("braced") else None
        if op and op.lstrip(":") in "-=":
            value = variables.get(name)
            if value is not None and (value != "" or ":" not in op):
                return value
            if name in variables and value is None:
                unresolved.append("$" + name)
                return match.group(0)
            inner = expand(match.group("default"), variables)
            unresolved.extend(inner.unresolved)
            defaults.append((name, inner.text))
            return inner.text
        if op:
            unresolved.append("$" + name)
            return match.group(0)
        value = value_of(name)
        return match.group(0) if value is None else value

    try:
        expanded = _TOKEN.sub(substitute, text)
    except RecursionError:
        return Expansion(text, (text,))
    if unresolved:
        return Expansion(text, tuple(dict.fromkeys(unresolved)), tuple(defaults))
    return Expansion(expanded, (), tuple(defaults))


def _arithmetic(expression: str, variables: dict[str, str | None]) -> int | None:
    """Bash integer arithmetic of ``expression`` with ``variables`` (bare or ``$``-prefixed names); None when an
    operand is unknown or not an integer, or the expression is not plain arithmetic."""
    known = True

    def name_value(match: re.Match) -> str:
        nonlocal known
        value = variables.get(match.group(1))
        if value is None or not re.fullmatch(r"\s*-?\d+\s*", value):
            known = False
            return "0"
        return value.strip()

    replaced = re.sub(rf"\$?\{{?({_NAME})\}}?", name_value, expression)
    if not known or len(replaced) > 200:
        return None
    try:
        tree = ast.parse(replaced.strip(), mode="eval")
        return _evaluate(tree.body)
    except (SyntaxError, ValueError, ZeroDivisionError, OverflowError, TypeError, RecursionError):
        return None


def _evaluate(node: ast.AST) -> int:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _evaluate(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITH_OPS:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow) and (right < 0 or right > 64):
            raise ValueError("exponent out of range")
        if isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod)) and right != 0:
            # bash truncates toward zero
            quotient = abs(left) // abs(right) * (1 if (left >= 0) == (right >= 0) else -1)
            return quotient if not isinstance(node.op, ast.Mod) else left - quotient * right
        return _ARITH_OPS[type(node.op)](left, right)
    raise ValueError("not plain integer arithmetic")
