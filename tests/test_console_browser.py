"""The web console driven in a real browser (Debian's Chromium through Playwright, nothing
downloaded): signing in and out, what a read-only user is refused, uploads and downloads byte for
byte, tables written by `serac table load`, `serac table delete-rows` and PyIceberg previewed with
their deletes applied, maintenance settings and a compaction run from the page, users, keys and
policies made in the page and then used, markup shown as text, forged requests refused, and the
overview's charts. test_console_api.py checks the same API without a browser.

Every test fails on a JavaScript dialog (alert) or an uncaught page error. Screenshots of each page
(1280x800, full page) go to $SERAC_CONSOLE_SCREENSHOTS, else build/console-screenshots/."""

from __future__ import annotations

import datetime
import decimal
import hashlib
import http.server
import json
import os
import re
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from botocore.exceptions import ClientError

from catalog_util import CatalogApi, load_pyiceberg_catalog
from s3util import (ACCESS_KEY, REPO_ROOT, SECRET_KEY, SeracAdmin, SeracServer, make_client, serac_binary,
                    sha256_of_file, unique_bucket_name)

CHROMIUM = "/usr/bin/chromium"
if not os.path.exists(CHROMIUM):
    pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)", allow_module_level=True)

from playwright.sync_api import Page, expect, sync_playwright  # noqa: E402

CONSOLE = "/_serac/console/"
API = "/_serac/console/api"
WAIT_MS = 10_000  # the default for every wait; the few longer ones say so
VIEWPORT = {"width": 1280, "height": 800}

expect.set_options(timeout=WAIT_MS)


# --- Fixtures --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def console_server(session_tmp):
    serac = SeracServer(session_tmp / "console-browser", name="serac-console-browser",
                        extra_args=["--maintenance-interval", "0"])
    serac.start()
    yield serac
    serac.stop()


@pytest.fixture(scope="module")
def admin(console_server):
    return SeracAdmin(console_server.endpoint)


@pytest.fixture(scope="module")
def s3(console_server):
    return make_client(console_server.endpoint)


@pytest.fixture(scope="module")
def catalog_api(console_server):
    return CatalogApi(console_server.endpoint)


@pytest.fixture(scope="module")
def browser():
    playwright = sync_playwright().start()
    try:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        yield chromium
        chromium.close()
    finally:
        playwright.stop()


@pytest.fixture(scope="module")
def shots():
    configured = os.environ.get("SERAC_CONSOLE_SCREENSHOTS")
    path = Path(configured) if configured else REPO_ROOT / "build" / "console-screenshots"
    path.mkdir(parents=True, exist_ok=True)

    def shot(page: Page, name: str) -> None:
        page.screenshot(path=str(path / f"{name}.png"), full_page=True, timeout=WAIT_MS)

    return shot


@pytest.fixture
def open_page(browser, console_server):
    """open_page() -> a new page in a fresh browser context (its own cookies). Any dialog or
    uncaught error on any page of the test fails the test."""
    contexts = []
    problems: list[str] = []

    def watch(page: Page) -> None:
        page.set_default_timeout(WAIT_MS)
        page.on("pageerror", lambda error: problems.append(f"page error on {page.url}: {error}"))

        def on_dialog(dialog):
            problems.append(f"{dialog.type} dialog on {page.url}: {dialog.message!r}")
            dialog.dismiss()

        page.on("dialog", on_dialog)

    def factory() -> Page:
        context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
        contexts.append(context)
        context.on("page", watch)
        page = context.new_page()
        return page

    factory.problems = problems
    yield factory
    for context in contexts:
        context.close()
    assert not problems, problems


# --- Helpers ---------------------------------------------------------------------------------------


def sel(testid: str, **attributes: str) -> str:
    """A CSS selector for data-testid=`testid` with data-<name>=value attributes (any text)."""
    parts = [f"[data-testid={json.dumps(testid)}]"]
    parts += [f"[data-{name}={json.dumps(value)}]" for name, value in attributes.items()]
    return "".join(parts)


def sign_in(page: Page, server: SeracServer, access_key: str = ACCESS_KEY, secret_key: str = SECRET_KEY,
            route: str = "") -> None:
    page.goto(server.endpoint + CONSOLE + route)
    page.get_by_test_id("signin-access-key").fill(access_key)
    page.get_by_test_id("signin-secret-key").fill(secret_key)
    page.get_by_test_id("signin-submit").click()
    expect(page.get_by_test_id("header-user")).to_be_visible()


def go(page: Page, route: str) -> None:
    """Moves the signed-in page to a hash route, as a link would."""
    page.evaluate("route => { window.location.hash = route; }", route)


FETCH_JS = """async ([method, route, body, withCsrf]) => {
  const headers = {};
  if (withCsrf) {
    const session = await fetch('/_serac/console/api/session', {credentials: 'same-origin'});
    if (session.ok) headers['X-Serac-Csrf'] = (await session.json()).csrf;
  }
  if (body !== null) headers['Content-Type'] = 'application/json';
  const response = await fetch('/_serac/console/api/' + route,
                               {method, headers, body, credentials: 'same-origin', cache: 'no-store'});
  return {status: response.status, text: await response.text()};
}"""


def page_fetch(page: Page, method: str, route: str, body=None, csrf: bool = True) -> dict:
    """A request made by the page itself (its cookies, its origin), with the session's
    anti-forgery header unless csrf=False."""
    return page.evaluate(FETCH_JS, [method, route, None if body is None else json.dumps(body), csrf])


def server_message(answer: dict) -> str:
    """The message of an error answer in whichever form the server wrote it (S3 XML or JSON)."""
    text = answer["text"]
    if text.lstrip().startswith("<"):
        return re.search(r"<Message>(.*?)</Message>", text, re.S).group(1)
    return json.loads(text)["error"]["message"]


def bucket_exists(s3, bucket: str) -> bool:
    try:
        s3.head_bucket(Bucket=bucket)
        return True
    except ClientError as error:
        assert error.response["ResponseMetadata"]["HTTPStatusCode"] == 404, error.response
        return False


def serac_cli(server: SeracServer, *args) -> str:
    env = dict(os.environ, SERAC_ENDPOINT=server.endpoint, SERAC_ACCESS_KEY=ACCESS_KEY, SERAC_SECRET_KEY=SECRET_KEY)
    out = subprocess.run([serac_binary(), *map(str, args)], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def wait_for_log(server: SeracServer, pattern: str, timeout_s: float = 5.0) -> bool:
    """Whether a line of the server's log matches `pattern`, waiting for it a little."""
    deadline = time.monotonic() + timeout_s
    while True:
        if re.search(pattern, server.stderr_path.read_text(errors="replace")):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def make_warehouse(catalog_api: CatalogApi, namespace: str) -> str:
    warehouse = unique_bucket_name("wh")
    catalog_api.create_warehouse(warehouse)
    catalog_api.ok("POST", f"/v1/{warehouse}/namespaces", {"namespace": [namespace]}, expect=(200,))
    return warehouse


def table_route(warehouse: str, namespace: str, table: str, tab: str) -> str:
    return f"#/warehouses/{warehouse}/tables/{namespace}/{table}?tab={tab}"


def cell_text(value) -> str:
    """A value as the server's preview writes it (parquet/table_rows.h), and the page shows it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)  # the shortest text that reads back the same value
    if isinstance(value, (datetime.datetime, datetime.time)):
        return value.isoformat(timespec="microseconds")  # with a zone: +00:00
    if isinstance(value, datetime.date):
        return value.isoformat()
    return str(value)  # integers; decimals keep their scale; strings as they are


def arrow_rows_as_text(table: pa.Table) -> set[tuple[str, ...]]:
    return {tuple(cell_text(row[name]) for name in table.column_names) for row in table.to_pylist()}


def preview_rows(page: Page) -> list[list[str]]:
    return page.get_by_test_id("preview-row").evaluate_all(
        "rows => rows.map(row => Array.from(row.cells, cell => cell.textContent))")


# --- 1. Signing in and out -------------------------------------------------------------------------


def test_sign_in_reload_sign_out_and_a_wrong_secret(console_server, open_page, shots):
    page = open_page()
    page.goto(console_server.endpoint + CONSOLE)
    expect(page.get_by_test_id("signin-form")).to_be_visible()
    shots(page, "signin")
    sign_in(page, console_server)
    expect(page.get_by_test_id("header-user")).to_have_text(f"{ACCESS_KEY} (root)")
    expect(page.get_by_test_id("page-overview")).to_be_visible()

    # A reload asks GET session with the cookie: still signed in, nothing typed again.
    page.reload()
    expect(page.get_by_test_id("header-user")).to_have_text(f"{ACCESS_KEY} (root)")
    expect(page.get_by_test_id("signin-form")).to_have_count(0)
    old_cookies = [c for c in page.context.cookies() if c["name"] == "serac_console"]
    assert len(old_cookies) == 1 and old_cookies[0]["httpOnly"] and old_cookies[0]["sameSite"] == "Strict"
    old_csrf = json.loads(page_fetch(page, "GET", "session", csrf=False)["text"])["csrf"]
    assert page_fetch(page, "GET", "overview")["status"] == 200

    page.get_by_test_id("sign-out").click()
    expect(page.get_by_test_id("signin-form")).to_be_visible()
    expect(page.get_by_test_id("header-user")).to_have_count(0)
    # The page's context no longer gets anything...
    overview_js = """async csrf => {
        const r = await fetch('/_serac/console/api/overview', {headers: {'X-Serac-Csrf': csrf}});
        return {status: r.status, text: await r.text()}; }"""
    after = page.evaluate(overview_js, old_csrf)
    assert after["status"] == 401, after
    # ...and the old cookie, put back into it, was ended by the server, not only forgotten.
    page.context.add_cookies(old_cookies)
    replay = page.evaluate(overview_js, old_csrf)
    assert replay["status"] == 401 and json.loads(replay["text"])["error"]["code"] == "SessionExpired", replay
    page.context.clear_cookies()

    # A wrong secret: an error on the form, no session.
    page.reload()
    page.get_by_test_id("signin-access-key").fill(ACCESS_KEY)
    page.get_by_test_id("signin-secret-key").fill("not-the-secret-key")
    page.get_by_test_id("signin-submit").click()
    expect(page.get_by_test_id("signin-error")).to_contain_text("not right")
    expect(page.get_by_test_id("header-user")).to_have_count(0)
    assert page.get_by_test_id("signin-secret-key").input_value() == ""  # the secret is not kept
    assert [c for c in page.context.cookies() if c["name"] == "serac_console"] == []


# --- 2. A read-only user ---------------------------------------------------------------------------


def test_a_read_only_user_is_refused_by_the_server_and_told_why(console_server, admin, s3, open_page):
    seen = unique_bucket_name("ro-seen")
    s3.create_bucket(Bucket=seen)
    name = f"reader-{uuid.uuid4().hex[:8]}"
    access_key, secret_key = admin.create_user_with_key(name, ["readonly"])
    page = open_page()
    sign_in(page, console_server, access_key, secret_key)
    expect(page.get_by_test_id("header-user")).to_have_text(name)

    page.get_by_test_id("nav-buckets").click()
    expect(page.locator(sel("bucket-row", bucket=seen))).to_be_visible()
    wanted = unique_bucket_name("ro-made")
    page.get_by_test_id("bucket-name-input").fill(wanted)
    page.get_by_test_id("bucket-create").click()
    banner = page.get_by_test_id("error-banner")
    expect(banner).to_be_visible()
    # The banner says what the server said to this user for this request.
    answer = page_fetch(page, "PUT", f"s3/{wanted}")
    assert answer["status"] == 403 and "<Code>AccessDenied</Code>" in answer["text"], answer
    expect(banner).to_have_text(server_message(answer))
    expect(page.locator(sel("bucket-row", bucket=wanted))).to_have_count(0)
    assert not bucket_exists(s3, wanted)

    # The access page: the user list is refused with the server's message; the shell still works.
    page.get_by_test_id("nav-access").click()
    expect(page.get_by_test_id("page-access")).to_be_visible()
    users = page_fetch(page, "GET", "admin/v1/users")
    assert users["status"] == 403, users
    expect(page.get_by_test_id("error-banner").filter(has_text=server_message(users))).to_be_visible()
    expect(page.get_by_test_id("user-list")).to_have_count(0)
    expect(page.get_by_test_id("header-user")).to_have_text(name)


# --- 3. Buckets and objects ------------------------------------------------------------------------


def test_create_upload_download_details_and_delete(console_server, s3, open_page, shots, tmp_path):
    big = os.urandom(20 * 1024 * 1024)
    (tmp_path / "big.bin").write_bytes(big)
    (tmp_path / "notes.txt").write_text("small file\n")
    bucket = unique_bucket_name("ui")
    page = open_page()
    sign_in(page, console_server)
    page.get_by_test_id("nav-buckets").click()
    page.get_by_test_id("bucket-name-input").fill(bucket)
    page.get_by_test_id("bucket-create").click()
    row = page.locator(sel("bucket-row", bucket=bucket))
    expect(row).to_be_visible()
    assert bucket_exists(s3, bucket)
    shots(page, "buckets")

    row.get_by_test_id("bucket-link").click()
    expect(page.get_by_test_id("page-objects")).to_be_visible()
    page.get_by_test_id("upload-input").set_input_files([str(tmp_path / "big.bin"), str(tmp_path / "notes.txt")])
    expect(page.locator(sel("upload-item", state="done"))).to_have_count(2, timeout=60_000)
    expect(page.locator(sel("upload-item", state="failed"))).to_have_count(0)
    big_row = page.locator(sel("object-row", key="big.bin"))
    expect(big_row).to_be_visible()
    expect(page.locator(sel("object-row", key="notes.txt"))).to_be_visible()
    stored = s3.get_object(Bucket=bucket, Key="big.bin")["Body"].read()
    assert hashlib.sha256(stored).hexdigest() == hashlib.sha256(big).hexdigest()
    assert s3.get_object(Bucket=bucket, Key="notes.txt")["Body"].read() == b"small file\n"

    with page.expect_download(timeout=30_000) as download:
        big_row.get_by_test_id("object-download").click()
    saved = tmp_path / "downloaded.bin"
    download.value.save_as(saved)
    assert download.value.suggested_filename == "big.bin"
    assert sha256_of_file(saved) == hashlib.sha256(big).hexdigest()

    big_row.get_by_test_id("object-link").click()
    details = page.get_by_test_id("object-details")
    expect(details).to_be_visible()
    expect(details.get_by_test_id("object-info")).to_contain_text(f"20 MiB ({len(big)} bytes)")
    expect(details.get_by_test_id("object-tags")).to_be_visible()
    shots(page, "objects-details")

    big_row.get_by_test_id("object-delete").click()
    dialog = page.get_by_test_id("confirm-dialog")
    expect(dialog).to_contain_text("big.bin")
    dialog.get_by_test_id("confirm-ok").click()
    expect(dialog).to_have_count(0)
    expect(big_row).to_have_count(0)
    expect(page.get_by_test_id("object-details")).to_have_count(0)  # it showed the deleted object
    expect(page.locator(sel("object-row", key="notes.txt"))).to_be_visible()
    with pytest.raises(ClientError) as missing:
        s3.head_object(Bucket=bucket, Key="big.bin")
    assert missing.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404


# --- 4. Tables: navigation, rows with deletes applied, schema, snapshots ---------------------------


def test_table_rows_schema_and_snapshots(console_server, catalog_api, open_page, shots, tmp_path):
    warehouse = make_warehouse(catalog_api, "sales")
    # Written by serac table load (format v3), then two rows deleted: a deletion vector.
    loaded = pa.table({
        "id": pa.array(range(1, 9), pa.int64()),
        "name": pa.array(["alpha", None, "gamma", "delta", "eps ilon", "zeta", "ëta", "theta"]),
        "amount": pa.array([decimal.Decimal(v) if v else None for v in
                            ["12.30", "-0.05", None, "1000.00", "7.77", "0.00", "99999999.99", "3.14"]],
                           pa.decimal128(10, 2)),
        "at": pa.array([datetime.datetime(2026, 1, 2, 3, 4, 5, 123456) + datetime.timedelta(hours=7 * i)
                        for i in range(8)], pa.timestamp("us")),
        "day": pa.array([datetime.date(2026, 3, 1) + datetime.timedelta(days=i) for i in range(8)], pa.date32()),
        "ok": pa.array([True, False, None, True, False, True, True, False]),
        "ratio": pa.array([0.5, -2.25, 1e-3, None, 3.75, 0.1, 6.5, 0.3], pa.float64()),
    })
    pq.write_table(loaded, tmp_path / "orders.parquet")
    serac_cli(console_server, "table", "load", warehouse, "sales", "orders", tmp_path / "orders.parquet",
              "--create", "--format-version", "3")
    (tmp_path / "keys.csv").write_text("id\n2\n6\n")
    out = serac_cli(console_server, "table", "delete-rows", warehouse, "sales", "orders",
                    "--keys", tmp_path / "keys.csv")
    assert "deletion vector" in out, out
    # Written by PyIceberg (format v2), in two appends.
    catalog = load_pyiceberg_catalog(console_server.endpoint, warehouse)
    events = pa.table({
        "event_id": pa.array([10, 11, 12, 13], pa.int64()),
        "kind": pa.array(["click", "view", None, "buy"]),
        "at": pa.array([datetime.datetime(2025, 12, 31, 23, 59, 59, 999999, tzinfo=datetime.timezone.utc),
                        datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc), None,
                        datetime.datetime(2026, 6, 15, 12, 0, 0, 1, tzinfo=datetime.timezone.utc)],
                       pa.timestamp("us", tz="UTC")),
    })
    pyiceberg_table = catalog.create_table("sales.events", schema=events.schema)
    pyiceberg_table.append(events.slice(0, 2))
    pyiceberg_table.append(events.slice(2))

    orders = catalog.load_table("sales.orders")
    expected_orders = arrow_rows_as_text(orders.scan().to_arrow())
    assert len(expected_orders) == 6 and not any(row[0] in ("2", "6") for row in expected_orders)
    expected_events = arrow_rows_as_text(catalog.load_table("sales.events").scan().to_arrow())
    assert len(expected_events) == 4

    page = open_page()
    sign_in(page, console_server)
    page.get_by_test_id("nav-warehouses").click()
    expect(page.locator(sel("warehouse-row", warehouse=warehouse))).to_be_visible()
    shots(page, "warehouses")
    page.locator(sel("warehouse-row", warehouse=warehouse)).get_by_role("link").click()
    expect(page.get_by_test_id("page-namespace")).to_be_visible()
    shots(page, "warehouse")
    page.get_by_test_id("namespace-row").filter(has_text="sales").get_by_role("link").click()
    expect(page.locator(sel("table-row", table="events"))).to_be_visible()
    shots(page, "namespace")
    page.locator(sel("table-row", table="orders")).get_by_role("link").click()
    expect(page.get_by_test_id("page-table")).to_be_visible()

    # Schema: every column, with its type.
    expect(page.get_by_test_id("tab-body-schema")).to_be_visible()
    schema_rows = page.get_by_test_id("schema-row")
    expect(schema_rows).to_have_count(len(loaded.column_names))
    for column, type_text in (("id", "long"), ("amount", "decimal(10, 2)"), ("at", "timestamp"), ("day", "date")):
        expect(schema_rows.filter(has=page.locator("td:first-child", has_text=re.compile(f"^{column}$")))
               ).to_contain_text(type_text)
    shots(page, "table-schema")

    # Snapshots: one bar and one row per snapshot.
    page.get_by_test_id("tab-snapshots").click()
    expect(page.get_by_test_id("snapshot-row")).to_have_count(len(orders.metadata.snapshots))
    expect(page.get_by_test_id("timeline-bar")).to_have_count(len(orders.metadata.snapshots))
    assert len(orders.metadata.snapshots) == 2
    shots(page, "table-snapshots")

    # Files: the one data file and its deletion vector.
    page.get_by_test_id("tab-files").click()
    expect(page.get_by_test_id("files-summary")).to_contain_text("1 data file (")
    expect(page.get_by_test_id("files-summary")).to_contain_text("1 delete file.")
    expect(page.get_by_test_id("file-row")).to_have_count(2)
    expect(page.get_by_test_id("histogram-all")).to_be_visible()
    shots(page, "table-files")
    page.get_by_test_id("tab-health").click()
    expect(page.get_by_test_id("health-numbers").locator("tr", has_text="Delete files")).to_contain_text(
        "1 (2 deletes)")
    shots(page, "table-health")

    # Rows: what PyIceberg reads, the deleted rows absent, as the server renders each value.
    preview = page_fetch(page, "GET", f"iceberg/v1/{warehouse}/namespaces/sales/tables/orders/preview")
    assert preview["status"] == 200, f"the table preview endpoint answered {preview}"
    page.get_by_test_id("tab-rows").click()
    expect(page.get_by_test_id("preview-table")).to_be_visible()
    expect(page.get_by_test_id("preview-row")).to_have_count(6)
    assert {tuple(row) for row in preview_rows(page)} == expected_orders
    expect(page.get_by_test_id("preview-summary")).to_contain_text("6 rows, 1 delete file applied.")
    shots(page, "table-rows")
    # The snapshot before the delete, chosen by its id: a 64-bit integer the page must keep exact
    # (a JavaScript number would round it and name no snapshot).
    first = min(orders.metadata.snapshots, key=lambda snapshot: snapshot.timestamp_ms)
    page.get_by_test_id("preview-at").select_option(f"snap:{first.snapshot_id}")
    expect(page.get_by_test_id("preview-row")).to_have_count(loaded.num_rows)
    expect(page.get_by_test_id("preview-summary")).to_have_text(f"Snapshot {first.snapshot_id}: {loaded.num_rows} rows.")

    go(page, table_route(warehouse, "sales", "events", "rows"))
    expect(page.get_by_test_id("preview-row")).to_have_count(4)
    assert {tuple(row) for row in preview_rows(page)} == expected_events
    page.get_by_test_id("tab-snapshots").click()
    expect(page.get_by_test_id("snapshot-row")).to_have_count(2)
    expect(page.get_by_test_id("timeline-bar")).to_have_count(2)


# --- 5. Maintenance --------------------------------------------------------------------------------


def test_maintenance_settings_and_a_compaction_run_from_the_page(console_server, catalog_api, open_page, shots,
                                                                  tmp_path):
    warehouse = make_warehouse(catalog_api, "m")
    for part in range(5):  # tiny appends: five small data files
        path = tmp_path / f"part-{part}.csv"
        path.write_text("id,label\n" + "".join(f"{part * 10 + i},row {part * 10 + i}\n" for i in range(3)))
        serac_cli(console_server, "table", "load", warehouse, "m", "tiny", path, *(["--create"] if part == 0 else []))
    catalog = load_pyiceberg_catalog(console_server.endpoint, warehouse)
    assert len(catalog.load_table("m.tiny").inspect.files()) == 5

    page = open_page()
    sign_in(page, console_server, route=table_route(warehouse, "m", "tiny", "maintenance"))
    panel = page.get_by_test_id("maintenance-icebergCompaction")
    target = panel.get_by_test_id("maintenance-icebergCompaction-targetFileSizeMB")
    expect(target).to_have_value("512")
    target.fill("64")
    panel.get_by_test_id("maintenance-icebergCompaction-save").click()
    expect(panel.get_by_test_id("maintenance-icebergCompaction-saved")).to_be_visible()
    expect(panel).to_contain_text("Set for this table.")
    path = f"/v1/warehouses/{warehouse}/namespaces/m/tables/tiny/maintenance"
    settings = catalog_api.ok("GET", path, expect=(200,)).json()
    assert settings["configuration"]["icebergCompaction"]["settings"]["icebergCompaction"]["targetFileSizeMB"] == 64
    assert settings["overrides"]["icebergCompaction"]["settings"]["icebergCompaction"]["targetFileSizeMB"] == 64

    panel.get_by_test_id("maintenance-icebergCompaction-run").click()
    job = panel.get_by_test_id("job-state")
    expect(job).to_have_attribute("data-state", re.compile("^(succeeded|failed)$"), timeout=30_000)
    assert job.get_attribute("data-state") == "succeeded", job.inner_text()
    expect(panel.get_by_test_id("maintenance-icebergCompaction-status")).to_be_visible()
    shots(page, "table-maintenance")
    compacted = catalog.load_table("m.tiny")
    files_after = len(compacted.inspect.files())
    assert files_after < 5
    page.get_by_test_id("table-reload").click()
    page.get_by_test_id("tab-files").click()
    expect(page.get_by_test_id("files-summary")).to_contain_text(
        f"{files_after} {'data file' if files_after == 1 else 'data files'} (")
    expect(page.get_by_test_id("file-row")).to_have_count(files_after)
    assert compacted.scan().to_arrow().num_rows == 15
    assert compacted.current_snapshot().summary.operation.value == "replace"

    # The Maintenance page lists the table and the warehouse's defaults.
    go(page, f"#/maintenance?warehouse={warehouse}")
    expect(page.get_by_test_id("warehouse-defaults")).to_be_visible()
    expect(page.get_by_test_id("maintenance-table-row").filter(has_text="m.tiny")).to_be_visible()
    expect(page.get_by_test_id("maintenance-progress")).to_have_text(re.compile(r"^1 table\. "))
    shots(page, "maintenance")


# --- 6. Users, keys, policies, simulation ----------------------------------------------------------


def test_a_user_made_in_the_page_gets_exactly_what_its_policy_allows(console_server, admin, s3, open_page, shots):
    bucket = unique_bucket_name("granted")
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="report.csv", Body=b"a,b\n")
    user = f"analyst-{uuid.uuid4().hex[:8]}"
    policy = f"read-{uuid.uuid4().hex[:8]}"
    root = open_page()
    sign_in(root, console_server, route="#/access?tab=users")

    root.get_by_test_id("user-name-input").fill(user)
    root.get_by_test_id("user-create").click()
    user_row = root.locator(sel("user-row", user=user))
    expect(user_row).to_be_visible()
    expect(user_row.get_by_test_id("user-detach-policy")).to_have_count(0)

    root.get_by_test_id("tab-keys").click()
    root.get_by_test_id("key-user-select").select_option(user)
    root.get_by_test_id("key-description").fill("made in the browser test")
    root.get_by_test_id("key-create").click()
    dialog = root.get_by_test_id("secret-dialog")
    expect(dialog).to_be_visible()
    access_key = dialog.get_by_test_id("new-access-key").input_value()
    secret_key = dialog.get_by_test_id("new-secret-key").input_value()
    assert access_key and len(secret_key) >= 20
    dialog.get_by_test_id("secret-dialog-close").click()
    expect(dialog).to_have_count(0)
    expect(root.locator(sel("key-row", key=access_key))).to_contain_text(user)
    expect(root.get_by_text(secret_key)).to_have_count(0)  # shown once, in the dialog only

    # The user signs in elsewhere. No policy yet: the bucket list holds nothing (serac lists the
    # buckets a caller may see, MinIO's rule, rather than refusing the listing outright), and the
    # bucket itself is refused with the server's message.
    other = open_page()
    sign_in(other, console_server, access_key, secret_key, route="#/buckets")
    expect(other.get_by_test_id("header-user")).to_have_text(user)
    expect(other.get_by_test_id("bucket-list")).to_contain_text("No buckets yet.")
    expect(other.get_by_test_id("bucket-row")).to_have_count(0)
    go(other, f"#/buckets/{bucket}")
    refused = page_fetch(other, "GET", f"s3/{bucket}?list-type=2")
    assert refused["status"] == 403, refused
    expect(other.get_by_test_id("error-banner")).to_have_text(server_message(refused))
    expect(other.get_by_test_id("error-banner")).to_contain_text("s3:ListBucket")
    expect(other.get_by_test_id("object-list")).to_have_count(0)

    # A policy through the JSON editor: bad JSON is caught before anything is sent.
    root.get_by_test_id("tab-policies").click()
    root.get_by_test_id("policy-new").click()
    root.get_by_test_id("policy-name-input").fill(policy)
    document = root.get_by_test_id("policy-document")
    document.fill('{"Version": "2012-10-17", "Statement": [')
    validation = root.get_by_test_id("policy-validation")
    expect(validation).to_contain_text("not JSON")
    expect(root.get_by_test_id("policy-save")).to_be_disabled()
    root.get_by_test_id("policy-name-input").press("Enter")
    assert admin.call("GET", f"/policies/{policy}").status_code == 404
    document.fill(json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": "s3:ListAllMyBuckets", "Resource": "*"},
        {"Effect": "Allow", "Action": ["s3:ListBucket", "s3:GetObject"],
         "Resource": [f"arn:aws:s3:::{bucket}", f"arn:aws:s3:::{bucket}/*"]}]}, indent=2))
    expect(validation).to_have_text("The document is well formed.")
    root.get_by_test_id("policy-save").click()
    expect(root.locator(sel("policy-row", policy=policy))).to_be_visible()
    stored = admin.ok("GET", f"/policies/{policy}")
    assert stored["document"]["Statement"][1]["Action"] == ["s3:ListBucket", "s3:GetObject"], stored
    shots(root, "access-policies")

    root.get_by_test_id("tab-users").click()
    user_row = root.locator(sel("user-row", user=user))
    user_row.get_by_test_id("user-attach-select").select_option(policy)
    user_row.get_by_test_id("user-attach").click()
    expect(user_row.locator(sel("user-detach-policy", policy=policy))).to_be_visible()
    assert admin.ok("GET", f"/users/{user}")["policies"] == [policy]
    shots(root, "access-users")

    # Now the bucket is listed, and its object.
    go(other, "#/buckets")
    expect(other.locator(sel("bucket-row", bucket=bucket))).to_be_visible()
    expect(other.get_by_test_id("error-banner")).to_have_count(0)
    other.locator(sel("bucket-row", bucket=bucket)).get_by_test_id("bucket-link").click()
    expect(other.locator(sel("object-row", key="report.csv"))).to_be_visible()

    # The server's own evaluation: reading the object is allowed, writing it is not.
    root.get_by_test_id("tab-simulate").click()
    root.get_by_test_id("simulate-user").fill(user)
    root.get_by_test_id("simulate-kind-object").click()
    root.get_by_test_id("simulate-bucket").fill(bucket)
    root.get_by_test_id("simulate-key").fill("report.csv")
    root.get_by_test_id("simulate-submit").click()
    results = root.get_by_test_id("simulate-results")
    expect(results).to_contain_text(f"arn:aws:s3:::{bucket}/report.csv")
    expect(results.locator(sel("simulate-result", action="s3:GetObject"))).to_have_attribute("data-allowed", "true")
    expect(results.locator(sel("simulate-result", action="s3:PutObject"))).to_have_attribute("data-allowed", "false")
    expect(results.locator(sel("simulate-result", action="s3:DeleteObject"))).to_have_attribute("data-allowed", "false")
    shots(root, "access-simulate")


# --- 7. Markup stays text; forged requests change nothing ------------------------------------------


class _AttackerPage(http.server.BaseHTTPRequestHandler):
    page = b""

    def do_GET(self):  # noqa: N802
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(self.page)))
        self.end_headers()
        self.wfile.write(self.page)

    def log_message(self, *args):
        pass


def test_markup_is_shown_as_text_and_forged_requests_are_refused(console_server, admin, s3, catalog_api,
                                                                 open_page, tmp_path):
    markup = "<img src=x onerror=alert(1)>"
    bucket = unique_bucket_name("xss")
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key=markup, Body=b"<script>alert(2)</script>", ContentType="text/html")
    warehouse = make_warehouse(catalog_api, "x")
    catalog = load_pyiceberg_catalog(console_server.endpoint, warehouse)
    catalog.create_table("x.marked", schema=pa.schema([("id", pa.int64())]),
                         properties={"comment": markup.replace("1", "3")})
    key_owner = f"marked-{uuid.uuid4().hex[:8]}"
    admin.create_user(key_owner)
    access_key, _ = admin.create_key(key_owner, description=markup.replace("1", "4"))

    page = open_page()
    sign_in(page, console_server, route=f"#/buckets/{bucket}")
    row = page.locator(sel("object-row", key=markup))
    expect(row).to_have_count(1)
    expect(row.get_by_test_id("object-link")).to_have_text(markup)
    row.get_by_test_id("object-link").click()
    expect(page.get_by_test_id("object-details").locator("h2")).to_have_text(markup)
    expect(page.get_by_test_id("object-info")).to_be_visible()
    assert page.locator("[data-testid=page-objects] img").count() == 0

    go(page, table_route(warehouse, "x", "marked", "properties"))
    expect(page.get_by_test_id("property-list")).to_contain_text(markup.replace("1", "3"))
    assert page.locator("[data-testid=page-table] img").count() == 0

    go(page, "#/access?tab=keys")
    expect(page.locator(sel("key-row", key=access_key))).to_contain_text(markup.replace("1", "4"))
    assert page.locator("[data-testid=page-access] img").count() == 0
    # A user name with markup: the server refuses it, and its refusal is text too.
    page.get_by_test_id("tab-users").click()
    page.get_by_test_id("user-name-input").fill(markup.replace("1", "5"))
    page.get_by_test_id("user-create").click()
    expect(page.get_by_test_id("error-banner")).to_contain_text("a user name may contain only")
    assert page.locator("[data-testid=page-access] img").count() == 0
    assert open_page.problems == []  # no alert fired

    # Forgery from the console's own page: without the anti-forgery header, refused.
    forged = unique_bucket_name("csrf")
    answer = page_fetch(page, "PUT", f"s3/{forged}", csrf=False)
    assert answer["status"] == 403 and json.loads(answer["text"])["error"]["code"] == "BadCsrfToken", answer
    assert not bucket_exists(s3, forged)

    # Forgery from another origin (another port on this host) opened in the signed-in browser.
    put_target = unique_bucket_name("csrf-put")
    post_target = unique_bucket_name("csrf-post")
    api = f"{console_server.endpoint}{API}"
    _AttackerPage.page = f"""<!doctype html><title>attacker</title><script>
const attempts = [
  fetch('{api}/s3/{put_target}', {{method: 'PUT', credentials: 'include', mode: 'no-cors'}}),
  fetch('{api}/s3/{put_target}', {{method: 'PUT', credentials: 'include'}}),
  fetch('{api}/iceberg/v1/warehouses', {{method: 'POST', credentials: 'include', mode: 'no-cors',
        headers: {{'Content-Type': 'text/plain'}}, body: JSON.stringify({{name: '{post_target}'}})}}),
];
Promise.allSettled(attempts).then(results => {{
  document.title = 'done ' + results.map(r => r.status).join(',');
}});
</script>""".encode()
    attacker = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _AttackerPage)
    threading.Thread(target=attacker.serve_forever, daemon=True).start()
    try:
        sent = []
        page.on("request", lambda r: sent.append(r.method) if r.url.startswith(api) else None)
        page.goto(f"http://127.0.0.1:{attacker.server_address[1]}/")
        expect(page).to_have_title(re.compile("^done "))
    finally:
        attacker.shutdown()
        attacker.server_close()
    # The browser sent the no-cors POST (with the cookie: the same site) and the server refused it.
    assert "POST" in sent, sent
    assert wait_for_log(console_server, r"method=POST path=/_serac/console/api/iceberg/v1/warehouses status=403 "), \
        "the forged POST did not reach the server"
    assert not bucket_exists(s3, put_target)
    assert not bucket_exists(s3, post_target)
    assert catalog_api.call("GET", "/v1/config", params={"warehouse": post_target}).status_code != 200
    # The session itself still works for the page of the console's origin.
    page.goto(console_server.endpoint + CONSOLE)
    expect(page.get_by_test_id("header-user")).to_be_visible()


# --- 8. Overview -----------------------------------------------------------------------------------


def test_overview_counts_and_live_charts(console_server, s3, open_page, shots):
    buckets = [b["Name"] for b in s3.list_buckets()["Buckets"]]
    assert buckets  # the tests before made some
    page = open_page()
    sign_in(page, console_server)
    counts = page.get_by_test_id("overview-counts")
    expect(counts).to_be_visible()
    expect(counts.locator("tr", has_text="Buckets").locator("td")).to_have_text(f"{len(buckets):,}")
    expect(counts.locator("tr", has_text="Warehouses").locator("td")).not_to_have_text("–")
    for chart in ("chart-requests", "chart-errors", "chart-latency"):
        expect(page.get_by_test_id(chart).locator("canvas")).to_have_count(1, timeout=5_000)
    width = page.get_by_test_id("chart-requests").locator("canvas").evaluate("c => c.width")
    assert width > 100
    # Two samples of the metrics make a rate: the live line shows a latency, not a dash.
    metrics_now = page.get_by_test_id("metrics-now")
    expect(metrics_now).not_to_contain_text("p99 –", timeout=8_000)
    expect(page.get_by_test_id("metrics-error")).to_have_count(0)

    # Requests another client makes show up in the live numbers (polled every 2 s).
    stop = threading.Event()

    def traffic():
        while not stop.is_set():
            s3.list_buckets()
            time.sleep(0.01)

    client = threading.Thread(target=traffic, daemon=True)
    client.start()
    try:
        expect(metrics_now).to_have_text(re.compile(r"^Now: \d{2,}/s requests"), timeout=8_000)
        page.wait_for_timeout(2_100)  # one more point for the picture
        shots(page, "overview")
    finally:
        stop.set()
        client.join(10)
