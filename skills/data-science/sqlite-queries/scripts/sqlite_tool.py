#!/usr/bin/env python3
"""Inspect and query SQLite databases with Python's built-in sqlite3 module.

  sqlite_tool.py schema DB                 tables, columns with types, row counts, indexes
  sqlite_tool.py query DB "SELECT ..."     run one statement read-only, print a table
                 [--csv] [--limit 200]     (--csv prints CSV; the limit caps printed rows)
  sqlite_tool.py import DB TABLE FILE.csv  load a CSV into a new table (column types inferred)

Queries open the database read-only (and may not ATTACH other files), so a mistaken UPDATE,
DROP or ATTACH fails instead of changing data. Writes are for `import` alone, which refuses to replace an existing table.
"""
import argparse
import csv
import os
import re
import sqlite3
import sys


def deny_attach(action, *_):
    """Authorizer: a read-only session may not attach (and so create or write) other databases."""
    if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH):
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def connect_read_only(path):
    if not os.path.exists(path):
        raise sqlite3.OperationalError(f"no database file {path}")
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    con.execute("PRAGMA query_only = ON")
    con.set_authorizer(deny_attach)
    return con


def quote(name):
    return '"' + name.replace('"', '""') + '"'


def print_table(headers, rows, limit):
    shown = rows[:limit]
    cells = [[("NULL" if v is None else str(v)) for v in row] for row in shown]
    widths = [min(40, max([len(h)] + [len(r[i]) for r in cells])) for i, h in enumerate(headers)]
    print(" | ".join(h.ljust(w)[:w] for h, w in zip(headers, widths)))
    print("-+-".join("-" * w for w in widths))
    for row in cells:
        print(" | ".join(v.ljust(w)[:w] for v, w in zip(row, widths)))
    more = f" (showing {limit})" if len(rows) > limit else ""
    print(f"({len(rows)} row{'s' if len(rows) != 1 else ''}{more})")


def schema(db):
    con = connect_read_only(db)
    tables = con.execute("SELECT name, type FROM sqlite_master WHERE type IN ('table','view') "
                         "AND name NOT LIKE 'sqlite_%' ORDER BY name").fetchall()
    if not tables:
        print(f"{db}: no tables")
    for name, kind in tables:
        count = con.execute(f"SELECT COUNT(*) FROM {quote(name)}").fetchone()[0]
        print(f"{kind} {name} ({count} rows)")
        for _, col, col_type, notnull, default, pk in con.execute(f"PRAGMA table_info({quote(name)})"):
            flags = " ".join(f for f in ["PRIMARY KEY" if pk else "", "NOT NULL" if notnull else "",
                                         f"DEFAULT {default}" if default is not None else ""] if f)
            print(f"  {col} {col_type or 'ANY'} {flags}".rstrip())
        for index in con.execute(f"PRAGMA index_list({quote(name)})"):
            cols = [c[2] for c in con.execute(f"PRAGMA index_info({quote(index[1])})")]
            print(f"  index {index[1]} ({', '.join(cols)}){' UNIQUE' if index[2] else ''}")
    return 0


def query(db, sql, as_csv, limit):
    con = connect_read_only(db)
    try:
        cursor = con.execute(sql)
    except sqlite3.Error as error:
        print(f"sqlite_tool: {error}", file=sys.stderr)
        return 1
    headers = [d[0] for d in cursor.description or []]
    rows = cursor.fetchall()
    if as_csv:
        writer = csv.writer(sys.stdout)
        writer.writerow(headers)
        writer.writerows(rows)
    elif headers:
        print_table(headers, rows, limit)
    return 0


def column_type(values):
    present = [v.strip() for v in values if v.strip()]
    if present and all(re.fullmatch(r"[+-]?\d+", v) for v in present):
        return "INTEGER"
    if present and all(re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", v) for v in present):
        return "REAL"
    return "TEXT"


def import_csv(db, table, path):
    with open(path, newline="", encoding="utf-8-sig", errors="replace") as handle:
        rows = list(csv.reader(handle))
    if not rows:
        print(f"sqlite_tool: {path} is empty", file=sys.stderr)
        return 1
    header = [h.strip() or f"column_{i + 1}" for i, h in enumerate(rows[0])]
    body = [r + [""] * (len(header) - len(r)) for r in rows[1:]]
    types = [column_type([r[i] for r in body]) for i in range(len(header))]
    con = sqlite3.connect(db)
    exists = con.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone()
    if exists:
        print(f"sqlite_tool: table {table} already exists; pick another name", file=sys.stderr)
        return 1
    columns = ", ".join(f"{quote(h)} {t}" for h, t in zip(header, types))
    con.execute(f"CREATE TABLE {quote(table)} ({columns})")
    marks = ", ".join("?" for _ in header)
    convert = [int if t == "INTEGER" else float if t == "REAL" else str for t in types]
    con.executemany(f"INSERT INTO {quote(table)} VALUES ({marks})",
                    [[None if not v.strip() else f(v.strip()) for v, f in zip(r[:len(header)], convert)] for r in body])
    con.commit()
    print(f"imported {len(body)} rows into {table} ({', '.join(f'{h} {t}' for h, t in zip(header, types))})")
    return 0


def main():
    parser = argparse.ArgumentParser(description="Inspect and query SQLite databases.")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("schema")
    p.add_argument("db")
    p = sub.add_parser("query")
    p.add_argument("db")
    p.add_argument("sql")
    p.add_argument("--csv", action="store_true")
    p.add_argument("--limit", type=int, default=200)
    p = sub.add_parser("import")
    p.add_argument("db")
    p.add_argument("table")
    p.add_argument("csv_file")
    args = parser.parse_args()
    try:
        if args.command == "schema":
            return schema(args.db)
        if args.command == "query":
            return query(args.db, args.sql, args.csv, args.limit)
        return import_csv(args.db, args.table, args.csv_file)
    except (sqlite3.Error, OSError) as error:
        print(f"sqlite_tool: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
