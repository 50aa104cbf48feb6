# examples/history.py: one token's daily P/FCF and the latest screener, as a notebook reads them.
# Every number stays a decimal.Decimal, digit for digit as stored: never float.
#
#   DATABASE_URL=postgres://user@host:5432/tesync python3 examples/history.py [TOKEN]
#
# Without DATABASE_URL it reads the embedded warehouse of the current folder (TE_DATA_DIR): it
# runs `tesync sql`, which keeps that server up and prints its URL, while it reads.
# TOKEN defaults to the cheapest listed token whose coverage includes metric history.
import os
import re
import shlex
import signal
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pandas as pd
from sqlalchemy import create_engine, text
from tesync_db import sqlalchemy_url  # examples/tesync_db.py: the driver, psycopg or psycopg2

# The cheapest listed token by 30-day P/FCF that has history (its coverage says so).
PICK = text("""
    select t.slug
    from app.tokens t
    join app.screener_rows s on s.token_slug = t.slug
    where t.delisted_at is null and t.coverage_metric_history and s.multiple_30d > 0
    order by s.multiple_30d, t.slug
    limit 1
""")

# A token's daily 30-day P/FCF (history key erm30d) on its aggregate stream (a token with a
# single stream has only that one), by UTC day whatever the session's time zone.
HISTORY = text("""
    select (h.ts at time zone 'UTC')::date as day, h.stream, h.value as pfcf_30d
    from app.metric_history h
    where h.token_slug = :token and h.metric = 'erm30d'
      and (h.stream = 'aggregate' or not exists (
        select 1 from app.metric_history a where a.token_slug = :token and a.stream = 'aggregate'))
    order by h.ts
""")

# The latest screener of the listed tokens: a delisted token keeps its last row, the join
# with app.tokens leaves it out.
SCREENER = text("""
    select s.token_slug, s.multiple_30d, s.effective_market_cap, s.annualized_revenue
    from app.screener_rows s
    join app.tokens t on t.slug = s.token_slug
    where t.delisted_at is null
    order by s.multiple_30d nulls last, s.token_slug
""")


def embedded_warehouse():
    """Runs `tesync sql` (this repository's, or $TESYNC) and returns it with the URL it prints."""
    tesync = shlex.split(os.environ.get("TESYNC", "")) or ["node", str(Path(__file__).resolve().parents[1] / "bin" / "tesync.js")]
    # Its own lines (when it starts and stops) are not this script's: only what goes wrong.
    env = {**os.environ, "LOG_LEVEL": os.environ.get("LOG_LEVEL", "warn")}
    server = subprocess.Popen([*tesync, "sql"], stdout=subprocess.PIPE, text=True, env=env)
    for line in server.stdout:
        found = re.search(r'psql "(postgres://[^"]+)"', line)
        if found:
            return server, found.group(1)
    sys.exit(f"`{' '.join(tesync)} sql` printed no URL (exit code {server.wait()})")


def frame(result):
    # A frame built from the rows keeps the driver's Decimals; pd.read_sql would coerce numeric
    # columns to float64 (its coerce_float=True default) and lose digits.
    return pd.DataFrame(result.fetchall(), columns=list(result.keys()))


def exact(value):
    return "null" if value is None else f"{value:f}"  # plain notation, every digit


def main():
    server, url = None, os.environ.get("DATABASE_URL")
    if not url:
        server, url = embedded_warehouse()
    try:
        engine = create_engine(sqlalchemy_url(url))  # psycopg or psycopg2: numeric as Decimal
        with engine.connect() as conn:
            token = sys.argv[1] if len(sys.argv) > 1 else conn.execute(PICK).scalar_one()
            history = frame(conn.execute(HISTORY, {"token": token}))
            screener = frame(conn.execute(SCREENER))
        engine.dispose()
    finally:
        if server:  # the embedded server stops once no tesync command uses it
            server.send_signal(signal.SIGINT)
            server.wait()
    for df, columns in ((history, ["pfcf_30d"]), (screener, ["multiple_30d", "effective_market_cap", "annualized_revenue"])):
        for column in columns:
            assert df[column].dtype == object
            assert all(v is None or isinstance(v, Decimal) for v in df[column])
    print(history.dtypes.to_string())
    print(screener.dtypes.to_string())
    for row in history.itertuples(index=False):
        print("history", token, row.stream, row.day.isoformat(), exact(row.pfcf_30d), sep="\t")
    for row in screener.itertuples(index=False):
        print("screener", row.token_slug, exact(row.multiple_30d), exact(row.effective_market_cap),
              exact(row.annualized_revenue), sep="\t")


if __name__ == "__main__":
    main()
