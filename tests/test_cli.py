"""The command line as a user meets it: --version, --help, and one-line usage errors with exit code 2."""

import subprocess
import sys

import specdash


def run_cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "specdash", *args], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def test_version_prints_package_version():
    result = run_cli("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"specdash {specdash.__version__}"


def test_help_lists_connect():
    result = run_cli("--help")
    assert result.returncode == 0
    assert "connect" in result.stdout


def test_help_loads_no_heavy_module():
    """``specdash --help`` builds the whole parser (every command module) without asyncio, Textual, an HTTP or
    SSH client or logging: the command modules import those inside ``run``."""
    code = ("import sys, contextlib, io\n"
            "from specdash.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
            "    main(['--help'])\n"
            "heavy = ('asyncio', 'textual', 'httpx', 'asyncssh', 'yaml', 'aiohttp', 'logging')\n"
            "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in heavy)))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""


def test_connect_help_shows_every_option():
    result = run_cli("connect", "--help")
    assert result.returncode == 0
    for option in ("TARGET", "--log", "-p", "-i", "--known-hosts", "--readonly"):
        assert option in result.stdout


def test_unknown_option_is_one_line_and_exit_2():
    result = run_cli("connect", "local", "--bogus")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "--bogus" in lines[0]


def test_missing_target_is_one_line_and_exit_2():
    result = run_cli("connect")
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert "TARGET" in result.stderr


def test_bad_port_is_a_usage_error():
    result = run_cli("connect", "local", "-p", "70000")
    assert result.returncode == 2
    assert "out of range" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_unknown_command_exit_2():
    result = run_cli("frobnicate")
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1


def _help_text(words: tuple[str, ...], *, whole: bool) -> str:
    """What ``specdash WORDS --help`` prints; ``whole``: with every command's arguments added up front (the parser
    --print-completion hands to shtab), else as the command line builds it."""
    import contextlib
    import io

    from specdash.cli import build_parser

    parser, out = build_parser(), io.StringIO()
    if whole:
        for action in parser._subparsers._group_actions:
            for command in action.choices.values():
                command.complete()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        parser.parse_args([*words, "--help"])
    return out.getvalue()


def test_help_is_the_whole_parsers_help():
    """Each command's arguments are added when its parser is first used; every --help text is the one the whole
    parser prints."""
    from specdash.cli import COMMAND_MODULES

    for words in ((), *((name,) for name in COMMAND_MODULES), ("bench", "list"), ("bench", "compare")):
        lazy = _help_text(words, whole=False)
        assert lazy.startswith(" ".join(("usage: specdash", *words)))
        assert lazy == _help_text(words, whole=True), words


def test_a_modules_warning_stays_off_stderr_without_a_log():
    """A library stays silent unless asked: a warning from any of specdash's module loggers prints nothing when no
    --debug / --log-file configured a handler (Python's last-resort handler would print it over the console)."""
    from pathlib import Path

    package = Path(specdash.__file__).parent
    direct = [str(path.relative_to(package)) for path in package.rglob("*.py")
              if "logging.getLogger(__name__)" in path.read_text(encoding="utf-8")]
    assert direct == []  # every module logger comes from specdash.log.get_logger, which adds the NullHandler
    code = ("from specdash.hosts.base import _log\n"
            "_log.warning('a warning nobody asked to see')\n"
            "from specdash.gpu.kill import _log as kill_log\n"
            "kill_log.error('an error nobody asked to see')\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
