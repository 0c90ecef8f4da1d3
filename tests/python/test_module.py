"""`import ppsim` (issue 31, docs/python.md): every call, its errors, results equal to the CLI's
on the zoo, the GIL released while ppsim computes, no leak over many calls."""
import csv
import io
import json
import os
import pathlib
import resource
import threading
import time

import pytest

from conftest import REPOSITORY

MODULE_DIR = os.environ.get("PPSIM_MODULE_DIR")
if not MODULE_DIR:
    pytest.skip("the Python module was not built (pybind11 missing; scripts/setup installs it)",
                allow_module_level=True)
import sys  # noqa: E402

sys.path.insert(0, MODULE_DIR)
import ppsim as pp  # noqa: E402  (the `ppsim` fixture is the CLI)

MODELS = sorted((REPOSITORY / "scenarios" / "models").glob("*.toml"))


def test_schedules_lists_the_registry():
    names = [entry["name"] for entry in pp.schedules()]
    assert names[:3] == ["gpipe", "1f1b", "1f1b-split"] and "dualpipev" in names
    zbv = next(entry for entry in pp.schedules() if entry["name"] == "zb-v")
    assert zbv["chunks"] == 2 and zbv["split_backward"] and zbv["pipes"] == 1


@pytest.mark.parametrize("model", MODELS, ids=lambda path: path.stem)
def test_simulate_equals_the_cli_on_the_zoo(ppsim, model):
    for schedule in ("1f1b", "zb-v"):
        cli = json.loads(ppsim("simulate", model, "--schedule", schedule, "--format", "json"))
        result = ppsim_module_simulate(model, schedule)
        devices = cli.pop("devices")
        assert result.metrics == cli
        assert result.devices == devices
        assert result.makespan == cli["makespan"]
        # The timeline: every op once, the last end is the makespan.
        ops = result.ops
        assert len(ops["start"]) == len(ops["end"]) == len(ops["kind"]) == len(ops["device"])
        assert max(ops["end"]) == pytest.approx(cli["makespan"], rel=1e-12)
        assert (ops["end"] >= ops["start"]).all()


def ppsim_module_simulate(model, schedule):
    return pp.simulate(pp.Scenario.from_file(model), schedule=schedule)


def test_bounds_and_the_torch_csv_equal_the_cli(ppsim):
    model = REPOSITORY / "scenarios" / "models" / "llama2-7b.toml"
    scenario = pp.Scenario.from_file(model)
    cli = json.loads(ppsim("bounds", model, "--format", "json"))
    bounds = pp.bounds(scenario)
    assert bounds["lower_bounds"] == pytest.approx(cli["lower_bounds"], rel=1e-12)
    assert bounds["best_lower_bound"] == pytest.approx(cli["best_lower_bound"], rel=1e-12)
    assert pp.to_torch_csv(scenario, schedule="zb-v") == ppsim_cli_export(ppsim, model)


def ppsim_cli_export(ppsim, model):
    return ppsim("export", model, "--schedule", "zb-v")


def test_compare_names_the_cli_winner_with_the_same_makespans(ppsim):
    model = REPOSITORY / "scenarios" / "models" / "gpt-1.5b.toml"
    ranking = pp.compare(pp.Scenario.from_file(model))
    rows = list(csv.DictReader(io.StringIO(ppsim("compare", model, "--format", "csv"))))
    assert [(r["schedule"], r["policy"]) for r in ranking] == [
        (row["schedule"], row["remat"]) for row in rows]
    for record, row in zip(ranking, rows):
        if record["unavailable"] is None:
            assert record["makespan"] == pytest.approx(float(row["makespan"]), rel=1e-9)
    assert ranking[0]["winner"] and sum(r["winner"] for r in ranking) == 1
    # `compare --format json` holds the same records (issue 31: every table machine-readable).
    rankings = json.loads(ppsim("compare", model, "--format", "json"))["rankings"]
    assert ranking == [pp._ranked_record(r, run) for r in rankings for run in r["runs"]]
    assert rankings[0]["winner"] == {"schedule": ranking[0]["schedule"],
                                     "policy": ranking[0]["policy"]}


def test_scenarios_from_keywords_dicts_and_toml_are_the_same():
    by_keywords = pp.Scenario(p=4, m=8, schedule="zb-h1", F=1, B=1, W=1, latency=0.5)
    by_dict = pp.Scenario.from_dict({
        "pipeline": {"schedule": "zb-h1", "microbatches": 8},
        "cluster": {"devices": 4, "link": {"latency": 0.5}},
        "model": {"F": 1, "B": 1, "W": 1}})
    by_toml = pp.Scenario.from_toml(
        '[pipeline]\nschedule = "zb-h1"\nmicrobatches = 8\n[cluster]\ndevices = 4\n'
        'link.latency = 0.5\n[model]\nF = 1\nB = 1\nW = 1\n')
    results = [pp.simulate(s).metrics for s in (by_keywords, by_dict, by_toml)]
    assert results[0] == results[1] == results[2]
    assert results[0]["makespan"] == 33  # the CLI: ppsim simulate --schedule zb-h1 -p 4 -m 8 ... --comm 0.5
    # with_ changes a copy only.
    assert pp.simulate(by_keywords.with_(m=4)).metrics["m"] == 4
    assert by_keywords.microbatches == 8
    assert repr(by_keywords) == "<ppsim.Scenario scenario: p=4 m=8 schedule=zb-h1>"


def test_explain_and_the_gantt_chart():
    result = pp.simulate(pp.Scenario(p=4, m=8), gantt=True)
    assert "device 0" in result.explain()
    assert result._repr_svg_().startswith("<svg") or result._repr_svg_().startswith("<?xml")
    assert pp.simulate(pp.Scenario(p=4, m=8)).svg is None


@pytest.mark.parametrize("call, message", [
    (lambda: pp.Scenario(p=0), "field 'cluster.devices': expected an integer >= 1, got 0"),
    (lambda: pp.Scenario(schedule="zb-h3").set(m=4) and pp.simulate(
        pp.Scenario(schedule="zb-h3")),
     "field 'pipeline.schedule': unknown schedule 'zb-h3', did you mean 'zb-h1'?"),
    (lambda: pp.Scenario(pipeline__microbatchs=4),
     "unknown field 'pipeline.microbatchs', did you mean 'pipeline.microbatches'?"),
    (lambda: pp.Scenario.from_file("/nonexistent/s.toml"),
     "/nonexistent/s.toml: cannot open the scenario file"),
    (lambda: pp.Scenario.from_toml("[pipeline]\nmicrobatches = -1\n", "s.toml"),
     "s.toml:2: field 'pipeline.microbatches': expected an integer >= 1, got -1"),
])
def test_errors_are_ppsim_errors_with_the_one_line_message(call, message):
    with pytest.raises(pp.Error) as raised:
        call()
    assert str(raised.value) == message
    assert isinstance(raised.value, ValueError)
    with pytest.raises(TypeError, match="expected a ppsim.Scenario, got dict"):
        pp.simulate({"p": 4})


def long_sweep(folder, points):
    """A sweep file of `points` zb-h1 runs on 16 devices and 512 or more microbatches (a few ms
    each: long enough for the counter thread to tick)."""
    (folder / "base.toml").write_text('[pipeline]\nschedule = "zb-h1"\n[cluster]\n'
                                      'devices = 16\n[model]\nW = 1\n')
    sweep = folder / "long.toml"
    sweep.write_text('base = "base.toml"\n[axes]\n"pipeline.microbatches" = ['
                     + ", ".join(str(m) for m in range(512, 512 + points)) + "]\n")
    return sweep


@pytest.mark.parametrize("call", ["compare", "sweep"])
def test_the_gil_is_released_while_ppsim_computes(call, tmp_path):
    scenario = pp.Scenario.from_file(REPOSITORY / "scenarios" / "models" / "gpt-6.2b.toml")
    sweep = long_sweep(tmp_path, 100)
    ticks = []
    done = threading.Event()

    def count():
        while not done.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    counter = threading.Thread(target=count)
    counter.start()
    start = time.perf_counter()
    if call == "compare":
        pp.compare(scenario, threads=1)
    else:
        pp.sweep(sweep, threads=1)
    finish = time.perf_counter()
    done.set()
    counter.join()
    during = [t for t in ticks if start < t < finish]
    # The counter thread kept running while ppsim held no GIL: most milliseconds saw a tick.
    assert finish - start > 0.05
    assert len(during) > 0.3 * (finish - start) / 0.0012


def test_a_thousand_calls_do_not_leak():
    scenario = pp.Scenario(p=4, m=16, schedule="zb-h1", F=1, B=1, W=1)

    def rss_kib():
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * resource.getpagesize() // 1024

    for _ in range(50):  # warm the allocator
        pp.simulate(scenario)
    before = rss_kib()
    for _ in range(1000):
        pp.simulate(scenario).ops
        try:
            pp.Scenario(p=0)
        except pp.Error:
            pass
    assert rss_kib() - before < 4096


def test_sweep_gives_the_rows_of_the_cli_and_reports_progress(ppsim):
    path = REPOSITORY / "scenarios" / "papers" / "zb_bubble_rates.toml"
    seen = []
    records = pp.sweep(path, threads=2, progress=lambda done, total: seen.append((done, total)))
    assert records == list(csv.DictReader(io.StringIO(ppsim("sweep", path))))
    assert seen[-1] == (len(records), len(records)) and len(seen) > 1
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)


def test_ctrl_c_stops_a_long_sweep(tmp_path):
    import signal
    sweep = long_sweep(tmp_path, 2000)
    # Ctrl-C from another thread once the sweep runs (its 2000 points take seconds): the
    # signal is seen between two batches, without the progress callback's help.
    seen = []
    timer = threading.Timer(0.05, lambda: os.kill(os.getpid(), signal.SIGINT))

    def progress(done, total):
        if not seen:
            timer.start()
        seen.append(done)

    with pytest.raises(KeyboardInterrupt):
        pp.sweep(sweep, threads=2, progress=progress)
    timer.join()
    assert seen and seen[-1] < 2000


def test_ctrl_c_stops_a_long_compare():
    import signal
    # At 24 GiB LLaMA-2 7B's ranking runs ILPs (some 10 s on 2 cores); a Ctrl-C one second in
    # stops it after the run in progress (each ILP here limited to 2 s), and the module works on.
    scenario = pp.Scenario.from_file(REPOSITORY / "scenarios" / "models" / "llama2-7b.toml").with_(
        budget="24GiB", remat__time_limit=2)
    timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT))
    started = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        pp.compare(scenario, threads=1)
    timer.join()
    # Without the check the call would end with the whole ranking (over 20 s with one thread).
    assert time.monotonic() - started < 15  # the signal at 1 s, one ILP of 2 s, slack for load
    assert pp.compare(pp.Scenario(p=2, m=4, F=1, B=1, W=1), schedules=["1f1b"])[0]["winner"]


@pytest.mark.parametrize("call", ["remat", "synthesize"])
def test_ctrl_c_stops_a_long_ilp_or_search(call):
    import signal
    # zb-h2's ILP at p = 8, m = 32, K = 5 takes some 20 s to prove; the synthesis search is given a
    # minute. A Ctrl-C one second in ends the solver process or the search within 0.1 s.
    scenario = pp.Scenario(p=8, m=32, schedule="zb-h2", F=1, B=1, W=1, K=5)
    timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT))
    started = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        if call == "remat":
            pp.remat(scenario, time_limit=60, gap=0)
        else:
            pp.synthesize(scenario, time_limit=60, max_evaluations=10**12)
    timer.join()
    assert time.monotonic() - started < 12  # not the solve's (20 s) or the search's end (60 s)


def test_from_torch_csv_runs_an_exported_order(tmp_path):
    scenario = pp.Scenario(p=4, m=8, schedule="zb-v", F=1, B=1, W=1)
    order = tmp_path / "order.csv"
    order.write_text(pp.to_torch_csv(scenario))
    imported = pp.from_torch_csv(order, F=1, B=1, W=1)
    assert pp.simulate(imported).makespan == pp.simulate(scenario).makespan


def test_synthesize_equals_the_cli(ppsim):
    args = ["-p", 4, "-m", 8, "--F", 1, "--B", 1, "--W", 1, "--K", 4, "--schedule", "zb-h1"]
    cli = json.loads(ppsim("synthesize", *args, "--max-evaluations", 2000, "--format", "json"))
    found = pp.synthesize(pp.Scenario(p=4, m=8, F=1, B=1, W=1, K=4, schedule="zb-h1"),
                          max_evaluations=2000)
    for result in (cli, found):
        result.pop("seconds")  # wall time
    torch_csv = found.pop("torch_csv")
    plan_csv = found.pop("plan_csv")
    assert found == cli
    assert len(torch_csv.splitlines()) == 4
    assert plan_csv == "stage,microbatch,fwd,bwd\n"  # K = 4 binds nothing: no recomputation
    with pytest.raises(pp.Error, match=r"field 'remat.policy': synthesize chooses the "
                                       r"recomputation of each \(stage, microbatch\) itself"):
        pp.synthesize(pp.Scenario(p=4, m=8, remat="full"))


def test_the_package_is_typed_and_its_stubs_match_the_extension():
    # Every public call is annotated (a notebook's completion and mypy see the types), the
    # extension's stub names exactly what the compiled module defines, and mypy --strict accepts
    # the package with its stubs (issue 31: type stubs).
    import ast
    import inspect
    package = pathlib.Path(MODULE_DIR) / "ppsim"
    assert (package / "py.typed").exists()
    for name in pp.__all__:
        item = getattr(pp, name)
        callables = ([item] if inspect.isfunction(item) else
                     [m for m in vars(item).values() if inspect.isfunction(m)]
                     if inspect.isclass(item) and item is not pp.Error else [])
        for function in callables:
            signature = inspect.signature(function)
            assert signature.return_annotation is not inspect.Signature.empty, function
            for parameter in signature.parameters.values():
                if parameter.name not in ("self", "cls"):
                    assert parameter.annotation is not inspect.Parameter.empty, (function,
                                                                                 parameter)
    stub = ast.parse((package / "_ppsim.pyi").read_text())
    stubbed = {node.name: node for node in stub.body
               if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    compiled = pp._ppsim
    assert set(stubbed) == {n for n in dir(compiled) if not n.startswith("_")}
    members = {node.name for node in stubbed["RunInput"].body if isinstance(node, ast.FunctionDef)}
    assert members - {"__init__"} == {n for n in dir(compiled.RunInput) if not n.startswith("_")}
    mypy = pytest.importorskip("mypy.api")
    report, errors, status = mypy.run(["--strict", "--no-incremental", str(package)])
    assert status == 0, report + errors


def test_remat_is_the_commands_json(ppsim):
    scenario = pp.Scenario(p=4, m=16, schedule="zb-h2", F=1, B=1, W=1, K=4)
    table = pp.remat(scenario, gap=0)
    cli = json.loads(ppsim("remat", "--schedule", "zb-h2", "-p", 4, "-m", 16, "--F", 1, "--B", 1,
                           "--W", 1, "--K", 4, "--gap", 0, "--format", "json"))
    for result in (table, cli):
        result["policies"][-1].pop("seconds")  # the solve's wall-clock time
    assert table == cli
    assert [p["policy"] for p in table["policies"]] == ["none", "full", "selective", "greedy",
                                                         "ilp"]
    assert table["policies"][-1]["status"] == "optimal" and table["policies"][-1]["max_span"] == 71
    with pytest.raises(pp.Error, match="remat needs a memory budget: give --K or --memory"):
        pp.remat(pp.Scenario(p=4, m=16, schedule="zb-h2", F=1, B=1, W=1))
    with pytest.raises(pp.Error, match="field 'time_limit': expected a positive number"):
        pp.remat(scenario, time_limit=0)


def test_report_is_the_commands_page(ppsim, tmp_path):
    model = REPOSITORY / "scenarios" / "models" / "gpt-1.5b.toml"
    page = pp.report(pp.Scenario.from_file(model), schedules=["1f1b", "zb-v"])
    ppsim("report", model, "--schedules", "1f1b,zb-v", "-o", tmp_path / "cli.html", "-q")
    assert page.html == (tmp_path / "cli.html").read_text(encoding="utf-8")
    page.save(tmp_path / "saved.html")
    assert (tmp_path / "saved.html").read_text(encoding="utf-8") == page.html
    shown = page._repr_html_()
    assert shown.startswith("<iframe srcdoc=\"") and "<script" not in shown  # escaped, framed
    assert json.loads(page.html.split('<script type="application/json" id="ppsim-data">')[1]
                      .split("</script>")[0])["command"] == "compare"


def test_the_docs_tour_runs_as_written(tmp_path, monkeypatch):
    # docs/python.md's "README tour in Python" block, executed line for line in a scratch folder
    # (the scenario paths made absolute); without pandas, `dataframe()` must say it needs it.
    page = (REPOSITORY / "docs" / "python.md").read_text()
    block = page.split("## The README tour in Python")[1].split("```")[1].strip("\n")
    code = block.replace('"scenarios/', '"' + str(REPOSITORY / "scenarios") + "/")
    try:
        import pandas  # noqa: F401
    except ImportError:
        code = code.replace("result.dataframe()", "pytest.raises(ImportError, result.dataframe)")
    monkeypatch.chdir(tmp_path)
    namespace = {"pytest": pytest}
    exec(compile(code, "docs/python.md", "exec"), namespace)
    assert namespace["winner"]["winner"] and "<svg" in namespace["result"].svg
    for written in ("order.csv", "1f1b.svg", "report.html"):
        assert (tmp_path / written).stat().st_size > 0
    assert namespace["tight"].microbatches == 32
