#!/usr/bin/python3
"""Size and load time of interactive reports (docs/report.md; numbers in docs/performance.md).

usage: bench/report_load.py PPSIM [OUTPUT_DIR]

Writes a 100k-op report (zb-h1, p = 8, m = 4200: 100,800 ops) and the ranking of a zoo model
(llama3-8b, every schedule, no recomputation solves), opens each in headless chromium
(chromium-driver, python3-selenium) from a file URL and prints, per report: ops, file size,
the time ppsim took to write it, the time from navigation to the first drawn chart (median of
three loads), and the time one redraw takes at full view and zoomed in 64 times (median of five)."""
import os
import statistics
import subprocess
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

ppsim = sys.argv[1]
output_dir = sys.argv[2] if len(sys.argv) > 2 else "."
source_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
cases = [
    ("zb-h1 p=8 m=4200", ["-p", "8", "-m", "4200", "--F", "1", "--B", "1", "--W", "1",
                          "--schedules", "zb-h1"]),
    ("llama3-8b, 21 schedules", [os.path.join(source_dir, "scenarios/models/llama3-8b.toml"),
                                 "--remat", "none"]),
]

options = webdriver.ChromeOptions()
options.binary_location = "/usr/bin/chromium"
for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1400,1000"):
    options.add_argument(argument)
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)

# One redraw, timed by the page itself (state.drawMs: the time its draw() took).
REDRAW = """
const done = arguments[arguments.length - 1];
window.ppsimReport.setView(arguments[0], arguments[1]);
requestAnimationFrame(() => requestAnimationFrame(() => done(window.ppsimReport.state.drawMs)));
"""

print("| report | ops | size (MB) | written in (s) | load to first chart (ms) | redraw, full view (ms) | redraw, zoomed 64x (ms) |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for name, args in cases:
    path = os.path.abspath(os.path.join(output_dir, name.split()[0] + "-report.html"))
    begin = time.perf_counter()
    subprocess.run([ppsim, "report", *args, "-q", "-o", path], check=True, stdout=subprocess.DEVNULL)
    written = time.perf_counter() - begin
    loads = []
    for _ in range(3):
        driver.get("file://" + path)
        loads.append(driver.execute_script("return window.ppsimReport.state.loadMs"))
    ops = driver.execute_script(
        "return window.ppsimReport.data.tables[0].rows.reduce((n, r) => n + (r.timeline ? r.timeline.start.length : 0), 0)")
    end = driver.execute_script("return window.ppsimReport.view().t1")
    full = statistics.median(driver.execute_async_script(REDRAW, 0, end) for _ in range(5))
    zoomed = statistics.median(
        driver.execute_async_script(REDRAW, end / 2, end / 2 + end / 64) for _ in range(5))
    print(f"| {name} | {ops} | {os.path.getsize(path) / 1e6:.1f} | {written:.2f} | "
          f"{statistics.median(loads):.0f} | {full:.1f} | {zoomed:.1f} |")
driver.quit()
