"""``python3 -m sglang.launch_server ...`` — the double's entry point (argparse prog ``launch_server.py``)."""

import sys

from sglang._double.main import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
