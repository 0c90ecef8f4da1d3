"""ppsim's PyTorch exports run by PyTorch's own pipelining runtime (issue 30): every schedule
`ppsim export --to torch-csv` writes, on 2, 3 and 4 processes (gloo, CPU), one training step of a
tiny transformer, gradients equal to the plain step's."""
import socket

import pytest
import torch.multiprocessing as mp

import pipeline_worker

# What the export refuses: two pipes (DualPipe), recomputation (PyTorch's CSV has no R action),
# an imported file.
NOT_EXPORTABLE = {"dualpipe", "allremat-1f1b", "full-remat", "file"}
# The schedules PyTorch has a class of (ScheduleGPipe, Schedule1F1B, ScheduleInterleaved1F1B,
# ScheduleLoopedBFS, ScheduleInterleavedZeroBubble, ScheduleZBVZeroBubble, ScheduleDualPipeV).
PYTORCH_CLASSES = {"gpipe", "1f1b", "interleaved-1f1b", "looped-bfs", "interleaved-zb", "zb-v",
                   "dualpipev"}


def exportable(ppsim):
    names = [line.split()[0] for line in ppsim("schedules").splitlines() if line.strip()]
    return [name for name in names if name not in NOT_EXPORTABLE]


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("devices", [2, 3, 4])
def test_every_exported_schedule_trains_in_pytorch(ppsim, tmp_path, devices):
    """Every exportable schedule on 4 processes; those PyTorch has a class of on 2 and 3 too."""
    microbatches = 2 * devices
    cases = []
    names = exportable(ppsim) if devices == 4 else sorted(PYTORCH_CLASSES)
    for name in names:
        path = tmp_path / f"{name}.csv"
        ppsim("export", "--to", "torch-csv", "--schedule", name, "-p", devices, "-m",
              microbatches, "--F", 1, "--B", 1, "--W", 1, "-o", path)
        cases.append((name, str(path), microbatches))
    assert PYTORCH_CLASSES <= {name for name, _, _ in cases}
    mp.spawn(pipeline_worker.main, args=(devices, free_port(), cases), nprocs=devices,
             join=True)
