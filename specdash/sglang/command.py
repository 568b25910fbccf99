"""Parse a pasted launch command: shell words with their positions, environment, launcher and engine.

Accepted forms (any mix): ``python -m sglang.launch_server ...``, ``python3 -m sglang.launch_server``,
``sglang serve ...``, a bare list of ``--flags``; leading ``ENV=value`` words; ``export X=1`` lines before the
command; backslash-newline continuations; ``'...'`` / ``"..."`` quoting; ``# comments``; trailing redirections
(``> log 2>&1 &``) and further commands (ignored); ``NAME=value`` lines and ``$VAR`` / ``${VAR:-default}`` /
``$((arithmetic))`` expansion (:mod:`specdash.sglang.expansion`; what the text does not set stays unresolved);
``docker run ... IMAGE python3 -m sglang.launch_server``, ``docker compose run``, ``kubectl exec POD --``,
``srun`` / ``torchrun`` / ``mpirun`` wrappers; ``bash -c "..."`` (a script quoted whole); a YAML ``command:`` key
before a command on its line (docker-compose, Kubernetes); separator
lines and ``[... trimmed]`` markers (skipped); lines of ``--flags`` cut off by a missing backslash (kept apart as
lost). Also recognised so that their flags can be translated:
``vllm serve MODEL ...``, ``python -m vllm.entrypoints.openai.api_server ...``, ``trtllm-serve MODEL ...``, and
an argparse error line ``launch_server.py: error: unrecognized arguments: ...`` (its flags are taken as the
command).

Every :class:`Word` keeps its ``start``/``end`` offsets in the original text, so fixes edit the user's text in
place (continuations and spacing survive).
"""

from __future__ import annotations

import dataclasses
import os
import re

from specdash.sglang.expansion import expand

_OPERATOR_CHARS = ";&|<>"
_WRAPPERS = {"nohup", "exec", "time", "sudo", "stdbuf", "taskset", "numactl", "setsid"}
_PLAIN_RUN = re.compile(r"[^\s'\"\\;&|<>$]+")
_PLACEHOLDER_WORD = re.compile(r"<[^\s<>]+>(?=[\s;|&]|$)")
_UNRECOGNIZED = re.compile(r"error: unrecognized arguments:\s*(.*)$")


@dataclasses.dataclass(frozen=True)
class Word:
    """One shell word: ``text`` after quote removal, ``raw`` as typed, ``start``/``end`` offsets into the
    original text, ``op`` True for an operator (``;``, ``&&``, ``|``, ``>``, ``2>&1`` ...), ``line`` 0-based
    physical line of ``start``, ``newline_after`` True when an unescaped newline follows it; ``expands`` True when
    the word holds a ``$`` the shell expands (outside single quotes); ``unresolved``: after
    :func:`expand_word`, the names of variables (or ``$(...)`` substitutions) whose value the pasted text does not
    give, in which case ``text`` keeps the word as typed and its value is unknown."""

    text: str
    raw: str
    start: int
    end: int
    op: bool = False
    newline_after: bool = False
    unresolved: tuple[str, ...] = ()
    expands: bool = False


@dataclasses.dataclass(frozen=True)
class EnvAssign:
    """An environment variable set for the launch: ``name``, ``value``, ``source`` (``prefix`` for
    ``NAME=value python ...``, ``export`` for an ``export NAME=value`` line), and the word's span; ``unresolved``:
    what the value depends on
    that the pasted text does not give (then ``value`` is the value as typed and is unknown)."""

    name: str
    value: str
    source: str
    start: int
    end: int
    unresolved: tuple[str, ...] = ()


@dataclasses.dataclass
class LaunchCommand:
    """The launch command found in a pasted text.

    ``engine``: ``sglang``, ``vllm``, ``trtllm`` or ``unknown``; ``launcher``: the program words joined
    (``python -m sglang.launch_server``, ``sglang serve``, ``""`` for bare flags); ``args``: the argument words
    after the launcher (operators and what follows them excluded); ``positional``: words of the launcher that
    name a model (``vllm serve MODEL``); ``env``: environment variables (export lines and prefixes, in order);
    ``from_error_line``: True when taken from an argparse "unrecognized arguments" line; ``end``: offset where
    the command's last argument ends (fixes append there); ``text``: the whole original text; ``lost_args``: flag
    words on lines after ``broken_line`` (1-based) that the shell ran as a separate command because that line
    lacks its trailing backslash (``broken_by_comment``: that line is a ``# comment`` inside the continuation);
    ``defaults``: ``(name, default)`` pairs where ``${NAME:-default}`` used its default; ``trimmed``: ``(line,
    marker)`` for each trim marker inside the command's lines (``--x 3 [... trimmed]``: 1-based line, the marker
    as pasted): part of the command is not shown, so what was cut is unknown.
    """

    text: str
    engine: str = "unknown"
    launcher: str = ""
    args: list[Word] = dataclasses.field(default_factory=list)
    positional: list[Word] = dataclasses.field(default_factory=list)
    env: list[EnvAssign] = dataclasses.field(default_factory=list)
    from_error_line: bool = False
    end: int = 0
    other_commands: int = 0
    start: int = 0
    launcher_start: int = 0
    found: bool = False
    lost_args: list[Word] = dataclasses.field(default_factory=list)
    broken_line: int = 0
    broken_by_comment: bool = False
    defaults: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    trimmed: list[tuple[int, str]] = dataclasses.field(default_factory=list)

    @property
    def unresolved_env(self) -> list[EnvAssign]:
        """Environment assignments whose value the pasted text does not give."""
        return [e for e in self.env if e.unresolved]

    def env_dict(self) -> dict[str, str]:
        """``{name: value}``; a later assignment of the same name wins (as in the shell)."""
        return {e.name: e.value for e in self.env if not e.unresolved}


#: a line continuation as a shell reads it: a backslash (not itself escaped) ending a line, with the blanks around it
_CONTINUATION = re.compile(r"[ \t]*(?<!\\)\\\r?\n[ \t]*")


def on_one_line(text: str) -> str:
    """``text`` (a launch command) for a one-line display, a dialog or a summary: its line continuations
    (``\\`` + newline, with the next line's indent) joined by one space, ``a \\<newline>  --b`` -> ``a --b``; the
    words are the shell's same words. Other text is returned stripped."""
    return _CONTINUATION.sub(" ", text).strip()


def tokenize(text: str) -> list[Word]:
    """Split ``text`` into shell words and operators (POSIX-like, no expansion). Never raises: an unclosed quote
    runs to the end of the text."""
    words: list[Word] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n and text[i + 1] == "\n":
            i += 2
            continue
        if c == "\\" and text.startswith("\r\n", i + 1):
            i += 3
            continue
        if c in " \t\r":
            i += 1
            continue
        if c == "\n":
            if words and not words[-1].newline_after:
                words[-1] = dataclasses.replace(words[-1], newline_after=True)
            i += 1
            continue
        if c == "#":
            while i < n and text[i] != "\n":
                i += 1
            continue
        if c == "<":
            placeholder = _PLACEHOLDER_WORD.match(text, i)
            if placeholder:
                words.append(Word(placeholder.group(0), placeholder.group(0), i, placeholder.end()))
                i = placeholder.end()
                continue
        if c in _OPERATOR_CHARS:
            start = i
            while i < n and (text[i] in _OPERATOR_CHARS or (text[i].isdigit() and text[i - 1] in "&>")):
                i += 1
            words.append(Word(text[start:i], text[start:i], start, i, op=True))
            continue
        start = i
        out: list[str] = []
        expands = False
        # "2>&1": a digit immediately followed by '>' is a redirection operator
        if c.isdigit() and i + 1 < n and text[i + 1] == ">":
            j = i + 1
            while j < n and (text[j] in _OPERATOR_CHARS or text[j].isdigit()):
                j += 1
            words.append(Word(text[i:j], text[i:j], i, j, op=True))
            i = j
            continue
        while i < n:
            plain = _PLAIN_RUN.match(text, i)
            if plain:
                out.append(plain.group(0))
                i = plain.end()
                continue
            c = text[i]
            if c == "$" and i + 1 < n and text[i + 1] in "({":
                j = _balanced_end(text, i + 1)
                out.append(text[i:j])
                expands = True
                i = j
                continue
            if c == "$":
                expands = True
            if c == "\\" and i + 1 < n:
                if text[i + 1] == "\n":
                    i += 2
                    break
                out.append(text[i + 1])
                i += 2
                continue
            if c in " \t\r\n" or c in _OPERATOR_CHARS:
                break
            if c == "'":
                j = text.find("'", i + 1)
                j = n if j < 0 else j
                out.append(text[i + 1:j])
                i = j + 1
                continue
            if c == '"':
                i += 1
                while i < n and text[i] != '"':
                    if text[i] == "$":
                        expands = True
                    if text[i] == "\\" and i + 1 < n and text[i + 1] in '"\\$`\n':
                        if text[i + 1] != "\n":
                            out.append(text[i + 1])
                        i += 2
                        continue
                    out.append(text[i])
                    i += 1
                i += 1
                continue
            out.append(c)
            i += 1
        end = min(i, n)
        raw = text[start:end].rstrip("\\\n")
        words.append(Word("".join(out), raw, start, start + len(raw), expands=expands))
    return words


def _balanced_end(text: str, i: int) -> int:
    """Offset just after the bracket group opening at ``text[i]`` (``(`` or ``{``), nesting counted; the end of
    the text when it never closes."""
    close = {"(": ")", "{": "}"}[text[i]]
    depth, j = 0, i
    while j < len(text):
        if text[j] == text[i]:
            depth += 1
        elif text[j] == close:
            depth -= 1
            if depth == 0:
                return j + 1
        elif text[j] == "\n" and close == "}":
            return j
        j += 1
    return len(text)


def _split_commands(words: list[Word]) -> list[list[Word]]:
    """Group words into simple commands: a newline, ``;``, ``&&``, ``||``, ``|`` or ``&`` ends one. Redirection
    operators and their target stay with the command (they are dropped later)."""
    commands: list[list[Word]] = []
    current: list[Word] = []
    for word in words:
        if word.op and any(ch in word.text for ch in ";|") or (word.op and word.text in ("&", "&&")):
            if current:
                commands.append(current)
            current = []
            continue
        current.append(word)
        if word.newline_after:
            commands.append(current)
            current = []
    if current:
        commands.append(current)
    return commands


_ENV_WORD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def _is_python(word: str) -> bool:
    base = os.path.basename(word)
    return bool(re.match(r"^python(\d+(\.\d+)?)?$", base))


def _classify(cmd: list[Word]) -> tuple[str, str, int, list[Word]] | None:
    """Return (engine, launcher, index of the first argument word, positional words) or None when ``cmd`` is not
    a launch command."""
    i = 0
    if cmd and cmd[0].text == "-" and len(cmd) > 1 and _YAML_COMMAND_KEY.match(cmd[1].text):
        i = 2  # "- command: ..." (a YAML list item)
    elif cmd and _YAML_COMMAND_KEY.match(cmd[0].text):
        i = 1
    while i < len(cmd) and (_ENV_WORD.match(cmd[i].text) or cmd[i].text in _WRAPPERS or cmd[i].text == "env"):
        i += 1
    if i >= len(cmd):
        return None
    first = cmd[i].text
    if os.path.basename(first) in _OUTER_LAUNCHERS:
        return _classify_inside(cmd, i + 1)
    # uv run / python -m / python file.py
    if first == "uv" and i + 1 < len(cmd) and cmd[i + 1].text == "run":
        i += 2
        if i >= len(cmd):
            return None
        first = cmd[i].text
    if _is_python(first):
        j = i + 1
        while j < len(cmd) and cmd[j].text in ("-u", "-O", "-B"):
            j += 1
        if j + 1 < len(cmd) and cmd[j].text == "-m":
            module = cmd[j + 1].text
            launcher = " ".join(w.text for w in cmd[i:j + 2])
            if module.startswith("sglang"):
                return "sglang", launcher, j + 2, []
            if module.startswith("vllm"):
                return "vllm", launcher, j + 2, []
            if module.startswith("tensorrt_llm"):
                return "trtllm", launcher, j + 2, []
            return None
        if j < len(cmd) and cmd[j].text.endswith("launch_server.py"):
            return "sglang", " ".join(w.text for w in cmd[i:j + 1]), j + 1, []
        return None
    base = os.path.basename(first)
    if base == "sglang" and i + 1 < len(cmd) and cmd[i + 1].text in ("serve", "launch_server"):
        return "sglang", f"sglang {cmd[i + 1].text}", i + 2, []
    if base == "vllm" and i + 1 < len(cmd) and cmd[i + 1].text == "serve":
        pos = [cmd[i + 2]] if i + 2 < len(cmd) and not cmd[i + 2].text.startswith("-") else []
        return "vllm", "vllm serve", i + 2 + len(pos), pos
    if base == "trtllm-serve":
        pos = [cmd[i + 1]] if i + 1 < len(cmd) and not cmd[i + 1].text.startswith("-") else []
        return "trtllm", "trtllm-serve", i + 1 + len(pos), pos
    if first.startswith("--"):
        return "sglang", "", i, []
    return None


def _classify_inside(cmd: list[Word], start: int) -> tuple[str, str, int, list[Word]] | None:
    """The launch command inside a container or job launcher (``docker run [opts] IMAGE python3 -m
    sglang.launch_server ...``, ``srun [opts] python ...``, ``torchrun [opts] -m sglang.launch_server ...``): the
    first word from ``start`` on where a launch command begins; None when there is none."""
    for j in range(start, len(cmd)):
        word = cmd[j].text
        if word == "-m" and j + 1 < len(cmd) and cmd[j + 1].text.startswith("sglang"):
            return "sglang", f"-m {cmd[j + 1].text}", j + 2, []
        if _is_python(word) or os.path.basename(word) in ("sglang", "vllm", "trtllm-serve"):
            inner = _classify(cmd[j:])
            if inner is not None:
                engine, launcher, first_arg, positional = inner
                return engine, launcher, j + first_arg, positional
    return None


_OUTER_LAUNCHERS = {"docker", "podman", "nvidia-docker", "srun", "torchrun", "mpirun", "apptainer", "singularity",
                    "enroot", "docker-compose", "nerdctl", "kubectl", "oc"}
#: A YAML key that holds a command on its line (``command: python3 -m sglang.launch_server ...`` in a
#: docker-compose file or a Kubernetes manifest): skipped like a wrapper.
_YAML_COMMAND_KEY = re.compile(r"^(?:command|entrypoint|cmd|run|script|exec):$")
#: Shells whose ``-c SCRIPT`` runs the launch command (``docker exec c bash -c "python3 -m ..."``).
_SHELLS = {"bash", "sh", "zsh", "dash", "ash"}
#: A trim marker inside a line (``--speculative-num-steps 3 [... 12 more flags trimmed]``, ``<...>``).
_INLINE_TRIM = re.compile(r"\[\s*(?:\.\.\.|…)[^\]\n]*\]|<\s*(?:\.\.\.|…)[^>\n]*>")
_SEPARATOR_LINE = re.compile(r"^[ \t]*(?:[-=_*~#]{3,}|\[\s*(?:\.\.\.|…)[^\]\n]*\]"
                             r"|<\s*(?:\.\.\.|…)[^>\n]*>|\.\.\.|…)[ \t]*$", re.MULTILINE)


def _blank_separators(text: str) -> str:
    """``text`` with separator lines (``-----``, ``=====``) and trim markers (``[... 40 lines trimmed]``,
    ``...``) replaced by spaces (offsets kept). Inside a backslash continuation the line's newline goes too, so
    the command reads on as it did when it was run."""
    def blank(match: re.Match) -> str:
        before = text[:match.start()].rstrip("\n")
        joined = before.endswith("\\") and match.end() < len(text) and text[match.end()] == "\n"
        return " " * (len(match.group(0)) + (1 if joined else 0))

    out, pos = [], 0
    for match in _SEPARATOR_LINE.finditer(text):
        if match.start() < pos:
            continue
        out.append(text[pos:match.start()])
        replacement = blank(match)
        out.append(replacement)
        pos = match.start() + len(replacement)
    out.append(text[pos:])
    return _INLINE_TRIM.sub(lambda m: " " * len(m.group(0)), "".join(out))


def _trim_markers(text: str, start: int, end: int) -> list[tuple[int, str]]:
    """``(1-based line, marker)`` of the inline trim markers on the lines from offset ``start`` to ``end``."""
    first = text.rfind("\n", 0, start) + 1
    last = text.find("\n", end)
    last = len(text) if last < 0 else last
    return [(text.count("\n", 0, m.start()) + 1, m.group(0))
            for m in _INLINE_TRIM.finditer(text[:last], first)]


_DECLARATIONS = ("export", "declare", "readonly", "local", "typeset")


def _assignments(cmd: list[Word]) -> list[Word] | None:
    """The assignment words of ``cmd`` when it only sets variables (``NAME=value ...`` or ``export NAME=value
    ...``, ``declare``/``readonly``/``local`` alike), else None."""
    if not cmd:
        return None
    if cmd[0].text in _DECLARATIONS:
        return [w for w in cmd[1:] if not w.op and _ENV_WORD.match(w.text)]
    if all(not w.op and _ENV_WORD.match(w.text) for w in cmd):
        return list(cmd)
    return None


def _expanded(word: Word, variables: dict[str, str | None]) -> tuple[Word, tuple[tuple[str, str], ...]]:
    if not word.expands:
        return word, ()
    result = expand(word.text, variables)
    return dataclasses.replace(word, text=result.text, unresolved=result.unresolved), result.defaults


def parse_command(text: str) -> LaunchCommand:
    """Find the launch command in ``text`` (the first SGLang one with speculative flags, else the first SGLang one,
    else the first vLLM / TensorRT-LLM one, else an argparse "unrecognized arguments" line) and return it as a
    :class:`LaunchCommand`.

    ``text`` is read as a shell script: ``export`` lines and ``NAME=value`` lines before the command contribute to
    ``env`` (exports) and to the variables its words expand (see :mod:`specdash.sglang.expansion`); words whose
    value the script does not give are marked ``unresolved``. Lines of bare ``--flags`` right after the command,
    which the shell runs as a separate command because a line lacks its trailing backslash, are kept in
    ``lost_args`` (``broken_line``: the 1-based line that ends the command early), not counted as other commands.
    When nothing is found, ``found`` is False and ``args`` is empty."""
    words = tokenize(_blank_separators(text))
    commands = _split_commands(words)
    exports: list[EnvAssign] = []
    variables: dict[str, str | None] = {}
    fallback: LaunchCommand | None = None
    candidates: list[LaunchCommand] = []
    previous: LaunchCommand | None = None
    for cmd in commands:
        if previous is not None and _is_lost_continuation(previous, cmd):
            previous.lost_args.extend(w for w in cmd if not w.op)
            continue
        previous = None
        assigned = _assignments(cmd)
        if assigned is not None:
            for w in assigned:
                name = w.text.split("=", 1)[0]
                value_word, _ = _expanded(w, variables)
                value = value_word.text.split("=", 1)[1] if not value_word.unresolved else None
                variables[name] = value
                if cmd[0].text == "export":
                    exports.append(EnvAssign(name, w.text.split("=", 1)[1] if value is None else value, "export",
                                             cmd[0].start, w.end, value_word.unresolved))
            continue
        defaults: list[tuple[str, str]] = []
        expanded_cmd: list[Word] = []
        for w in cmd:
            new, used = _expanded(w, variables)
            defaults.extend(used)
            if new.expands and not new.unresolved and not new.op and not any(q in w.raw for q in "\"'\\"):
                # an unquoted expansion is split on blanks and an empty one is no word at all (POSIX field
                # splitting with the default IFS): ``$EXTRA_ARGS`` with EXTRA_ARGS="--tp-size 2" is two arguments
                expanded_cmd.extend(dataclasses.replace(new, text=part) for part in new.text.split())
                continue
            expanded_cmd.append(new)
        if not expanded_cmd:
            continue
        if cmd[-1].newline_after and not expanded_cmd[-1].newline_after:
            expanded_cmd[-1] = dataclasses.replace(expanded_cmd[-1], newline_after=True)
        cmd = expanded_cmd
        classified = _classify(cmd)
        if classified is None:
            continue
        engine, launcher, first_arg, positional = classified
        result = LaunchCommand(text=text, engine=engine, launcher=launcher, positional=positional, found=True,
                               start=cmd[0].start)
        k = 0
        while k < len(cmd) and _ENV_WORD.match(cmd[k].text):
            k += 1
        result.launcher_start = cmd[min(k, len(cmd) - 1)].start
        result.env = list(exports)
        result.defaults = defaults
        for w in cmd[:first_arg]:
            if _ENV_WORD.match(w.text) and w.text.split("=", 1)[0] != w.text:
                name, value = w.text.split("=", 1)
                result.env.append(EnvAssign(name, value, "prefix", w.start, w.end, w.unresolved))
        args: list[Word] = []
        skip_next = False
        for w in cmd[first_arg:]:
            if skip_next:
                skip_next = False
                continue
            if w.op:
                # a redirection: its target is not an argument either
                skip_next = not w.text.endswith("&1") and not w.text.endswith("&2")
                continue
            args.append(w)
        result.args = args
        result.end = args[-1].end if args else (cmd[first_arg - 1].end if first_arg else cmd[0].end)
        result.trimmed = _trim_markers(text, result.start, result.end)
        if engine == "sglang":
            candidates.append(result)
        elif fallback is None:
            fallback = result
        if cmd[-1].newline_after and launcher:
            previous = result
            result.broken_line, result.broken_by_comment = _ending_line(text, cmd[-1].end)
    if candidates:
        chosen = next((c for c in candidates if any("specul" in w.text for w in c.args)), candidates[0])
        chosen.other_commands = len(candidates) - 1
        return chosen
    inner = _shell_script(text, commands)
    if inner is not None:
        found = parse_command(inner)
        if found.found:
            found.text = text
            return found
    if fallback is not None:
        return fallback
    for line_start, line in _lines(text):
        match = _UNRECOGNIZED.search(line)
        if match:
            offset = line_start + match.start(1)
            sub = tokenize(match.group(1))
            args = [dataclasses.replace(w, start=w.start + offset, end=w.end + offset) for w in sub if not w.op]
            return LaunchCommand(text=text, engine="sglang", launcher="", args=args, from_error_line=True,
                                 end=args[-1].end if args else offset, found=True, start=offset,
                                 launcher_start=offset)
    return LaunchCommand(text=text, end=len(text.rstrip()))


def _shell_script(text: str, commands: list[list[Word]]) -> str | None:
    """The script of the first ``SHELL -c SCRIPT`` (``bash -c "python3 -m sglang.launch_server ..."``, after
    ``docker exec``/``kubectl exec`` or alone) as a text of the same length as ``text``: the lines before the
    command as they are (their ``export`` lines apply), the script's characters where they were, everything else
    blank (newlines kept), so the offsets of the words found in it are offsets of ``text``. Only a script quoted
    whole and without escapes (``'...'``, or ``"..."`` without ``\\``, ``$`` or backquote) is read this way: elsewhere
    the script's characters are not where its words are. None when there is none."""
    for cmd in commands:
        for k, word in enumerate(cmd[:-2]):
            if os.path.basename(word.text) not in _SHELLS or word.op:
                continue
            flag = cmd[k + 1].text
            script = cmd[k + 2]
            if flag == "-l" and k + 3 < len(cmd) and cmd[k + 2].text == "-c":
                script = cmd[k + 3]
            elif not re.fullmatch(r"-[a-z]*c", flag):
                continue
            raw = script.raw
            if script.op or len(raw) < 2 or raw[0] not in "'\"" or raw[-1] != raw[0] or raw[0] in raw[1:-1]:
                return None
            if raw[0] == '"' and any(c in raw[1:-1] for c in "\\$`"):
                return None
            blank = "".join("\n" if c == "\n" else " " for c in text)
            before = text[:cmd[0].start]
            inside = text[script.start + 1:script.end - 1]
            return before + blank[len(before):script.start + 1] + inside + blank[script.end - 1:]
    return None


def _ending_line(text: str, pos: int) -> tuple[int, bool]:
    """(1-based line whose newline ends the command whose last word ends at ``pos``, True when that line is a
    ``# comment`` inside the continuation: the shell drops the comment with its backslash)."""
    start = pos
    while True:
        newline = text.find("\n", start)
        if newline < 0:
            return text.count("\n", 0, pos) + 1, False
        segment = text[start:newline].rstrip(" \t\r")
        if segment.lstrip().startswith("#") and start != pos:
            return text.count("\n", 0, newline) + 1, True
        if segment.endswith("\\") and "#" not in segment:
            start = newline + 1
            continue
        return text.count("\n", 0, newline) + 1, "#" in segment and start != pos


def _is_lost_continuation(command: LaunchCommand, cmd: list[Word]) -> bool:
    """True when ``cmd`` (the simple command after ``command``, split from it by a newline) is clearly the rest
    of its flags: it starts with a ``--flag``."""
    return bool(cmd) and not cmd[0].op and cmd[0].text.startswith("--") and len(cmd[0].text) > 2


def _lines(text: str):
    pos = 0
    for line in text.splitlines(keepends=True):
        yield pos, line.rstrip("\n")
        pos += len(line)
