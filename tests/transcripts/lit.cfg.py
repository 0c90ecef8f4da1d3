# lit configuration of the doc transcripts (scripts/docs-transcripts writes the *.test files from
# the ```console blocks of README.md and docs/*.md; docs/architecture.md, "Tests").
# Parameters: ppsim (the binary under test), filecheck (LLVM's FileCheck), exec_root (scratch).
import os
import pathlib
import subprocess

import lit.formats

config.name = "ppsim-docs"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".test"]
config.excludes = ["inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = lit_config.params["exec_root"]

repo = pathlib.Path(__file__).resolve().parent.parent.parent
filecheck = lit_config.params["filecheck"]
config.substitutions.append(("%{ppsim}", lit_config.params["ppsim"]))
config.substitutions.append(
    ("%{filecheck}", filecheck + " --strict-whitespace --match-full-lines --allow-empty --dump-input=fail"))
# The scratch folder of a block: a link to scenarios/ and copies of the inputs, which commands may
# overwrite (scripts/docs-transcripts --update prepares the same folder).
config.substitutions.append(("%{scenarios}", str(repo / "scenarios")))
config.substitutions.append(("%{inputs}", str(repo / "tests" / "transcripts" / "inputs")))

# `not` (a command that must fail) sits beside FileCheck; the sanitizer settings of the build's
# ctest run reach the binary (lit starts tests with a clean environment otherwise).
config.environment["PATH"] = os.pathsep.join(
    [os.path.dirname(filecheck), os.environ.get("PATH", "/usr/bin:/bin")])
for name in ["ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "TMPDIR"]:
    if name in os.environ:
        config.environment[name] = os.environ[name]

# No NVIDIA driver on this machine: what `ppsim profile` prints there can be checked.
if not any(pathlib.Path(directory, "libcuda.so.1").exists()
           for directory in ["/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/local/cuda/lib64"]):
    config.available_features.add("no-gpu")

# `ppsim plot` runs Debian's /usr/bin/python3 with matplotlib (docs/plot.md).
if subprocess.run(["/usr/bin/python3", "-c", "import matplotlib"], capture_output=True).returncode == 0:
    config.available_features.add("matplotlib")
