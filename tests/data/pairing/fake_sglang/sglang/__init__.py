"""A torch-free stand-in for the sglang package, for the probe tests (tests/test_pairing_probe.py).

The set_eagle3_layers_to_capture bodies below are copied from the sglang 0.5.23 wheel's model files
(llama.py, deepseek_v2.py, gpt_oss.py, kimi_k25.py, minimax_m2.py); the classes keep only what the probe touches.
"""

__version__ = "0.5.23+fake"
