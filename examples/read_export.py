# examples/read_export.py: a `tesync export` directory read as a notebook would, with DuckDB
# (and Polars when installed). Every number stays a decimal.Decimal: never float.
#
#   pip install duckdb pytz        # pytz: DuckDB needs it to hand timestamptz to Python
#   pip install polars             # optional: the same archive read with Polars
#   python3 examples/read_export.py DIR [INSTANT ...]
#
# DIR is what `tesync export` wrote: `_manifest.json` (format 2) and the Parquet files it lists,
# each entry with its kind:
#   archive  DIR/app.screener_daily/snapshot_date=YYYY-MM-DD/part-<export>-<n>.parquet (one day)
#   current  DIR/app.tokens/part-<export>-0.parquet (the table as known at the entry's knownAt)
#   asOf     DIR/asof=<instant>/app.tokens/part-<export>-0.parquet (the table as known then)
#   history  DIR/app.tokens_history/part-<export>-0.parquet (versions, known_from and known_to)
# A table is what the manifest says it is (`tables[t].kind`), never what its name looks like:
# app.metric_history is a current table. Only the files the manifest lists are read, never a
# glob: an export under way writes its files before the manifest that lists them, and removes
# the files no manifest lists only after.
# INSTANT is ISO 8601, read as UTC unless it carries an offset (2026-07-01T00:00:00Z,
# "2026-07-01 09:00:00+09:00"), to the microsecond: the tokens picked as tesync knew them then.
# By default the instants of the export's as-of cuts, else its knownAt. An INSTANT the export
# cannot answer (before the history it holds, after its knownAt, or with neither history nor an
# as-of cut at that instant) stops it with exit 1, saying what the export holds.
#
# What is exact:
# - A numeric column is Parquet DECIMAL(38,s): every value exactly, at the column's scale s in
#   that file, with trailing zeros where a value had fewer places (60.9906492307046 in a file of
#   scale 16 reads 60.9906492307046000: the same number, as Decimals compare). A column with a
#   value that does not fit 38 digits (or NaN, or infinity) is text, Postgres's own digits, and
#   its entry says `asString`: made Decimal(text) here.
# - Types are each file's own (its manifest entry's `columns`): one table may be DECIMAL(38,9) in
#   one file, DECIMAL(38,18) in another and text in a third. They are checked against the files.
# - fetchall() gives DECIMAL as Decimal; DuckDB's .df() would give float64.
# - DuckDB reading files together gives a DECIMAL column one type, and where two files' scales
#   differ that type keeps the smaller scale: the other file's digits beyond it are cut,
#   silently. So files are read together only when their types agree (one read_parquet per
#   group), and rows of different groups or tables meet in Python, where Decimals compare exactly.
# - Python's Decimal arithmetic rounds to 28 digits by default: raised below, for sums.
import decimal
import hashlib
import json
import re
import sys
from collections import Counter
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path

import duckdb

decimal.getcontext().prec = 120  # sums and ratios of 38-digit (and wider) values keep every digit

FORMAT = 2  # the manifest layout this notebook reads
ARCHIVE = "app.screener_daily"  # the daily archive read across days (else the first one held)
KINDS = ("archive", "current", "asOf", "history")


class CannotSay(Exception):
    """An instant the export cannot answer, and why."""


# --- What the export holds ----------------------------------------------------------------

def load_manifest(root):
    try:
        manifest = json.loads((root / "_manifest.json").read_text())
    except FileNotFoundError:
        sys.exit(f"{root}/_manifest.json: not found: DIR is the folder `tesync export --to DIR` wrote")
    except json.JSONDecodeError as e:
        sys.exit(f"{root}/_manifest.json is not JSON ({e}): export again (tesync export --to {root} --rebuild)")
    found = manifest.get("format")
    if found == 1:
        sys.exit(f"{root}/_manifest.json is of format 1 (an older tesync): its types are not each file's."
                 f" Export again with this tesync (tesync export --to {root}); this notebook reads format {FORMAT}")
    if found != FORMAT:
        sys.exit(f"{root}/_manifest.json is of format {found}; this notebook reads format {FORMAT}")
    return manifest


def files_of(manifest, table, kind, as_of=None):
    """The manifest's entries of `table` of this kind (an as-of cut's: at `as_of`)."""
    return [f for f in manifest["files"] if f["table"] == table and f["kind"] == kind and f.get("asOf") == as_of]


def is_numeric(column):
    return bool(column.get("asString")) or str(column.get("sourceType", "")).startswith("numeric")


def numeric_columns(files):
    """The numeric columns of these files (DECIMAL, or text where a value does not fit), by their entries."""
    return {name for f in files for name, c in f["columns"].items() if is_numeric(c)}


def label(f):
    return {"archive": "daily archive", "current": "table", "history": "history"}.get(f["kind"]) or f"as of {f['asOf']}"


def list_manifest(manifest):
    print("export", f"tesync {manifest.get('tesync')}", f"knownAt {manifest['knownAt']}", sep="\t")
    held = {}
    for f in manifest["files"]:
        held.setdefault((f["table"], KINDS.index(f["kind"]), f.get("asOf") or ""), []).append(f)
    for (table, _, _), files in sorted(held.items()):
        days = sorted(f["partition"] for f in files if f.get("partition"))
        span = f"{days[0]}..{days[-1]} ({len(days)} days)" if days else ""
        print("holds", table, label(files[0]), f"{len(files)} files", f"{sum(f['rows'] for f in files)} rows", *[span][:bool(span)], sep="\t")
    # Text-written numbers, by what each file says: a column may be text in one file only.
    for (table, _, _), files in sorted(held.items()):
        for name in sorted({n for f in files for n, c in f["columns"].items() if c.get("asString")}):
            n = sum(1 for f in files if f["columns"].get(name, {}).get("asString"))
            print("string", f"{table}.{name}", label(files[0]), f"{n} of {len(files)} files",
                  "numeric that does not fit DECIMAL(38,s): read as text, made Decimal", sep="\t")


def verify(con, root, manifest):
    """Each file as the manifest lists it: its sha256, and its numeric columns' types (a DECIMAL's
    precision and scale, or text): a copy that lost or changed a file, or a manifest whose types
    are not its files', says so."""
    for f in manifest["files"]:
        digest = hashlib.sha256((root / f["path"]).read_bytes()).hexdigest()
        if digest != f["sha256"]:
            sys.exit(f"{f['path']}: sha256 {digest}, the manifest says {f['sha256']}")
    written = {}
    if manifest["files"]:
        for path, name, converted, scale, precision in con.execute(
                "select file_name, name, converted_type, scale, precision from parquet_schema("
                f"{sql_files(str(root / f['path']) for f in manifest['files'])}) where type is not null").fetchall():
            written[(path, name)] = "VARCHAR" if converted == "UTF8" else f"DECIMAL({precision},{scale})" if converted == "DECIMAL" else converted
    for f in manifest["files"]:
        for name, c in sorted(f["columns"].items()):
            if is_numeric(c) and written.get((str(root / f["path"]), name)) != c["type"]:
                sys.exit(f"{f['path']}: column {name} is {written.get((str(root / f['path']), name))} in the file, the manifest says {c['type']}")
    print("verified", f"{len(manifest['files'])} files match the manifest's sha256 and types", sep="\t")


# --- Reading exactly ----------------------------------------------------------------------

def sql_text(s):
    return "'" + str(s).replace("'", "''") + "'"


def sql_files(paths):
    return "[" + ", ".join(sql_text(p) for p in paths) + "]"


def type_groups(files):
    """The files, grouped by their types (verified against the files): read together, a group
    keeps every column's type."""
    groups = {}
    for f in files:
        groups.setdefault(tuple(sorted((n, c["type"]) for n, c in f["columns"].items())), []).append(f)
    return list(groups.values())


def as_decimals(row, numeric):
    """`row` with its text-written numbers made Decimal(text): exact, however many digits."""
    for name in numeric & row.keys():
        if isinstance(row[name], str):
            row[name] = Decimal(row[name])  # 'NaN' and 'Infinity' too
        assert row[name] is None or isinstance(row[name], Decimal), (name, row[name])
    return row


def read_exact(con, root, files, where="true", archive=False):
    """Rows (dicts) of these manifest entries where `where` holds, each number a Decimal as written.
    One read_parquet per group of files of the same types; an archive's snapshot_date comes from
    the Hive path (snapshot_date=YYYY-MM-DD), as a DATE."""
    hive = "hive_partitioning = true, hive_types = {'snapshot_date': DATE}" if archive else "hive_partitioning = false"
    rows = []
    for group in type_groups(files):
        numeric = numeric_columns(group)
        result = con.execute(f"select * from read_parquet({sql_files(str(root / f['path']) for f in group)}, {hive}) where {where}")
        names = [d[0] for d in result.description]
        rows += [as_decimals(dict(zip(names, values)), numeric) for values in result.fetchall()]
    return rows


def exact(value):
    return "null" if value is None else f"{value:f}"  # plain notation, every digit


# --- One daily archive across days --------------------------------------------------------

def read_archive(con, root, manifest):
    archives = sorted({f["table"] for f in manifest["files"] if f["kind"] == "archive"})
    if not archives:
        print("archive", "none in this export", sep="\t")
        return None, []
    table = ARCHIVE if ARCHIVE in archives else archives[0]
    files = files_of(manifest, table, "archive")
    numeric = numeric_columns(files)
    rows = read_exact(con, root, files, archive=True)
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
    Decimal; a text-written column is made Decimal(text) (Polars' Decimal stops at 38 digits
    too). One scan per group of files of the same types, as above."""
    try:
        import polars as pl
    except ImportError:
        print("polars", "not installed: skipped (pip install polars)", sep="\t")
        return
    rows = []
    for group in type_groups(files_of(manifest, table, "archive")):
        numeric = numeric_columns(group)
        frame = pl.scan_parquet([str(root / f["path"]) for f in group], hive_partitioning=True, hive_schema={"snapshot_date": pl.Date}).collect()
        print("polars", table, f"{len(group)} files", ", ".join(f"{n}: {t}" for n, t in frame.schema.items() if n in numeric), sep="\t")
        rows += [as_decimals(row, numeric) for row in frame.rows(named=True)]
    numeric = numeric_columns(files_of(manifest, table, "archive"))
    key = lambda r: (r["snapshot_date"], str(r.get("token_slug")))  # noqa: E731
    same = len(rows) == len(duck_rows) and all(
        a.get(c) == b.get(c) for a, b in zip(sorted(rows, key=key), sorted(duck_rows, key=key)) for c in numeric)
    print("polars", table, f"{len(rows)} rows", "every number equal to DuckDB's" if same else "DIFFERENT from DuckDB's", sep="\t")


# --- As of an instant ---------------------------------------------------------------------

def parse_instant(text):
    """An ISO 8601 instant, UTC unless it carries an offset, as the export writes instants
    (YYYY-MM-DDTHH:MM:SS.ffffffZ, the microsecond kept); exits on anything else."""
    if re.search(r"[.,]\d{7}", text):  # Python would cut the digits silently; the warehouse keeps microseconds
        sys.exit(f"{text!r} is finer than a microsecond, the finest instant the warehouse keeps")
    try:
        at = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)  # Z: Python before 3.11
    except ValueError:
        sys.exit(f"{text!r} is not an instant: give ISO 8601, such as 2026-07-01T00:00:00Z (UTC unless it carries an offset)")
    if at.tzinfo is None:
        at = at.replace(tzinfo=timezone.utc)
    return at.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def holdings(manifest, table):
    """What the export holds of `table` and its history, for a message."""
    held = sorted({f"{f['table']} ({label(f)})" for f in manifest["files"] if f["table"] in (table, f"{table}_history")})
    return ", ".join(held) or f"nothing of {table}"


def frozen(value):
    return tuple(value) if isinstance(value, list) else value


def projected(rows, columns):
    return Counter(tuple(frozen(r.get(c)) for c in columns) for r in rows)


def versions_at(con, root, manifest, table, at):
    """`table`'s rows as tesync knew them at `at`, from the export: its as-of cut at `at`, else
    its history: the versions where known_from <= at < coalesce(known_to, infinity). The
    warehouse's T_history holds the earlier versions and T the current ones (from fetched_at); a
    history without open versions (known_to null) is completed with the current table's rows, as
    T_as_of(at) does, and cannot say alone. Where both the cut and the history say, they are
    compared. Raises CannotSay when the export cannot answer."""
    k = f"TIMESTAMPTZ {sql_text(at)}"
    cut_files = files_of(manifest, table, "asOf", as_of=at)
    history = files_of(manifest, f"{table}_history", "history")
    current = files_of(manifest, table, "current")
    known, why_not = None, f"it holds neither {table}_history nor an as-of cut at {at}"
    if history:
        open_versions, known_then, first = con.execute(
            f"select count(*) filter (where known_to is null), count(*) filter (where known_from <= {k}), min(known_from)::VARCHAR"
            f" from read_parquet({sql_files(str(root / f['path']) for f in history)}, hive_partitioning = false, union_by_name = true)").fetchone()
        firsts = [first] if first else []
        if not open_versions and current:
            fetched_then, since = con.execute(f"select count(*) filter (where fetched_at <= {k}), min(fetched_at)::VARCHAR"
                                              f" from read_parquet({sql_files(str(root / f['path']) for f in current)})").fetchone()
            known_then += fetched_then
            firsts += [since] if since else []
        if not open_versions and not current:
            why_not = f"its {table}_history holds the earlier versions only, and the current ones ({table}) are not in it"
        elif not known_then:
            why_not = f"it is before the history it holds (from {min(firsts)})" if firsts else f"its {table}_history is empty"
        else:
            known = read_exact(con, root, history, where=f"known_from <= {k} and {k} < coalesce(known_to, 'infinity'::TIMESTAMPTZ)")
            if not open_versions:
                known += read_exact(con, root, current, where=f"fetched_at <= {k}")
    if cut_files:
        cut = read_exact(con, root, cut_files)
        columns = sorted(cut[0].keys()) if cut else []
        if known is not None:
            same = projected(cut, columns) == projected(known, columns)
            print("cut", at, table, f"{len(known)} rows by known_from and known_to", f"the as-of cut: {len(cut)} rows",
                  "the same" if same else "DIFFERENT", sep="\t")
            if not same:
                sys.exit(f"{table}: the history as of {at} is not the export's as-of cut at {at}")
        elif history and not open_versions:
            # The earlier versions alone: each one known at `at` is a row of the cut.
            closed = read_exact(con, root, history, where=f"known_from <= {k} and {k} < known_to")
            inside = not (projected(closed, columns) - projected(cut, columns))
            print("cut", at, table, f"{len(closed)} earlier versions by known_from and known_to", f"the as-of cut: {len(cut)} rows",
                  "all in it" if inside else "NOT in it", sep="\t")
            if not inside:
                sys.exit(f"{table}: a version the history knew at {at} is not in the export's as-of cut at {at}")
        print("from", at, table, "the as-of cut", sep="\t")
        return cut
    if known is not None:
        print("from", at, table, "the history" if not current or open_versions else "the history and the current table", sep="\t")
        return known
    raise CannotSay(f"the export cannot say {table} as of {at}: {why_not}. It holds {holdings(manifest, table)}")


def picks_at(con, root, manifest, at):
    """At `at`, the three listed tokens cheapest by 30-day P/FCF, as tesync knew them then
    (examples/backtest.py's question, from the export instead of the warehouse)."""
    if at > parse_instant(manifest["knownAt"]):
        raise CannotSay(f"{at} is after the export's knownAt ({manifest['knownAt']}): what tesync knew then is not in it")
    tokens = versions_at(con, root, manifest, "app.tokens", at)
    screener = versions_at(con, root, manifest, "app.screener_rows", at)
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
    asked = [parse_instant(a) for a in sys.argv[2:]]
    list_manifest(manifest)
    con = duckdb.connect()  # in memory: the Parquet files are the data
    con.execute("SET TimeZone = 'UTC'")  # timestamptz values come back in UTC
    verify(con, root, manifest)
    table, rows = read_archive(con, root, manifest)
    if table:
        with_polars(con, root, manifest, table, rows)
    cuts = sorted({f["asOf"] for f in manifest["files"] if f["kind"] == "asOf"})
    for at in asked or cuts or [parse_instant(manifest["knownAt"])]:
        try:
            picks_at(con, root, manifest, at)
        except CannotSay as e:
            if asked:
                sys.exit(f"INSTANT {at}: {e}")
            print("asof", f"skipped: {e}", sep="\t")  # not asked for: the export's own instants
    con.close()


if __name__ == "__main__":
    main()
