"""Where specdash keeps its files (XDG locations via platformdirs), as ``specdash locate`` prints them.

* config file: ``$XDG_CONFIG_HOME/specdash/config.yaml`` (Linux default ``~/.config/specdash/config.yaml``);
  ``SPECDASH_CONFIG`` names another file.
* user themes: ``config_dir()/themes/*.yaml`` (Textual theme fields, see :mod:`specdash.app.themes`).
* state dir: ``$XDG_STATE_HOME/specdash`` (default ``~/.local/state/specdash``); ``SPECDASH_STATE_DIR``
  names another folder. Everything specdash writes lives under it:

  - ``sessions/``: recorded sessions (one ``.yaml.gz`` YAML stream per live session, see
    :mod:`specdash.session.recorder`);
  - ``runs/``: per-run server logs and run metadata of servers specdash launched;
  - ``bench/``: benchmark and sweep results as JSON;
  - ``screenshots/``: SVG screenshots of the console (its screenshot key, or the palette's "Save screenshot").

Nothing here creates a folder: callers that write call :func:`ensure_dir`. Stdlib + platformdirs only.
"""

from __future__ import annotations

import datetime
import os
import re
from pathlib import Path

APP_NAME = "specdash"

#: Environment variable naming the config file instead of the XDG default.
ENV_CONFIG = "SPECDASH_CONFIG"
#: Environment variable naming the state folder instead of the XDG default.
ENV_STATE_DIR = "SPECDASH_STATE_DIR"


def config_dir() -> Path:
    """Folder of the config file: ``$XDG_CONFIG_HOME/specdash`` (platformdirs ``user_config_path``)."""
    import platformdirs

    return Path(platformdirs.user_config_path(APP_NAME, appauthor=False))


def config_file() -> Path:
    """The config file: ``$SPECDASH_CONFIG`` if set, else ``config_dir()/config.yaml`` (may not exist)."""
    override = os.environ.get(ENV_CONFIG)
    if override:
        return Path(override).expanduser()
    return config_dir() / "config.yaml"


def themes_dir() -> Path:
    """Folder of the user's own themes (one YAML file per theme): ``config_dir()/themes`` (may not exist)."""
    return config_dir() / "themes"


def state_dir() -> Path:
    """specdash's state folder: ``$SPECDASH_STATE_DIR`` if set, else ``$XDG_STATE_HOME/specdash``."""
    override = os.environ.get(ENV_STATE_DIR)
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_state_path(APP_NAME, appauthor=False))


def sessions_dir() -> Path:
    """Recorded sessions: ``state_dir()/sessions``."""
    return state_dir() / "sessions"


def runs_dir() -> Path:
    """Per-run server logs and metadata of launched servers: ``state_dir()/runs``."""
    return state_dir() / "runs"


def bench_results_dir() -> Path:
    """Benchmark and sweep results (JSON): ``state_dir()/bench``."""
    return state_dir() / "bench"


def screenshots_dir() -> Path:
    """SVG screenshots of the console: ``state_dir()/screenshots``."""
    return state_dir() / "screenshots"


def ensure_dir(path: Path) -> Path:
    """Create ``path`` (and parents) if missing, mode 0700 for new folders; return it.

    Raises OSError (e.g. PermissionError) when it cannot be created.
    """
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def default_session_path(host: str = "local", now: datetime.datetime | None = None) -> Path:
    """Where a live session is recorded unless ``--record PATH`` / ``--no-record`` say otherwise:
    ``sessions_dir()/YYYYmmdd-HHMMSS-<host>.yaml.gz`` (local time; ``host`` reduced to ``[A-Za-z0-9._-]``).

    The ``.gz`` suffix makes the recorder compress (a busy hour: 2.5 MB instead of 19.8 MB); the folder is not
    created.
    """
    stamp = (now or datetime.datetime.now()).strftime("%Y%m%d-%H%M%S")
    safe_host = re.sub(r"[^A-Za-z0-9._-]+", "_", host).strip("_") or "host"
    return sessions_dir() / f"{stamp}-{safe_host}.yaml.gz"


def locations() -> dict[str, Path]:
    """All locations by short name, in the order ``specdash locate`` prints them:
    ``config``, ``themes``, ``state``, ``sessions``, ``runs``, ``bench``, ``screenshots``."""
    return {
        "config": config_file(),
        "themes": themes_dir(),
        "state": state_dir(),
        "sessions": sessions_dir(),
        "runs": runs_dir(),
        "bench": bench_results_dir(),
        "screenshots": screenshots_dir(),
    }
