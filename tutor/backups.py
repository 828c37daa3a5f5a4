"""Back up the database to one file and restore it: pg_dump/pg_restore for PostgreSQL, SQLite's online
backup API for SQLite. Both copy a consistent snapshot while the service keeps running.

A restore replaces the database's content with the backup's: every table the backup holds is dropped
and re-created (PostgreSQL) or the whole file is overwritten page by page (SQLite). Run it with the web
server and workers stopped, then `manage.py migrate` (a backup from an older version) and
`manage.py rebuild_card_states --check`.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

from django.db import connection

from tutor.errors import DomainError


def backup_database(path: Path) -> str:
    """Write a backup of the default database to `path`. Returns a one-line description."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if connection.vendor == "sqlite":
        connection.ensure_connection()
        target = sqlite3.connect(path)
        try:
            connection.connection.backup(target)
        finally:
            target.close()
        return f"SQLite {connection.settings_dict['NAME']} backed up to {path}"
    if connection.vendor == "postgresql":
        _pg_tool("pg_dump", "--format=custom", "--no-owner", "--no-privileges", f"--file={path}")
        return f"PostgreSQL {connection.settings_dict['NAME']} backed up to {path} (pg_dump, custom format)"
    raise DomainError(f"Backups support SQLite and PostgreSQL, not {connection.vendor}.")


def restore_database(path: Path) -> str:
    """Replace the default database's content with the backup at `path`. Returns a one-line description."""
    if not path.is_file():
        raise DomainError(f"No backup file at {path}.", "path")
    if connection.vendor == "sqlite":
        try:
            source = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            source.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.DatabaseError as exc:
            raise DomainError(f"{path} is not an SQLite backup ({exc}).", "path") from None
        connection.ensure_connection()
        try:
            source.backup(connection.connection)
        finally:
            source.close()
        return f"SQLite {connection.settings_dict['NAME']} restored from {path}"
    if connection.vendor == "postgresql":
        # The other way round from the dump: drop what the backup holds, re-create it, all in one transaction.
        connection.close()  # this process's own connection would hold no locks, but keeps nothing stale either
        _pg_tool(
            "pg_restore", "--clean", "--if-exists", "--single-transaction", "--no-owner", "--no-privileges", str(path)
        )
        return f"PostgreSQL {connection.settings_dict['NAME']} restored from {path} (pg_restore)"
    raise DomainError(f"Backups support SQLite and PostgreSQL, not {connection.vendor}.")


def _pg_tool(tool: str, *args: str) -> None:
    """Run pg_dump or pg_restore on the default database; a failure is a DomainError with its message."""
    if shutil.which(tool) is None:
        raise DomainError(f"{tool} is not installed (apt-get install postgresql-client).")
    s = connection.settings_dict
    env = {**os.environ, "PGPASSWORD": s.get("PASSWORD") or ""}
    where = [f"--host={s.get('HOST') or '127.0.0.1'}", f"--port={s.get('PORT') or 5432}"]
    where += [f"--username={s.get('USER') or 'postgres'}", f"--dbname={s['NAME']}"]
    proc = subprocess.run([tool, *where, *args], env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise DomainError(f"{tool} failed: {' '.join(proc.stderr.split())[:500]}")
