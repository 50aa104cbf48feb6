# examples/backtest.py: a backtest without look-ahead, as a notebook would run it.
# At each decision instant: the three listed tokens cheapest by 30-day P/FCF, every value as
# tesync knew it then. Numbers stay decimal.Decimal, digit for digit as stored: never float.
#
#   DATABASE_URL=postgres://user@host:5432/tesync python3 examples/backtest.py [INSTANT ...]
#
# INSTANT is an ISO 8601 instant (2026-07-01T00:00:00Z); by default the end of each of the
# last seven UTC days, today's being now.
import os
import sys
from datetime import datetime, timedelta, timezone
from decimal import Decimal

import pandas as pd
from sqlalchemy import create_engine, text
from tesync_db import sqlalchemy_url  # examples/tesync_db.py: the driver, psycopg or psycopg2

PICKS = text("""
    select d.at, p.rank, p.token_slug, p.multiple_30d, p.effective_market_cap
    from unnest(cast(:instants as timestamptz[])) as d(at)
    cross join lateral (
      select s.token_slug, s.multiple_30d, s.effective_market_cap,
             row_number() over (order by s.multiple_30d, s.token_slug) as rank
      from app.tokens_as_of(d.at) t
      join app.screener_rows_as_of(d.at) s on s.token_slug = t.slug
      where t.delisted_at is null and s.multiple_30d > 0
      order by s.multiple_30d, s.token_slug
      limit :n
    ) p
    order by d.at, p.rank
""")


def decision_instants(args):
    if args:
        return list(args)  # ISO text: Postgres reads it
    now = datetime.now(timezone.utc)
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    return [min(midnight - timedelta(days=k), now) for k in range(5, -2, -1)]


def exact(value):
    return "null" if value is None else f"{value:f}"  # plain notation, every digit


def main():
    # postgresql+psycopg:// or +psycopg2://, whichever is installed: numeric arrives as Decimal
    engine = create_engine(sqlalchemy_url(os.environ["DATABASE_URL"]))
    with engine.connect() as conn:
        result = conn.execute(PICKS, {"instants": decision_instants(sys.argv[1:]), "n": 3})
        # A frame built from the rows keeps the Decimals; pd.read_sql would coerce them to
        # float64 (its coerce_float=True default) and lose digits.
        picks = pd.DataFrame(result.fetchall(), columns=list(result.keys()))
    picks["at"] = pd.to_datetime(picks["at"], utc=True)
    for column in ("multiple_30d", "effective_market_cap"):
        assert picks[column].dtype == object
        assert all(v is None or isinstance(v, Decimal) for v in picks[column])
    print(picks.dtypes.to_string())
    for row in picks.itertuples(index=False):
        print(row.at.isoformat(), row.rank, row.token_slug, exact(row.multiple_30d),
              exact(row.effective_market_cap), sep="\t")
    engine.dispose()


if __name__ == "__main__":
    main()
