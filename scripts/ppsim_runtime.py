#!/usr/bin/env python3
"""The pipelining runtime's own time per action: ppsim's cluster.op_overhead (docs/model.md,
"Runtimes and topology").

A profile of the layers times their operators, not what torch.distributed.pipelining does around
each forward or backward it schedules (its bookkeeping, the loss, the Python between the
actions). This runs a one-stage ScheduleGPipe on a model whose operators take microseconds (one
scalar times 32 numbers), so a step is almost all runtime, and divides the step by its 2m
actions (median over the steps after the first three).

  python3 scripts/ppsim_runtime.py [--microbatches 8] [--steps 30] [--device cpu|cuda]

prints the overhead in ms, to pass as `--op-overhead` or `cluster.op_overhead` (in the
scenario's model.time_unit: ms by default). Run it where the
pipeline runs (on a GPU, --device cuda times the kernel launches too).
"""
import argparse
import datetime
import os
import socket
import statistics
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.pipelining import PipelineStage, ScheduleGPipe


class Scale(nn.Module):
    """x * w for one scalar w: a stage whose operators take microseconds."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(()))

    def forward(self, x):
        return x * self.weight


def action_overhead_ms(microbatches=8, steps=30, device="cpu"):
    """The median step of a one-stage GPipe over Scale divided by its 2 * microbatches actions,
    in ms. Starts a process group of one (gloo, or NCCL on a GPU) when none is open."""
    if steps < 4:
        raise ValueError("steps must be at least 4 (the first three are not timed)")
    owned = not dist.is_initialized()
    if owned:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ["MASTER_PORT"] = str(port)
        dist.init_process_group("nccl" if device == "cuda" else "gloo", rank=0, world_size=1,
                                timeout=datetime.timedelta(seconds=120))
    try:
        where = torch.device(device)
        schedule = ScheduleGPipe(PipelineStage(Scale().to(where), 0, 1, where), microbatches,
                                 loss_fn=nn.functional.mse_loss)
        inputs = torch.randn(microbatches * 4, 1, 8, device=where)
        target = torch.randn(microbatches * 4, 1, 8, device=where)
        times = []
        for _ in range(steps):
            if device == "cuda":
                torch.cuda.synchronize()
            start = time.perf_counter()
            schedule.step(inputs, target=target)
            if device == "cuda":
                torch.cuda.synchronize()
            times.append(time.perf_counter() - start)
        return statistics.median(times[3:]) * 1e3 / (2 * microbatches)
    finally:
        if owned:
            dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--microbatches", type=int, default=8)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    options = parser.parse_args()
    print(f"{action_overhead_ms(options.microbatches, options.steps, options.device):.4f}")


if __name__ == "__main__":
    main()
