"""Name the blocks of a PyTorch model with ppsim's phase ranges (docs/profiler.md).

ppsim reads per-layer costs from ranges named ``L<layer>.<pass>.mb<microbatch>``: ``L03.F.mb0`` is
the forward of block 3 on microbatch 0, ``L03.BW.mb0`` its whole backward. This helper puts such a
range around every block's forward and backward, both as a ``record_function`` range (for
``ppsim profile import`` of a PyTorch profiler trace) and as an NVTX range (for Nsight Systems and
ppsim's CUPTI injection library). Standard library and torch only::

    from ppsim_annotate import annotate
    phases = annotate(model.layers)          # the blocks, in pipeline order
    with torch.profiler.profile(activities=[...CPU, ...CUDA], record_shapes=True) as prof:
        for step in range(4):                # the first iterations are dropped by --warmup
            for mb, batch in enumerate(microbatches):
                phases.microbatch = mb
                loss = model(batch).sum()
                loss.backward()
    prof.export_chrome_trace("trace.json")
    phases.remove()
    # ppsim profile import trace.json --warmup 1 -o costs.csv

A block run under ``torch.utils.checkpoint`` (non-reentrant) gets its recomputation measured too:
pass ``context_fn=phases.recompute_context(block)`` and the recomputation, which PyTorch runs
inside the block's backward, becomes an ``R`` range (``L03.R.mb0``), so the backward range keeps
only the backward's own work; its forward hooks do not open a second forward range meanwhile::

    y = checkpoint(block, x, use_reentrant=False, context_fn=phases.recompute_context(block))

``record_shapes=True`` lets ppsim split each backward range into B (input gradients) and W (weight
gradients). The backward range opens when autograd reaches the block's outputs and closes when the
gradients of its inputs are ready; weight gradients computed in the same autograd nodes fall
inside it.
"""

import contextlib
import threading

import torch


class PhaseAnnotator:
    """Forward and backward hooks that open and close one range per block and pass."""

    def __init__(self, blocks, first_layer=0, nvtx=True):
        self.microbatch = 0
        self._nvtx = nvtx and torch.cuda.is_available()
        self._open = threading.local()  # backward hooks run on autograd's threads
        self._handles = []
        # Blocks whose last forward had no input that requires a gradient (the first block of a
        # model fed plain data): PyTorch fires their full backward hook as soon as the output
        # gradient arrives, so their backward range closes when their parameters' gradients are
        # all computed instead.
        self._inputs_without_grad = set()
        self._layers = {}  # id(block) -> layer id, for recompute_context
        for offset, block in enumerate(blocks):
            layer = first_layer + offset
            self._layers[id(block)] = layer
            parameters = [p for p in block.parameters() if p.requires_grad]
            if parameters:
                self._handles.append(block.register_forward_pre_hook(self._input_checker(layer)))
                self._handles.append(torch.autograd.graph.register_multi_grad_hook(
                    parameters, self._parameters_closer(layer), mode="all"))
            self._handles.append(block.register_forward_pre_hook(self._opener(layer, "F")))
            self._handles.append(block.register_forward_hook(self._closer()))
            self._handles.append(block.register_full_backward_pre_hook(self._opener(layer, "BW")))
            self._handles.append(block.register_full_backward_hook(self._closer(layer)))

    def name(self, layer, phase):
        """The range name ppsim reads: L03.F.mb0."""
        return "L%02d.%s.mb%d" % (layer, phase, self.microbatch)

    def _stack(self):
        if not hasattr(self._open, "ranges"):
            self._open.ranges = []
        return self._open.ranges

    def _recomputing(self):
        return getattr(self._open, "recomputing", 0) > 0

    def _push(self, name):
        scope = torch.autograd.profiler.record_function(name)
        scope.__enter__()
        if self._nvtx:
            torch.cuda.nvtx.range_push(name)
        self._stack().append(scope)

    def _opener(self, layer, phase):
        def hook(*_):
            # A checkpoint's recomputation calls the block's forward again, inside its backward:
            # it is the R range's, and may stop before the forward's end (PyTorch's early stop),
            # where a forward hook would never close a range.
            if phase == "F" and self._recomputing():
                return
            self._push(self.name(layer, phase))
        return hook

    def recompute_context(self, block):
        """The ``context_fn`` of ``torch.utils.checkpoint.checkpoint(block, ...,
        use_reentrant=False)``: the recomputation of ``block`` runs in an R range."""
        layer = self._layers[id(block)]

        @contextlib.contextmanager
        def recomputation():
            self._push(self.name(layer, "R"))
            # A depth, not a flag: a checkpoint may run inside another's recomputation.
            self._open.recomputing = getattr(self._open, "recomputing", 0) + 1
            try:
                yield
            finally:
                self._open.recomputing -= 1
                self._close()

        return lambda: (contextlib.nullcontext(), recomputation())

    def _input_checker(self, layer):
        def hook(_module, inputs):
            if self._recomputing():
                return
            if any(torch.is_tensor(x) and x.requires_grad for x in inputs):
                self._inputs_without_grad.discard(layer)
            else:
                self._inputs_without_grad.add(layer)
        return hook

    def _close(self):
        stack = self._stack()
        if not stack:  # a hook that fired without its opener (a module reused elsewhere)
            return
        if self._nvtx:
            torch.cuda.nvtx.range_pop()
        stack.pop().__exit__(None, None, None)

    def _closer(self, backward_of=None):
        def hook(*_):
            if backward_of is None and self._recomputing():
                return
            if backward_of not in self._inputs_without_grad:
                self._close()
        return hook

    def _parameters_closer(self, layer):
        def hook(_grads):
            if layer in self._inputs_without_grad:
                self._close()
        return hook

    def remove(self):
        """Removes every hook."""
        for handle in self._handles:
            handle.remove()
        self._handles = []


def annotate(blocks, first_layer=0, nvtx=True):
    """Hooks every block of ``blocks`` (an iterable of modules, in pipeline order); ``first_layer``
    is the id of the first (a pipeline rank's blocks start where the previous rank's end)."""
    return PhaseAnnotator(list(blocks), first_layer, nvtx)
