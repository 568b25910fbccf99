"""What specdash knows about SGLang: launch-flag tables per release, command parsing, the version-aware rule
engine (``specdash.sglang.validate.validate_command``), the authoritative dry run, and draft pairing
(``specdash.sglang.pairing``). No Textual imports anywhere in this package."""
