#!/usr/bin/env python3
"""How fast the web console's first page comes up on loopback, in Debian's Chromium (headless,
driven by Playwright): a fresh browser context each run (nothing cached), from navigation to the
sign-in form, the page's own load event, and from submitting the sign-in to the overview's figures.
Beside it, the same browser's load of a plain static page of the same server (the readiness
probe) as the floor of a round trip. Then a bucket of --keys keys (100,000 by default) browsed in
the page: from opening the bucket to its first 200 keys shown, and from "Next" to the next 200, at
the start and deep into the listing. Not a test: it prints a table (bench/README.md, "Console").

  bench/console_page_bench.py [--runs 10] [--keys 100000]     (SERAC_BIN: default build/serac)
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


def fill_bucket(serac: Serac, bucket: str, keys: int) -> float:
    """Puts `keys` empty objects (keys/000000000 ...), 16 at a time; returns the seconds it took."""
    from concurrent.futures import ThreadPoolExecutor

    client = serac.client()
    client.create_bucket(Bucket=bucket)
    started = time.perf_counter()

    def put(start: int):
        for i in range(start, min(start + 1000, keys)):
            client.put_object(Bucket=bucket, Key=f"keys/{i:09d}", Body=b"")

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(put, range(0, keys, 1000)))
    return time.perf_counter() - started


def browse_large_bucket(browser, serac: Serac, base: str, keys: int, runs: int) -> dict:
    from playwright.sync_api import expect

    bucket = "console-bench-keys"
    figures = {"fill": fill_bucket(serac, bucket, keys), "open": [], "next": [], "deep": []}
    deep_after = f"keys/{keys * 9 // 10:09d}"
    figures["deep_after"] = deep_after
    context = browser.new_context()
    page = context.new_page()
    page.goto(base + "/_serac/console/")
    page.fill("[data-testid=signin-access-key]", serac.user)
    page.fill("[data-testid=signin-secret-key]", serac.password)
    page.click("[data-testid=signin-submit]")
    page.wait_for_selector("[data-testid=overview-counts]", timeout=30_000)
    for _ in range(runs):
        page.goto(base + "/_serac/console/#/buckets")
        page.wait_for_selector("[data-testid=bucket-list]", timeout=30_000)
        started = time.perf_counter()
        page.goto(base + f"/_serac/console/#/buckets/{bucket}?prefix=keys/")
        # Locators, not page-side predicates: the console's policy forbids evaluating strings.
        rows = page.locator("[data-testid=object-row]")
        rows.nth(199).wait_for(timeout=30_000)
        figures["open"].append(time.perf_counter() - started)
        first = rows.first.get_attribute("data-key")
        started = time.perf_counter()
        page.click("[data-testid=page-next]")
        expect(rows.first).not_to_have_attribute("data-key", first, timeout=30_000)
        rows.nth(199).wait_for(timeout=30_000)
        figures["next"].append(time.perf_counter() - started)
        # Deep in the listing: the S3 request the page makes for a page that starts far in.
        started = time.perf_counter()
        answer = page.evaluate(
            "async ([bucket, after]) => { const csrf = (await (await fetch('/_serac/console/api/session')).json()).csrf;"
            " const r = await fetch(`/_serac/console/api/s3/${bucket}?list-type=2&prefix=keys/&max-keys=200"
            "&start-after=${encodeURIComponent(after)}`, {headers: {'X-Serac-Csrf': csrf}});"
            " return (await r.text()).split('<Key>').length - 1; }", [bucket, deep_after])
        figures["deep"].append(time.perf_counter() - started)
        assert answer == 200, answer
    context.close()
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--keys", type=int, default=100_000)
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
            browse = browse_large_bucket(browser, serac, base, args.keys, args.runs)
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
        print(f"\nA bucket of {args.keys:,} keys (filled in {browse['fill']:.0f} s), browsed 200 keys a page:\n")
        print("| measure | median | max |")
        print("|---|--:|--:|")
        for key, title in (("open", "bucket opened to its first 200 keys shown"),
                           ("next", "Next to the following 200 keys shown"),
                           ("deep", f"the page's listing request deep in the bucket (after {browse['deep_after']})")):
            values = browse[key]
            print(f"| {title} | {statistics.median(values) * 1000:.0f} ms | {max(values) * 1000:.0f} ms |")
        target = max(figures["form"])
        print(f"\ntarget: first page under 1 s on loopback: {'PASS' if target < 1.0 else 'MISS'} "
              f"(slowest {target * 1000:.0f} ms)")
        return 0
    finally:
        processes.stop_all()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
