"""How the benchmark scripts time a sealmark run and read its peak memory."""
import os, subprocess, threading, time


def run(cmd, **popen):
    """Runs `cmd`; returns (exit code, wall seconds, peak RSS of that process in KiB).

    The peak is the kernel's high-water mark (VmHWM) of the sealmark process alone, read
    every few milliseconds until it exits: wait4's ru_maxrss would also count the
    servers it started and reaped.
    """
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **popen)
    peak = [0]

    def watch():
        while proc.poll() is None:
            try:
                with open(f"/proc/{proc.pid}/status") as f:
                    for line in f:
                        if line.startswith("VmHWM:"):
                            peak[0] = max(peak[0], int(line.split()[1]))
            except OSError:
                pass
            time.sleep(0.003)

    watcher = threading.Thread(target=watch)
    watcher.start()
    code = proc.wait()
    wall = time.perf_counter() - started
    watcher.join()
    return code, wall, peak[0]
