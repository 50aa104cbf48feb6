# examples/tesync_db.py's sqlalchemy_url, a pure function of the URL and of which drivers are
# usable: run by test/docs/python-examples.test.ts with the python that runs the examples.
# Prints one line per check and "ok N" at the end; the first failed check raises.
#
# With EXPECT_DRIVER set, it also checks what this python really picks for a URL without a
# driver (the test puts a stand-in psycopg module on PYTHONPATH to see it is not picked where
# SQLAlchemy has no dialect for it).
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from tesync_db import MissingDriver, driver_usable, redacted, sqlalchemy_url  # noqa: E402

checks = 0


def check(name, got, want):
    global checks
    if got != want:
        raise AssertionError(f"{name}: got {got!r}, want {want!r}")
    checks += 1
    print("ok", name)


def only(*drivers):
    return lambda driver: driver in drivers


def never(driver):
    raise AssertionError(f"asked whether {driver} is usable, for a URL that names its driver")


BOTH, V3, V2, NONE = only("psycopg", "psycopg2"), only("psycopg"), only("psycopg2"), only()

# No driver: psycopg when usable, else psycopg2; the rest of the URL as it is.
check("postgres:// alias, psycopg", sqlalchemy_url("postgres://u:pw@db.example:5432/tesync", BOTH),
      "postgresql+psycopg://u:pw@db.example:5432/tesync")
check("postgres:// alias, psycopg2 only", sqlalchemy_url("postgres://u:pw@db.example:5432/tesync", V2),
      "postgresql+psycopg2://u:pw@db.example:5432/tesync")
check("postgresql://, psycopg only", sqlalchemy_url("postgresql://u:pw@h/tesync", V3), "postgresql+psycopg://u:pw@h/tesync")
check("postgresql://, psycopg2 only", sqlalchemy_url("postgresql://u:pw@h/tesync", V2), "postgresql+psycopg2://u:pw@h/tesync")
check("no password", sqlalchemy_url("postgres://postgres@127.0.0.1:5432/postgres", V2),
      "postgresql+psycopg2://postgres@127.0.0.1:5432/postgres")
check("no user", sqlalchemy_url("postgresql://127.0.0.1/tesync", BOTH), "postgresql+psycopg://127.0.0.1/tesync")
check("socket, no host", sqlalchemy_url("postgresql:///tesync?host=/var/run/postgresql", V2),
      "postgresql+psycopg2:///tesync?host=/var/run/postgresql")
check("query parameters kept", sqlalchemy_url("postgres://u:p%40ss@h:6543/db?sslmode=require&application_name=nb&connect_timeout=5", BOTH),
      "postgresql+psycopg://u:p%40ss@h:6543/db?sslmode=require&application_name=nb&connect_timeout=5")
check("scheme in capitals", sqlalchemy_url("POSTGRES://u@h/db", V2), "postgresql+psycopg2://u@h/db")

# A driver the URL names is kept, whatever is installed (nothing is asked).
check("explicit +psycopg2", sqlalchemy_url("postgresql+psycopg2://u:pw@h/db?sslmode=require", never),
      "postgresql+psycopg2://u:pw@h/db?sslmode=require")
check("explicit +psycopg", sqlalchemy_url("postgresql+psycopg://u:pw@h/db", never), "postgresql+psycopg://u:pw@h/db")
check("explicit driver on the postgres alias", sqlalchemy_url("postgres+psycopg2://u@h/db", never), "postgresql+psycopg2://u@h/db")
check("another driver", sqlalchemy_url("postgresql+asyncpg://u@h/db", never), "postgresql+asyncpg://u@h/db")
check("another database", sqlalchemy_url("sqlite:///warehouse.db", never), "sqlite:///warehouse.db")

# Neither driver: a message naming what to install, without the password.
for url, secret in (("postgres://analyst:s3cr3t-pw@db.example:5432/tesync?sslmode=require", "s3cr3t-pw"),
                    ("postgresql://analyst:p@ss/w0rd@db.example/tesync", "ss/w0rd"),
                    ("postgresql://db.example/tesync?user=analyst&password=s3cr3t-pw&sslmode=require", "s3cr3t-pw")):
    try:
        sqlalchemy_url(url, NONE)
        raise AssertionError(f"no driver usable: {redacted(url)} gave a URL")
    except MissingDriver as e:
        message = str(e)
        check("missing driver is a SystemExit with a message", (isinstance(e, SystemExit), isinstance(e.code, str)), (True, True))
        check("message names psycopg[binary]", 'pip install "psycopg[binary]"' in message, True)
        check("message names psycopg2-binary", "psycopg2-binary" in message, True)
        check("message names the host", "db.example" in message, True)
        check("message keeps the password out", secret in message, False)
check("redacted: user and password", redacted("postgres://u:pw@h:5432/db"), "postgres://u:***@h:5432/db")
check("redacted: no password", redacted("postgres://u@h:5432/db"), "postgres://u@h:5432/db")
check("redacted: password parameter", redacted("postgresql://h/db?password=pw&sslmode=require"), "postgresql://h/db?password=***&sslmode=require")

# This python: psycopg2 (the examples' tests need it) is usable.
check("psycopg2 usable here", driver_usable("psycopg2"), True)
check("an unknown module is not", driver_usable("no_such_driver_module"), False)
if os.environ.get("EXPECT_DRIVER"):
    check(f"this python picks {os.environ['EXPECT_DRIVER']}", sqlalchemy_url("postgres://u:pw@h/db"),
          f"postgresql+{os.environ['EXPECT_DRIVER']}://u:pw@h/db")

print("ok", checks)
