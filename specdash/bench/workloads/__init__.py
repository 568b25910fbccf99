"""Workload presets shipped with specdash (JSON data files; loaded by :mod:`specdash.bench.workload`)."""
