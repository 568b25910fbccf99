"""specdash's config file: typed dataclasses (:mod:`specdash.config.schema`) and the loader
(:mod:`specdash.config.loader`). Use ``load_config()``; mistakes raise ``ConfigError`` (one line)."""

from specdash.config.loader import ConfigError, load_config
from specdash.config.schema import (
    Config,
    HostConfig,
    LaunchProfile,
    SweepConfig,
    SweepPoint,
    WorkloadConfig,
)

__all__ = ["Config", "ConfigError", "HostConfig", "LaunchProfile", "SweepConfig", "SweepPoint", "WorkloadConfig",
           "load_config"]
