"""A process's and a CPU's counters from /proc: memory, CPU time, run-queue wait, steal."""
import os

def proc_status(pid):
    """VmRSS, VmHWM, RssAnon, RssFile in MB, and open socket count, from /proc."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, val = line.partition(":")
            if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
                out[key] = int(val.split()[0]) / 1024.0
    socks = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:"):
                socks += 1
        except OSError:
            pass
    out["sockets"] = socks
    return out


def cpu_times(pid):
    """(user, system) CPU seconds of the process so far, and its minor page faults."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()   # fields[0] is stat's field 3
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick, int(fields[7])


def runqueue_wait_seconds(pid):
    """Time the process's threads were runnable but waiting for a CPU (schedstat)."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[1])
        except (OSError, IndexError, ValueError):
            pass
    return total / 1e9


def cpu_ticks(core):
    """(steal, all) clock ticks of one CPU so far (/proc/stat): steal is time the hypervisor
    ran something else while this guest CPU had work, which no scheduling here can avoid."""
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith(f"cpu{core} "):
                ticks = [int(x) for x in line.split()[1:]]
                return ticks[7], sum(ticks[:8])
    return 0, 0
