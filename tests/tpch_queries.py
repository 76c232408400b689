"""TPC-H queries 1, 3, 5, 6 and 10 with the specification's validation substitution parameters,
written once in SQL that Spark, DuckDB, Trino and ClickHouse all accept.

The date arithmetic of the specification (`date '1998-12-01' - interval '90' day`, `+ interval '1'
year`) is folded into literal dates, because the engines spell intervals differently; the values
are the same. Table names are placeholders: `render(name, table_ref)` fills them with each engine's
qualified name (for example `cat.tpch.lineitem` or ClickHouse's lake.`tpch.lineitem`)."""

from __future__ import annotations

# Only the tables these queries join; part and partsupp are not needed.
TABLES = ("region", "nation", "supplier", "customer", "orders", "lineitem")

# Q1, pricing summary report: DELTA = 90 (shipdate <= 1998-12-01 - 90 days).
Q1 = """
SELECT l_returnflag, l_linestatus,
       sum(l_quantity) AS sum_qty,
       sum(l_extendedprice) AS sum_base_price,
       sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price,
       sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge,
       avg(l_quantity) AS avg_qty,
       avg(l_extendedprice) AS avg_price,
       avg(l_discount) AS avg_disc,
       count(*) AS count_order
FROM {lineitem}
WHERE l_shipdate <= DATE '1998-09-02'
GROUP BY l_returnflag, l_linestatus
ORDER BY l_returnflag, l_linestatus
"""

# Q3, shipping priority: SEGMENT = BUILDING, DATE = 1995-03-15.
Q3 = """
SELECT l_orderkey, sum(l_extendedprice * (1 - l_discount)) AS revenue, o_orderdate, o_shippriority
FROM {customer}, {orders}, {lineitem}
WHERE c_mktsegment = 'BUILDING'
  AND c_custkey = o_custkey
  AND l_orderkey = o_orderkey
  AND o_orderdate < DATE '1995-03-15'
  AND l_shipdate > DATE '1995-03-15'
GROUP BY l_orderkey, o_orderdate, o_shippriority
ORDER BY revenue DESC, o_orderdate
LIMIT 10
"""

# Q5, local supplier volume: REGION = ASIA, DATE = 1994-01-01 (for one year).
Q5 = """
SELECT n_name, sum(l_extendedprice * (1 - l_discount)) AS revenue
FROM {customer}, {orders}, {lineitem}, {supplier}, {nation}, {region}
WHERE c_custkey = o_custkey
  AND l_orderkey = o_orderkey
  AND l_suppkey = s_suppkey
  AND c_nationkey = s_nationkey
  AND s_nationkey = n_nationkey
  AND n_regionkey = r_regionkey
  AND r_name = 'ASIA'
  AND o_orderdate >= DATE '1994-01-01'
  AND o_orderdate < DATE '1995-01-01'
GROUP BY n_name
ORDER BY revenue DESC
"""

# Q6, forecasting revenue change: DATE = 1994-01-01, DISCOUNT = 0.06 (+/- 0.01), QUANTITY = 24.
Q6 = """
SELECT sum(l_extendedprice * l_discount) AS revenue
FROM {lineitem}
WHERE l_shipdate >= DATE '1994-01-01'
  AND l_shipdate < DATE '1995-01-01'
  AND l_discount BETWEEN {discount_low} AND {discount_high}
  AND l_quantity < 24
"""

# Q10, returned item reporting: DATE = 1993-10-01 (for three months).
Q10 = """
SELECT c_custkey, c_name, sum(l_extendedprice * (1 - l_discount)) AS revenue, c_acctbal, n_name,
       c_address, c_phone, c_comment
FROM {customer}, {orders}, {lineitem}, {nation}
WHERE c_custkey = o_custkey
  AND l_orderkey = o_orderkey
  AND o_orderdate >= DATE '1993-10-01'
  AND o_orderdate < DATE '1994-01-01'
  AND l_returnflag = 'R'
  AND c_nationkey = n_nationkey
GROUP BY c_custkey, c_name, c_acctbal, c_phone, n_name, c_address, c_comment
ORDER BY revenue DESC
LIMIT 20
"""

QUERIES = {"q1": Q1, "q3": Q3, "q5": Q5, "q6": Q6, "q10": Q10}

# Q6's discount bounds as exact decimals. ClickHouse reads a bare 0.05 as Float64, and comparing a
# Decimal column with a Float64 is not the same predicate (0.07 as a double is above 0.07), so
# ClickHouse gets typed decimal literals; the other engines read 0.05 as a decimal already.
DISCOUNT_BOUNDS = {
    "default": {"discount_low": "0.05", "discount_high": "0.07"},
    "clickhouse": {"discount_low": "toDecimal64('0.05', 2)", "discount_high": "toDecimal64('0.07', 2)"},
}


def render(name: str, table_ref, dialect: str = "default") -> str:
    """The text of query `name` with every table replaced by table_ref(table)."""
    values = {table: table_ref(table) for table in TABLES}
    values.update(DISCOUNT_BOUNDS.get(dialect, DISCOUNT_BOUNDS["default"]))
    return QUERIES[name].format(**values)
