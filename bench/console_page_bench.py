#!/usr/bin/env python3
"""How fast the web console's first page comes up on loopback, in Debian's Chromium (headless,
driven by Playwright): a fresh browser context each run (nothing cached), from navigation to the
sign-in form, the page's own load event, and from submitting the sign-in to the overview's figures.
Beside it, the same browser's load of a plain static page of the same server (the readiness
probe) as the floor of a round trip. Not a test: it prints a table (bench/README.md, "Console").

  bench/console_page_bench.py [--runs 10]     (SERAC_BIN: default build/serac)
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s3_bench import Processes, Serac  # noqa: E402

CHROMIUM = "/usr/bin/chromium"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("console_page_bench: needs playwright (tests/requirements.txt, in .venv)", file=sys.stderr)
        return 2
    if not os.path.exists(CHROMIUM):
        print("console_page_bench: needs Debian's chromium package", file=sys.stderr)
        return 2
    work = tempfile.mkdtemp(prefix="serac-console-bench-")
    processes = Processes()
    try:
        serac = Serac(processes, os.path.abspath(os.environ.get("SERAC_BIN", "build/serac")),
                      os.path.join(work, "data"), os.path.join(work, "serac.log"), [])
        if not serac.start():
            print(f"console_page_bench: {serac.failure}", file=sys.stderr)
            return 2
        base = f"http://127.0.0.1:{serac.port}"
        figures: dict[str, list[float]] = {"probe": [], "form": [], "load": [], "overview": [], "bytes": []}
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
            for _ in range(args.runs):
                context = browser.new_context()
                page = context.new_page()
                started = time.perf_counter()
                page.goto(base + "/_serac/health/live")
                figures["probe"].append(time.perf_counter() - started)
                started = time.perf_counter()
                page.goto(base + "/_serac/console/")
                page.wait_for_selector("[data-testid=signin-form]", timeout=10_000)
                figures["form"].append(time.perf_counter() - started)
                timing = page.evaluate("performance.getEntriesByType('navigation')[0].toJSON()")
                resources = page.evaluate("performance.getEntriesByType('resource').map(r => r.transferSize)")
                figures["load"].append(timing["loadEventEnd"] / 1000)
                figures["bytes"].append(timing["transferSize"] + sum(resources))
                page.fill("[data-testid=signin-access-key]", serac.user)
                page.fill("[data-testid=signin-secret-key]", serac.password)
                started = time.perf_counter()
                page.click("[data-testid=signin-submit]")
                page.wait_for_selector("[data-testid=overview-counts]", timeout=10_000)
                figures["overview"].append(time.perf_counter() - started)
                context.close()
            browser.close()
        print(f"serac web console, first page on loopback, {args.runs} runs, fresh browser context each "
              "(Chromium headless)\n")
        print("| measure | median | max |")
        print("|---|--:|--:|")
        for key, title in (("probe", "plain page of the same server (/_serac/health/live)"),
                           ("form", "navigation to the sign-in form shown"),
                           ("load", "the page's load event"),
                           ("overview", "sign-in submitted to the overview's figures")):
            values = figures[key]
            print(f"| {title} | {statistics.median(values) * 1000:.0f} ms | {max(values) * 1000:.0f} ms |")
        print(f"| bytes transferred for the first page (gzip) | {statistics.median(figures['bytes']):,.0f} B | |")
        target = max(figures["form"])
        print(f"\ntarget: first page under 1 s on loopback: {'PASS' if target < 1.0 else 'MISS'} "
              f"(slowest {target * 1000:.0f} ms)")
        return 0
    finally:
        processes.stop_all()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
