"""A deployment's identity: an id its store is given when first opened, the same for every
process that serves that store. The CLI compares it with the one a running server reports
before it writes to its configured store directly (decisions.md section 2): a server of
another deployment answering on the configured port means the operator's settings point at
the wrong store."""

from __future__ import annotations

import sqlite3
import uuid
from contextlib import closing
from urllib.parse import urlsplit

import psycopg
from psycopg import sql

from infra.database import Database
from infra.settings import Settings

TABLE = "deployment"
# One row: `singleton` can only be 1, so concurrent first starts keep whichever id came first.
CREATE = (
    f"CREATE TABLE IF NOT EXISTS {TABLE} (singleton INTEGER PRIMARY KEY "
    "CHECK (singleton = 1), id TEXT NOT NULL)"
)


def ensure_deployment_id(ops_db: Database) -> str:
    """The store's deployment id, made on its first opening."""
    with ops_db.transaction() as cur:
        cur.execute(CREATE)
        cur.execute(
            f"INSERT INTO {TABLE} (singleton, id) VALUES (1, ?) ON CONFLICT DO NOTHING",
            (f"dep_{uuid.uuid4().hex}",),
        )
        row = cur.execute(f"SELECT id FROM {TABLE}").fetchone()
    assert row is not None  # inserted above when missing
    return str(row["id"])


def stored_deployment_id(settings: Settings) -> str | None:
    """The configured store's deployment id without creating anything: None for a store that
    does not exist yet (or predates deployment ids)."""
    if settings.database_url:
        return _postgres_deployment_id(settings.database_url, settings.database_schema)
    path = settings.data_dir / "ops.sqlite"
    if not path.exists():
        return None
    with closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as conn:
        try:
            row = conn.execute(f"SELECT id FROM {TABLE}").fetchone()
        except sqlite3.OperationalError:  # no such table
            return None
    return str(row[0]) if row else None


def _postgres_deployment_id(url: str, schema: str) -> str | None:
    query = sql.SQL("SELECT id FROM {}.{}").format(sql.Identifier(schema), sql.Identifier(TABLE))
    with psycopg.connect(url, autocommit=True) as conn:
        try:
            row = conn.execute(query).fetchone()
        except psycopg.errors.UndefinedTable:  # also: no such schema
            return None
    return str(row[0]) if row else None


def store_label(settings: Settings) -> str:
    """Where the store lives, for messages: never the credentials in a database URL."""
    if not settings.database_url:
        return f"sqlite:{settings.data_dir}"
    url = urlsplit(settings.database_url)
    where = f"{url.hostname or 'localhost'}:{url.port or 5432}{url.path}"
    return f"postgresql://{where} (schema {settings.database_schema})"
