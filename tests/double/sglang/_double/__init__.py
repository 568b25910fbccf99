"""Implementation of the SGLang test double (scenario, flags, log lines, HTTP, worker processes)."""
