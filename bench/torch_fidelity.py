#!/usr/bin/env python3
"""ppsim's predicted step time against PyTorch's measured one, on the CPU (docs/fidelity.md).

1. Profile: one process, one thread, runs the model's blocks forward and backward under
   torch.profiler with scripts/ppsim_annotate.py's ranges; `ppsim profile import` turns the trace
   into a per-layer cost file.
2. Link: a gloo ping-pong of one boundary activation between two processes gives the
   point-to-point time, ppsim's cluster.link.latency.
   Runtime: scripts/ppsim_runtime.py's one-stage pipeline of a scalar multiply gives the
   runtime's own time per action, ppsim's cluster.op_overhead.
3. Per schedule: `ppsim simulate` predicts the step from the cost file; `ppsim export` writes
   the order, which PyTorch's pipelining runtime runs on `--devices` processes (gloo, one thread
   each); the measured step is the median over the timed steps of the slowest rank's time.

Usage: bench/torch_fidelity.py build/cli/ppsim [--devices 2] [--microbatches 8] [--steps 6]
Prints a Markdown table. Needs torch (scripts/setup installs the CPU build).
"""
import argparse
import datetime
import json
import os
import pathlib
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.distributed.pipelining import PipelineStage
from torch.distributed.pipelining.schedules import _PipelineScheduleRuntime

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "scripts"))
from ppsim_annotate import annotate  # noqa: E402
from ppsim_runtime import action_overhead_ms  # noqa: E402

WIDTH, HEADS, FFN, SEQUENCE, ROWS = 256, 4, 1024, 64, 4  # ROWS: sequences per microbatch
LAYERS = 8
SCHEDULES = ["gpipe", "1f1b", "interleaved-1f1b", "looped-bfs", "zb-h1", "zb-h2",
             "interleaved-zb", "zb-v", "v-half"]


def blocks(seed=0):
    torch.manual_seed(seed)
    return [nn.TransformerEncoderLayer(WIDTH, HEADS, FFN, dropout=0.0, batch_first=True)
            for _ in range(LAYERS)]


def batch(microbatches, seed=1):
    generator = torch.Generator().manual_seed(seed)
    shape = (microbatches * ROWS, SEQUENCE, WIDTH)
    return torch.randn(shape, generator=generator), torch.randn(shape, generator=generator)


def loss_fn(output, target):
    return nn.functional.mse_loss(output, target)


def profile(trace_path, microbatches, steps):
    torch.set_num_threads(1)
    model = nn.Sequential(*blocks())
    phases = annotate(model)
    inputs, _ = batch(microbatches)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                record_shapes=True) as profiler:
        for _ in range(steps):
            for microbatch, rows in enumerate(inputs.chunk(microbatches)):
                phases.microbatch = microbatch
                model(rows).sum().backward()
    profiler.export_chrome_trace(str(trace_path))
    phases.remove()


def join(rank, world_size, port):
    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=300))


def ping_pong(rank, port, repetitions, out_path):
    """Rank 0 sends one activation to rank 1 and back; half the round trip, median."""
    join(rank, 2, port)
    message = torch.zeros(ROWS, SEQUENCE, WIDTH)
    times = []
    for _ in range(repetitions):
        dist.barrier()
        start = time.perf_counter()
        if rank == 0:
            dist.send(message, 1)
            dist.recv(message, 1)
        else:
            dist.recv(message, 0)
            dist.send(message, 0)
        times.append((time.perf_counter() - start) / 2)
    if rank == 0:
        pathlib.Path(out_path).write_text(json.dumps(statistics.median(times[3:]) * 1e3))
    dist.destroy_process_group()


def action_overhead(rank, microbatches, steps, out_path):
    """scripts/ppsim_runtime.py's measure, in a process of its own."""
    torch.set_num_threads(1)
    pathlib.Path(out_path).write_text(json.dumps(action_overhead_ms(microbatches, steps)))


def held_stages(order_path):
    rows = pathlib.Path(order_path).read_text().splitlines()
    held = []
    for row in rows:
        stages = set()
        for cell in filter(None, row.split(",")):
            digits = ""
            for ch in cell.lstrip("("):
                if not ch.isdigit():
                    break
                digits += ch
            stages.add(int(digits))
        held.append(sorted(stages))
    return held


def measure(rank, world_size, port, order_path, microbatches, steps, out_path):
    join(rank, world_size, port)
    held = held_stages(order_path)
    stage_count = 1 + max(max(h) for h in held)
    per_stage = LAYERS // stage_count
    layers = blocks()
    stages = [PipelineStage(nn.Sequential(*layers[s * per_stage:(s + 1) * per_stage]), s,
                            stage_count, torch.device("cpu")) for s in held[rank]]
    schedule = _PipelineScheduleRuntime(stages, microbatches, loss_fn=loss_fn)
    schedule._load_csv(order_path)
    inputs, target = batch(microbatches)
    times = []
    for _ in range(steps):
        dist.barrier()
        start = time.perf_counter()
        if 0 in held[rank]:
            schedule.step(inputs, target=target)
        else:
            schedule.step(target=target)
        elapsed = torch.tensor(time.perf_counter() - start)
        dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
        times.append(elapsed.item())
    if rank == 0:
        # The first steps infer shapes and warm the allocator: left out.
        pathlib.Path(out_path).write_text(json.dumps(statistics.median(times[2:]) * 1e3))
    dist.destroy_process_group()


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def ppsim_run(binary, *args):
    return subprocess.run([binary, *map(str, args)], check=True, capture_output=True,
                          text=True).stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ppsim")
    parser.add_argument("--devices", type=int, default=2)
    parser.add_argument("--microbatches", type=int, default=8)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--keep", help="folder to keep the trace, cost file and orders in")
    options = parser.parse_args()
    if options.steps < 3:
        parser.error("--steps must be at least 3 (the first two steps are not timed)")
    if LAYERS % (2 * options.devices) != 0:
        parser.error(f"--devices must split {LAYERS} blocks over 2 chunks a device")
    work = pathlib.Path(options.keep or tempfile.mkdtemp(prefix="ppsim-fidelity-"))
    work.mkdir(parents=True, exist_ok=True)
    trace, costs = work / "trace.json", work / "costs.csv"
    profile(trace, options.microbatches, 3)
    ppsim_run(options.ppsim, "profile", "import", trace, "--warmup", 1, "-o", costs)
    latency = work / "latency.json"
    mp.spawn(ping_pong, args=(free_port(), 50, str(latency)), nprocs=2, join=True)
    link_ms = json.loads(latency.read_text())
    overhead = work / "overhead.json"
    mp.spawn(action_overhead, args=(options.microbatches, 30, str(overhead)), nprocs=1, join=True)
    overhead_ms = json.loads(overhead.read_text())
    print(f"p = {options.devices}, m = {options.microbatches}, {LAYERS} blocks (d = {WIDTH}, "
          f"{SEQUENCE} tokens x {ROWS} sequences a microbatch), one CPU thread a process; "
          f"gloo point-to-point {link_ms:.3f} ms; runtime {overhead_ms:.3f} ms an action\n")
    print("| schedule | predicted ms | measured ms | error |")
    print("| --- | ---: | ---: | ---: |")
    for name in SCHEDULES:
        scenario = work / f"{name}.toml"
        stages = options.devices * (2 if name in ("interleaved-1f1b", "looped-bfs",
                                                  "interleaved-zb", "zb-v", "v-half") else 1)
        scenario.write_text(
            f'[model]\ncosts_file = "{costs}"\nlayers_per_stage = '
            f'{[LAYERS // stages] * stages}\n'
            f'[pipeline]\nschedule = "{name}"\nmicrobatches = {options.microbatches}\n'
            f'[cluster]\ndevices = {options.devices}\nlink.latency = {link_ms}\n'
            f'op_overhead = {overhead_ms:.4f}\n')
        predicted = json.loads(ppsim_run(options.ppsim, "simulate", scenario, "--format",
                                         "json"))["makespan"]
        order = work / f"{name}.csv"
        ppsim_run(options.ppsim, "export", scenario, "-o", order)
        measured_path = work / f"{name}.measured.json"
        mp.spawn(measure, args=(options.devices, free_port(), str(order), options.microbatches,
                                options.steps, str(measured_path)),
                 nprocs=options.devices, join=True)
        measured = json.loads(measured_path.read_text())
        print(f"| {name} | {predicted:.1f} | {measured:.1f} | "
              f"{(predicted - measured) / measured:+.1%} |")


if __name__ == "__main__":
    main()
