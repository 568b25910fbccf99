"""Sessions: record everything a live session sees, read it back, replay it. No Textual.

* :mod:`specdash.session.events` — one dataclass per event kind (stable ``kind`` strings, ``t`` in seconds);
* :mod:`specdash.text.redaction` (shared with run files and the console) — secrets removed before anything is written;
* :mod:`specdash.session.recorder` — ``Recorder(path, header).record(kind, **fields)``: append-only YAML stream,
  flushed every second, ``.gz`` compressed when the name says so; ``start_recording`` for ``--record``/``--no-record``;
  ``finish()`` ends it and deletes an auto-named file in which nothing worth replaying happened;
* :mod:`specdash.session.reader` — ``read_session(path) -> SessionLog`` (header, events, problems);
* :mod:`specdash.session.replay` — ``ReplayPlayer``: the replay clock (pause, step, seek, speed);
* :mod:`specdash.session.summary` — the ``specdash replay --summary`` timeline.
"""
