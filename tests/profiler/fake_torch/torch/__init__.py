"""The few torch names scripts/ppsim_annotate.py uses, recording what it calls (for its test)."""

LOG = []


class _RecordFunction:
    def __init__(self, name):
        self.name = name

    def __enter__(self):
        LOG.append(("enter", self.name))
        return self

    def __exit__(self, *_):
        LOG.append(("exit", self.name))


class _Profiler:
    record_function = _RecordFunction


class _Autograd:
    profiler = _Profiler


class _Nvtx:
    @staticmethod
    def range_push(name):
        LOG.append(("push", name))

    @staticmethod
    def range_pop():
        LOG.append(("pop",))


class _Cuda:
    nvtx = _Nvtx

    @staticmethod
    def is_available():
        return True


autograd = _Autograd()
cuda = _Cuda()
