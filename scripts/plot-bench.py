"""Plots photos-bench HTTP results: throughput and p99 latency against virtual users."""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

source, target = sys.argv[1], sys.argv[2]
runs = json.load(open(source))
vus = [r["virtualUsers"] for r in runs]
fig, left = plt.subplots(figsize=(8, 4.5))
left.plot(vus, [r["actionsPerSecond"] for r in runs], "o-", color="tab:blue", label="audited actions/s")
left.plot(vus, [r["healthzPerSecond"] for r in runs], "s--", color="tab:gray", label="GET /healthz req/s (ceiling)")
left.set_xscale("log", base=2)
left.set_xticks(vus)
left.set_xticklabels([str(v) for v in vus])
left.set_xlabel("virtual users")
left.set_ylabel("requests per second")
right = left.twinx()
right.plot(vus, [r["p99Ms"] for r in runs], "^-", color="tab:red", label="action p99 (ms)")
right.set_ylabel("p99 latency, ms")
lines = left.get_legend_handles_labels()[0] + right.get_legend_handles_labels()[0]
labels = left.get_legend_handles_labels()[1] + right.get_legend_handles_labels()[1]
left.legend(lines, labels, loc="upper left", fontsize=8)
left.set_title("photosd on 2 cores, durability full (load generator on the same machine)")
fig.tight_layout()
fig.savefig(target, dpi=110)
print(f"wrote {target}")
