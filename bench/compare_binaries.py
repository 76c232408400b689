#!/usr/bin/env python3
"""Puts two serac binaries side by side: the JSON of bench/s3_bench.sh and bench/catalog_bench.sh,
run once with each binary (bench/compare_binaries.sh does that), as one table per benchmark.

Each cell shows the old and the new binary's throughput and p99, new/old, and the same ratio for
the reference the benchmark ran beside each binary (nginx or fsync_writer for S3, the Iceberg
reference catalog for the catalog). Both references are the same program on the same machine, so
their ratio is the machine's noise for that cell: a cell is SLOWER only when the new binary lost
more than its reference moved, plus a margin.

    compare_binaries.py S3_OLD.json S3_NEW.json CATALOG_OLD.json CATALOG_NEW.json
"""
import json
import sys

# Beyond the reference's own drift, how much slower the new binary may be before a cell is
# called slower: single runs of a few seconds on a shared machine move by about this much.
MARGIN = 0.05


def load(path):
    with open(path) as f:
        return json.load(f)


def ratio(new, old):
    return new / old if old else float("nan")


def verdict(serac_ratio, reference_ratio):
    noise = abs(1 - reference_ratio) + MARGIN
    return "SLOWER" if serac_ratio < 1 - noise else "ok"


def fmt(value, digits=1):
    return "-" if value is None else f"{value:.{digits}f}"


def compare(title, old_doc, new_doc, key, label):
    old_cells = {key(c): c for c in old_doc["cells"]}
    rows = []
    slower = 0
    for cell in new_doc["cells"]:
        old = old_cells.get(key(cell))
        if old is None:
            continue
        new_ops, old_ops = cell["serac"]["ops_per_s"], old["serac"]["ops_per_s"]
        serac_ratio = ratio(new_ops, old_ops)
        ref_ratio = ratio(cell["reference"]["ops_per_s"], old["reference"]["ops_per_s"]) \
            if cell["reference"]["ok"] and old["reference"]["ok"] else 1.0
        result = verdict(serac_ratio, ref_ratio)
        slower += result == "SLOWER"
        rows.append((label(cell), fmt(old_ops), fmt(new_ops), f"{serac_ratio:.2f}",
                     fmt(old["serac"]["p99_ms"], 2), fmt(cell["serac"]["p99_ms"], 2), f"{ref_ratio:.2f}", result))
    header = ("cell", "old ops/s", "new ops/s", "new/old", "old p99 ms", "new p99 ms", "reference new/old", "verdict")
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    print(f"\n{title}")
    for row in [header] + rows:
        print("  ".join(str(v).ljust(w) for v, w in zip(row, widths)))
    return slower


def main(argv):
    if len(argv) != 5:
        print(__doc__)
        return 2
    s3_old, s3_new, catalog_old, catalog_new = (load(p) for p in argv[1:])
    slower = compare("S3 (bench/s3_bench.sh)", s3_old, s3_new,
                     key=lambda c: (c["op"], c["size_bytes"], c["clients"]),
                     label=lambda c: f'{c["op"]} {c["size_bytes"] // 1024} KiB x{c["clients"]}')
    slower += compare("Iceberg REST catalog (bench/catalog_bench.sh)", catalog_old, catalog_new,
                      key=lambda c: (c["workload"], c["clients"]),
                      label=lambda c: f'{c["workload"]} x{c["clients"]}')
    print(f"\nidle RSS: old {s3_old.get('idle_rss_kib')} KiB, new {s3_new.get('idle_rss_kib')} KiB; "
          f"peak RSS: old {s3_old.get('peak_rss_kib')} KiB, new {s3_new.get('peak_rss_kib')} KiB")
    print(f"{slower} cell(s) slower beyond the reference's drift + {MARGIN:.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
