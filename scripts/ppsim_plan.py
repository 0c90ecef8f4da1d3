"""Run a ppsim recomputation plan in PyTorch's pipelining runtime (docs/torch.md).

``ppsim remat ... --plan plan.csv`` (or ``compare``) writes, per (stage, microbatch), what to
recompute: ``fwd`` is ``none``, ``full`` (the stage's forward is not stored and runs again before
its backward) or ``selective`` (only the attention cores are recomputed); ``bwd``, where the
schedule splits the backward into B (input gradients) and W (weight gradients), is ``none``,
``activations`` (what W needs is dropped after B and recomputed before W) or ``full``. The
schedule itself is ``ppsim export --to torch-csv``'s file. Standard library and torch only::

    from ppsim_plan import PlannedStage, read_plan
    plan = read_plan("plan.csv")
    stages = [PlannedStage(module, index, num_stages, device, plan=plan)
              for index, module in my_stages]
    schedule = _PipelineScheduleRuntime(stages, microbatches, loss_fn=loss_fn)
    schedule._load_csv("order.csv")

How each option runs:

- ``fwd = full``: the stage's forward under ``torch.utils.checkpoint`` (non-reentrant), which
  keeps the stage's inputs only. The checkpoint recomputes once per autograd call, and PyTorch's
  split backward makes one call for B and one per parameter group for W; B and W each run under
  one ``GraphExecGroup``, so the forward runs again once before B and once before W: ppsim's
  ``full`` + ``activations`` whatever the plan's ``bwd`` says (the first stage, whose W computes
  the whole backward, recomputes once).
- ``fwd = selective``: each submodule that ``selective(name, module)`` accepts (by default
  ``nn.MultiheadAttention``) runs under the checkpoint.
- ``bwd = activations`` or ``full`` with ``fwd = none``: the tensors the stage's autograd graph
  saved are dropped when B ends (the stage's inputs stay) and the forward runs again when W first
  needs one. PyTorch's split backward keeps B's gradients of the intermediate values for W in
  either case, so ``full`` (which would recompute B too) runs as ``activations``.
- ``level:K`` (rotor checkpoint levels) names layers inside the stage that only the cost file's
  split knows: refused; so is ``selective`` with a ``bwd`` option (PyTorch's checkpoint fails
  its recomputation inside the saved-tensor hooks that drop W's stash).

``PlannedStage.kept_bytes(microbatch)`` is what the microbatch's forward saved for backward, as
saved-tensor hooks see it: the stored activation of ppsim's memory model, or the checkpoint.
"""

import csv

import torch
from torch import nn
from torch.distributed.pipelining import PipelineStage
from torch.utils.checkpoint import GraphExecGroup, checkpoint

FORWARD_OPTIONS = ("none", "full", "selective")
BACKWARD_OPTIONS = ("none", "activations", "full")


class PlanError(ValueError):
    """A plan file that cannot be run: ``FILE:LINE: field 'NAME': sentence``."""


def read_plan(path):
    """The plan of ``path`` as {(stage, microbatch): (fwd, bwd)}; pairs not listed recompute
    nothing."""
    plan = {}
    with open(path, newline="") as file:
        rows = csv.reader(file)
        header = next(rows, None)
        if header != ["stage", "microbatch", "fwd", "bwd"]:
            raise PlanError(f"{path}:1: expected the header 'stage,microbatch,fwd,bwd', "
                            f"got {','.join(header or [])!r}")
        for line, row in enumerate(rows, start=2):
            if len(row) != 4:
                raise PlanError(f"{path}:{line}: expected 4 cells, got {len(row)}")
            for field, cell in zip(("stage", "microbatch"), row):
                if not cell.isdigit():
                    raise PlanError(f"{path}:{line}: field '{field}': expected a whole number "
                                    f">= 0, got {cell!r}")
            stage, microbatch, fwd, bwd = int(row[0]), int(row[1]), row[2], row[3]
            if fwd.startswith("level:"):
                raise PlanError(f"{path}:{line}: field 'fwd': {fwd!r} is a rotor checkpoint "
                                "level, whose layers only the cost file's split knows; plan "
                                "without --checkpoint-levels to run it in PyTorch")
            if fwd not in FORWARD_OPTIONS:
                raise PlanError(f"{path}:{line}: field 'fwd': expected one of "
                                f"{', '.join(FORWARD_OPTIONS)}, got {fwd!r}")
            if bwd not in BACKWARD_OPTIONS:
                raise PlanError(f"{path}:{line}: field 'bwd': expected one of "
                                f"{', '.join(BACKWARD_OPTIONS)}, got {bwd!r}")
            if fwd == "selective" and bwd != "none":
                raise PlanError(f"{path}:{line}: field 'bwd': {bwd!r} with a selective forward "
                                "cannot run: PyTorch's checkpoint (the attention's) fails inside "
                                "the saved-tensor hooks that drop W's stash")
            if (stage, microbatch) in plan:
                raise PlanError(f"{path}:{line}: stage {stage}, microbatch {microbatch} is "
                                "planned twice")
            plan[stage, microbatch] = (fwd, bwd)
    return plan


def is_attention(_name, module):
    """The default ``selective`` choice: the attention blocks (Korthikanti et al.'s attention
    core; arXiv 2205.05198, section 4.2)."""
    return isinstance(module, nn.MultiheadAttention)


class _KeptBytes:
    """The bytes a forward saves for backward: each tensor's elements once (a view of the same
    elements is the same tensor), parameters left out (they are kept whatever the plan). A view
    counts its own elements, not its storage's: the first stage keeps a microbatch of the batch
    the caller holds."""

    def __init__(self, parameters):
        self._parameters = parameters  # data_ptr of every parameter of the stage
        self._tensors = {}

    def count(self, tensor):
        if tensor.data_ptr() not in self._parameters:
            self._tensors[tensor.data_ptr(), tensor.numel()] = (
                tensor.numel() * tensor.element_size())
        return tensor

    @property
    def total(self):
        return sum(self._tensors.values())


class _SavedTensors:
    """What one microbatch's forward saved for backward, by the order of saving, so that it can
    be dropped after B and rebuilt by running the forward again (the same order)."""

    def __init__(self, rerun, kept=None):
        self.tensors = []
        self.dropped = False
        self._rerun = rerun
        self._kept = kept
        # The random state the forward ran with: the rebuild draws the same dropout masks, as
        # torch.utils.checkpoint's preserve_rng_state does.
        self._cpu_rng = torch.get_rng_state()
        self._cuda_rng = torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None

    def pack(self, tensor):
        if self._kept and not self.dropped:
            self._kept.count(tensor)
        self.tensors.append(tensor)
        return len(self.tensors) - 1

    def unpack(self, index):
        if self.dropped:
            self.tensors = []
            devices = range(len(self._cuda_rng)) if self._cuda_rng else []
            with torch.random.fork_rng(devices=devices), torch.enable_grad(), \
                    torch.autograd.graph.saved_tensors_hooks(self.pack, lambda _: None):
                torch.set_rng_state(self._cpu_rng)
                if self._cuda_rng:
                    torch.cuda.set_rng_state_all(self._cuda_rng)
                self._rerun()
            self.dropped = False
            self._kept = None  # a rebuild is not what the forward kept
        return self.tensors[index]

    def drop(self):
        self.tensors = []
        self.dropped = True


class _PlannedModule(nn.Module):
    """The stage's module, run as the plan says for the microbatch PlannedStage sets."""

    def __init__(self, module, stage_plan, selective):
        super().__init__()
        self.module = module
        self.stage_plan = stage_plan  # {microbatch: (fwd, bwd)}
        self.microbatch = None  # None: PyTorch's shape inference, run as written, not counted
        self.saved = {}  # microbatch -> _SavedTensors, for bwd options with fwd = none
        self.kept_bytes = {}  # microbatch -> bytes its forward saved for backward (_KeptBytes)
        self._parameter_pointers = {p.data_ptr() for p in module.parameters()}
        self.forward_runs = 0  # forwards and recomputations of the stage module
        self.selected_runs = 0  # runs of the submodules `selective` picked, recomputations included
        self._checkpointing_selected = False
        for name, child in module.named_modules():
            if name and selective(name, child):
                child.forward = self._selectable(child.forward)

    def _selectable(self, forward):
        def counted(*args, **kwargs):
            self.selected_runs += 1
            return forward(*args, **kwargs)

        def run(*args, **kwargs):
            if not self._checkpointing_selected:
                return counted(*args, **kwargs)
            return checkpoint(counted, *args, use_reentrant=False, **kwargs)
        return run

    def _run(self, *args, **kwargs):
        self.forward_runs += 1
        return self.module(*args, **kwargs)

    def forward(self, *args, **kwargs):
        if self.microbatch is None:  # PyTorch's shape inference: not a run of the step
            selected_runs = self.selected_runs
            output = self.module(*args, **kwargs)
            self.selected_runs = selected_runs
            return output
        fwd, bwd = self.stage_plan.get(self.microbatch, ("none", "none"))
        self._checkpointing_selected = fwd == "selective"
        kept = _KeptBytes(self._parameter_pointers)
        self.kept_bytes[self.microbatch] = kept
        try:
            if fwd != "full" and bwd != "none":
                saved = _SavedTensors(lambda: self._run(*args, **kwargs), kept)
                self.saved[self.microbatch] = saved
                with torch.autograd.graph.saved_tensors_hooks(saved.pack, saved.unpack):
                    return self._run(*args, **kwargs)
            if fwd == "full":
                # The checkpoint keeps the stage's inputs (its own hooks hold nothing else).
                for value in (*args, *kwargs.values()):
                    if torch.is_tensor(value):
                        kept.count(value)
                return checkpoint(self._run, *args, use_reentrant=False, **kwargs)
            if fwd == "selective":
                # A checkpoint run inside another saved-tensor hook fails its recomputation
                # ("different metadata"), so what a selective forward keeps is not counted.
                del self.kept_bytes[self.microbatch]
                return self._run(*args, **kwargs)
            with torch.autograd.graph.saved_tensors_hooks(kept.count, lambda t: t):
                return self._run(*args, **kwargs)
        finally:
            self._checkpointing_selected = False


class PlannedStage(PipelineStage):
    """A PipelineStage that recomputes as ``plan`` ({(stage, microbatch): (fwd, bwd)}, from
    read_plan) says for its stage. ``selective(name, module)`` picks the submodules that
    ``fwd = selective`` recomputes."""

    def __init__(self, submodule, stage_index, num_stages, device, plan, selective=is_attention,
                 **kwargs):
        stage_plan = {microbatch: options for (stage, microbatch), options in plan.items()
                      if stage == stage_index}
        super().__init__(_PlannedModule(submodule, stage_plan, selective), stage_index,
                         num_stages, device, **kwargs)

    @property
    def forward_runs(self):
        """How often the stage's module ran: its forwards and recomputations."""
        return self.submod.forward_runs

    def kept_bytes(self, microbatch):
        """The bytes microbatch's forward saved for backward, as saved-tensor hooks see them: each
        tensor once, the stage's parameters left out. What ppsim's memory model calls the
        stage's stored activation (a storing F) or its checkpoint (a recomputed one). None for a
        selective forward, which the hooks cannot watch."""
        kept = self.submod.kept_bytes.get(microbatch)
        return kept.total if kept else None

    @property
    def selected_runs(self):
        """How often the submodules `selective` picked ran, recomputations included."""
        return self.submod.selected_runs

    def forward_one_chunk(self, fwd_chunk_id, *args, **kwargs):
        self.submod.microbatch = fwd_chunk_id
        try:
            return super().forward_one_chunk(fwd_chunk_id, *args, **kwargs)
        finally:
            self.submod.microbatch = None

    def backward_one_chunk(self, bwd_chunk_id, loss=None, full_backward=True,
                           last_backward=False):
        saved = self.submod.saved.pop(bwd_chunk_id, None)
        if saved is not None and full_backward:
            raise PlanError(f"stage {self.stage_index}, microbatch {bwd_chunk_id}: a backward "
                            "option ('bwd') needs a schedule that splits B and W")
        with GraphExecGroup():  # one recomputation for the autograd calls of B
            super().backward_one_chunk(bwd_chunk_id, loss=loss, full_backward=full_backward,
                                       last_backward=last_backward)
        if saved is not None:
            saved.drop()  # B is done: what W needs is computed again when W asks for it

    def backward_weight_one_chunk(self, bwd_chunk_id, last_backward=False):
        with GraphExecGroup():  # one for W's, one autograd call per parameter group
            super().backward_weight_one_chunk(bwd_chunk_id, last_backward=last_backward)
