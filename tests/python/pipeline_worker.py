"""One process of a pipelined step: loads each of ppsim's exported schedules into PyTorch's own
pipelining runtime (torch.distributed.pipelining, gloo on the CPU), runs one training step and
checks every gradient it holds against the plain step's."""
import csv
import datetime
import json
import os
import traceback

import torch
import torch.distributed as dist
from torch.distributed.pipelining import PipelineStage
from torch.distributed.pipelining.schedules import (_Action, _PipelineScheduleRuntime,
                                                    get_schedule_class)

import pipeline_model
from ppsim_plan import PlannedStage, read_plan


def stages_of(csv_path):
    """Per rank (row), the stage indices its actions name, and the number of stages."""
    with open(csv_path, newline="") as file:
        rows = [[_Action.from_str(cell) for cell in row] for row in csv.reader(file)]
    held = []
    for row in rows:
        indices = set()
        for action in filter(None, row):
            for part in action.sub_actions or (action,):
                indices.add(part.stage_index)
        held.append(sorted(indices))
    return held, 1 + max(max(indices) for indices in held)


def run_case(rank, name, csv_path, microbatches, plan_path=None, expected_runs=None,
             pytorch_class=None, kept_bytes_path=None):
    """With `plan_path`, the stages recompute as ppsim_plan runs it; `expected_runs` then maps
    PlannedStage's counters ("forward_runs", "selected_runs") to their value per stage, and
    `kept_bytes_path` (a folder) receives rank<r>.json: {stage: [bytes kept per microbatch]}.
    With `pytorch_class` ("GPipe", a single-stage class) PyTorch's own schedule runs instead of
    the CSV's order (the CSV gives the placement)."""
    held, stage_count = stages_of(csv_path)
    blocks = pipeline_model.blocks(stage_count)
    cpu = torch.device("cpu")
    if plan_path:
        plan = read_plan(plan_path)
        stages = [PlannedStage(blocks[index], index, stage_count, cpu, plan=plan)
                  for index in held[rank]]
    else:
        stages = [PipelineStage(blocks[index], index, stage_count, cpu) for index in held[rank]]
    if pytorch_class:
        (stage,) = stages
        schedule = get_schedule_class(pytorch_class)(stage, microbatches,
                                                     loss_fn=pipeline_model.loss_fn)
    else:
        schedule = _PipelineScheduleRuntime(stages, microbatches, loss_fn=pipeline_model.loss_fn)
        schedule._load_csv(csv_path)
    inputs, target = pipeline_model.batch(microbatches)
    if 0 in held[rank]:
        schedule.step(inputs, target=target)
    else:
        schedule.step(target=target)
    for counter, expected in (expected_runs or {}).items():
        for stage in stages:
            value = getattr(stage, counter)
            assert value == expected[stage.stage_index], (
                f"{name}, stage {stage.stage_index}: {counter} {value}, expected "
                f"{expected[stage.stage_index]}")
    if kept_bytes_path:
        kept = {stage.stage_index: [stage.kept_bytes(j) for j in range(microbatches)]
                for stage in stages}
        with open(f"{kept_bytes_path}/rank{rank}.json", "w") as file:
            json.dump(kept, file)
    expected = pipeline_model.reference_gradients(stage_count, inputs, target)
    for index in held[rank]:
        for parameter_name, parameter in blocks[index].named_parameters():
            torch.testing.assert_close(
                parameter.grad, expected[index][parameter_name], rtol=1e-9, atol=1e-12,
                msg=lambda text: f"{name}, rank {rank}, stage {index}, {parameter_name}: {text}")


def join(rank, world_size, port):
    """Joins the gloo group of `world_size` processes on this machine."""
    torch.set_num_threads(1)  # the processes share the machine's cores
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=120))


def run_cases(rank, cases):
    """`cases`: run_case's arguments after the rank, run one after another."""
    for case in cases:
        try:
            run_case(rank, *case)
        except Exception:
            # spawn reports the first process to stop, often one a failed peer left waiting
            traceback.print_exc()
            raise
        dist.barrier()


def main(rank, world_size, port, cases):
    """A process of torch.multiprocessing.spawn: joins the group and runs `cases`."""
    join(rank, world_size, port)
    try:
        run_cases(rank, cases)
    finally:
        dist.destroy_process_group()
