"""specdash: a keyboard-driven terminal console for SGLang speculative decoding."""

__version__ = "0.1.0"

import logging as _logging

# A library stays silent unless the command line asks for a log (``--debug`` / ``--log-file``): without this
# handler Python's last-resort handler would print warnings over the console's screen.
_logging.getLogger(__name__).addHandler(_logging.NullHandler())
