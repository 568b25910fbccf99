"""specdash: a keyboard-driven terminal console for SGLang speculative decoding."""

__version__ = "0.1.0"

# The package's modules take their logger from :func:`specdash.log.get_logger`, which gives the ``specdash``
# logger its NullHandler (a library stays silent unless the command line asks for a log).
