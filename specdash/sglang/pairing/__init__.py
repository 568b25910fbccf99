"""Draft/target pairing check: will SGLang feed an EAGLE-3 draft the hidden states it was trained on?

Core only (no Textual). Entry points:

* :func:`analyze_pairing` — configs (+ optional safetensors header, weight index, tokenizer fingerprints, probe
  result) → :class:`PairingReport` (diagnostics, captured boundaries, layer map, suggested ids);
* :func:`read_safetensors_header` — header dict from the first 8 + N bytes of a ``.safetensors`` file;
* :func:`load_pair_from_host` — read both configs and the draft's header through a Host;
* :func:`run_probe` — the installed SGLang's own ``set_eagle3_layers_to_capture`` on a stand-in object;
* :class:`PairingService` — reports for paths on one host, files and probe cached (builder pane, validate);
* :func:`render_text` (in :mod:`.text_report`) — the plain-text report ``specdash pair`` prints.

Facts: ``docs/pairing.md`` and the SGLang 0.5.23 model files (see :mod:`.layer_rules`).
"""

from specdash.sglang.diagnostics import Diagnostic
from specdash.sglang.pairing.analyze import KNOWN_ALGORITHMS, analyze_pairing
from specdash.sglang.pairing.layer_rules import NEWEST_KNOWN_VERSION, CaptureRule, parse_version, rule_for
from specdash.sglang.pairing.loader import PairInputs, PairLoadError, load_pair_from_host
from specdash.sglang.pairing.probe import PROBE_SCRIPT, parse_probe_output, probe_command, run_probe
from specdash.sglang.pairing.report import LayerMap, LayerMapRow, PairingReport
from specdash.sglang.pairing.safetensors_header import (
    SafetensorsHeaderError,
    build_safetensors_bytes,
    read_safetensors_header,
)
from specdash.sglang.pairing.service import PairingService

__all__ = [
    "KNOWN_ALGORITHMS", "NEWEST_KNOWN_VERSION", "PROBE_SCRIPT", "CaptureRule", "Diagnostic", "LayerMap",
    "LayerMapRow", "PairInputs", "PairingService", "PairLoadError", "PairingReport", "SafetensorsHeaderError",
    "analyze_pairing",
    "build_safetensors_bytes", "load_pair_from_host", "parse_probe_output", "parse_version", "probe_command",
    "read_safetensors_header", "rule_for", "run_probe",
]
