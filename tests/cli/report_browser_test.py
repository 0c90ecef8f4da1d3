#!/usr/bin/python3
"""The interactive report (docs/report.md) in a real browser: headless Debian chromium driven by
chromedriver through selenium. Writes a report with the ppsim binary, opens it from a file URL
and checks that it loads without a console error, that the table sorts, that zoom, pan and
hover work and name the right op, that memory curves and cap lines are drawn and that the
critical path shows; screenshots at two zoom levels are written to the output folder.

usage: report_browser_test.py PPSIM SOURCE_DIR OUTPUT_DIR
Exits 77 (ctest: skipped) when selenium, chromium or chromedriver is missing."""
import json
import math
import os
import re
import shutil
import subprocess
import sys

SKIPPED = 77


def skip(reason):
    print(f"SKIPPED: {reason}")
    sys.exit(SKIPPED)


try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.actions.action_builder import ActionBuilder
    from selenium.webdriver.common.actions.wheel_input import ScrollOrigin
    from selenium.webdriver.common.by import By
except ImportError:
    skip("python3-selenium is not installed")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver") or (
    "/usr/bin/chromedriver" if os.path.exists("/usr/bin/chromedriver") else None)
if not CHROMIUM:
    skip("chromium is not installed")
if not CHROMEDRIVER:
    skip("chromedriver (chromium-driver) is not installed")

ppsim, source_dir, output_dir = sys.argv[1:4]
os.makedirs(output_dir, exist_ok=True)
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print(f"FAILED: {message}")


def write_report(name, *args):
    path = os.path.join(output_dir, name)
    subprocess.run([ppsim, "report", *args, "-o", path, "--quiet"], check=True,
                   stdout=subprocess.DEVNULL)
    return path


def embedded_data(path):
    """The run data as the page embeds it, read back independently of the page's script."""
    with open(path, encoding="utf-8") as page:
        text = page.read()
    match = re.search(r'<script type="application/json" id="ppsim-data">(.*?)</script>', text,
                      re.S)
    return json.loads(match.group(1))


def start_browser():
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu",
                     "--disable-dev-shm-usage", "--window-size=1400,1000",
                     "--force-device-scale-factor=1"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def console_errors(driver):
    return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def hover_op(driver, slot, entry):
    """Moves the mouse onto where the page draws `entry` of run `slot`; returns the tooltip."""
    x, y = driver.execute_script(
        "const canvas = document.getElementById('chart');"
        "const op = window.ppsimReport.opPosition(arguments[0], arguments[1]);"
        "window.scrollTo(0, canvas.getBoundingClientRect().top + window.scrollY + op.y - 100);"
        "const box = canvas.getBoundingClientRect();"
        "return [Math.round(box.left + op.x), Math.round(box.top + op.y)];", slot, entry)
    actions = ActionBuilder(driver)
    actions.pointer_action.move_to_location(x, y)
    actions.perform()
    return driver.execute_script("return window.ppsimReport.tooltipText()") or ""


def next_frame(driver):
    """The drawing state once the page has drawn its next frame."""
    return driver.execute_script(
        "return new Promise(done => requestAnimationFrame(() => done(window.ppsimReport.state.drawn)))")


def view(driver):
    return driver.execute_script("return window.ppsimReport.view()")


def test_model_report(driver):
    # A real model (8 devices, 64 microbatches, 80 GiB budget): every schedule, no remat solves.
    path = write_report("llama3-8b.html",
                        os.path.join(source_dir, "scenarios/models/llama3-8b.toml"),
                        "--remat", "none")
    data = embedded_data(path)
    rows = data["tables"][0]["rows"]
    driver.get("file://" + os.path.abspath(path))
    check(driver.execute_script("return window.ppsimReport.state.ready") is True,
          "the page drew its chart on load")
    check(console_errors(driver) == [], f"no console error on load: {console_errors(driver)}")

    # Sorting: the rows follow the clicked column, both ways, missing values last.
    def shown_order():
        return [int(tr.get_attribute("data-index"))
                for tr in driver.find_elements(By.CSS_SELECTOR, "#ranking-body tr")]

    check(shown_order() == list(range(len(rows))), "the table opens in ranking order")
    header = lambda key: driver.find_element(By.CSS_SELECTOR, f'#ranking-head th[data-key="{key}"]')
    header("peak").click()
    runs = [k for k, row in enumerate(rows) if "summary" in row]
    by_peak = sorted(runs, key=lambda k: (rows[k]["peak"], k))
    check(shown_order()[:len(runs)] == by_peak, "clicking 'peak memory' sorts by peak, lowest first")
    header("peak").click()
    by_peak_down = sorted(runs, key=lambda k: (-rows[k]["peak"], k))
    check(shown_order()[:len(runs)] == by_peak_down, "a second click sorts highest first")
    header("makespan").click()
    makespans = [float(td.text) for td in
                 driver.find_elements(By.CSS_SELECTOR, "#ranking-body tr:not(.unavailable) td.makespan")]
    check(len(makespans) == len(runs) and makespans == sorted(makespans),
          "clicking 'makespan' sorts the shown makespans ascending")

    # The memory curve and the budget line of each device of the selected run.
    selected = driver.execute_script("return window.ppsimReport.state.selected[0]")
    devices = rows[selected]["timeline"]["devices"]
    drawn = driver.execute_script("return window.ppsimReport.state.drawn")
    check(drawn["memoryCurves"] == devices and drawn["capLines"] == devices,
          f"one memory curve and one budget line per device: {drawn}")
    check(drawn["ops"] > 0, "ops are drawn")
    driver.save_screenshot(os.path.join(output_dir, "llama3-8b-full.png"))

    # Zoom: the button halves the window; the wheel narrows it around the pointer.
    full = view(driver)
    driver.find_element(By.ID, "zoom-in").click()
    zoomed = view(driver)
    check(math.isclose(zoomed["t1"] - zoomed["t0"], (full["t1"] - full["t0"]) / 2, rel_tol=1e-9),
          f"zoom in halves the window: {full} -> {zoomed}")
    canvas = driver.find_element(By.ID, "chart")
    ActionChains(driver).scroll_from_origin(ScrollOrigin.from_element(canvas, 0, -100), 0, -400).perform()
    wheeled = view(driver)
    check(wheeled["t1"] - wheeled["t0"] < zoomed["t1"] - zoomed["t0"],
          f"the wheel zooms in: {zoomed} -> {wheeled}")
    driver.find_element(By.ID, "zoom-fit").click()
    check(view(driver) == full, "fit shows the whole run again")

    # Hover: zoom onto a known op (device 1's tenth op), move the mouse onto it, read the tooltip.
    timeline = rows[selected]["timeline"]
    entry = timeline["device_offsets"][1] + 9
    start, end = timeline["start"][entry], timeline["end"][entry]
    ms_per_unit = {"s": 1000, "ms": 1, "us": 0.001}[data["time_unit"]]
    driver.execute_script("window.ppsimReport.setView(arguments[0], arguments[1])",
                          start - 4 * (end - start), end + 4 * (end - start))
    next_frame(driver)
    tooltip = hover_op(driver, 0, entry)
    kind = timeline["kinds"][timeline["kind"][entry]]
    expected_name = f"{kind} stage {timeline['stage'][entry]}, microbatch {timeline['microbatch'][entry]}  (device 1)"
    check(tooltip.startswith(expected_name), f"the tooltip names {expected_name!r}: {tooltip!r}")
    times = re.search(r"start (\S+) ms, end (\S+) ms", tooltip)
    check(times is not None and math.isclose(float(times.group(1)), start * ms_per_unit, rel_tol=1e-5)
          and math.isclose(float(times.group(2)), end * ms_per_unit, rel_tol=1e-5),
          f"the tooltip gives the op's start {start} and end {end} ms: {tooltip!r}")
    check("waited for: " in tooltip, "the tooltip says what the op waited for")
    driver.save_screenshot(os.path.join(output_dir, "llama3-8b-zoomed.png"))

    # Panning by dragging moves the window later in time by the dragged distance.
    before = view(driver)
    ActionChains(driver).click_and_hold().move_by_offset(-200, 0).release().perform()
    after = view(driver)
    check(after["t0"] > before["t0"] and math.isclose(after["t1"] - after["t0"], before["t1"] - before["t0"], rel_tol=1e-9),
          f"dragging left pans to later times: {before} -> {after}")

    # A second schedule on the same time axis, and the critical path on demand.
    driver.find_element(By.ID, "zoom-fit").click()
    second = next(k for k in runs if k != selected)
    driver.find_element(By.CSS_SELECTOR, f'#ranking-body tr[data-index="{second}"] button').click()
    drawn = next_frame(driver)
    check(drawn["memoryCurves"] == 2 * devices, f"two runs draw two sets of memory curves: {drawn}")
    check(drawn["criticalOps"] == 0, "the critical path is hidden until asked for")
    driver.find_element(By.ID, "critical-path").click()
    drawn = next_frame(driver)
    path_length = len(rows[selected]["timeline"]["critical_path"]) + len(rows[second]["timeline"]["critical_path"])
    check(drawn["criticalOps"] == path_length, f"every critical op is outlined: {drawn}, {path_length}")
    check(console_errors(driver) == [], f"no console error after the interactions: {console_errors(driver)}")


def test_recomputation_marked(driver):
    # The full-recomputation schedule on the quickstart: R ops exist and the tooltip says so.
    path = write_report("quickstart-remat.html", os.path.join(source_dir, "scenarios/quickstart.toml"),
                        "--schedules", "full-remat")
    rows = embedded_data(path)["tables"][0]["rows"]
    driver.get("file://" + os.path.abspath(path))
    timeline = rows[0]["timeline"]
    recompute = [e for e, kind in enumerate(timeline["kind"]) if timeline["kinds"][kind] == "R"]
    check(recompute != [], "the full-recomputation schedule has R ops")
    entry = recompute[0]
    tooltip = hover_op(driver, 0, entry)
    check(tooltip.startswith("R stage") and "recomputation" in tooltip,
          f"hovering an R op says it is a recomputation: {tooltip!r}")
    check(console_errors(driver) == [], f"no console error: {console_errors(driver)}")


driver = start_browser()
try:
    test_model_report(driver)
    test_recomputation_marked(driver)
finally:
    driver.quit()
if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("all report browser checks passed")
