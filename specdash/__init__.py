"""specdash: a keyboard-driven terminal console for SGLang speculative decoding."""

__version__ = "0.1.0"
