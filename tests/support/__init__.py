"""Helpers shared by the tests (no tests here): Pilot waits (:mod:`.pilot`), the SGLang test double's harness
(:mod:`.double`), pairing inputs (:mod:`.pairing`) and the sweep's fake lifecycle (:mod:`.sweep`). Test modules
import from here, never from one another."""
