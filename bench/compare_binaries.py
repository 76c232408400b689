#!/usr/bin/env python3
"""Puts two serac binaries side by side: the JSON of bench/s3_bench.sh and bench/catalog_bench.sh,
run with each binary for one or more rounds (bench/compare_binaries.sh does that), as one table per
benchmark.

Each cell shows the old and the new binary's throughput and p99 (medians over the rounds), the
median of the per-round new/old ratios with their range, and the same median for the reference the
benchmark ran beside each binary (nginx or fsync_writer for S3, the Iceberg reference catalog for
the catalog). Both references are the same program on the same machine, so their ratio is the
machine's noise for that cell: a cell is SLOWER only when the new binary lost more than its
reference moved, plus a margin.

    compare_binaries.py DIR ROUNDS   (DIR holds {s3,catalog}-{old,new}-ROUND.json)
"""
import json
import os
import statistics
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


def compare(title, old_docs, new_docs, key, label):
    """old_docs/new_docs: one document per round."""
    per_cell = {}
    for old_doc, new_doc in zip(old_docs, new_docs):
        old_cells = {key(c): c for c in old_doc["cells"]}
        for cell in new_doc["cells"]:
            old = old_cells.get(key(cell))
            if old is None or not cell["serac"].get("ok", True) or not old["serac"].get("ok", True):
                continue
            ref_ok = cell.get("reference", {}).get("ok") and old.get("reference", {}).get("ok")
            per_cell.setdefault(key(cell), (label(cell), []))[1].append({
                "old": old["serac"]["ops_per_s"], "new": cell["serac"]["ops_per_s"],
                "old_p99": old["serac"]["p99_ms"], "new_p99": cell["serac"]["p99_ms"],
                "ref": ratio(cell["reference"]["ops_per_s"], old["reference"]["ops_per_s"]) if ref_ok else 1.0})
    rows = []
    slower = 0
    for name, runs in per_cell.values():
        ratios = [ratio(r["new"], r["old"]) for r in runs]
        serac_ratio = statistics.median(ratios)
        ref_ratio = statistics.median(r["ref"] for r in runs)
        result = verdict(serac_ratio, ref_ratio)
        slower += result == "SLOWER"
        median = lambda k: statistics.median(r[k] for r in runs if r[k] is not None) \
            if any(r[k] is not None for r in runs) else None
        rows.append((name, fmt(median("old")), fmt(median("new")), f"{serac_ratio:.2f}",
                     f"{min(ratios):.2f}-{max(ratios):.2f}", fmt(median("old_p99"), 2), fmt(median("new_p99"), 2),
                     f"{ref_ratio:.2f}", result))
    header = ("cell", "old ops/s", "new ops/s", "new/old", "range", "old p99 ms", "new p99 ms", "reference new/old",
              "verdict")
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    print(f"\n{title}")
    for row in [header] + rows:
        print("  ".join(str(v).ljust(w) for v, w in zip(row, widths)))
    return slower


def main(argv):
    if len(argv) != 3:
        print(__doc__)
        return 2
    directory, rounds = argv[1], int(argv[2])

    def docs(kind, which):
        paths = [os.path.join(directory, f"{kind}-{which}-{r}.json") for r in range(1, rounds + 1)]
        return [load(p) for p in paths if os.path.exists(p)]

    s3_old, s3_new = docs("s3", "old"), docs("s3", "new")
    catalog_old, catalog_new = docs("catalog", "old"), docs("catalog", "new")
    print(f"\n{rounds} round(s); ratios are medians of the per-round ratios")
    slower = compare("S3 (bench/s3_bench.sh)", s3_old, s3_new,
                     key=lambda c: (c["op"], c["size_bytes"], c["clients"]),
                     label=lambda c: f'{c["op"]} {c["size_bytes"] // 1024} KiB x{c["clients"]}')
    slower += compare("Iceberg REST catalog (bench/catalog_bench.sh)", catalog_old, catalog_new,
                      key=lambda c: (c["workload"], c["clients"]),
                      label=lambda c: f'{c["workload"]} x{c["clients"]}')
    if s3_old and s3_new:
        print(f"\nidle RSS: old {s3_old[0].get('idle_rss_kib')} KiB, new {s3_new[0].get('idle_rss_kib')} KiB; "
              f"peak RSS: old {s3_old[0].get('peak_rss_kib')} KiB, new {s3_new[0].get('peak_rss_kib')} KiB")
    print(f"{slower} cell(s) slower beyond the reference's drift + {MARGIN:.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
