"""Every numeric(p, s) PostgreSQL holds reaches Iceberg's decimal(p, s) exactly: a randomized
differential test against PostgreSQL's own text output, for every precision from 1 to 38 and every
scale from 0 to p, through both of `serac sync`'s paths — the full load (COPY's binary form, groups
of four digits whose last is padded) and the changes after it (pgoutput's text form).

The values are at the extremes (the largest and smallest the type holds, the smallest fraction) and
random in length on both sides of the point, with and without trailing zeros. The seed is printed
with every failure; SERAC_DECIMAL_SEED repeats a run."""

from __future__ import annotations

import os
import random
from decimal import Decimal

from catalog_util import catalog_api, load_pyiceberg_catalog, warehouse  # noqa: F401
from pg_util import postgres  # noqa: F401
from test_sync_run import db, run_sync, setup_files  # noqa: F401

# numeric(p, s) for every 1 <= p <= 38 and 0 <= s <= p, a table per run of precisions so that a row
# of the widest stays well inside a PostgreSQL page.
PRECISION_RUNS = [range(1, 20), range(20, 28), range(28, 34), range(34, 39)]
ROWS_LOADED = 40
ROWS_CHANGED = 40


def column(precision: int, scale: int) -> str:
    return f"n{precision}_{scale}"


def table_columns(run: range) -> list[tuple[str, int, int]]:
    return [(column(p, s), p, s) for p in run for s in range(p + 1)]


def literal(rng: random.Random, precision: int, scale: int) -> str | None:
    """A value numeric(precision, scale) holds, as SQL text."""
    integer_digits = precision - scale
    kind = rng.randrange(10)
    if kind == 0:
        return None
    if kind == 1:
        integer, fraction = "9" * integer_digits, "9" * scale  # the largest
    elif kind == 2:
        integer, fraction = ("0", "0" * (scale - 1) + "1") if scale else ("1", "")  # the smallest step
    elif kind == 3:
        integer, fraction = "0", ""
    else:
        whole = rng.randint(0, integer_digits)
        integer = (str(rng.randint(1, 9)) + "".join(rng.choice("0123456789") for _ in range(whole - 1))
                   if whole else "0")
        places = rng.randint(0, scale)
        fraction = "".join(rng.choice("0123456789") for _ in range(places))
        if kind == 4 and places > 1:
            kept = places // 2
            fraction = fraction[:kept] + "0" * (places - kept)  # trailing zeros
    sign = "-" if rng.random() < 0.5 else ""
    return f"{sign}{integer}" + (f".{fraction}" if fraction else "")


def insert(table: str, columns, first_id: int, count: int, rng: random.Random) -> str:
    rows = []
    for row_id in range(first_id, first_id + count):
        values = [literal(rng, p, s) for _, p, s in columns]
        rows.append(f"({row_id}, " + ", ".join("NULL" if v is None else f"'{v}'" for v in values) + ")")
    return f"INSERT INTO {table} (id, {', '.join(name for name, _, _ in columns)}) VALUES " + ", ".join(rows)


def source_text(db, table: str, columns) -> dict[int, list[str | None]]:  # noqa: F811
    """PostgreSQL's own text of every value, by id."""
    out = {}
    for line in db.sql(f"SELECT id, {', '.join(name for name, _, _ in columns)} FROM {table}").splitlines():
        fields = line.split("|")
        out[int(fields[0])] = [field if field != "" else None for field in fields[1:]]
    return out


def assert_same(db, server, warehouse, tables, seed, phase):  # noqa: F811
    catalog = load_pyiceberg_catalog(server.endpoint, warehouse)
    for table, columns in tables.items():
        expected = source_text(db, table, columns)
        rows = catalog.load_table(f"replica.{table}").scan().to_arrow().to_pylist()
        assert len(rows) == len(expected), (seed, phase, table, len(rows), len(expected))
        for row in rows:
            want = expected[row["id"]]
            for (name, precision, scale), text in zip(columns, want):
                got = row[name]
                if text is None:
                    assert got is None, (seed, phase, table, row["id"], name, got)
                    continue
                assert got is not None and got == Decimal(text) and -got.as_tuple().exponent == scale, (
                    f"seed {seed}, {phase}: {table} id {row['id']} {name} numeric({precision},{scale}): "
                    f"PostgreSQL {text}, Iceberg {got}")


def test_every_numeric_reaches_iceberg_exactly(db, server, warehouse, tmp_path):  # noqa: F811
    seed = int(os.environ.get("SERAC_DECIMAL_SEED", random.randrange(1 << 32)))
    rng = random.Random(seed)
    tables = {f"decimals_{i}": table_columns(run) for i, run in enumerate(PRECISION_RUNS)}
    statements = []
    for table, columns in tables.items():
        statements.append(f"CREATE TABLE {table} (id bigint PRIMARY KEY, "
                          + ", ".join(f"{name} numeric({p}, {s})" for name, p, s in columns) + ")")
    statements.append(f"CREATE PUBLICATION serac_pub FOR TABLE {', '.join(tables)}")
    db.sql(";".join(statements))
    # The extremes of every column, both signs, then random rows.
    for table, columns in tables.items():
        largest = ", ".join(f"'{'9' * (p - s)}{'.' + '9' * s if s else ''}'" for _, p, s in columns)
        smallest = ", ".join(f"'0{'.' + '0' * (s - 1) + '1' if s else ''}'" for _, p, s in columns)
        names = ", ".join(name for name, _, _ in columns)
        db.sql(f"INSERT INTO {table} (id, {names}) VALUES (1, {largest}), (2, {smallest});"
               f"INSERT INTO {table} SELECT -id, {', '.join('-' + n for n, _, _ in columns)} FROM {table};"
               + insert(table, columns, 10, ROWS_LOADED, rng))

    args = setup_files(db, server, warehouse, tmp_path, list(tables), "decimals")
    run_sync(args)
    assert_same(db, server, warehouse, tables, seed, "full load (COPY binary)")

    # The changes path: new rows, and rows updated to other values.
    for table, columns in tables.items():
        updates = []
        for row_id in range(10, 10 + ROWS_CHANGED // 2):
            values = [literal(rng, p, s) for _, p, s in columns]
            updates.append(f"UPDATE {table} SET " + ", ".join(
                f"{name} = {'NULL' if v is None else repr(v)}" for (name, _, _), v in zip(columns, values))
                + f" WHERE id = {row_id}")
        db.sql(insert(table, columns, 1000, ROWS_CHANGED, rng) + ";" + ";".join(updates)
               + f"; INSERT INTO {table} SELECT id + 5000, {', '.join(n for n, _, _ in columns)} FROM {table} "
               "WHERE id IN (1, 2, -1, -2)")
    run_sync(args)
    assert_same(db, server, warehouse, tables, seed, "changes (pgoutput text)")
