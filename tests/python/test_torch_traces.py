"""Traces written by a real torch.profiler on the CPU, imported by `ppsim profile import`
(issue 30): a model annotated by scripts/ppsim_annotate.py, with and without recorded shapes, and
PyTorch pipelining's own ranges (PP:<stage><F|I|B|W><mb> of the runtime, "Forward i" and
"Backward i" of ScheduleGPipe)."""
import csv
import json
import subprocess

import pytest
import torch
import torch.multiprocessing as mp
from torch import nn

import pipeline_model
import pipeline_worker
from ppsim_annotate import annotate
from torch.utils.checkpoint import checkpoint
from test_torch_pipelining import free_port

LAYERS, STEPS, MICROBATCHES = 3, 3, 2


def annotated_trace(path, record_shapes, profile_memory=False, layers=LAYERS, checkpointed=()):
    """STEPS iterations of `layers` transformer blocks on plain (no-grad) input, each block named
    by ppsim_annotate, profiled on the CPU; the blocks in `checkpointed` run under
    torch.utils.checkpoint with ppsim_annotate's recompute context."""
    blocks = pipeline_model.blocks(layers)
    phases = annotate(blocks)

    def model(x):
        for layer, block in enumerate(blocks):
            x = (checkpoint(block, x, use_reentrant=False,
                            context_fn=phases.recompute_context(block))
                 if layer in checkpointed else block(x))
        return x

    inputs, _ = pipeline_model.batch(MICROBATCHES)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                record_shapes=record_shapes,
                                profile_memory=profile_memory) as profile:
        for _ in range(STEPS):
            for microbatch, rows in enumerate(inputs.chunk(MICROBATCHES)):
                phases.microbatch = microbatch
                model(rows).sum().backward()
    profile.export_chrome_trace(str(path))
    phases.remove()
    return json.loads(path.read_text())


def ranges(trace):
    return [event for event in trace["traceEvents"] if event.get("cat") == "user_annotation"]


def cost_rows(path):
    with open(path, newline="") as file:
        return list(csv.DictReader(file))


def test_an_annotated_cpu_run_gives_every_layer_its_forward_and_backward(ppsim, tmp_path):
    trace = annotated_trace(tmp_path / "trace.json", record_shapes=True)
    names = {event["name"] for event in ranges(trace)}
    expected = {f"L{layer:02d}.{phase}.mb{mb}" for layer in range(LAYERS)
                for phase in ("F", "BW") for mb in range(MICROBATCHES)}
    assert expected <= names
    costs = tmp_path / "costs.csv"
    ppsim("profile", "import", tmp_path / "trace.json", "--warmup", 1, "-o", costs)
    rows = cost_rows(costs)
    assert [int(row["layer_id"]) for row in rows] == list(range(LAYERS))
    durations = {}
    for event in ranges(trace):
        durations.setdefault(event["name"].split(".mb")[0], []).append(event["dur"] / 1000)
    for row in rows:
        layer = f"L{int(row['layer_id']):02d}"
        forward, backward = float(row["fwd_ms"]), float(row["bwd_total_ms"])
        b, w = float(row["bwd_input_ms"]), float(row["bwd_weight_ms"])
        # The operators' busy time: positive, within the ranges' time (which adds Python's).
        assert 0 < forward <= max(durations[layer + ".F"]), row
        assert 0 < backward <= max(durations[layer + ".BW"]), row
        # W is the weight-gradient multiplies of the backward, B the rest (the first block
        # too, whose input needs no gradient): per sample B + W = BW. The columns are medians
        # of each series, which a loaded machine's noise sets apart (CI runs two tests at once:
        # a p90 seven times the p10 was seen), so BW's median is checked against the sums of
        # B's and W's 10th and 90th percentiles (5% for their interpolation over 4 samples), and
        # W below B by their bands (one loaded sample once put W's median above B's).
        assert 0 < w and 0 < b, row
        assert float(row["bwd_weight_ms_p10"]) < float(row["bwd_input_ms_p90"]), row
        low = float(row["bwd_input_ms_p10"]) + float(row["bwd_weight_ms_p10"])
        high = float(row["bwd_input_ms_p90"]) + float(row["bwd_weight_ms_p90"])
        assert 0.95 * low <= backward <= 1.05 * high, row
        assert int(row["n_samples"]) == (STEPS - 1) * MICROBATCHES


def test_a_checkpointed_blocks_recomputation_is_its_r_range(ppsim, tmp_path):
    # Blocks 0 and 1 run under torch.utils.checkpoint with ppsim's recompute context, block 2
    # plainly: each recomputation is an R range inside its block's backward range, no second F
    # range opens meanwhile, and the import gives those layers recompute_ms from those ranges
    # (block 2 none).
    checkpointed = {0, 1}
    events = ranges(annotated_trace(tmp_path / "trace.json", record_shapes=True,
                                    checkpointed=checkpointed))
    by_name = {}
    for event in events:
        by_name.setdefault(event["name"], []).append(event)
    for layer in range(LAYERS):
        for mb in range(MICROBATCHES):
            assert len(by_name[f"L{layer:02d}.F.mb{mb}"]) == STEPS
            recomputations = by_name.get(f"L{layer:02d}.R.mb{mb}", [])
            assert len(recomputations) == (STEPS if layer in checkpointed else 0)
            for r, bw in zip(recomputations, by_name[f"L{layer:02d}.BW.mb{mb}"]):
                assert bw["ts"] <= r["ts"] and r["ts"] + r["dur"] <= bw["ts"] + bw["dur"]
    costs = tmp_path / "costs.csv"
    ppsim("profile", "import", tmp_path / "trace.json", "--warmup", 1, "-o", costs)
    rows = cost_rows(costs)
    for row in rows:
        assert int(row["n_samples"]) == (STEPS - 1) * MICROBATCHES
        layer = int(row["layer_id"])
        if layer in checkpointed:
            # The CPU operators' busy time inside the R ranges after the warm-up step: positive
            # and within the longest range (not a multiple of F: on a loaded CPU one range may
            # take several forwards' time).
            longest = max(event["dur"] / 1000 for mb in range(MICROBATCHES)
                          for event in sorted(by_name[f"L{layer:02d}.R.mb{mb}"],
                                              key=lambda event: event["ts"])[1:])
            assert 0 < float(row["recompute_ms"]) <= longest + 1e-6, row
        else:
            assert row["recompute_ms"] == "", row  # absent: ppsim's default, F


def test_annotate_removes_its_hooks(tmp_path):
    blocks = nn.Sequential(*pipeline_model.blocks(2))
    annotate(blocks).remove()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profile:
        blocks(pipeline_model.batch(1)[0]).sum().backward()
    profile.export_chrome_trace(str(tmp_path / "trace.json"))
    assert not [event for event in ranges(json.loads((tmp_path / "trace.json").read_text()))
                if event["name"].startswith("L0")]


def test_a_trace_without_shapes_runs_fused_schedules_and_refuses_split_ones(ppsim, tmp_path):
    annotated_trace(tmp_path / "trace.json", record_shapes=False)
    costs = tmp_path / "costs.csv"
    ppsim("profile", "import", tmp_path / "trace.json", "--warmup", 1, "-o", costs)
    header = costs.read_text().splitlines()[0].split(",")
    assert "bwd_total_ms" in header and "bwd_input_ms" not in header
    scenario = tmp_path / "run.toml"
    scenario.write_text(f'[model]\ncosts_file = "{costs}"\n[pipeline]\nmicrobatches = 6\n'
                        '[cluster]\ndevices = 3\n')
    assert "makespan" in ppsim("simulate", scenario, "--schedule", "1f1b")
    refused = subprocess.run([ppsim.binary, "simulate", str(scenario),
                              "--schedule", "zb-h1"], capture_output=True, text=True, check=False)
    assert refused.returncode != 0
    assert refused.stderr == (
        f"ppsim: error: {scenario}:2: field 'model.costs_file': {costs} has the whole backward "
        "only (bwd_total_ms: a trace recorded without record_shapes=True); schedule 'zb-h1' "
        "runs B and W apart (record with shapes, or pick a fused-backward schedule)\n")


def profiled_step(rank, world_size, port, order, trace_dir, pytorch_class):
    """One pipelined step per process under torch.profiler, its trace written per rank (the
    group joined first, so that the trace records the rank)."""
    pipeline_worker.join(rank, world_size, port)
    try:
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                    record_shapes=True) as profile:
            pipeline_worker.run_cases(rank, [("trace", order, 4, None, None, pytorch_class)])
        profile.export_chrome_trace(f"{trace_dir}/rank{rank}.json")
    finally:
        torch.distributed.destroy_process_group()


@pytest.mark.parametrize("schedule, pytorch_class", [("zb-v", None), ("gpipe", "GPipe")])
def test_pipelinings_own_ranges_give_each_stage_its_passes(ppsim, tmp_path, schedule,
                                                           pytorch_class):
    order = tmp_path / "order.csv"
    ppsim("export", "--to", "torch-csv", "--schedule", schedule, "-p", 2, "-m", 4, "--F", 1,
          "--B", 1, "--W", 1, "-o", order)
    mp.spawn(profiled_step, args=(2, free_port(), str(order), str(tmp_path), pytorch_class),
             nprocs=2, join=True)
    ranks = []
    for rank in range(2):
        trace = json.loads((tmp_path / f"rank{rank}.json").read_text())
        assert trace["distributedInfo"]["rank"] == rank
        costs = tmp_path / f"costs{rank}.csv"
        ppsim("profile", "import", tmp_path / f"rank{rank}.json", "-o", costs)
        ranks.append(costs)
    merged = tmp_path / "stages.csv"
    ppsim("profile", "merge", *ranks, "-o", merged)
    rows = cost_rows(merged)
    # One row per stage: ZB-V's four (two per rank, V placement), GPipe's two (the rank).
    assert [int(row["layer_id"]) for row in rows] == list(range(4 if schedule == "zb-v" else 2))
    # The stage file is a model ppsim runs (stage 0's I included).
    scenario = tmp_path / "stages.toml"
    scenario.write_text(f'[model]\ncosts_file = "{merged}"\nlayers_per_stage = '
                        f'{[1] * len(rows)}\n[pipeline]\nschedule = "{schedule}"\n'
                        'microbatches = 4\n[cluster]\ndevices = 2\n')
    assert "makespan" in ppsim("simulate", scenario)
    for row in rows:
        assert float(row["fwd_ms"]) > 0, row
        if schedule == "gpipe":
            assert float(row["bwd_total_ms"]) > 0, row
        elif row["layer_id"] == "0":
            # PyTorch's runtime skips the first stage's I and runs its whole backward in W
            # (stage_backward_input has no input to differentiate): its I takes no time.
            assert float(row["bwd_input_ms"]) == 0 and float(row["bwd_weight_ms"]) > 0, row
        else:  # the runtime's I and W actions, timed apart
            assert float(row["bwd_input_ms"]) > 0 and float(row["bwd_weight_ms"]) > 0, row
