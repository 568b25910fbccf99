"""``specdash connect TARGET``: open the console on a host (SSH or this machine)."""

from __future__ import annotations

import argparse
import sys

NAME = "connect"
HELP = "open the console on a GPU host: TARGET is [user@]host[:port], an ~/.ssh/config alias, or 'local'"
DESCRIPTION = (
    "Connect to TARGET over SSH (honouring ~/.ssh/config, ProxyJump, the agent and known_hosts) or use this "
    "machine with 'local', then follow the SGLang server log and watch the GPUs. The session is recorded to a new "
    "file in the sessions dir (see 'specdash locate'); that file is deleted again when nothing worth replaying "
    "happened (the connection never came up and no log line, GPU sample, finding, launch or benchmark was "
    "recorded). Exit status: 0, or 1 when the connection never came up (the reason on one line), 2 usage error."
)


class ConnectOutcome:
    """A host state listener (``host.add_state_listener(outcome)``) that remembers whether the connection ever
    came up (:attr:`connected`) and, until it does, why it failed (:attr:`failures`: the ``detail`` of each
    ``failed`` state, in order)."""

    def __init__(self) -> None:
        self.connected = False
        self.failures: list[str] = []

    def __call__(self, status) -> None:
        state = getattr(status.state, "value", status.state)
        if state == "connected":
            self.connected = True
        elif state == "failed" and not self.connected:
            self.failures.append(status.detail or "")

    def error_line(self, host_name: str) -> str | None:
        """``"specdash connect: error: <reason>"`` when the connection never came up, else None.

        The reason is the last failure before the console closed the host (SSHHost.close() reports ``closed``),
        in its most specific wording: an earlier detail that contains the last one (e.g. the full "HOST KEY
        CHANGED for ..." message before the console's "host key changed") is preferred; prefixed with
        ``not connected to <host>:`` unless it names the host already."""
        if self.connected:
            return None
        details = [d for d in self.failures if d and d != "closed"]
        if not details:
            return f"specdash connect: error: not connected to {host_name}: quit before the connection came up"
        reason = details[-1]
        for earlier in details[:-1]:
            if reason.lower() in earlier.lower() and len(earlier) > len(reason):
                reason = earlier
                break
        if host_name not in reason:
            reason = f"not connected to {host_name}: {reason}"
        return f"specdash connect: error: {reason}"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", metavar="TARGET", nargs="?", help="[user@]host[:port], an ~/.ssh/config alias, "
                        "'local', or a host named in config.yaml (default: default_host in config.yaml or "
                        "SPECDASH_DEFAULT_HOST)")
    parser.add_argument("--log", metavar="REMOTE_PATH", help="server log file to follow on the host "
                        "(default: the running SGLang server's stdout, if it goes to a file)")
    server = parser.add_mutually_exclusive_group()
    server.add_argument("--pid", type=int, metavar="PID", help="follow the SGLang server with this PID when several "
                        "run on the host (default: the only one, or you pick from a list)")
    server.add_argument("--server-port", type=int, metavar="PORT", help="follow the SGLang server listening on this "
                        "HTTP port (its --port) when several run on the host")
    parser.add_argument("--command", metavar="FILE", help="start the launch builder (F3) with the launch command in "
                        "FILE, a file on this machine (as you would paste it: env pairs, continuation lines)")
    parser.add_argument("-p", "--port", type=int, metavar="PORT", help="SSH port (overrides TARGET and ssh config)")
    parser.add_argument("-i", "--identity", metavar="IDENTITY_FILE", help="private key file for SSH")
    parser.add_argument("--known-hosts", metavar="FILE", help="known_hosts file (default ~/.ssh/known_hosts)")
    parser.add_argument("--readonly", action="store_true", help="disable every mutating key (kill, launch, restart)")
    parser.add_argument("--theme", metavar="NAME", help="colour theme: specdash-dark (default), specdash-light, "
                        "high-contrast, or any Textual theme")
    record = parser.add_mutually_exclusive_group()
    record.add_argument("--record", metavar="PATH", help="record the session to PATH (.yaml, or .yaml.gz compressed; "
                        "default: a new file in the sessions dir, see 'specdash locate', unless config says "
                        "'record: false'; that file is deleted when nothing worth replaying was recorded, e.g. "
                        "the connection never came up; a PATH given here is always kept)")
    record.add_argument("--no-record", action="store_true", help="do not record this session")


def run(args: argparse.Namespace) -> int:
    from specdash.cli import UsageError

    if args.port is not None and not 0 < args.port < 65536:
        raise UsageError(f"port {args.port} is out of range (1-65535)")
    if args.server_port is not None and not 0 < args.server_port < 65536:
        raise UsageError(f"server port {args.server_port} is out of range (1-65535)")
    if args.pid is not None and args.pid <= 0:
        raise UsageError(f"PID {args.pid} is not a process id")
    if args.log and (args.pid is not None or args.server_port is not None):
        raise UsageError("--log names the file to follow; --pid and --server-port choose a server to find it: "
                         "give one of them")
    launch_command = None
    if args.command is not None:
        try:
            with open(args.command, encoding="utf-8", errors="replace") as handle:
                launch_command = handle.read(1 << 20).strip()
        except OSError as exc:
            raise UsageError(f"cannot read the launch command file {args.command}: {exc.strerror or exc}") from None
        if not launch_command:
            raise UsageError(f"the launch command file {args.command} is empty")
    from specdash.app.keymap import load_app_config
    from specdash.config import ConfigError
    from specdash.hosts.target import open_host

    try:
        config = load_app_config()  # keymap ids checked too
    except ConfigError as exc:
        sys.stderr.write(f"specdash connect: error: {exc}\n")
        return 2
    args.target = config.target_or_default(args.target)
    if args.target is None:
        from specdash.commands.ps import NO_TARGET

        raise UsageError(NO_TARGET)
    named = config.host(args.target)  # a host named in config.yaml supplies target, log, key, port ...
    target = named.target if named else args.target
    log_path = args.log or (named.log_path if named else None)
    try:
        host = open_host(target, port=args.port or (named.port if named else None),
                         identity_file=args.identity or (named.identity_file if named else None),
                         known_hosts=args.known_hosts)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    theme = args.theme or config.theme
    if theme:
        from specdash.app.themes import available_theme_names

        if theme not in available_theme_names():
            raise UsageError(f"unknown theme {theme!r} (choose from {', '.join(available_theme_names())})")
    if not sys.stdout.isatty():
        sys.stderr.write("specdash connect: error: needs a terminal (run it in a terminal, tmux or screen)\n")
        return 2

    import asyncio

    return asyncio.run(_run_console(args, host, config, named, log_path, theme, launch_command))


async def _run_console(args: argparse.Namespace, host, config, named, log_path: str | None,
                       theme: str | None, launch_command: str | None = None) -> int:
    """Open the connection (asking about an unknown host key on the terminal), then the console on the same
    event loop, so the console starts on the connection checked here. Returns the exit status."""
    error = await open_connection(host, ask=_ask_on_terminal)
    if error is not None:
        from specdash.text.display import clean

        sys.stderr.write(clean(f"specdash connect: error: {error}", max_chars=1000) + "\n")
        await host.close()
        return 1

    recorder = None
    enabled = config.record and not args.no_record
    if args.record is not None or enabled:  # (the recorder's module is not loaded when nothing is recorded)
        from specdash.session.recorder import start_recording

        try:
            recorder = start_recording(args.record, enabled=enabled, host=host.name)
        except OSError as exc:
            sys.stderr.write(f"specdash connect: error: cannot record the session to "
                             f"{exc.filename or args.record}: {exc.strerror or exc}\n")
            await host.close()
            return 2

    from specdash.app.main import SpecdashApp

    app = SpecdashApp(host, log_path=log_path, readonly=args.readonly or bool(named and named.readonly),
                      known_hosts=args.known_hosts, gpu_interval_s=config.gpu_interval_s, theme=theme,
                      keymap=dict(config.keymap), python=named.python if named else "python3",
                      sglang_version=named.sglang_version if named else None,
                      server_pid=args.pid, server_port=args.server_port, launch_command=launch_command)
    app.recorder = recorder
    outcome = ConnectOutcome()
    outcome.connected = host.status.state.value == "connected"
    host.add_state_listener(outcome)
    try:
        await app.run_async()
    finally:
        kept = recorder.finish() if recorder is not None else False
        error = outcome.error_line(host.name)
        if error:
            from specdash.text.display import clean

            sys.stderr.write(clean(error, max_chars=1000) + "\n")  # the host's words: no escapes
        if kept and recorder is not None:
            sys.stderr.write(f"session recorded to {recorder.path}\n")
        note = app.exit_note()
        if note:  # left running on purpose: said, with how to find it again
            from specdash.text.display import clean

            sys.stderr.write(clean(note, max_chars=1000) + "\n")
    code = int(app.return_code or 0)
    return code if code or error is None else 1


def _ask_on_terminal(question: str) -> bool:
    """Print ``question`` on stderr and read the answer from stdin: True for y/yes (any case)."""
    sys.stderr.write(question)
    sys.stderr.flush()
    try:
        answer = sys.stdin.readline()
    except (OSError, ValueError):
        return False
    return answer.strip().lower() in ("y", "yes")


async def open_connection(host, *, ask) -> str | None:
    """Connect ``host`` before the console opens; None when connected, else the reason in one line.

    The reason names the real cause as :meth:`Host.connect` words it: the identity file's path, the host name
    that does not resolve, the refused ``user@host:port``, a changed host key, refused authentication. An
    unknown host key is shown to the user with ``ask(question) -> bool`` (the OpenSSH-style question with the key
    type and SHA256 fingerprint); yes appends it to the known_hosts file
    (:func:`specdash.hosts.ssh.trust_host_key`) and connects again, no gives "host key of H not trusted".
    """
    from specdash.hosts.base import HostError, HostKeyUnknown

    asked: set[str] = set()
    while True:
        try:
            await host.connect()
            return None
        except HostKeyUnknown as exc:
            if exc.fingerprint in asked:  # trusted, yet still unknown: the file was not used
                return str(exc)
            asked.add(exc.fingerprint)
            from pathlib import Path

            from specdash.hosts.ssh import trust_host_key

            known_hosts = getattr(host, "known_hosts_path", None) or str(Path("~/.ssh/known_hosts").expanduser())
            name = exc.host if exc.port == 22 else f"[{exc.host}]:{exc.port}"
            question = (f"The host {name} is not in {known_hosts}.\n"
                        f"Its {exc.key_type} key fingerprint is {exc.fingerprint}.\n"
                        f"Trust this key and add it to {known_hosts}? [y/N] ")
            if not ask(question):
                host.mark_failed("host key not trusted")
                return f"host key of {name} not trusted ({exc.key_type} {exc.fingerprint}): not connected"
            try:
                trust_host_key(known_hosts, exc.host, exc.port, exc.public_key_line)
            except (HostError, OSError, ValueError) as trust_error:
                return f"cannot add the host key to {known_hosts}: {trust_error}"
        except HostError as exc:
            return str(exc) or type(exc).__name__
