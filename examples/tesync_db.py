# examples/tesync_db.py: the SQLAlchemy URL the examples connect with, its driver named.
#
# A DATABASE_URL as tesync and psql take it (postgres://user:pass@host:5432/db?sslmode=require)
# names no Python driver, and SQLAlchemy's default for one depends on its version: 2.1 reads
# postgresql:// as psycopg (3), 2.0 and 1.4 as psycopg2, and none accepts postgres://. So the
# examples name the driver themselves, from what this python can use: psycopg when it imports
# and this SQLAlchemy has its dialect (2.0 and later), else psycopg2. A driver the URL names
# (postgresql+psycopg2://, postgresql+psycopg://, ...) is kept. Both return numeric as
# decimal.Decimal. Nothing here prints or logs the URL's password.
#
#   from tesync_db import sqlalchemy_url
#   engine = create_engine(sqlalchemy_url(os.environ["DATABASE_URL"]))
import importlib
import re

# Without a driver: postgres:// (libpq's alias) or postgresql://. With one: the dialect, "+", the driver.
_SCHEME = re.compile(r"^(postgres|postgresql)(\+[A-Za-z0-9_]+)?://", re.IGNORECASE)
# For messages: the password of user:password@host, up to the last "@" (more than it, rather
# than less, when it holds an unescaped "@"), and a ?password= or &password= parameter.
_PASSWORD = re.compile(r"^([^:/?#]+://[^:/@]*:).*@", re.DOTALL)
_PASSWORD_PARAM = re.compile(r"([?&]password=)[^&#]*", re.IGNORECASE)

# Preferred first: psycopg (3) is the one SQLAlchemy 2.1 picks itself.
DRIVERS = ("psycopg", "psycopg2")
INSTALL = ('pip install "psycopg[binary]"  (SQLAlchemy 2), or pip install psycopg2-binary;'
           " on Debian or Ubuntu: apt-get install python3-psycopg2")


class MissingDriver(SystemExit):
    """No Postgres driver this python and SQLAlchemy can use: the message says what to install.
    A SystemExit, so a script ends with the message alone (exit status 1), no traceback."""


def driver_usable(driver):
    """Whether `driver` (psycopg or psycopg2) imports and this SQLAlchemy has its dialect."""
    try:
        importlib.import_module(driver)  # psycopg without its libpq also fails here
        from sqlalchemy.dialects import registry
        registry.load(f"postgresql.{driver}")  # SQLAlchemy 1.4 has no postgresql.psycopg
    except Exception:  # ImportError, sqlalchemy.exc.NoSuchModuleError
        return False
    return True


def redacted(url):
    """`url` with its password, if any, as ***."""
    return _PASSWORD_PARAM.sub(r"\1***", _PASSWORD.sub(r"\1***@", url))


def sqlalchemy_url(url, usable=driver_usable):
    """`url` with its driver named: postgresql+psycopg:// or postgresql+psycopg2:// (the first
    `usable`) for postgres:// and postgresql://; one that names its driver keeps it (the
    postgres alias spelled postgresql). Everything after the scheme is left as it is."""
    found = _SCHEME.match(url)
    if not found:
        return url  # another database, or not a URL: SQLAlchemy says what it makes of it
    rest = url[found.end():]
    if found.group(2):
        return f"postgresql{found.group(2)}://{rest}"
    for driver in DRIVERS:
        if usable(driver):
            return f"postgresql+{driver}://{rest}"
    raise MissingDriver(
        f"{redacted(url)} names no Python driver, and this python has none its SQLAlchemy can"
        f" use (psycopg with SQLAlchemy 2, or psycopg2). Install one: {INSTALL}")
