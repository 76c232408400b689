"""The web console's API against a real server, without a browser: signing in and out, the session
cookie's attributes, the anti-forgery header, cross-site refusal, slowed-down guessing, the S3,
catalog and admin APIs reached with the session's authority (and refused by the server, not the
page), presigned links, the overview, the admin API's policy simulation, and the headers that keep
an uploaded document from acting on the console's origin. test_console_browser.py drives the page
itself in Chromium."""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from urllib.parse import quote

import pytest
import requests

from s3util import (ACCESS_KEY, SECRET_KEY, SeracAdmin, SeracServer, make_client, unique_bucket_name)

API = "/_serac/console/api"
SECRETS: list[str] = [SECRET_KEY]


@pytest.fixture(scope="module")
def console_server(session_tmp):
    serac = SeracServer(session_tmp / "console-api", name="serac-console-api",
                        extra_args=["--maintenance-interval", "0"])
    serac.start()
    yield serac
    serac.stop()


@pytest.fixture(scope="module")
def admin(console_server):
    return SeracAdmin(console_server.endpoint)


class Console:
    """A signed-in browser, as far as the API can tell: the cookie jar and the CSRF header."""

    def __init__(self, endpoint: str, access_key: str = ACCESS_KEY, secret_key: str = SECRET_KEY,
                 verify=None):
        self.endpoint = endpoint
        self.http = requests.Session()
        # Given with each request: a CA bundle named in the environment would override the session's.
        self.verify = verify if verify is not None else True
        self.sign_in = self.http.post(endpoint + API + "/session", verify=self.verify,
                                      json={"access-key": access_key, "secret-key": secret_key}, timeout=10)
        assert self.sign_in.status_code == 200, self.sign_in.text
        self.session = self.sign_in.json()
        self.http.headers["X-Serac-Csrf"] = self.session["csrf"]

    def call(self, method: str, route: str, **kwargs) -> requests.Response:
        return self.http.request(method, self.endpoint + API + "/" + route, timeout=30, verify=self.verify, **kwargs)

    @property
    def cookie(self) -> str:
        return self.http.cookies.get("serac_console")


def user_with_key(admin: SeracAdmin, policies=()) -> tuple[str, str, str]:
    name = f"u-{uuid.uuid4().hex[:8]}"
    access_key, secret_key = admin.create_user_with_key(name, policies)
    SECRETS.append(secret_key)
    return name, access_key, secret_key


def error_code(response: requests.Response) -> str:
    return response.json()["error"]["code"]


def test_sign_in_sets_a_strict_http_only_cookie_scoped_to_the_api(console_server):
    console = Console(console_server.endpoint)
    assert console.session["user"] == ACCESS_KEY and console.session["root"] is True
    assert console.session["access-key"] == ACCESS_KEY
    assert "secret" not in json.dumps(console.session).lower()
    cookie = console.sign_in.headers["Set-Cookie"]
    attributes = [part.strip().lower() for part in cookie.split(";")]
    assert attributes[0].startswith("serac_console=serac2c.")
    assert "httponly" in attributes and "samesite=strict" in attributes
    assert f"path={API}" in attributes
    assert "max-age=43200" in attributes
    assert "secure" not in attributes  # plain HTTP: see the TLS case
    assert console.sign_in.headers["Cache-Control"] == "no-store"
    assert "default-src 'none'" in console.sign_in.headers["Content-Security-Policy"]
    SECRETS.append(console.cookie)
    # The session answers its own description, with the same anti-forgery value.
    again = console.call("GET", "session")
    assert again.status_code == 200 and again.json()["csrf"] == console.session["csrf"]


def test_the_cookie_is_secure_under_tls(tls_server, tls_cert):
    console = Console(tls_server.endpoint, verify=tls_cert)
    assert "secure" in [part.strip().lower() for part in console.sign_in.headers["Set-Cookie"].split(";")]
    assert console.call("GET", "overview").status_code == 200


def test_bad_sign_ins_get_clear_errors(console_server):
    url = console_server.endpoint + API + "/session"
    wrong = requests.post(url, json={"access-key": ACCESS_KEY, "secret-key": "not-the-secret"}, timeout=10)
    assert wrong.status_code == 401 and error_code(wrong) == "InvalidCredentials"
    assert "Set-Cookie" not in wrong.headers
    for body in (b"not json", b"[]", json.dumps({"access-key": ACCESS_KEY}).encode(), b"x" * 5000):
        response = requests.post(url, data=body, timeout=10)
        assert response.status_code == 400 and error_code(response) == "InvalidRequest", body[:20]
    unknown = requests.post(url, json={"access-key": "no-such-key", "secret-key": "x" * 20}, timeout=10)
    assert unknown.status_code == 401 and error_code(unknown) == "InvalidCredentials"


def test_without_the_cookie_or_the_csrf_value_nothing_is_served(console_server):
    console = Console(console_server.endpoint)
    base = console_server.endpoint + API
    # GET session is how a reloaded page learns the value: the cookie alone answers it.
    reloaded = requests.get(f"{base}/session", cookies={"serac_console": console.cookie}, timeout=10)
    assert reloaded.status_code == 200 and reloaded.json()["csrf"] == console.session["csrf"]
    signed_out = requests.delete(f"{base}/session", cookies={"serac_console": console.cookie}, timeout=10)
    assert signed_out.status_code == 403  # signing out changes state: it needs the value too
    for route in ("overview", "s3/", "iceberg/v1/warehouses", "admin/v1/users", "metrics"):
        bare = requests.get(f"{base}/{route}", timeout=10)
        assert bare.status_code == 401 and error_code(bare) == "NotSignedIn", route
        forged = requests.get(f"{base}/{route}", cookies={"serac_console": "serac2c.AAAA"},
                              headers={"X-Serac-Csrf": console.session["csrf"]}, timeout=10)
        assert forged.status_code == 401, route
        no_csrf = requests.get(f"{base}/{route}", cookies={"serac_console": console.cookie}, timeout=10)
        assert no_csrf.status_code == 403 and error_code(no_csrf) == "BadCsrfToken", route
        wrong_csrf = requests.get(f"{base}/{route}", cookies={"serac_console": console.cookie},
                                  headers={"X-Serac-Csrf": "A" * 32}, timeout=10)
        assert wrong_csrf.status_code == 403, route
    # Another session's anti-forgery value does not fit this cookie.
    other = Console(console_server.endpoint)
    mixed = requests.get(f"{base}/overview", cookies={"serac_console": console.cookie},
                         headers={"X-Serac-Csrf": other.session["csrf"]}, timeout=10)
    assert mixed.status_code == 403
    # A state-changing request without the value changes nothing.
    bucket = unique_bucket_name("csrf")
    refused = requests.put(f"{base}/s3/{bucket}", cookies={"serac_console": console.cookie}, timeout=10)
    assert refused.status_code == 403
    assert console.call("HEAD", f"s3/{bucket}").status_code == 404


def test_requests_another_site_made_are_refused(console_server):
    console = Console(console_server.endpoint)
    for site in ("cross-site", "same-site"):
        response = console.call("GET", "overview", headers={"Sec-Fetch-Site": site})
        assert response.status_code == 403 and error_code(response) == "CrossSiteRequest"
        sign_in = requests.post(console_server.endpoint + API + "/session", headers={"Sec-Fetch-Site": site},
                                json={"access-key": ACCESS_KEY, "secret-key": SECRET_KEY}, timeout=10)
        assert sign_in.status_code == 403 and "Set-Cookie" not in sign_in.headers
    assert console.call("GET", "overview", headers={"Sec-Fetch-Site": "same-origin"}).status_code == 200


def test_repeated_failed_sign_ins_are_slowed_down(console_server, admin):
    _, access_key, secret_key = user_with_key(admin, ["readonly"])
    url = console_server.endpoint + API + "/session"
    for _ in range(10):
        response = requests.post(url, json={"access-key": access_key, "secret-key": "wrong-secret"}, timeout=10)
        assert response.status_code == 401
    # Even the right secret waits now: a guesser learns nothing from the answer.
    throttled = requests.post(url, json={"access-key": access_key, "secret-key": secret_key}, timeout=10)
    assert throttled.status_code == 429 and error_code(throttled) == "SlowDown"
    assert 1 <= int(throttled.headers["Retry-After"]) <= 60
    # Another key from the same address is not held back by this one's failures.
    Console(console_server.endpoint)


def test_sign_out_ends_the_session_everywhere_but_not_other_sessions(console_server):
    first = Console(console_server.endpoint)
    second = Console(console_server.endpoint)
    stolen_cookie = first.cookie
    out = first.call("DELETE", "session")
    assert out.status_code == 204
    assert "max-age=0" in out.headers["Set-Cookie"].lower()
    replay = requests.get(console_server.endpoint + API + "/overview", cookies={"serac_console": stolen_cookie},
                          headers={"X-Serac-Csrf": first.session["csrf"]}, timeout=10)
    assert replay.status_code == 401 and error_code(replay) == "SessionExpired"
    assert second.call("GET", "overview").status_code == 200


def test_a_disabled_or_deleted_key_ends_its_sessions(console_server, admin):
    _, access_key, secret_key = user_with_key(admin, ["readonly"])
    console = Console(console_server.endpoint, access_key, secret_key)
    assert console.call("GET", "s3/").status_code == 200
    admin.set_key_enabled(access_key, False)
    refused = console.call("GET", "s3/")
    assert refused.status_code == 401 and error_code(refused) == "SessionExpired"


def test_a_read_only_user_is_refused_by_the_server(console_server, admin):
    root = Console(console_server.endpoint)
    bucket = unique_bucket_name("ro")
    assert root.call("PUT", f"s3/{bucket}").status_code == 200
    assert root.call("PUT", f"s3/{bucket}/seed.txt", data=b"seed").status_code == 200
    _, access_key, secret_key = user_with_key(admin, ["readonly"])
    reader = Console(console_server.endpoint, access_key, secret_key)
    assert reader.session["root"] is False
    assert reader.call("GET", f"s3/{bucket}/seed.txt").content == b"seed"
    put = reader.call("PUT", f"s3/{bucket}/new.txt", data=b"x")
    assert put.status_code == 403 and b"<Code>AccessDenied</Code>" in put.content
    delete = reader.call("DELETE", f"s3/{bucket}/seed.txt")
    assert delete.status_code == 403
    users = reader.call("GET", "admin/v1/users")
    assert users.status_code == 403 and users.json()["error"]["code"] == "AccessDenied"
    warehouse = reader.call("POST", "iceberg/v1/warehouses", json={"name": unique_bucket_name("wh")})
    assert warehouse.status_code == 403 and warehouse.json()["error"]["type"] == "ForbiddenException"
    assert root.call("GET", f"s3/{bucket}/seed.txt").content == b"seed"


def test_objects_round_trip_byte_for_byte_through_the_console(console_server):
    console = Console(console_server.endpoint)
    s3 = make_client(console_server.endpoint)
    bucket = unique_bucket_name("bytes")
    assert console.call("PUT", f"s3/{bucket}").status_code == 200
    data = os.urandom(20 * 1024 * 1024 + 12345)
    key = "dir/ünïcode & spaces+plus%.bin"
    path = f"s3/{bucket}/{quote(key, safe='/')}"
    started = console.call("POST", path + "?uploads")
    assert started.status_code == 200, started.text
    upload_id = started.text.split("<UploadId>")[1].split("</UploadId>")[0]
    part_size = 8 * 1024 * 1024
    parts = []
    for number, offset in enumerate(range(0, len(data), part_size), start=1):
        response = console.call("PUT", f"{path}?partNumber={number}&uploadId={quote(upload_id)}",
                                data=data[offset:offset + part_size])
        assert response.status_code == 200, response.text
        parts.append(f"<Part><PartNumber>{number}</PartNumber><ETag>{response.headers['ETag']}</ETag></Part>")
    completed = console.call("POST", f"{path}?uploadId={quote(upload_id)}",
                             data="<CompleteMultipartUpload>" + "".join(parts) + "</CompleteMultipartUpload>")
    assert completed.status_code == 200, completed.text
    downloaded = console.call("GET", path)
    assert downloaded.status_code == 200
    assert hashlib.sha256(downloaded.content).digest() == hashlib.sha256(data).digest()
    assert s3.get_object(Bucket=bucket, Key=key)["Body"].read() == data
    # An object's own caching headers come back as the S3 API sends them, not overridden.
    s3.put_object(Bucket=bucket, Key="cached.txt", Body=b"c", CacheControl="max-age=60")
    assert console.call("GET", f"s3/{bucket}/cached.txt").headers["Cache-Control"] == "max-age=60"
    assert console.call("GET", "overview").headers["Cache-Control"] == "no-store"
    listed = console.call("GET", f"s3/{bucket}?list-type=2&prefix=dir/&delimiter=/")
    assert f"<Key>{key.replace('&', '&amp;')}</Key>" in listed.text


def test_an_uploaded_document_cannot_act_on_the_consoles_origin(console_server):
    s3 = make_client(console_server.endpoint)
    bucket = unique_bucket_name("xss")
    s3.create_bucket(Bucket=bucket)
    key = "<img src=x onerror=alert(1)>.html"
    s3.put_object(Bucket=bucket, Key=key, Body=b"<script>fetch('/_serac/console/api/session')</script>",
                  ContentType="text/html")
    s3.put_object(Bucket=bucket, Key="image.svg", Body=b"<svg xmlns='http://www.w3.org/2000/svg'/>",
                  ContentType="image/svg+xml")
    s3.put_object(Bucket=bucket, Key="plain.txt", Body=b"text", ContentType="text/plain")
    for name, sandboxed in ((key, True), ("image.svg", True), ("plain.txt", False)):
        url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": name}, ExpiresIn=60)
        response = requests.get(url, timeout=10)
        assert response.status_code == 200
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert (response.headers.get("Content-Security-Policy") == "sandbox") == sandboxed, name
    # Listed through the console, the key is data in XML, escaped, never markup of the page.
    console = Console(console_server.endpoint)
    listed = console.call("GET", f"s3/{bucket}?list-type=2")
    assert "<Key>&lt;img src=x onerror=alert(1)&gt;.html</Key>" in listed.text


def test_presigned_links_only_for_what_the_user_may_read(console_server, admin):
    root = Console(console_server.endpoint)
    bucket = unique_bucket_name("share")
    root.call("PUT", f"s3/{bucket}")
    root.call("PUT", f"s3/{bucket}/report.csv", data=b"a,b\n1,2\n")
    link = root.call("POST", "presign", json={"bucket": bucket, "key": "report.csv", "expires-seconds": 3600})
    assert link.status_code == 200, link.text
    assert requests.get(link.json()["url"], timeout=10).content == b"a,b\n1,2\n"
    assert "X-Amz-Expires=3600" in link.json()["url"]
    for bad in ({"bucket": bucket, "key": "report.csv", "expires-seconds": 0},
                {"bucket": bucket, "key": "report.csv", "expires-seconds": 604801},
                {"bucket": bucket, "expires-seconds": 60}):
        response = root.call("POST", "presign", json=bad)
        assert response.status_code == 400 and error_code(response) == "InvalidRequest", bad
    _, access_key, secret_key = user_with_key(admin, ["writeonly"])
    writer = Console(console_server.endpoint, access_key, secret_key)
    refused = writer.call("POST", "presign", json={"bucket": bucket, "key": "report.csv", "expires-seconds": 60})
    assert refused.status_code == 403 and error_code(refused) == "AccessDenied"


def test_overview_counts_only_what_the_user_may_see(console_server, admin):
    root = Console(console_server.endpoint)
    bucket = unique_bucket_name("ov")
    root.call("PUT", f"s3/{bucket}")
    root.call("PUT", f"s3/{bucket}/a", data=b"12345")
    overview = root.call("GET", "overview").json()
    assert overview["version"] and overview["uptime-seconds"] >= 0
    assert overview["buckets"] >= 1 and overview["objects"] >= 1 and overview["bytes"] >= 5
    assert overview["warehouses"] is not None
    _, access_key, secret_key = user_with_key(admin, [])
    nobody = Console(console_server.endpoint, access_key, secret_key).call("GET", "overview").json()
    assert nobody["buckets"] is None and nobody["objects"] is None and nobody["warehouses"] is None
    assert nobody["version"] == overview["version"]


def test_policy_simulation_is_the_servers_own_evaluation(console_server, admin):
    name, _, _ = user_with_key(admin, ["readonly"])
    policy = f"p-{uuid.uuid4().hex[:8]}"
    admin.put_policy(policy, {"Version": "2012-10-17", "Statement": [
        {"Effect": "Deny", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::secret-bucket/*"}]})
    admin.attach(policy, name)
    root = Console(console_server.endpoint)
    asked = {"actions": ["s3:GetObject", "s3:PutObject"]}
    open_bucket = root.call("POST", f"admin/v1/users/{name}/simulate",
                            json={**asked, "resource": "arn:aws:s3:::open-bucket/a.txt"})
    assert open_bucket.status_code == 200, open_bucket.text
    assert open_bucket.json()["results"] == [
        {"action": "s3:GetObject", "allowed": True, "reason": "allowed"},
        {"action": "s3:PutObject", "allowed": False, "reason": "implicit-deny"}]
    secret = root.call("POST", f"admin/v1/users/{name}/simulate",
                       json={**asked, "resource": "arn:aws:s3:::secret-bucket/a.txt"}).json()
    assert secret["results"][0] == {"action": "s3:GetObject", "allowed": False, "reason": "explicit-deny"}
    missing = root.call("POST", "admin/v1/users/no-such-user/simulate", json={**asked, "resource": "arn:aws:s3:::b"})
    assert missing.status_code == 404
    for bad in ({"resource": "arn:aws:s3:::b"}, {"actions": [], "resource": "arn:aws:s3:::b"},
                {"actions": ["s3:GetObject"] * 65, "resource": "arn:aws:s3:::b"}, {"actions": ["s3:GetObject"]}):
        response = root.call("POST", f"admin/v1/users/{name}/simulate", json=bad)
        assert response.status_code == 400, bad
    _, access_key, secret_key = user_with_key(admin, ["readwrite"])
    refused = Console(console_server.endpoint, access_key, secret_key).call(
        "POST", f"admin/v1/users/{name}/simulate", json={**asked, "resource": "arn:aws:s3:::b"})
    assert refused.status_code == 403


def test_engine_configuration_names_the_key_but_never_a_secret(console_server):
    console = Console(console_server.endpoint)
    engines = console.call("GET", "engine-config?warehouse=lake").json()["engines"]
    assert {engine["name"] for engine in engines} >= {"spark", "trino", "pyiceberg", "duckdb", "clickhouse"}
    for engine in engines:
        assert SECRET_KEY not in engine["text"]
        assert console_server.endpoint in engine["text"] or engine["name"] == "duckdb"


def test_the_page_and_its_files_are_served_with_a_strict_policy(console_server):
    base = console_server.endpoint + "/_serac/console"
    redirect = requests.get(base, allow_redirects=False, timeout=10)
    assert redirect.status_code == 308 and redirect.headers["Location"] == "/_serac/console/"
    page = requests.get(base + "/", timeout=10)
    assert page.status_code == 200 and page.headers["Content-Type"].startswith("text/html")
    policy = page.headers["Content-Security-Policy"]
    for directive in ("default-src 'none'", "script-src 'self'", "frame-ancestors 'none'", "base-uri 'none'"):
        assert directive in policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert page.headers["X-Frame-Options"] == "DENY"
    assert requests.get(base + "/no-such-file.js", timeout=10).status_code == 404
    assert requests.post(base + "/", data=b"x", timeout=10).status_code == 405
    assert requests.get(base + "/%2e%2e/%2e%2e/etc/passwd", timeout=10).status_code == 404


def test_console_off_serves_nothing(session_tmp):
    serac = SeracServer(session_tmp / "console-off", name="serac-console-off", extra_args=["--console", "off"])
    serac.start()
    try:
        assert requests.get(serac.endpoint + "/_serac/console/", timeout=10).status_code == 404
        sign_in = requests.post(serac.endpoint + API + "/session",
                                json={"access-key": ACCESS_KEY, "secret-key": SECRET_KEY}, timeout=10)
        assert sign_in.status_code == 404 and "Set-Cookie" not in sign_in.headers
        assert "Console:" not in "\n".join(serac.stdout_lines)
    finally:
        serac.stop()


def test_no_secret_or_session_reaches_the_log(console_server):
    log = console_server.stderr_path.read_text(errors="replace") + "\n".join(console_server.stdout_lines)
    assert "signed in" in log
    for secret in SECRETS:
        if secret:
            assert secret not in log
