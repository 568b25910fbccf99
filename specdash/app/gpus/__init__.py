"""The GPUs/processes pane: per-GPU memory and utilisation, classified GPU processes, safe kill."""

from specdash.app.gpus.pane import GpuPane

__all__ = ["GpuPane"]
