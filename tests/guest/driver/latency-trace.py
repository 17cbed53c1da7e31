#!/usr/bin/env python3
"""Per-stage medians of a null job and of the raw probe, from the ftrace
dump latency-trace.sh prints (Documentation/accel/vnpu/latency.rst).

usage: latency-trace.py CONSOLE_LOG

Each null job starts at the SUBMIT ioctl's entry; every stage is the first
event of its kind after the previous stage (or, for the work that runs in
parallel with the ioctl, after the start), and the table gives the median
time of each stage from the start and the median gap to the stage before.
The raw probe is cut the same way, from its descriptor write to the
prober running again.
"""
import re
import statistics
import sys

LINE = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+(\d+\.\d+):\s+(.*)$")
# Syscall events print as "sys_ioctl(fd: 3, ...)" and "sys_ioctl -> 0x0".
SYS_ENTER = re.compile(r"^sys_(\w+)\((.*)\)$")
SYS_EXIT = re.compile(r"^sys_(\w+) -> (\S+)$")
EVENT = re.compile(r"^(\S+?):\s*(.*)$")
BENCH = "b-npu-bench"


def events(path):
    inside = False
    with open(path, errors="replace") as f:
        for raw in f:
            raw = raw.rstrip("\r\n")
            if raw.endswith("VNPU-TRACE-BEGIN"):
                inside = True
                continue
            if raw.endswith("VNPU-TRACE-END"):
                break
            if not inside:
                continue
            m = LINE.match(raw)
            if not m:
                continue
            comm, pid, cpu, ts, body = m.groups()
            m = SYS_ENTER.match(body)
            if m:
                name, rest = "sys_enter_" + m.group(1), m.group(2)
            else:
                m = SYS_EXIT.match(body) or EVENT.match(body)
                if not m:
                    continue
                name, rest = m.groups()
                if body.startswith("sys_") and " -> " in body:
                    name = "sys_exit_" + name
            yield (comm, int(pid), int(cpu), float(ts) * 1e6, name, rest)


def ioctl_nr(rest):
    m = re.search(r"cmd: (?:0x)?([0-9a-f]+)", rest)
    return int(m.group(1), 16) & 0xFF if m else None


def is_bench(ev, pid):
    return ev[1] == pid


# Stages of a null job: (key, description, predicate(ev, pid), after):
# the first event matching the predicate once stage "after" was seen.
# The kernel's side runs beside the ioctls, so only causal order is used.
STAGES = [
    ("push", "SUBMIT: job pushed to its entity (drm_sched_job)",
     lambda e, p: e[4] == "drm_sched_job", None),
    ("submit_ret", "SUBMIT ioctl returns",
     lambda e, p: is_bench(e, p) and e[4] == "sys_exit_ioctl", None),
    ("wait_enter", "wait ioctl entered",
     lambda e, p: is_bench(e, p) and e[4] == "sys_enter_ioctl", "submit_ret"),
    ("wq_exec", "run_job work starts (kworker)",
     lambda e, p: e[4] == "workqueue_execute_start" and "drm_sched_run_job_work" in e[5],
     None),
    ("run_job", "vnpu_job_run() entered",
     lambda e, p: e[4] == "run_job", None),
    ("doorbell", "vnpu_job_run() returns: doorbell written",
     lambda e, p: e[4] == "run_job_ret", "run_job"),
    ("irq", "completion IRQ handler entered",
     lambda e, p: e[4] == "irq_handler_entry" and "vnpu" in e[5], None),
    ("hw_signal", "hardware fence signalled",
     lambda e, p: e[4] == "dma_fence_signaled" and "driver=vnpu " in e[5], "irq"),
    ("fin_signal", "scheduler's finished fence signalled (drm_sched_process_job)",
     lambda e, p: e[4] == "drm_sched_process_job", None),
    ("irq_work", "irq_work entered (timeline point's fence chain)",
     lambda e, p: e[4] == "irq_work_entry", "fin_signal"),
    ("chain_signal", "timeline point (dma_fence_chain) signalled",
     lambda e, p: e[4] == "dma_fence_signaled" and "driver=dma_fence_chain" in e[5],
     "fin_signal"),
    ("waking", "waiter woken (sched_waking)",
     lambda e, p: e[4] == "sched_waking" and ("pid=%d " % p) in e[5], "fin_signal"),
    ("free_exec", "free_job work starts",
     lambda e, p: e[4] == "workqueue_execute_start" and "drm_sched_free_job_work" in e[5],
     "fin_signal"),
    ("switch_in", "waiter runs again (sched_switch)",
     lambda e, p: e[4] == "sched_switch" and e[5].endswith("next_pid=%d next_prio=120" % p),
     "waking"),
    ("wait_ret", "wait ioctl returns to userspace",
     lambda e, p: is_bench(e, p) and e[4] == "sys_exit_ioctl", "wait_enter"),
]


def split_jobs(evs):
    """Lists of events per null job, each from a SUBMIT ioctl entry."""
    pid = None
    jobs, cur = [], None
    for e in evs:
        if e[0] == BENCH and e[4] == "sys_enter_ioctl" and ioctl_nr(e[5]) == 0x43:
            pid = e[1]
            cur = [e]
            jobs.append(cur)
            continue
        if e[0] == BENCH and e[4] == "sys_enter_read":
            cur = None              # the raw probe starts: jobs are over
            continue
        if cur is not None:
            cur.append(e)
    return pid, jobs


def stage_times(job, pid):
    t0 = job[0][3]
    got = {}
    for key, _, pred, after in STAGES:
        if after and after not in got:
            continue
        since = got.get(after, 0.0)
        for e in job[1:]:
            if e[3] - t0 >= since and pred(e, pid):
                got[key] = e[3] - t0
                break
    return got


def raw_probes(evs, pid):
    probes, cur, on = [], None, False
    for e in evs:
        if e[1] == pid and e[4] == "sys_enter_read":
            on = True
        if not on:
            continue
        if e[4] == "raw_submit":
            cur = {"t0": e[3]}
            probes.append(cur)
        elif cur is None:
            continue
        elif e[4] == "raw_submit_ret" and "doorbell" not in cur:
            cur["doorbell"] = e[3] - cur["t0"]
        elif e[4] == "irq_handler_entry" and "vnpu" in e[5] and "irq" not in cur:
            cur["irq"] = e[3] - cur["t0"]
        elif e[4] == "irq_handler_exit" and "irq" in cur and "irq_exit" not in cur:
            cur["irq_exit"] = e[3] - cur["t0"]
        elif e[4] == "sched_waking" and ("pid=%d " % pid) in e[5] and "irq" in cur \
                and "waking" not in cur:
            cur["waking"] = e[3] - cur["t0"]
        elif e[4] == "sched_switch" and ("next_pid=%d " % pid) in e[5] + " " \
                and "waking" in cur and "switch_in" not in cur:
            cur["switch_in"] = e[3] - cur["t0"]
    return probes


def table(title, rows, samples):
    print(title)
    print("  %-52s %9s %9s %5s" % ("stage", "t (us)", "gap (us)", "n"))
    prev = 0.0
    for key, desc in rows:
        vals = [s[key] for s in samples if key in s]
        if not vals:
            print("  %-52s %9s %9s %5d" % (desc, "-", "-", 0))
            continue
        med = statistics.median(vals)
        print("  %-52s %9.1f %9.1f %5d" % (desc, med, med - prev, len(vals)))
        prev = med


def main():
    evs = list(events(sys.argv[1]))
    if not evs:
        sys.exit("no VNPU-TRACE block in %s" % sys.argv[1])
    pid, jobs = split_jobs(evs)
    # The first jobs warm caches up; skip them as the bench does not.
    samples = [stage_times(j, pid) for j in jobs[5:]]
    rows = [(k, d) for k, d, _, _ in STAGES]
    rows.sort(key=lambda r: statistics.median(
        [s[r[0]] for s in samples if r[0] in s] or [1e9]))
    table("null job (%d jobs, times from the SUBMIT ioctl's entry):" % len(samples),
          rows, samples)
    probes = raw_probes(evs, pid)[5:]
    table("raw probe (%d probes, times from vnpu_queue_raw_submit()):" % len(probes),
          [("doorbell", "descriptor + doorbell written"),
           ("irq", "completion IRQ handler entered"),
           ("irq_exit", "IRQ handler returns"),
           ("waking", "prober woken"),
           ("switch_in", "prober runs again")], probes)


if __name__ == "__main__":
    main()
