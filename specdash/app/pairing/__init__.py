"""The pairing section of the launch builder: renders a :class:`~specdash.sglang.pairing.PairingReport`."""

from specdash.app.pairing.pairing_view import PairingView

__all__ = ["PairingView"]
