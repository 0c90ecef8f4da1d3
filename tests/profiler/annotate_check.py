"""Drives scripts/ppsim_annotate.py with stand-in modules and the fake torch of fake_torch/: the
ranges of two blocks' forwards and backwards with the backward on another thread, as autograd's
GPU threads run it, which the CPU build of torch cannot show (its profiler does not record a
Python thread's ranges; tests/python/test_torch_traces.py covers the rest with the real torch):
named as ppsim reads them, balanced, and gone after remove()."""
import threading

import torch
from ppsim_annotate import annotate


class Handle:
    def __init__(self, hooks, hook):
        self.hooks, self.hook = hooks, hook

    def remove(self):
        self.hooks.remove(self.hook)


class Block:
    def __init__(self):
        self.hooks = {"pre": [], "post": [], "bpre": [], "bpost": []}

    def parameters(self):
        return []

    def _add(self, kind, hook):
        self.hooks[kind].append(hook)
        return Handle(self.hooks[kind], hook)

    def register_forward_pre_hook(self, hook):
        return self._add("pre", hook)

    def register_forward_hook(self, hook):
        return self._add("post", hook)

    def register_full_backward_pre_hook(self, hook):
        return self._add("bpre", hook)

    def register_full_backward_hook(self, hook):
        return self._add("bpost", hook)

    def forward(self):
        for hook in self.hooks["pre"]:
            hook(self, ())
        for hook in self.hooks["post"]:
            hook(self, (), None)

    def backward(self):
        for hook in self.hooks["bpre"]:
            hook(self, (None,))
        for hook in self.hooks["bpost"]:
            hook(self, (None,), (None,))


blocks = [Block(), Block()]
phases = annotate(blocks, first_layer=4)
phases.microbatch = 1
for block in blocks:
    block.forward()
worker = threading.Thread(target=lambda: [block.backward() for block in reversed(blocks)])
worker.start()
worker.join()
expected = []
for name in ["L04.F.mb1", "L05.F.mb1", "L05.BW.mb1", "L04.BW.mb1"]:
    expected += [("enter", name), ("push", name), ("pop",), ("exit", name)]
assert torch.LOG == expected, torch.LOG
phases.remove()
torch.LOG.clear()
blocks[0].forward()
assert torch.LOG == [], torch.LOG
print("ok: 4 ranges named and balanced, hooks removed")
