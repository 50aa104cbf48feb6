# A stand-in for DuckDB's Python package (`pip install duckdb`), which this machine has no copy
# of: test/docs/python-examples.test.ts puts this folder on PYTHONPATH to run
# examples/read_export.py. The SQL runs in DuckDB itself (the @duckdb/node-api package, through
# server.mjs), and the values come back as DuckDB's Python package returns them from fetchall():
# DECIMAL as decimal.Decimal (from DuckDB's exact text), DATE as datetime.date, TIMESTAMP WITH
# TIME ZONE as an aware datetime (in UTC, the session time zone the example sets), integers as
# int, VARCHAR as str, lists as lists. Only what the example uses: connect(), execute(sql),
# description, fetchall(), fetchone(), close(). $NODE: the node that runs server.mjs.
import json
import os
import re
import subprocess
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

SERVER = Path(__file__).resolve().with_name("server.mjs")


class Error(Exception):
    pass


def _value(kind, v):
    if v is None:
        return None
    if kind.startswith("DECIMAL"):
        return Decimal(v)
    if kind == "DATE":
        return date.fromisoformat(v)
    if kind == "TIMESTAMP WITH TIME ZONE":
        return datetime.fromisoformat(re.sub(r"([+-]\d\d)$", r"\1:00", v))
    if kind in ("BIGINT", "HUGEINT", "UBIGINT", "UHUGEINT"):
        return int(v)
    return v


class DuckDBPyConnection:
    def __init__(self):
        self._server = subprocess.Popen([os.environ.get("NODE", "node"), str(SERVER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.description = None
        self._rows = []

    def execute(self, sql, parameters=None):
        if parameters is not None:
            raise NotImplementedError("the stand-in takes no parameters")
        self._server.stdin.write(json.dumps({"sql": sql}) + "\n")
        self._server.stdin.flush()
        reply = json.loads(self._server.stdout.readline())
        if "error" in reply:
            raise Error(reply["error"])
        types = reply["types"]
        self.description = [(name, kind, None, None, None, None, None) for name, kind in zip(reply["names"], types)]
        self._rows = [tuple(_value(kind, v) for kind, v in zip(types, row)) for row in reply["rows"]]
        return self

    def fetchall(self):
        rows, self._rows = self._rows, []
        return rows

    def fetchone(self):
        return self._rows.pop(0) if self._rows else None

    def close(self):
        self._server.stdin.close()
        self._server.wait()


def connect(database=":memory:"):
    return DuckDBPyConnection()
