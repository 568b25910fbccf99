"""``PairingService``: pairing reports for paths on one host, with the files and the probe cached.

For the launch builder (re-run on every model/draft path change) and ``specdash validate``/``pair``.
"""

from __future__ import annotations

import json

from specdash.sglang.pairing.configs import draft_facts
from specdash.sglang.pairing.loader import PairInputs, load_pair_from_host
from specdash.sglang.pairing.probe import probe_request, run_probe
from specdash.sglang.pairing.report import PairingReport


class PairingService:
    """Analyse target/draft pairs on ``host`` (a :class:`specdash.hosts.base.Host`, already connected).

    ``python``: the host's python with SGLang, for the probe. ``probe``: False ⇒ rules only.
    Files are read once per (target path, draft path) and the probe runs once per (architecture, layer count,
    ids); call :meth:`invalidate` after the files or the SGLang install change.
    """

    def __init__(self, host, *, python: str = "python3", probe: bool = True, probe_timeout_s: float = 180.0) -> None:
        self.host = host
        self.python = python
        self.probe = probe
        self.probe_timeout_s = probe_timeout_s
        self._inputs: dict[tuple[str, str], PairInputs] = {}
        self._probes: dict[str, dict] = {}

    def invalidate(self) -> None:
        """Forget cached files and probe answers."""
        self._inputs.clear()
        self._probes.clear()

    async def inputs(self, target_path: str, draft_path: str) -> PairInputs:
        """The (cached) :class:`PairInputs`. Raises PairLoadError / HostError like :func:`load_pair_from_host`."""
        key = (target_path, draft_path)
        if key not in self._inputs:
            self._inputs[key] = await load_pair_from_host(self.host, target_path, draft_path)
        return self._inputs[key]

    async def probe_for(self, inputs: PairInputs) -> dict | None:
        """The (cached) probe answer for this pair, or None when the config cannot be probed."""
        try:
            request = probe_request(inputs.target_config, draft_facts(inputs.draft_config).nested_ids)
        except ValueError as exc:
            return {"ok": False, "error": str(exc)}
        key = json.dumps(
            [request["architecture"], request["num_layers"], request["layer_ids"]], sort_keys=True
        )
        if key not in self._probes:
            self._probes[key] = await run_probe(
                self.host, inputs.target_config, request["layer_ids"], python=self.python,
                timeout_s=self.probe_timeout_s,
            )
        return self._probes[key]

    async def report(self, target_path: str, draft_path: str, algorithm: str = "EAGLE3",
                     sglang_version: str | None = None) -> PairingReport:
        """Analyse the pair. With ``sglang_version`` the rules of that version are used (no probe); without it the
        installed SGLang is probed (EAGLE3 only) and the newest rules are the fallback."""
        inputs = await self.inputs(target_path, draft_path)
        probe = None
        if self.probe and sglang_version is None and algorithm.strip().upper() == "EAGLE3":
            probe = await self.probe_for(inputs)
        return inputs.analyze(algorithm, sglang_version=sglang_version, probe_result=probe)
