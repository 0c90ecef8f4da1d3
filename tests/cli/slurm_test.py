#!/usr/bin/env python3
"""`ppsim sweep --slurm` on a real Slurm (docs/sweep.md, "Slurm"): starts munged, slurmctld and
slurmd (Debian's munge and slurm-wlm) on this machine with a configuration of its own, submits
a sweep as a job array of two tasks and a merge job, kills and requeues task 0 once it has
journaled a row, and checks that the requeued task resumed from its journal and that the merged
results equal a one-process run byte for byte.

usage: slurm_test.py PPSIM WORK_DIR
Exits 77 (ctest: skipped) when Slurm or munge is missing (under CI, the CI variable set, a
failure instead: scripts/setup installs them) or the test is not root (slurmd starts jobs as
their user)."""
import os
import re
import shutil
import socket
import subprocess
import sys
import time

SKIPPED = 77
DAEMONS = ["munged", "slurmctld", "slurmd"]
COMMANDS = ["sbatch", "squeue", "scontrol", "sinfo"]


def skip(reason, strict=True):
    if strict and os.environ.get("CI"):
        sys.exit(f"FAILED: {reason} (CI installs slurm-wlm and munge through scripts/setup)")
    print(f"SKIPPED: {reason}")
    sys.exit(SKIPPED)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(what, ready, seconds, logs=()):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if ready():
            return
        time.sleep(0.2)
    for log in logs:
        if os.path.exists(log):
            print(f"--- {log}\n{open(log, encoding='utf-8', errors='replace').read()[-3000:]}")
    sys.exit(f"FAILED: {what} within {seconds} s")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    ppsim, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    missing = [tool for tool in DAEMONS + COMMANDS
               if not shutil.which(tool) and not os.path.exists(f"/usr/sbin/{tool}")]
    if missing:
        skip(f"{', '.join(missing)} not installed (Debian packages slurm-wlm and munge)")
    if os.geteuid() != 0:
        skip("slurmd starts jobs as their user: run as root", strict=False)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    os.chmod(work, 0o700)  # munged refuses a key in a folder others can write
    daemons = []
    try:
        run_test(ppsim, work, daemons)
    finally:
        for daemon in reversed(daemons):
            daemon.terminate()
        for daemon in daemons:
            try:
                daemon.wait(timeout=10)
            except subprocess.TimeoutExpired:
                daemon.kill()


def run_test(ppsim, work, daemons):
    def sbin(tool):
        return shutil.which(tool) or f"/usr/sbin/{tool}"

    key, munge_socket = f"{work}/munge.key", f"{work}/munge.socket"
    with open(key, "wb") as out:
        out.write(os.urandom(1024))
    os.chmod(key, 0o400)
    daemons.append(subprocess.Popen(
        [sbin("munged"), "--foreground", "--force", f"--socket={munge_socket}",
         f"--key-file={key}", f"--pid-file={work}/munged.pid", f"--log-file={work}/munged.log",
         f"--seed-file={work}/munged.seed"]))
    wait_for("munged's socket", lambda: os.path.exists(munge_socket), 20, [f"{work}/munged.log"])

    host = socket.gethostname().split(".")[0]
    os.makedirs(f"{work}/state")
    os.makedirs(f"{work}/spool")
    conf = f"{work}/slurm.conf"
    with open(conf, "w", encoding="utf-8") as out:
        out.write(f"""ClusterName=ppsimtest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={munge_socket}
StateSaveLocation={work}/state
SlurmdSpoolDir={work}/spool
SlurmctldPidFile={work}/slurmctld.pid
SlurmdPidFile={work}/slurmd.pid
SlurmctldLogFile={work}/slurmctld.log
SlurmdLogFile={work}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
NodeName={host} NodeAddr=127.0.0.1 CPUs={os.cpu_count()} State=UNKNOWN
PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP
""")
    os.environ["SLURM_CONF"] = conf
    logs = [f"{work}/slurmctld.log", f"{work}/slurmd.log"]
    daemons.append(subprocess.Popen([sbin("slurmctld"), "-D", "-i", "-f", conf]))
    daemons.append(subprocess.Popen([sbin("slurmd"), "-D", "-f", conf]))

    def node_idle():
        done = subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True, text=True,
                              check=False)
        return done.returncode == 0 and done.stdout.strip() == "idle"
    wait_for("the node idle", node_idle, 60, logs)

    # Ten points of about a second each (1F1B at p = 32, m = 32768), two tasks of five.
    with open(f"{work}/base.toml", "w", encoding="utf-8") as out:
        out.write('[cluster]\ndevices = 32\n[pipeline]\nschedule = "1f1b"\n'
                  'microbatches = 32768\n[model]\nF = 1\nB = 2\n')
    sweep = f"{work}/sweep.toml"
    with open(sweep, "w", encoding="utf-8") as out:
        out.write('base = "base.toml"\n[axes]\n"model.F" = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n')
    subprocess.run([ppsim, "sweep", sweep, "-j", "2", "-q", "-o", f"{work}/one.csv"], check=True)

    merged = f"{work}/all.csv"
    submitted = subprocess.run([ppsim, "sweep", sweep, "--slurm", "2", "-o", merged],
                               capture_output=True, text=True, check=True).stdout
    print(submitted, end="")
    job = re.match(r"submitted job array (\d+) \(2 tasks, shard i/2 each\) and merge job \d+ "
                   r"after it\nthe merged results will be written to (.*)\n", submitted)
    assert job and job.group(2) == merged, submitted
    array = job.group(1)
    directory = merged + ".slurm"

    def journaled_rows():
        try:
            with open(f"{directory}/shard-0.csv.partial", encoding="utf-8") as journal:
                return len(journal.read().splitlines()) - 1
        except FileNotFoundError:
            return 0
    wait_for("task 0 journaling a row", lambda: journaled_rows() >= 1, 120, logs)
    subprocess.run(["scontrol", "requeue", f"{array}_0"], check=True)

    def task_state():
        return subprocess.run(["squeue", "-h", "-j", f"{array}_0", "-o", "%T"],
                              capture_output=True, text=True, check=False).stdout.strip()
    wait_for("task 0 requeued", lambda: task_state() == "PENDING", 30, logs)
    # A requeued job waits two minutes before it may start again; release it now.
    subprocess.run(["scontrol", "update", f"jobid={array}_0", "StartTime=now"], check=True)
    wait_for("the merged results", lambda: os.path.exists(merged), 180,
             logs + [f"{directory}/task-0.log", f"{directory}/task-1.log",
                     f"{directory}/merge.log"])

    restarts = subprocess.run(["scontrol", "show", "job", f"{array}_0"], capture_output=True,
                              text=True, check=True).stdout
    assert re.search(r"Restarts=1\b", restarts), restarts
    with open(f"{directory}/task-0.log", encoding="utf-8") as log:
        task_log = log.read()
    # The killed run left no summary; the requeued one kept the journaled rows.
    summaries = re.findall(r"ppsim: wrote (\d+) rows to .*shard-0\.csv(.*)", task_log)
    assert len(summaries) == 1, task_log
    assert summaries[0][0] == "5" and re.fullmatch(r" \([1-4] from the earlier run\)",
                                                   summaries[0][1]), task_log
    with open(merged, "rb") as a, open(f"{work}/one.csv", "rb") as b:
        assert a.read() == b.read(), "the merged results differ from the one-process run"
    print("PASS: requeued task 0 resumed; merged results equal the one-process run")


if __name__ == "__main__":
    main()
