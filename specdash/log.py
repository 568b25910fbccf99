"""specdash's loggers: :func:`get_logger` gives a module its logger, below the ``specdash`` logger, which holds a
``NullHandler``: a library stays silent unless the command line asks for a log (``--debug`` / ``--log-file``,
:func:`specdash.cli.configure_logging`); without it Python's last-resort handler would print warnings over the
console's screen.

Here and not in the package's ``__init__``: ``logging`` costs a few milliseconds to import, and ``specdash
--help`` (and every command that logs nothing) does without it.
"""

from __future__ import annotations

import logging

logging.getLogger("specdash").addHandler(logging.NullHandler())


def get_logger(name: str) -> logging.Logger:
    """``logging.getLogger(name)`` for a module of specdash (``name``: its ``__name__``, ``specdash.``...)."""
    return logging.getLogger(name)
