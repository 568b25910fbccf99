"""The colour themes shipped with specdash, as package data: one YAML file per theme (Textual ``Theme`` fields).

Read with :mod:`importlib.resources` by :mod:`specdash.app.themes`, so they are there in a wheel, a ``pipx`` or
``uv tool`` install and a source checkout alike. This package holds data only.
"""
