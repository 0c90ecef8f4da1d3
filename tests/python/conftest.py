"""Shared fixtures of ppsim's Python tests (run by ctest's python_tests, docs/torch.md)."""
import os
import pathlib
import subprocess
import sys

import pytest

REPOSITORY = pathlib.Path(__file__).resolve().parents[2]
# The helpers users import from scripts/ (ppsim_plan, ppsim_annotate); spawned workers inherit it.
sys.path.insert(0, str(REPOSITORY / "scripts"))


@pytest.fixture(scope="session")
def ppsim():
    """Runs the ppsim binary under test (PPSIM, set by ctest; else build/cli/ppsim) and returns
    its standard output; a non-zero exit fails the test with what ppsim printed. `.binary` is the
    path."""
    binary = os.environ.get("PPSIM", str(REPOSITORY / "build" / "cli" / "ppsim"))

    def run(*args, cwd=None):
        done = subprocess.run([binary, *map(str, args)], capture_output=True, text=True,
                              cwd=cwd, check=False)
        assert done.returncode == 0, f"ppsim {' '.join(map(str, args))}: {done.stderr}"
        return done.stdout

    run.binary = binary
    return run
