"""Cost files at several microbatch sizes from real PyTorch runs (docs/profiler.md, "Microbatch
sizes"): CPU traces of the same blocks at b = 1, 2 and 4 imported with --batch, read by ppsim at
a size between two of them and ranked over the sizes at a fixed batch, by the CLI and the
module alike."""
import json
import os
import sys

import pytest
import torch

import pipeline_model
from ppsim_annotate import annotate

MODULE_DIR = os.environ.get("PPSIM_MODULE_DIR")
if MODULE_DIR:
    sys.path.insert(0, MODULE_DIR)
    import ppsim as pp  # noqa: E402  (the `ppsim` fixture is the CLI)
needs_module = pytest.mark.skipif(not MODULE_DIR, reason="the Python module was not built")
# The blocks' input needs no gradient (a first stage's); the annotation's hooks fire anyway.
pytestmark = pytest.mark.filterwarnings("ignore:Full backward hook is firing")

LAYERS, STEPS, MICROBATCHES = 4, 3, 2


def trace_at(path, size):
    """STEPS iterations of MICROBATCHES microbatches of `size` rows through LAYERS annotated
    blocks on the CPU, profiled with shapes (so the backward splits into B and W)."""
    blocks = pipeline_model.blocks(LAYERS)
    phases = annotate(blocks)
    inputs, _ = pipeline_model.batch(MICROBATCHES, rows_per_microbatch=size)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                record_shapes=True) as profile:
        for _ in range(STEPS):
            for microbatch, rows in enumerate(inputs.chunk(MICROBATCHES)):
                phases.microbatch = microbatch
                x = rows
                for block in blocks:
                    x = block(x)
                x.sum().backward()
    profile.export_chrome_trace(str(path))
    phases.remove()


@pytest.fixture(scope="module")
def sized_costs(tmp_path_factory, request):
    """The imported cost files at b = 1, 2, 4 (JSON, with the size recorded)."""
    ppsim = request.getfixturevalue("ppsim")
    folder = tmp_path_factory.mktemp("sizes")
    files = {}
    for size in (1, 2, 4):
        trace = folder / f"trace_b{size}.json"
        trace_at(trace, size)
        files[size] = folder / f"costs_b{size}.json"
        ppsim("profile", "import", trace, "--warmup", 1, "--batch", size, "-o", files[size])
        assert json.loads(files[size].read_text())["metadata"]["b"] == size
    return files


def listed(files):
    """--set model.costs_file=[...] for the files."""
    return "model.costs_file=[" + ", ".join(f'"{f}"' for f in files) + "]"


def simulated(ppsim, files, size):
    """`ppsim simulate` of 1F1B on two devices, two layers each (a split by cost would move with
    the costs of each size), the costs read at `size`, as JSON."""
    return json.loads(ppsim("simulate", "--schedule", "1f1b", "-p", 2, "-m", 4, "--set",
                            listed(files), "--set", "model.layers_per_stage=[2, 2]",
                            "--microbatch-size", size, "--format", "json"))


def test_a_size_between_two_measured_ones_reads_costs_between_theirs(ppsim, sized_costs):
    around = [sized_costs[1], sized_costs[4]]
    # Each device's busy time at b = 2 lies between those at b = 1 and b = 4 (each layer's time
    # is a weighted mean of its two measurements); at a measured size the file is read as it is.
    busy = {size: [device["busy"] for device in simulated(ppsim, around, size)["devices"]]
            for size in (1, 2, 4)}
    for low, between, high in zip(busy[1], busy[2], busy[4]):
        assert min(low, high) <= between <= max(low, high)
    assert simulated(ppsim, list(sized_costs.values()), 2) == \
        simulated(ppsim, [sized_costs[2]], 2)


def compared(ppsim, files, *options):
    return ppsim("compare", "--schedules", "1f1b,zb-h1", "-p", 2, "-m", 4, "--microbatch-size", 2,
                 "--microbatch-sizes", "1,2,4", "--set", listed(files), *options)


def test_compare_ranks_the_sizes_at_a_fixed_batch(ppsim, sized_costs):
    files = list(sized_costs.values())
    rankings = json.loads(compared(ppsim, files, "--format", "json"))["rankings"]
    assert [(r["microbatch_size"], r["runs"][0]["report"]["m"]) for r in rankings] == [
        (1, 8), (2, 4), (4, 2)]  # 8 samples an iteration
    # Each size's ranking is that size's scenario ranked alone.
    for ranking in rankings:
        size, m = ranking["microbatch_size"], ranking["runs"][0]["report"]["m"]
        alone = json.loads(ppsim("compare", "--schedules", "1f1b,zb-h1", "-p", 2, "-m", m,
                                 "--microbatch-size", size, "--set", listed(files),
                                 "--format", "json"))["rankings"][0]
        assert [run["report"]["makespan"] for run in ranking["runs"]] == [
            run["report"]["makespan"] for run in alone["runs"]]
    winners = [run for r in rankings for run in r["runs"] if run["winner"]]
    fastest = min(winners, key=lambda run: run["report"]["makespan"])
    size = next(r["microbatch_size"] for r in rankings if fastest in r["runs"])
    assert (f"winner: {fastest['schedule']} at microbatch size {size} "
            f"(m = {fastest['report']['m']})") in compared(ppsim, files, "-q")


@needs_module
def test_the_module_ranks_the_sizes_as_the_cli(ppsim, sized_costs):
    files = list(sized_costs.values())
    scenario = pp.Scenario(p=2, m=4, costs=files, b=2)
    records = pp.compare(scenario, schedules=["1f1b", "zb-h1"], microbatch_sizes=[1, 2, 4])
    cli = json.loads(compared(ppsim, files, "--format", "json"))["rankings"]
    assert [(r["microbatch_size"], r["schedule"], r["policy"]) for r in records] == [
        (ranking["microbatch_size"], run["schedule"], run["policy"])
        for ranking in cli for run in ranking["runs"]]
    assert [r["makespan"] for r in records] == pytest.approx(
        [run["report"]["makespan"] for ranking in cli for run in ranking["runs"]], rel=1e-12)
    at_two = pp.simulate(pp.Scenario(p=2, m=4, schedule="1f1b", costs=files[0::2], b=2,
                                     model__layers_per_stage=[2, 2]))
    assert at_two.metrics["makespan"] == pytest.approx(
        simulated(ppsim, files[0::2], 2)["makespan"], rel=1e-12)
    with pytest.raises(pp.Error, match="is not a whole number of microbatches of size 3"):
        pp.compare(scenario, schedules=["1f1b"], microbatch_sizes=[3])
