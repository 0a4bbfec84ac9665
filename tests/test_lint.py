"""ruff over the package, the tests and the notebooks (configuration in pyproject.toml)."""

import subprocess
import sys
from pathlib import Path


def test_ruff_is_clean():
    root = Path(__file__).parent.parent
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "."], cwd=root,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
