"""`specdash scan` on inputs that are not plain logs: a compressed log is read, a session file is pointed to replay."""

import gzip
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def scan(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "specdash", "scan", *args], capture_output=True, text=True,
                          timeout=60)


def test_compressed_log_is_scanned_like_the_plain_one(tmp_path):
    plain = REPO / "sessions" / "demo-server.log"
    packed = tmp_path / "server.log.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert scan(str(packed)).stdout == scan(str(plain)).stdout
    assert "174 lines" in scan(str(packed)).stdout


def test_session_file_is_refused_with_a_pointer_to_replay():
    result = scan(str(REPO / "sessions" / "demo-eagle3-field-reports.yaml.gz"))
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert "is a specdash session" in line and "specdash replay" in line
