"""Log intelligence (no Textual): parse SGLang server logs as they stream and say what matters.

* :mod:`.parser` — :class:`~.parser.LogParser`, :class:`~.parser.ParsedLine`, :class:`~.parser.LineKind`;
* :mod:`.records` — typed ``Decode batch`` / ``Prefill batch`` figures;
* :mod:`.findings`, :mod:`.explain` — pinned findings with plain explanations;
* :mod:`.metrics` — live metrics, trusted samples, accept-rate consistency check;
* :mod:`.startup` — start-up phases, capture progress, ETA and its history;
* :mod:`.analyzer` — :class:`~.analyzer.LogAnalyzer` combining all of the above;
* :mod:`.state` — :class:`~.state.ServerState` (the one state vocabulary) and :func:`~.state.read_log_tail`
  (state, phase and exit reason of a log tail, for the server lifecycle's status poll);
* :mod:`.discover` — find the running server and its log file on a host.
"""
