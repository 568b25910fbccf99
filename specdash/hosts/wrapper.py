"""The die-with-the-channel wrapper: run a command so that it ends when its stdin closes.

OpenSSH ignores signal requests on channels without a PTY, and a command whose output nobody reads only notices
(SIGPIPE) when it next writes — a ``tail -F`` of a quiet log would never notice. So every remote command (and
every LocalHost stream, which must not outlive specdash either) runs under this POSIX ``sh`` wrapper. It needs
the command to be the leader of its own process group: sshd makes each session one (setsid), LocalHost starts
streams with ``start_new_session``.
"""

from __future__ import annotations

import shlex

# Runs "$1" (a POSIX sh command line) so that it dies with the channel. fd 3 keeps the channel's stdin; a
# watcher blocks on it and, at EOF (channel closed or connection gone), TERMs the whole process group — sshd
# runs each session as its own process group (setsid), so that is exactly this command's processes. When the
# command ends by itself the watcher is stopped, so nothing is killed after a normal exit. The command runs in
# a subshell so that an ``exit`` inside it cannot skip that step. "$2", when given, is the size in bytes of the
# command's stdin, which arrives first on the channel's stdin (read exactly, by dd one byte at a time, before the
# watcher starts, so the watcher cannot take it); the data itself never appears on a command line.
WRAPPER = r"""if [ $# -ge 2 ]; then
  in=$(dd bs=1 count="$2" 2>/dev/null; echo x); in=${in%x}
fi
exec 3<&0
( trap 'kill $c 2>/dev/null; exit 0' TERM
  cat <&3 >/dev/null & c=$!
  wait $c
  kill -TERM 0 ) >/dev/null 2>&1 &
w=$!
exec 3<&-
if [ $# -ge 2 ]; then
  printf '%s' "$in" | ( eval "$1" )
else
  ( eval "$1" ) </dev/null
fi
s=$?
kill $w 2>/dev/null
exit $s"""


def wrap_command(command: str, input: str | bytes | None = None, *, discard_stderr: bool = False) -> str:
    """The remote command line that runs ``command`` under the die-with-the-channel wrapper (see module doc).

    ``input`` (str is UTF-8 encoded; text, no NUL bytes; keep it small: it is read a byte at a time) becomes the
    command's stdin: only its size goes on the command line; the caller writes the data itself first on the
    channel's stdin (see :func:`input_bytes`) and must not close it. Secrets sent this way never show in
    ``ps``. ``discard_stderr`` sends the command's stderr to /dev/null.
    """
    inner = f"exec 2>/dev/null\n{command}" if discard_stderr else command  # eval'd in a subshell: only it
    args = ["sh", "-c", WRAPPER, "sh", inner]
    if input is not None:
        args.append(str(len(input_bytes(input))))
    return shlex.join(args)


def input_bytes(input: str | bytes) -> bytes:
    """The bytes to write on the channel's stdin for ``wrap_command(command, input)``."""
    return input.encode("utf-8") if isinstance(input, str) else input
