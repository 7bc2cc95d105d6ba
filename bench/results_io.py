"""Shared by the benchmark drivers (bench/netem/sweep.py, bench/smpi/run_scale.py)."""

import json
import time


def append_results(stdout, out_jsonl, **extra):
    """Appends the JSON lines of a zcoll-bench run's stdout to out_jsonl, each with the
    extra keys and the time of the launch; returns how many there were."""
    got = 0
    with open(out_jsonl, "a") as f:
        for line in stdout.splitlines():
            if not line.startswith("{"):
                continue
            rec = json.loads(line)
            rec.update(extra, launch=time.strftime("%Y-%m-%dT%H:%M:%S"))
            f.write(json.dumps(rec) + "\n")
            got += 1
    return got
