#!/usr/bin/env python3
"""ppsim's prediction for one device (p = 1) against real training steps, with and without
activation checkpointing (issue 29, item 8; docs/fidelity.md, "One GPU").

1. Profile: a stack of GPT blocks (pre-LayerNorm, causal scaled_dot_product_attention, a GELU
   MLP of 4h) runs forward and backward under torch.profiler with scripts/ppsim_annotate.py's
   ranges; `ppsim profile import` turns the trace into a per-layer cost file (F, B, W from the
   kernels, the bytes each forward keeps and the forward's and backward's transients from the
   allocator events). A second profile runs every block under torch.utils.checkpoint with
   ppsim_annotate's recompute context: its R ranges give recompute_ms. Two columns a trace
   cannot give are added from the model itself: param_bytes (each block's parameters) and
   input_bytes / output_bytes (the tensor between blocks, what a checkpoint keeps).
2. Predict: `ppsim simulate` at p = 1 on the byte model gives the step (makespan) and the peak
   (parameters, gradients and activations, docs/model.md "Device memory"), storing everything
   and at the checkpoint level (`ppsim checkpoint COSTS --levels 8 --format json`) with the most
   checkpointed layers (`C`) and no `R`, what torch.utils.checkpoint around those blocks runs.
3. Measure: the same blocks (same seed) train `--steps` steps of m microbatches (gradients
   accumulated, kept allocated between steps as the model assumes) without checkpoints and with
   torch.utils.checkpoint (non-reentrant) on the plan's `C` layers; step time by CUDA events
   (median), peak by torch.cuda.max_memory_allocated less the input batches (data, not modelled).
   The optimizer step is timed apart: ppsim's makespan does not hold it yet (issue 29, item 2).

Usage: bench/fidelity/gpu_p1.py PPSIM [--device cuda] [--layers 8] [--hidden 4096] ...
Prints a Markdown table and writes the cost file, the trace's import log and results.json into
--out. Runs on the CPU too (--device cpu --dtype float32, small sizes) to check the route.
"""
import argparse
import csv
import json
import math
import pathlib
import statistics
import subprocess
import sys
import time

import torch
from torch import nn
from torch.nn import functional
from torch.utils.checkpoint import checkpoint

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "scripts"))
from ppsim_annotate import annotate  # noqa: E402


class Block(nn.Module):
    """One GPT block (pre-LayerNorm); attention through scaled_dot_product_attention, which
    picks FlashAttention on a GPU, as ppsim's analytic model assumes by default."""

    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(hidden)
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.proj = nn.Linear(hidden, hidden)
        self.norm2 = nn.LayerNorm(hidden)
        self.fc1 = nn.Linear(hidden, 4 * hidden)
        self.fc2 = nn.Linear(4 * hidden, hidden)

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, s, 3, self.heads, h // self.heads).unbind(2)
        attention = functional.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        x = x + self.proj(attention.transpose(1, 2).reshape(b, s, h))
        return x + self.fc2(functional.gelu(self.fc1(self.norm2(x))))


class Stack(nn.Module):
    """The blocks in order; `checkpointed[i]` runs block i under torch.utils.checkpoint, with
    `context_fn(block)` as its context (ppsim_annotate's recompute range) when given."""

    def __init__(self, blocks, checkpointed, context_fn=None):
        super().__init__()
        self.blocks = nn.ModuleList(blocks)
        self.checkpointed = checkpointed
        self.context_fn = context_fn

    def forward(self, x):
        for block, recompute in zip(self.blocks, self.checkpointed):
            if not recompute:
                x = block(x)
            elif self.context_fn:
                x = checkpoint(block, x, use_reentrant=False, context_fn=self.context_fn(block))
            else:
                x = checkpoint(block, x, use_reentrant=False)
        return x


def make_blocks(args):
    torch.manual_seed(0)
    return [Block(args.hidden, args.heads).to(args.device, args.dtype) for _ in range(args.layers)]


def make_inputs(args):
    generator = torch.Generator(device=args.device).manual_seed(1)
    return [torch.randn(args.batch, args.seq, args.hidden, device=args.device, dtype=args.dtype,
                        generator=generator) for _ in range(args.microbatches)]


def loss_of(output):
    return output.float().pow(2).mean()


def synchronize(device):
    if device == "cuda":
        torch.cuda.synchronize()


def profile(args, trace, checkpointed):
    """The annotated trace of `--profile-steps` steps (the first is dropped on import): with
    every block checkpointed, the recomputations are R ranges (ppsim_annotate's context)."""
    blocks = make_blocks(args)
    phases = annotate(blocks)
    model = Stack(blocks, [checkpointed] * len(blocks), phases.recompute_context)
    inputs = make_inputs(args)
    activities = [torch.profiler.ProfilerActivity.CPU]
    if args.device == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    with torch.profiler.profile(activities=activities, record_shapes=True,
                                profile_memory=not checkpointed) as profiler:
        for _ in range(args.profile_steps):
            for microbatch, rows in enumerate(inputs):
                phases.microbatch = microbatch
                loss_of(model(rows)).backward()
        synchronize(args.device)
    phases.remove()
    profiler.export_chrome_trace(str(trace))
    boundary = inputs[0]
    return ([sum(p.numel() * p.element_size() for p in block.parameters()) for block in blocks],
            boundary.numel() * boundary.element_size())


def import_trace(args, trace, costs, log):
    done = subprocess.run([args.ppsim, "profile", "import", str(trace), "--warmup", "1",
                           "-o", str(costs)], capture_output=True, text=True)
    log.write_text(done.stdout + done.stderr)
    if done.returncode != 0:
        sys.exit("ppsim profile import failed: " + done.stderr.strip())
    with open(costs) as f:
        return list(csv.DictReader(f)), done.stderr.strip()


def measure_costs(args, out):
    """The cost file: F, B, W and the bytes from a plain run, R from a checkpointed one, and the
    parameters and the tensor between blocks from the model."""
    param_bytes, boundary_bytes = profile(args, out / "trace.json", checkpointed=False)
    costs = out / "costs.csv"
    rows, line = import_trace(args, out / "trace.json", costs, out / "import.log")
    profile(args, out / "trace_checkpointed.json", checkpointed=True)
    recomputed, _ = import_trace(args, out / "trace_checkpointed.json",
                                 out / "costs_checkpointed.csv", out / "import_checkpointed.log")
    columns = list(rows[0].keys()) + ["recompute_ms", "input_bytes", "output_bytes", "param_bytes"]
    for row, again, parameters in zip(rows, recomputed, param_bytes):
        row.update(recompute_ms=again["recompute_ms"], input_bytes=boundary_bytes,
                   output_bytes=boundary_bytes, param_bytes=parameters)
    with open(costs, "w", newline="") as f:
        writer = csv.DictWriter(f, columns)
        writer.writeheader()
        writer.writerows(rows)
    return costs, line


def ppsim_json(args, *arguments):
    done = subprocess.run([args.ppsim, *arguments], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit("ppsim %s failed: %s" % (arguments[0], done.stderr.strip()))
    return json.loads(done.stdout)


def predict(args, costs):
    """ppsim's step (makespan) and peak at p = 1 storing everything and at the checkpoint level
    of the rotor front with the most checkpointed layers and no R (a plan naming it for every
    microbatch), both by `ppsim simulate` on the byte model."""
    levels = ppsim_json(args, "checkpoint", str(costs), "--levels", "8", "--format", "json")
    plain = [o for o in levels["stages"][0]["options"] if "R" not in o["layers"] and "C" in o["layers"]]
    if not plain:
        sys.exit("the rotor front has no level of checkpoints alone")
    level = max(plain, key=lambda o: (o["layers"].count("C"), -o["peak_bytes"]))
    plan = costs.parent / "plan.csv"
    plan.write_text("stage,microbatch,fwd,bwd\n" + "".join(
        "0,%d,level:%d,none\n" % (j, level["level"]) for j in range(args.microbatches)))
    simulate = [args.ppsim, "simulate", "--set", "model.costs_file=" + str(costs), "-p", "1",
                "-m", str(args.microbatches), "--schedule", "1f1b", "--memory-model", "bytes",
                "--format", "json"]
    result = {}
    for name, layers, extra in (
            ("none", "S" * args.layers, []),
            ("checkpoint", level["layers"],
             ["--checkpoint-levels", "8", "--remat", "file:" + str(plan)])):
        report = ppsim_json(args, *simulate[1:], *extra)
        peak = report["devices"][0].get("peak_bytes")
        result[name] = {"layers": layers, "step_ms": report["makespan"],
                        "peak_bytes": math.nan if peak is None else peak}
    return result


def measure(args, layers):
    """Median step time (ms) and peak bytes (less the inputs) of `--steps` steps."""
    model = Stack(make_blocks(args), [action == "C" for action in layers])
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-6)
    inputs = make_inputs(args)
    data_bytes = sum(x.numel() * x.element_size() for x in inputs)
    times, peaks, optimizer_times = [], [], []
    for step in range(args.warmup + args.steps):
        optimizer.zero_grad(set_to_none=False)
        synchronize(args.device)
        if args.device == "cuda":
            torch.cuda.reset_peak_memory_stats()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
        began = time.perf_counter()
        for rows in inputs:
            loss_of(model(rows)).backward()
        if args.device == "cuda":
            end.record()
            torch.cuda.synchronize()
            elapsed = start.elapsed_time(end)
            peak = torch.cuda.max_memory_allocated() - data_bytes
        else:
            elapsed, peak = 1000 * (time.perf_counter() - began), math.nan
        began = time.perf_counter()
        optimizer.step()
        synchronize(args.device)
        if step >= args.warmup:
            times.append(elapsed)
            peaks.append(peak)
            optimizer_times.append(1000 * (time.perf_counter() - began))
    return {"step_ms": statistics.median(times), "step_ms_min": min(times),
            "step_ms_max": max(times), "peak_bytes": max(peaks),
            "optimizer_ms": statistics.median(optimizer_times)}


def error(predicted, measured):
    return 100 * (predicted - measured) / measured if measured == measured and measured else math.nan


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ppsim")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--dtype", default=None, help="bfloat16 on a GPU, float32 on the CPU")
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--hidden", type=int, default=4096)
    parser.add_argument("--heads", type=int, default=32)
    parser.add_argument("--seq", type=int, default=4096)
    parser.add_argument("--batch", type=int, default=1, help="sequences per microbatch")
    parser.add_argument("--microbatches", type=int, default=8)
    parser.add_argument("--profile-steps", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--out", default="gpu_p1")
    args = parser.parse_args()
    args.dtype = getattr(torch, args.dtype or ("bfloat16" if args.device == "cuda" else "float32"))
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    costs, import_line = measure_costs(args, out)
    predicted = predict(args, costs)
    measured = {name: measure(args, predicted[name]["layers"]) for name in ("none", "checkpoint")}
    device = torch.cuda.get_device_name() if args.device == "cuda" else "CPU"
    print("%s, torch %s, %s: %d GPT blocks h=%d a=%d s=%d b=%d, m=%d, p=1" % (
        device, torch.__version__, str(args.dtype).replace("torch.", ""), args.layers, args.hidden,
        args.heads, args.seq, args.batch, args.microbatches))
    print(import_line)
    print()
    print("| plan | layers | predicted step ms | measured step ms | error | predicted peak GiB "
          "| measured peak GiB | error | optimizer ms (not modelled) |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name in ("none", "checkpoint"):
        p, m = predicted[name], measured[name]
        print("| %s | %s | %.2f | %.2f (%.2f-%.2f) | %+.1f%% | %.3f | %.3f | %+.1f%% | %.2f |" % (
            name, p["layers"], p["step_ms"], m["step_ms"], m["step_ms_min"], m["step_ms_max"],
            error(p["step_ms"], m["step_ms"]), p["peak_bytes"] / 2**30, m["peak_bytes"] / 2**30,
            error(p["peak_bytes"], m["peak_bytes"]), m["optimizer_ms"]))
    ratio_p = predicted["checkpoint"]["step_ms"] / predicted["none"]["step_ms"]
    ratio_m = measured["checkpoint"]["step_ms"] / measured["none"]["step_ms"]
    print()
    print("checkpointed / plain step: predicted %.4f, measured %.4f (error %+.2f%%)" % (
        ratio_p, ratio_m, 100 * (ratio_p - ratio_m) / ratio_m))
    (out / "results.json").write_text(json.dumps(
        {"device": device, "torch": torch.__version__, "args": {k: str(v) for k, v in vars(args).items()},
         "predicted": predicted, "measured": measured}, indent=1))


if __name__ == "__main__":
    main()
