"""Known issues of SGLang releases, read from SGLang's own tracker: a table (:mod:`.table`), its entry types
(:mod:`.model`) and the matchers for a launch command (:mod:`.command_match`) and for log lines (:mod:`.log_match`).

An entry fires only for the releases it affects; when the user's release is at or past the release that fixed it
(known only when the thread says so) it says "fixed in X" instead. Every entry links the public SGLang issue or PR
it was read from.
"""

from specdash.sglang.known_issues.command_match import match_command
from specdash.sglang.known_issues.log_match import KnownIssueLogScanner
from specdash.sglang.known_issues.model import KnownIssue, VersionVerdict
from specdash.sglang.known_issues.table import KNOWN_ISSUES

__all__ = ["KNOWN_ISSUES", "KnownIssue", "KnownIssueLogScanner", "VersionVerdict", "match_command"]
