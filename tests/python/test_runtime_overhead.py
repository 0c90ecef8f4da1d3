"""The pipelining runtime's own time per action (scripts/ppsim_runtime.py; docs/model.md,
"Runtimes and topology"), measured on the real torch.distributed.pipelining, and what ppsim does
with it."""
import json
import subprocess
import sys

import pytest

from conftest import REPOSITORY
from ppsim_runtime import action_overhead_ms


def makespan(ppsim, *extra):
    return json.loads(ppsim("simulate", "-p", "2", "-m", "4", "--F", "1", "--B", "2", "--W", "0",
                            "--schedule", "gpipe", "--format", "json", *extra))["makespan"]


def test_the_runtime_overhead_is_measured_and_each_action_pays_it(ppsim):
    overhead = action_overhead_ms(microbatches=4, steps=8)
    # A scalar multiply's step is the runtime's: dispatch, the loss, autograd's bookkeeping.
    assert 0.001 < overhead < 50
    o = round(overhead, 4)
    # GPipe p = 2, m = 4: each device's 2m actions in a row, plus the fill (m + p - 1 slots).
    assert makespan(ppsim, "--op-overhead", o) == pytest.approx(
        makespan(ppsim) + (4 + 2 - 1) * 2 * o, rel=1e-9)


def test_the_script_prints_the_overhead_in_ms():
    done = subprocess.run([sys.executable, str(REPOSITORY / "scripts" / "ppsim_runtime.py"),
                           "--microbatches", "2", "--steps", "4"],
                          capture_output=True, text=True, check=True)
    assert float(done.stdout) > 0
