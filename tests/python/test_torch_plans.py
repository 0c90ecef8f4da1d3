"""ppsim's recomputation plans run in PyTorch (issue 30): scripts/ppsim_plan.py applies a plan of
`ppsim remat --plan` per (stage, microbatch) with torch.utils.checkpoint and saved-tensor hooks,
inside PyTorch's own pipelining runtime; the gradients equal the plain step's and each stage's
module runs as often as the plan asks."""
import csv
import json

import pytest
import torch.multiprocessing as mp

import pipeline_model
import pipeline_worker
from ppsim_plan import PlanError, read_plan
from test_torch_pipelining import free_port

DEVICES, MICROBATCHES = 2, 4


def expected_runs(plan, stages, split):
    """Each stage's forwards plus recomputations as PyTorch runs the plan: a checkpointed forward
    runs again in every autograd call that needs it (B and W when split; the first stage's B
    computes nothing, its W the whole backward), a dropped W stash once before W; `selective`
    reruns the attention only."""
    runs = [MICROBATCHES] * stages
    for (stage, _), (fwd, bwd) in plan.items():
        if fwd == "full":
            runs[stage] += 2 if split and stage != 0 else 1
        elif bwd != "none":
            runs[stage] += 1
    return runs


def planned_case(ppsim, tmp_path, schedule, cap, split, stages):
    order, plan = tmp_path / f"{schedule}-{cap}.csv", tmp_path / f"{schedule}-{cap}-plan.csv"
    options = ["--schedule", schedule, "-p", DEVICES, "-m", MICROBATCHES, "--F", 1, "--B", 1,
               "--W", 1 if split else 0, "--K", cap]
    ppsim("remat", *options, "--gap", 0, "--plan", plan)
    ppsim("export", "--to", "torch-csv", *options, "-o", order)
    runs = {"forward_runs": expected_runs(read_plan(plan), stages, split)}
    return (f"{schedule} K={cap}", str(order), MICROBATCHES, str(plan), runs), read_plan(plan)


def test_plans_recompute_as_written_with_equal_gradients(ppsim, tmp_path):
    cases, options = [], set()
    for schedule, cap, split, stages in [("1f1b", 1, False, 2), ("zb-v", 1.75, True, 4),
                                         ("zb-h2", 2.5, True, 2), ("zb-h2", 2, True, 2)]:
        case, plan = planned_case(ppsim, tmp_path, schedule, cap, split, stages)
        cases.append(case)
        options |= set(plan.values())
    # Selective recomputation (the attention blocks only) beside full, written by hand.
    selective = tmp_path / "selective.csv"
    selective.write_text("stage,microbatch,fwd,bwd\n0,0,selective,none\n1,2,selective,none\n"
                         "1,3,full,none\n")
    order = tmp_path / "1f1b.csv"
    ppsim("export", "--to", "torch-csv", "--schedule", "1f1b", "-p", DEVICES, "-m",
          MICROBATCHES, "-o", order)
    # One attention block per stage: it runs once per forward, and again where recomputed.
    cases.append(("1f1b selective", str(order), MICROBATCHES, str(selective),
                  {"forward_runs": [MICROBATCHES, MICROBATCHES + 1],
                   "selected_runs": [MICROBATCHES + 1, MICROBATCHES + 2]}))
    # Every option of a plan is exercised: the ILP chose each of these above.
    assert {("full", "none"), ("none", "activations"), ("none", "full")} <= options
    mp.spawn(pipeline_worker.main, args=(DEVICES, free_port(), cases), nprocs=DEVICES, join=True)


@pytest.mark.parametrize("text, message", [
    ("stage,mb,fwd,bwd\n", "plan.csv:1: expected the header 'stage,microbatch,fwd,bwd', got "
                           "'stage,mb,fwd,bwd'"),
    ("stage,microbatch,fwd,bwd\n0,1,full\n", "plan.csv:2: expected 4 cells, got 3"),
    ("stage,microbatch,fwd,bwd\n0,-1,full,none\n",
     "plan.csv:2: field 'microbatch': expected a whole number >= 0, got '-1'"),
    ("stage,microbatch,fwd,bwd\n0,1,level:2,none\n",
     "plan.csv:2: field 'fwd': 'level:2' is a rotor checkpoint level, whose layers only the cost "
     "file's split knows; plan without --checkpoint-levels to run it in PyTorch"),
    ("stage,microbatch,fwd,bwd\n0,1,all,none\n",
     "plan.csv:2: field 'fwd': expected one of none, full, selective, got 'all'"),
    ("stage,microbatch,fwd,bwd\n0,1,none,weights\n",
     "plan.csv:2: field 'bwd': expected one of none, activations, full, got 'weights'"),
    ("stage,microbatch,fwd,bwd\n0,1,selective,activations\n",
     "plan.csv:2: field 'bwd': 'activations' with a selective forward cannot run: PyTorch's "
     "checkpoint (the attention's) fails inside the saved-tensor hooks that drop W's stash"),
    ("stage,microbatch,fwd,bwd\n0,1,full,none\n0,1,none,none\n",
     "plan.csv:3: stage 0, microbatch 1 is planned twice"),
])
def test_a_plan_that_cannot_run_is_refused_in_one_line(tmp_path, monkeypatch, text, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plan.csv").write_text(text)
    with pytest.raises(PlanError) as refused:
        read_plan("plan.csv")
    assert str(refused.value) == message


def test_what_each_stage_keeps_matches_ppsims_memory_model(ppsim, tmp_path):
    """Saved-tensor hooks count the bytes each stage's forward keeps per microbatch in the
    pipelined run; ppsim's model of the same blocks is the cost file that `ppsim profile import`
    reads from a real torch.profiler trace with profile_memory=True (the bytes a block's forward
    allocated and did not free). A storing forward keeps the block's stored activation, which
    the allocator sees as the saved tensors plus the block's output (alive as the next block's
    input); a recomputed one (`fwd = full`) keeps the stage's input only."""
    from test_torch_traces import annotated_trace
    stages = 2 * DEVICES  # ZB-V: one block per stage, V placement
    annotated_trace(tmp_path / "memory.json", record_shapes=True, profile_memory=True,
                    layers=stages)
    costs = tmp_path / "costs.csv"
    ppsim("profile", "import", tmp_path / "memory.json", "--warmup", 1, "-o", costs)
    with open(costs, newline="") as file:
        stored = [float(row["activation_bytes_full"]) for row in csv.DictReader(file)]
    case, plan = planned_case(ppsim, tmp_path, "zb-v", 1.75, True, stages)
    mp.spawn(pipeline_worker.main,
             args=(DEVICES, free_port(), [(*case, None, str(tmp_path))]), nprocs=DEVICES,
             join=True)
    kept = {}
    for rank in range(DEVICES):
        kept.update(json.loads((tmp_path / f"rank{rank}.json").read_text()))
    inputs, _ = pipeline_model.batch(MICROBATCHES)
    boundary = inputs.chunk(MICROBATCHES)[0].nbytes  # a microbatch's activation between blocks
    recomputed = 0
    for stage in range(stages):
        for microbatch, measured in enumerate(kept[str(stage)]):
            if plan.get((stage, microbatch), ("none", "none"))[0] == "full":
                assert measured == boundary, (stage, microbatch)
                recomputed += 1
            else:
                assert measured == stored[stage] - boundary, (stage, microbatch, stored[stage])
    assert recomputed == sum(fwd == "full" for fwd, _ in plan.values()) > 0


def test_a_dropped_w_stash_is_rebuilt_with_the_forwards_dropout_masks():
    """`bwd = activations` reruns the forward before W: with dropout, the rerun must draw the
    masks the forward drew (the RNG state is restored), or W's gradients are silently wrong."""
    import torch
    from torch import nn

    from ppsim_plan import _PlannedModule, is_attention

    def model():
        torch.manual_seed(0)
        return nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.5), nn.ReLU(), nn.Linear(16, 4))

    inputs = torch.randn(5, 8, generator=torch.Generator().manual_seed(1), requires_grad=True)
    plain = model()
    torch.manual_seed(7)
    plain(inputs).sum().backward()
    planned = _PlannedModule(model(), {0: ("none", "activations")}, is_attention)
    planned.microbatch = 0
    torch.manual_seed(7)
    output = planned(inputs)
    torch.manual_seed(99)  # whatever ran between B and W
    (input_gradient,) = torch.autograd.grad(output.sum(), inputs, retain_graph=True)
    planned.saved.pop(0).drop()  # what PlannedStage does when B ends
    weight_gradients = torch.autograd.grad(output.sum(), list(planned.module.parameters()))
    assert planned.forward_runs == 2  # the forward, and its rebuild before W
    torch.testing.assert_close(input_gradient, inputs.grad)
    for got, parameter in zip(weight_gradients, plain.parameters()):
        torch.testing.assert_close(got, parameter.grad)
