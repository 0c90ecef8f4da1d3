"""The tiny transformer the PyTorch tests pipeline: one encoder block per stage, float64 so that
pipelined and plain gradients agree to rounding, and the plain reference step."""
import torch
from torch import nn

WIDTH, HEADS, SEQUENCE = 16, 2, 4


def blocks(stages, seed=0):
    """`stages` transformer blocks, the same on every process for the same seed."""
    generator_state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    made = [nn.TransformerEncoderLayer(WIDTH, HEADS, dim_feedforward=2 * WIDTH, dropout=0.0,
                                       batch_first=True, dtype=torch.float64)
            for _ in range(stages)]
    torch.random.set_rng_state(generator_state)
    return made


def batch(microbatches, rows_per_microbatch=2, seed=1):
    """Inputs and targets of one step, split by the pipeline into `microbatches` along dim 0."""
    generator = torch.Generator().manual_seed(seed)
    shape = (microbatches * rows_per_microbatch, SEQUENCE, WIDTH)
    return (torch.randn(shape, generator=generator, dtype=torch.float64),
            torch.randn(shape, generator=generator, dtype=torch.float64))


def loss_fn(output, target):
    return nn.functional.mse_loss(output, target)


def reference_gradients(stages, inputs, target):
    """Per stage, its parameters' gradients of one plain (not pipelined) step on the whole batch:
    what the pipeline's mean over equal microbatches of the same loss must give."""
    model = nn.Sequential(*blocks(stages))
    loss_fn(model(inputs), target).backward()
    return [{name: p.grad for name, p in block.named_parameters()} for block in model]
