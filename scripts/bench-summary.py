#!/usr/bin/env python3
"""The benchmark page's current figures, made from the files the benchmarks wrote.

Reads docs/bench/machine.json (when, which commit, which machine: written by scripts/bench-page),
http.json and storage.json (scripts/bench), import.txt (scripts/bench-import), pgbench.json
(scripts/bench-pgbench), stores.json (scripts/bench-stores) and audit-verify.txt
(scripts/bench-audit-verify), and renders two blocks:

  current-figures   in docs/benchmarks.md: one dated table of every current figure;
  postgres-figures  in docs/postgres.md: the sentence that compares the two stores.

  scripts/bench-summary.py           prints both
  scripts/bench-summary.py --write   writes them between their <!-- NAME:start/end --> markers
  scripts/bench-summary.py --check   exits 1 if a page's block is not what the files say (a test runs it)
Standard library only.
"""
import json
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
BENCH = os.path.join(ROOT, "docs", "bench")


def load(name):
    with open(os.path.join(BENCH, name)) as f:
        return json.load(f) if name.endswith(".json") else f.read()


def mean(values):
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def n(value, digits=0):
    """1234.5 → "1,235"; digits after the point when asked."""
    return f"{value:,.{digits}f}"


def rounded(value, step=100):
    return n(round(value / step) * step)


def runs(data, setup):
    return [r for r in data if r["setup"] == setup]


def figures():
    machine = load("machine.json")
    http = load("http.json")
    storage = load("storage.json")
    pgbench = load("pgbench.json")
    stores = load("stores.json")
    imports = load("import.txt")
    verify = load("audit-verify.txt")

    at64 = next(r for r in http if r["virtualUsers"] == 64)
    peak = max(http, key=lambda r: r["actionsPerSecond"])
    group = next(r for r in storage if r["durability"] == "full" and r["mode"] != "one transaction per request")
    single = next(r for r in storage if r["durability"] == "full" and r["mode"] == "one transaction per request")
    pg_rounds = max(r["round"] for r in pgbench)
    sqlite = mean([r["actionsPerSecond"] for r in runs(pgbench, "sqlite")])
    sqlite_cpu = mean([r["serverCPUMicrosPerAction"] for r in runs(pgbench, "sqlite")])
    postgres = mean([r["actionsPerSecond"] for r in runs(pgbench, "postgres")])
    postgres_cpu = mean([r["serverCPUMicrosPerAction"] for r in runs(pgbench, "postgres")])
    postgres_server_cpu = mean([r["databaseCPUMicrosPerAction"] for r in runs(pgbench, "postgres")])
    tps = mean([r["tps"] for r in runs(pgbench, "pgbench")])
    two = mean([r["actionsPerSecond"] for r in runs(stores, "postgres-2")])
    one = mean([r["actionsPerSecond"] for r in runs(stores, "postgres-1")])
    stores_sqlite = mean([r["actionsPerSecond"] for r in runs(stores, "sqlite")])
    stores_rounds = max(r["round"] for r in stores)
    sqlite_import = float(re.search(r"sqlite3 \.import: ([0-9.]+) s", imports).group(1))
    our_import = float(re.search(r"photos-admin photos import: ([0-9.]+) s", imports).group(1))
    import_rows = int(re.search(r"rows: (\d+)", imports).group(1))
    verify_rss = int(re.search(r"peak RSS (\d+) KB", verify).group(1))
    verify_s = float(re.search(r"KB, ([0-9.]+) s", verify).group(1))
    verify_rows = int(re.search(r"rows: (\d+)", verify).group(1))

    when = f"{machine['date']}, commit `{machine['commit']}`"
    table = [
        f"Measured {when}, on {machine['machine']}. Every row below comes from that one sitting",
        "(`scripts/bench-page`); `docs/bench/` holds every run's figures. Compare figures of one",
        "sitting with each other: from one sitting to the next this machine varies by ±10–20 %.",
        "",
        "| what | figure | how (each script prints it) |",
        "|---|---|---|",
        f"| SQLite, 64 users, the mixed journeys, durability `full` | **{n(at64['actionsPerSecond'])} actions/s**, p50 {at64['p50Ms']:.1f} ms, p99 {at64['p99Ms']:.1f} ms, {n(at64['serverCPUMicrosPerAction'])} µs of photosd's CPU per action, peak RSS {at64['peakRSSMegabytes']:.0f} MB | `scripts/bench` |",
        f"| the HTTP ceiling of the same run (`GET /healthz`, same client, same connections) | {n(at64['healthzPerSecond'])} requests/s: actions reach **{at64['ratio']:.2f} ×** of it | `scripts/bench` |",
        f"| the sweep's best (1 to 256 users; the table and plot below) | {n(peak['actionsPerSecond'])} actions/s at {peak['virtualUsers']} users | `scripts/bench` |",
        f"| SQLite, 64 users, the stack journey (beside PostgreSQL, {pg_rounds} rounds) | {n(sqlite)} actions/s, {n(sqlite_cpu)} µs of photosd's CPU per action | `scripts/bench-pgbench` |",
        f"| PostgreSQL 15, one photosd, same load (`synchronous_commit=on`) | **{n(postgres)} actions/s**, photosd {n(postgres_cpu)} µs and the server {n(postgres_server_cpu)} µs of CPU per action | `scripts/bench-pgbench` |",
        f"| pgbench on the same server (TPC-B-like, 16 clients) | {n(tps)} transactions/s: photosd's actions on PostgreSQL reach **{postgres / tps:.2f} ×** of it | `scripts/bench-pgbench` |",
        f"| PostgreSQL, two photosd instances on one database ({stores_rounds} rounds, beside one instance at {n(one)} and SQLite at {n(stores_sqlite)}) | {n(two)} actions/s: on 2 cores a second instance only shares them | `scripts/bench-stores` |",
        f"| the storage writer alone, 64 clients, `full` (no HTTP) | group commit {n(group['writesPerSecond'])} writes/s against {n(single['writesPerSecond'])} with a transaction each: **{group['writesPerSecond'] / single['writesPerSecond']:.1f} ×** | `photos-bench storage` (in `scripts/bench`) |",
        f"| import of {n(import_rows)} CSV rows | `photos-admin photos import` {our_import:.2f} s against `sqlite3 .import` {sqlite_import:.2f} s: **{our_import / sqlite_import:.2f} ×** | `scripts/bench-import` |",
        f"| `audit verify` of one trail of {n(verify_rows)} rows | {verify_s:.1f} s, peak RSS {verify_rss / 1024:.0f} MB (it streams: memory does not grow with the trail) | `scripts/bench-audit-verify` |",
    ]
    table += [
        "",
        f"The HTTP sweep of that sitting (`docs/bench/http.json`, durability `full`, the mixed journeys:",
        "every fourth user on the tabs journey). CPU columns are µs of CPU time per request: all of",
        "photosd, its writer thread alone (which runs every transaction), and the load generator.",
        "",
        "| users | actions/s | p50 ms | p90 ms | p99 ms | p99.9 ms | errors | healthz/s | ratio | peak RSS MB | photosd µs/action | µs/healthz | writer µs/action | client µs/action |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in http:
        table.append(
            f"| {r['virtualUsers']} | {n(r['actionsPerSecond'])} | {r['p50Ms']:.2f} | {r['p90Ms']:.2f} | {r['p99Ms']:.2f} | {r['p999Ms']:.2f} | {r['errors']} "
            f"| {n(r['healthzPerSecond'])} | {r['ratio']:.3f} | {r['peakRSSMegabytes']:.1f} | {n(r['serverCPUMicrosPerAction'])} "
            f"| {n(r['serverCPUMicrosPerHealthz'])} | {n(r['writerCPUMicrosPerAction'])} | {n(r['clientCPUMicrosPerAction'])} |")
    sentence = [
        f"Choose it for availability and for more than one machine, not for speed on one: on 2 cores",
        f"({machine['date']}, 64 users, durable, the stack journey) SQLite served about {rounded(sqlite)}",
        f"actions/s with photosd using {sqlite_cpu / 1000:.2f} ms of CPU per action, PostgreSQL about",
        f"{rounded(postgres)}/s — {postgres / tps:.2f} × the pace of `pgbench` on that server ({rounded(tps)}",
        f"transactions/s) — with photosd at {postgres_cpu / 1000:.2f} ms and the server at {postgres_server_cpu / 1000:.2f} ms",
        f"per action ([benchmarks.md](benchmarks.md#current-figures)).",
    ]
    return {"current-figures": "\n".join(table), "postgres-figures": "\n".join(sentence)}


PAGES = {"current-figures": "docs/benchmarks.md", "postgres-figures": "docs/postgres.md"}


def replaced(text, name, block):
    pattern = re.compile(rf"(<!-- {name}:start -->\n)(?:.*?\n)?(<!-- {name}:end -->)", re.S)
    if not pattern.search(text):
        raise SystemExit(f"no <!-- {name}:start --> … <!-- {name}:end --> block")
    return pattern.sub(lambda m: m.group(1) + block + "\n" + m.group(2), text)


def main():
    blocks = figures()
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode not in ("--write", "--check"):
        for name, block in blocks.items():
            print(f"== {name} ({PAGES[name]})\n{block}\n")
        return
    stale = []
    for name, block in blocks.items():
        path = os.path.join(ROOT, PAGES[name])
        text = open(path).read()
        new = replaced(text, name, block)
        if mode == "--write":
            open(path, "w").write(new)
        elif new != text:
            stale.append(f"{PAGES[name]}: the block {name} is not what docs/bench/ says; run scripts/bench-summary.py --write")
    if stale:
        print("\n".join(stale), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
