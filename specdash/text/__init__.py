"""Text that comes from outside specdash: secrets redacted before anything is stored or copied
(:mod:`specdash.text.redaction`), control characters and markup neutralised before anything is shown
(:mod:`specdash.text.display`). No Textual here: the console and the headless commands use the same functions."""
