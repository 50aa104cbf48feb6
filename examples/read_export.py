# examples/read_export.py: a `tesync export` directory read as a notebook would, with DuckDB
# (and Polars when installed). Every number stays a decimal.Decimal, digit for digit as the
# warehouse held it: never float.
#
#   pip install duckdb pytz        # pytz: DuckDB needs it to hand timestamptz to Python
#   pip install polars             # optional: the same archive read with Polars
#   python3 examples/read_export.py DIR [INSTANT ...]
#
# DIR is what `tesync export` wrote: `_manifest.json`, the daily archives Hive-partitioned
# (DIR/app.screener_daily/snapshot_date=YYYY-MM-DD/*.parquet), the current tables
# (DIR/app.tokens/*.parquet), as-of cuts (DIR/asof=<instant>/app.tokens/*.parquet) and, when
# asked for, history tables (DIR/app.tokens_history/*.parquet, with known_from and known_to).
# INSTANT is an ISO 8601 instant (2026-07-01T00:00:00Z) to pick tokens at from the history
# tables; by default the instants of the export's as-of cuts, else its knownAt.
#
# What keeps the digits:
# - A numeric column is Parquet DECIMAL(38,s), s chosen from its values; a column whose values
#   do not fit 38 digits is a string, and the manifest says so (`asString`): Decimal(text).
# - fetchall() gives DECIMAL as Decimal; DuckDB's .df() would give float64.
# - DuckDB reading files together gives a DECIMAL column the type of all of them, and where two
#   files' scales differ that type keeps the smaller scale: the other file's digits beyond it
#   are cut, silently. So files are read together only when their schemas agree (one
#   read_parquet per group of equal schemas), and rows of different groups or tables meet in
#   Python, where Decimals compare exactly.
# - Python's Decimal arithmetic rounds to 28 digits by default: raised below, for sums.
import decimal
import hashlib
import json
import sys
from collections import Counter
from decimal import Decimal
from pathlib import Path

import duckdb

decimal.getcontext().prec = 120  # sums and ratios of 38-digit (and wider) values keep every digit

FORMAT = 1  # the manifest layout this notebook reads
ARCHIVE = "app.screener_daily"  # the daily archive read across days (else the first one held)


# --- What the export holds ----------------------------------------------------------------

def load_manifest(root):
    manifest = json.loads((root / "_manifest.json").read_text())
    if manifest.get("format") != FORMAT:
        sys.exit(f"{root}/_manifest.json is of format {manifest.get('format')}; this notebook reads format {FORMAT}")
    return manifest


def files_of(manifest, table, as_of=None, archive=None):
    """The manifest's entries of `table`: its current files, or its as-of cut at `as_of`; a daily
    archive's (archive=True) are those with a partition. Only what the manifest names is read:
    an export under way writes files before the manifest that lists them."""
    return [f for f in manifest["files"] if f["table"] == table and f.get("asOf") == as_of
            and (archive is None or (f.get("partition") is not None) == archive)]


def numeric_columns(manifest, table):
    """A table's numeric columns (DECIMAL or, where they do not fit, strings), by the manifest."""
    columns = manifest.get("tables", {}).get(table, {}).get("columns", {})
    return {name for name, c in columns.items() if "asString" in c or str(c.get("sourceType", "")).startswith("numeric")}


def list_manifest(manifest):
    print("export", f"tesync {manifest.get('tesync')}", f"knownAt {manifest['knownAt']}", sep="\t")
    held = {}
    for f in manifest["files"]:
        held.setdefault((f["table"], f.get("asOf") or ""), []).append(f)
    for (table, as_of), files in sorted(held.items()):
        days = sorted(f["partition"] for f in files if f.get("partition"))
        kind = f"as of {as_of}" if as_of else "daily archive" if days else "history" if table.endswith("_history") else "table"
        span = f"{days[0]}..{days[-1]} ({len(days)} days)" if days else ""
        print("holds", table, kind, f"{len(files)} files", f"{sum(f['rows'] for f in files)} rows", *[span][:bool(span)], sep="\t")
    for table, spec in sorted(manifest.get("tables", {}).items()):
        for name, c in sorted(spec.get("columns", {}).items()):
            if c.get("asString"):
                print("string", f"{table}.{name}", "numeric too wide for DECIMAL(38,s): read as text, made Decimal", sep="\t")


def verify(root, manifest):
    """Each file as the manifest lists it (sha256): a copy that lost or changed a file says so."""
    for f in manifest["files"]:
        digest = hashlib.sha256((root / f["path"]).read_bytes()).hexdigest()
        if digest != f["sha256"]:
            sys.exit(f"{f['path']}: sha256 {digest}, the manifest says {f['sha256']}")
    print("verified", f"{len(manifest['files'])} files match the manifest's sha256", sep="\t")


# --- Reading exactly ----------------------------------------------------------------------

def sql_text(s):
    return "'" + str(s).replace("'", "''") + "'"


def sql_files(paths):
    return "[" + ", ".join(sql_text(p) for p in paths) + "]"


def schema_groups(con, paths):
    """The files, grouped by their Parquet schema (every column's name, type, scale, precision)."""
    groups = {}
    for path, schema in con.execute(
            "select file_name, string_agg(concat_ws(':', name, type, converted_type, scale, precision), ','"
            f" order by name) from parquet_schema({sql_files(paths)}) where type is not null group by file_name").fetchall():
        groups.setdefault(schema, []).append(path)
    return list(groups.values())


def as_decimals(row, numeric):
    """`row` with its string-flagged numbers made Decimal(text): exact, however many digits."""
    for name in numeric & row.keys():
        if isinstance(row[name], str):
            row[name] = Decimal(row[name])  # 'NaN' and 'Infinity' too
        assert row[name] is None or isinstance(row[name], Decimal), (name, row[name])
    return row


def read_exact(con, root, files, numeric, where="true", archive=False):
    """Rows (dicts) of these manifest entries where `where` holds, each number a Decimal as written.
    One read_parquet per group of files of one schema; an archive's snapshot_date comes from the
    Hive path (snapshot_date=YYYY-MM-DD), as a DATE."""
    if not files:
        return []
    hive = "hive_partitioning = true, hive_types = {'snapshot_date': DATE}" if archive else "hive_partitioning = false"
    rows = []
    for group in schema_groups(con, [str(root / f["path"]) for f in files]):
        result = con.execute(f"select * from read_parquet({sql_files(group)}, {hive}) where {where}")
        names = [d[0] for d in result.description]
        rows += [as_decimals(dict(zip(names, values)), numeric) for values in result.fetchall()]
    return rows


def exact(value):
    return "null" if value is None else f"{value:f}"  # plain notation, every digit


# --- One daily archive across days --------------------------------------------------------

def read_archive(con, root, manifest):
    archives = sorted({f["table"] for f in manifest["files"] if f.get("partition") and not f.get("asOf")})
    if not archives:
        print("archive", "none in this export", sep="\t")
        return None, []
    table = ARCHIVE if ARCHIVE in archives else archives[0]
    numeric = numeric_columns(manifest, table)
    rows = read_exact(con, root, files_of(manifest, table, archive=True), numeric, archive=True)
    if not rows:
        print("archive", table, "no rows", sep="\t")
        return table, rows
    rows.sort(key=lambda r: (r["snapshot_date"], str(r.get("token_slug"))))
    per_day = Counter(r["snapshot_date"] for r in rows)
    for day, n in sorted(per_day.items()):
        print("day", table, day.isoformat(), f"{n} rows", sep="\t")
    # One token across the days: a series, as the archive kept it at each day's end.
    token = Counter(r.get("token_slug") for r in rows).most_common(1)[0][0]
    shown = sorted(c for c in numeric if any(r.get(c) is not None for r in rows))
    print("series", table, "token_slug", "snapshot_date", *shown, sep="\t")
    for r in rows:
        if r.get("token_slug") == token:
            print("series", table, token, r["snapshot_date"].isoformat(), *(exact(r.get(c)) for c in shown), sep="\t")
    # The newest day, every row.
    newest = max(per_day)
    for r in rows:
        if r["snapshot_date"] == newest:
            print("newest", table, newest.isoformat(), r.get("token_slug"), *(exact(r.get(c)) for c in shown), sep="\t")
    return table, rows


def with_polars(con, root, manifest, table, duck_rows):
    """The same archive with Polars: DECIMAL(38,s) is pl.Decimal(38, s) and arrives in Python as
    Decimal; a string-flagged column is made Decimal(text) (Polars' Decimal stops at 38 digits
    too). One scan per group of files of one schema, as above."""
    try:
        import polars as pl
    except ImportError:
        print("polars", "not installed: skipped (pip install polars)", sep="\t")
        return
    numeric = numeric_columns(manifest, table)
    rows = []
    for group in schema_groups(con, [str(root / f["path"]) for f in files_of(manifest, table, archive=True)]):
        frame = pl.scan_parquet(group, hive_partitioning=True, hive_schema={"snapshot_date": pl.Date}).collect()
        print("polars", table, f"{len(group)} files", ", ".join(f"{n}: {t}" for n, t in frame.schema.items() if n in numeric), sep="\t")
        rows += [as_decimals(row, numeric) for row in frame.rows(named=True)]
    key = lambda r: (r["snapshot_date"], str(r.get("token_slug")))  # noqa: E731
    same = len(rows) == len(duck_rows) and all(
        a.get(c) == b.get(c) for a, b in zip(sorted(rows, key=key), sorted(duck_rows, key=key)) for c in numeric)
    print("polars", table, f"{len(rows)} rows", "every number equal to DuckDB's" if same else "DIFFERENT from DuckDB's", sep="\t")


# --- As of an instant, from the history tables --------------------------------------------

def versions_at(con, root, manifest, table, at):
    """`table`'s rows as tesync knew them at `at`: the versions where known_from <= at <
    coalesce(known_to, infinity). The warehouse's T_history holds the earlier versions and T the
    current ones (from fetched_at); a history export that holds no open version (known_to null)
    is completed with the current table's rows, as T_as_of(at) does."""
    k = f"TIMESTAMPTZ {sql_text(at)}"
    history = files_of(manifest, f"{table}_history")
    rows = read_exact(con, root, history, numeric_columns(manifest, f"{table}_history"),
                      where=f"known_from <= {k} and {k} < coalesce(known_to, 'infinity'::TIMESTAMPTZ)")
    paths = [str(root / f["path"]) for f in history]
    (open_versions,) = con.execute(f"select count(*) from read_parquet({sql_files(paths)}, hive_partitioning = false,"
                                   " union_by_name = true) where known_to is null").fetchone()
    if open_versions == 0:
        rows += read_exact(con, root, files_of(manifest, table), numeric_columns(manifest, table), where=f"fetched_at <= {k}")
    return rows


def frozen(value):
    return tuple(value) if isinstance(value, list) else value


def same_as_cut(con, root, manifest, table, at, rows):
    """Whether `rows` (the notebook's as-of rows) are the export's as-of cut of `table` at `at`,
    compared in Python (Decimals by value), on the cut's columns."""
    cut = read_exact(con, root, files_of(manifest, table, as_of=at), numeric_columns(manifest, table))
    columns = sorted(cut[0].keys()) if cut else []
    project = lambda rs: Counter(tuple(frozen(r.get(c)) for c in columns) for r in rs)  # noqa: E731
    return len(cut), project(cut) == project(rows)


def picks_at(con, root, manifest, instants):
    """At each instant, the three listed tokens cheapest by 30-day P/FCF, as tesync knew them then
    (examples/backtest.py's question, from the exported history instead of the warehouse)."""
    needed = ("app.tokens_history", "app.screener_rows_history")
    if any(not files_of(manifest, t) for t in needed):
        print("asof", f"skipped: the export holds no {' or '.join(needed)} (ask tesync export for the history tables)", sep="\t")
        return
    for at in instants:
        tokens = versions_at(con, root, manifest, "app.tokens", at)
        screener = versions_at(con, root, manifest, "app.screener_rows", at)
        for table, rows in (("app.tokens", tokens), ("app.screener_rows", screener)):
            if files_of(manifest, table, as_of=at):
                n, same = same_as_cut(con, root, manifest, table, at, rows)
                print("cut", at, table, f"{len(rows)} rows by known_from and known_to", f"the as-of cut: {n} rows",
                      "the same" if same else "DIFFERENT", sep="\t")
                assert same, f"the history as of {at} differs from the export's as-of cut of {table}"
        listed = {t["slug"] for t in tokens if t.get("delisted_at") is None}
        candidates = [s for s in screener if s["token_slug"] in listed and s.get("multiple_30d") is not None
                      and s["multiple_30d"].is_finite() and s["multiple_30d"] > 0]
        candidates.sort(key=lambda s: (s["multiple_30d"], s["token_slug"]))
        for rank, s in enumerate(candidates[:3], start=1):
            print("asof", at, rank, s["token_slug"], exact(s["multiple_30d"]), exact(s.get("effective_market_cap")), sep="\t")


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: python3 examples/read_export.py DIR [INSTANT ...]  (DIR: what `tesync export` wrote)")
    root = Path(sys.argv[1])
    manifest = load_manifest(root)
    list_manifest(manifest)
    verify(root, manifest)
    con = duckdb.connect()  # in memory: the Parquet files are the data
    con.execute("SET TimeZone = 'UTC'")  # timestamptz values come back in UTC
    table, rows = read_archive(con, root, manifest)
    if table:
        with_polars(con, root, manifest, table, rows)
    cuts = sorted({f["asOf"] for f in manifest["files"] if f.get("asOf")})
    picks_at(con, root, manifest, sys.argv[2:] or cuts or [manifest["knownAt"]])
    con.close()


if __name__ == "__main__":
    main()
