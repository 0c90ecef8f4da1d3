"""ppsim from Python (docs/python.md): the calls of the `ppsim` command on the same library.

    import ppsim
    scenario = ppsim.Scenario.from_file("scenarios/models/llama2-7b.toml")
    result = ppsim.simulate(scenario, schedule="zb-v")
    result.makespan, result.metrics["bubble_ratio"], result.ops["start"]
    ranking = ppsim.compare(scenario)          # the records of `ppsim compare`, fastest first

A scenario is set field by field with the names of the scenario files (docs/scenario.md):
`Scenario(p=4, m=8, schedule="1f1b", F=1, B=1, W=1)` or `Scenario.from_dict({"pipeline":
{"microbatches": 8}, ...})`. ppsim's errors are `ppsim.Error` (a ValueError) carrying the CLI's
one-line message.
"""
from __future__ import annotations

import csv
import html
import json
import os
import pathlib
from typing import Any, Callable, Iterator, Mapping, Optional, Sequence

import numpy

from . import _ppsim
from ._ppsim import Error

__all__ = ["Error", "Scenario", "Result", "Gantt", "Report", "schedules", "simulate", "gantt",
           "compare", "report",
           "bounds", "remat", "synthesize", "sweep", "to_torch_csv", "from_torch_csv", "field_names"]

# Keyword shorthands of Scenario(...) -> the scenario files' field names (the CLI's flags).
_KEYWORDS = {
    "p": "cluster.devices", "devices": "cluster.devices",
    "m": "pipeline.microbatches", "microbatches": "pipeline.microbatches",
    "b": "pipeline.microbatch_size", "microbatch_size": "pipeline.microbatch_size",
    "v": "pipeline.chunks", "chunks": "pipeline.chunks",
    "schedule": "pipeline.schedule", "schedule_file": "pipeline.schedule_file",
    "F": "model.F", "B": "model.B", "W": "model.W", "R": "model.R",
    "costs": "model.costs_file", "cost_unit": "model.cost_unit",
    "budget": "cluster.memory", "memory": "cluster.memory", "K": "cluster.K",
    "memory_model": "cluster.memory_model",
    "latency": "cluster.link.latency", "bandwidth": "cluster.link.bandwidth",
    "remat": "remat.policy",
}


def _text(value: Any) -> str:
    """A Python value as the text a flag would give (TOML for lists and booleans)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(item) for item in value) + "]"
    if isinstance(value, pathlib.PurePath):
        return str(value)
    return str(value)


def _toml(value: Any) -> str:
    if isinstance(value, (str, pathlib.PurePath)):
        return json.dumps(str(value))
    return _text(value)


def _flatten(table: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for key, value in table.items():
        if isinstance(value, dict):
            yield from _flatten(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


class Scenario:
    """One scenario: a scenario file's fields (docs/scenario.md), set by keyword, by dotted name
    or from a TOML file. Copies are independent: `with_(...)` returns a changed copy."""

    def __init__(self, **fields: Any) -> None:
        self._input = _ppsim.RunInput()
        self.set(**fields)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> Scenario:
        """Reads a scenario file; relative paths inside it are taken from its folder."""
        scenario = cls.__new__(cls)
        scenario._input = _ppsim.read_scenario(str(path))
        return scenario

    @classmethod
    def from_toml(cls, text: str, source: str = "<string>",
                  base_directory: str | os.PathLike[str] = "") -> Scenario:
        """Parses scenario TOML text; `source` names it in errors."""
        scenario = cls.__new__(cls)
        scenario._input = _ppsim.parse_scenario(text, source, str(base_directory))
        return scenario

    @classmethod
    def from_dict(cls, table: Mapping[str, Any]) -> Scenario:
        """Nested tables as a scenario file has them ({"pipeline": {"microbatches": 8}})."""
        scenario = cls()
        for key, value in _flatten(table):
            scenario._input.set(key, _text(value))
        return scenario

    def set(self, **fields: Any) -> Scenario:
        """Sets fields by keyword (p, m, v, schedule, F, B, W, costs, budget, K, latency, ...)
        or, with double underscores for dots, by name (pipeline__group_size=2)."""
        for keyword, value in fields.items():
            key = _KEYWORDS.get(keyword, keyword.replace("__", "."))
            self._input.set(key, _text(value))
        return self

    def with_(self, **fields: Any) -> Scenario:
        """A copy with `fields` set."""
        copy = Scenario.__new__(Scenario)
        copy._input = self._input.copy()
        return copy.set(**fields)

    def __setitem__(self, key: str, value: Any) -> None:
        self._input.set(key, _text(value))

    @property
    def devices(self) -> int:
        return self._input.devices

    @property
    def microbatches(self) -> int:
        return self._input.microbatches

    @property
    def schedule(self) -> str:
        return self._input.schedule

    def __repr__(self) -> str:
        name = self._input.model_name or "scenario"
        return (f"<ppsim.Scenario {name}: p={self.devices} m={self.microbatches} "
                f"schedule={self.schedule}>")


def _scenario(scenario: Scenario, fields: Mapping[str, Any]) -> Scenario:
    if not isinstance(scenario, Scenario):
        raise TypeError(f"expected a ppsim.Scenario, got {type(scenario).__name__}")
    return scenario.with_(**fields) if fields else scenario


class Result:
    """One simulated run: `metrics` (the report of `ppsim simulate --format json`), `devices`
    (per-device stats), `ops` (the op timeline as NumPy arrays, or `dataframe()` with pandas),
    `explain()` (where the idle time goes) and, when asked for, `svg` (the Gantt chart)."""

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.metrics: dict[str, Any] = json.loads(raw["report"])
        self.devices = self.metrics.pop("devices", [])
        self.ops = dict(raw["ops"])
        self.ops["kind"] = numpy.asarray(self.ops["kind"])
        self.svg = raw["svg"] or None
        self._explanation: str = raw["explanation"]

    @property
    def makespan(self) -> float:
        return float(self.metrics["makespan"])

    def explain(self) -> str:
        """The critical path and where each device's idle time goes (`simulate --explain`)."""
        return self._explanation

    def dataframe(self) -> Any:
        """The op timeline as a pandas DataFrame (needs pandas)."""
        import pandas  # type: ignore[import-untyped]  # optional: pandas-stubs not required
        return pandas.DataFrame(self.ops)

    def _repr_svg_(self) -> Optional[str]:
        return self.svg

    def __repr__(self) -> str:
        return (f"<ppsim.Result {self.metrics.get('schedule')}: makespan {self.makespan}, "
                f"bubble {self.metrics.get('bubble_ratio', 0):.2%}>")


def field_names() -> list[str]:
    """Every settable field of a scenario."""
    return list(_ppsim.field_names())


def schedules() -> list[dict[str, Any]]:
    """The registered schedules: name, description, default chunks, split backward, pipes."""
    return list(_ppsim.schedules())


def simulate(scenario: Scenario, gantt: bool = False, **fields: Any) -> Result:
    """Simulates one run (`ppsim simulate`); `fields` change a copy of the scenario first.
    With `gantt=True` the result carries the Gantt chart (`svg`, shown by Jupyter)."""
    return Result(_ppsim.simulate(_scenario(scenario, fields)._input, gantt))


class Gantt:
    """A Gantt chart with memory curves (`ppsim simulate --svg`): the SVG text (`svg`), shown
    inline by Jupyter and written by `save(path)`."""

    def __init__(self, svg: str) -> None:
        self.svg = svg

    def save(self, path: str | os.PathLike[str]) -> None:
        """Writes the SVG file."""
        pathlib.Path(path).write_text(self.svg, encoding="utf-8")

    def _repr_svg_(self) -> str:
        return self.svg


def gantt(scenario: Scenario, **fields: Any) -> Gantt:
    """The Gantt chart of one run (`ppsim simulate --svg`)."""
    svg = simulate(scenario, gantt=True, **fields).svg
    assert svg is not None
    return Gantt(svg)


def compare(scenario: Scenario, schedules: Optional[Sequence[str]] = None,
            caps: Optional[Sequence[Optional[float]]] = None, threads: int = 2,
            microbatch_sizes: Optional[Sequence[int]] = None,
            **fields: Any) -> list[dict[str, Any]]:
    """The ranking of `ppsim compare`: one record per (cap, schedule, policy), fastest first,
    with the run's report (as `simulate`'s metrics) or why it could not run; with
    `microbatch_sizes`, per size at the scenario's batch of m x b samples (`compare
    --microbatch-sizes`), each record naming its `microbatch_size`."""
    rankings = json.loads(_ppsim.compare(_scenario(scenario, fields)._input,
                                         list(schedules or []), list(caps or [None]), threads,
                                         list(microbatch_sizes or [])))
    return [_ranked_record(ranking, run) for ranking in rankings["rankings"]
            for run in ranking["runs"]]


class Report:
    """The interactive report of `ppsim report` (docs/report.md): one self-contained HTML page
    (`html`), shown inline by Jupyter and written by `save(path)`."""

    def __init__(self, page: str) -> None:
        self.html = page

    def save(self, path: str | os.PathLike[str]) -> None:
        """Writes the page (open it in a browser)."""
        pathlib.Path(path).write_text(self.html, encoding="utf-8")

    def _repr_html_(self) -> str:
        # The page is a whole document with its own script: Jupyter shows it in a frame.
        return ('<iframe srcdoc="%s" style="width: 100%%; height: 760px; border: 0"></iframe>'
                % html.escape(self.html, quote=True))


def report(scenario: Scenario, schedules: Optional[Sequence[str]] = None,
           caps: Optional[Sequence[Optional[float]]] = None, threads: int = 2,
           **fields: Any) -> Report:
    """The ranking of `compare` as `ppsim report`'s interactive page: every run's Gantt chart,
    memory curves and bubbles (docs/report.md)."""
    return Report(_ppsim.report(_scenario(scenario, fields)._input, list(schedules or []),
                                list(caps or [None]), threads))


def _ranked_record(ranking: Mapping[str, Any], run: Mapping[str, Any]) -> dict[str, Any]:
    """One run of `compare --format json`'s rankings as a flat record."""
    record = {"cap": ranking["cap"], "microbatch_size": ranking["microbatch_size"],
              "schedule": run["schedule"], "policy": run["policy"],
              "winner": run["winner"], "unavailable": run["unavailable"]}
    record.update(run["report"] or {})
    return record


def bounds(scenario: Scenario, **fields: Any) -> dict[str, Any]:
    """The lower bounds of `ppsim bounds --format json` (and its backward form), in the
    scenario's time unit; closed_form is None where the schedule has none."""
    return _ppsim.bounds(_scenario(scenario, fields)._input)


def remat(scenario: Scenario, time_limit: Optional[float] = None, gap: Optional[float] = None,
          **fields: Any) -> dict[str, Any]:
    """`ppsim remat --format json` (docs/remat.md): the simple policies and the StageRemat ILP
    for the scenario's schedule under its cap (`K` or `budget`), one record per policy in
    `policies`; `time_limit` (seconds, the whole call) and `gap` default to the scenario's
    remat.time_limit and remat.gap."""
    result: dict[str, Any] = json.loads(
        _ppsim.remat(_scenario(scenario, fields)._input, time_limit, gap))
    return result


def synthesize(scenario: Scenario, time_limit: float = 10, max_evaluations: int = 500000,
               seed: int = 1, **fields: Any) -> dict[str, Any]:
    """`ppsim synthesize --format json` (docs/synthesis.md): the schedule searched under the
    scenario's cap, its certified gap, every backward form searched, and the schedule itself:
    its orders as PyTorch pipelining's CSV (`torch_csv`) and its recomputation plan as
    docs/remat.md's CSV (`plan_csv`). Reaching `max_evaluations` before `time_limit` makes the
    result reproducible."""
    raw = _ppsim.synthesize(_scenario(scenario, fields)._input, float(time_limit),
                            int(max_evaluations), int(seed))
    result: dict[str, Any] = json.loads(raw["report"])
    result["torch_csv"] = raw["torch_csv"]
    result["plan_csv"] = raw["plan_csv"]
    return result


def sweep(path: str | os.PathLike[str], threads: int = 2,
          progress: Optional[Callable[[int, int], None]] = None) -> list[dict[str, str]]:
    """Runs a sweep file (`ppsim sweep FILE`, docs/sweep.md): one record per point, its columns
    as the command's CSV has them (text). The points run on `threads` threads without the GIL;
    `progress(done, total)` is called between batches, and Ctrl-C stops the sweep there."""
    columns, rows = _ppsim.sweep(str(path), threads, progress)
    return [dict(zip(columns, values)) for values in csv.reader(rows)]


def from_torch_csv(path: str | os.PathLike[str], scenario: Optional[Scenario] = None,
                   **fields: Any) -> Scenario:
    """A scenario that runs PyTorch pipelining's CSV at `path` (pipeline.schedule_file) instead
    of a generated schedule; p and m come from the file unless given."""
    base = scenario if scenario is not None else Scenario()
    return _scenario(base, fields).with_(schedule_file=path)


def to_torch_csv(scenario: Scenario, **fields: Any) -> str:
    """The order `ppsim export --to torch-csv` writes (PyTorch pipelining's CSV)."""
    return _ppsim.to_torch_csv(_scenario(scenario, fields)._input)
