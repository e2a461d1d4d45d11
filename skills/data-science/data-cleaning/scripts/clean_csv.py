#!/usr/bin/env python3
"""Clean a CSV into a new file and report every kind of change it made.

Always: trims spaces around values and header names, drops rows that are entirely empty.
Options: --missing turns NA/N/A/null/none/-/nan into empty cells; --numbers COL turns
"1,200", "$30", "(5)" and "12%" into plain numbers; --dates COL rewrites common date forms to
YYYY-MM-DD (--dayfirst reads 03/04/2024 as 3 April); --case COL=lower|upper|title normalises text;
--dedupe drops exact duplicate rows. Values a rule cannot convert are left as they were and
listed in the report. The input file is never changed.

usage: clean_csv.py IN.csv OUT.csv [--missing] [--numbers COL ...] [--dates COL ...]
                    [--dayfirst] [--case COL=lower ...] [--dedupe] [--delimiter ,]
"""
import argparse
import csv
import os
import re
import sys
from collections import Counter, defaultdict
from datetime import datetime

MISSING = {"na", "n/a", "nan", "null", "none", "-", "--", "?", "missing", "#n/a"}


def clean_number(value):
    text = value.replace("\u00a0", "").replace(" ", "")
    negative = text.startswith("(") and text.endswith(")")
    if negative:
        text = text[1:-1]
    text = text.lstrip("$€£¥").rstrip("%")
    if re.fullmatch(r"[+-]?\d{1,3}(,\d{3})+(\.\d+)?", text):
        text = text.replace(",", "")
    if not re.fullmatch(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?", text):
        return None
    return f"-{text.lstrip('+')}" if negative else text


def clean_date(value, dayfirst):
    formats = ["%Y-%m-%d", "%Y/%m/%d", "%Y.%m.%d", "%d %b %Y", "%d %B %Y", "%b %d %Y", "%B %d %Y", "%b %d, %Y",
               "%B %d, %Y", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S"]
    formats += ["%d/%m/%Y", "%d.%m.%Y", "%d-%m-%Y"] if dayfirst else ["%m/%d/%Y", "%m-%d-%Y", "%d.%m.%Y"]
    for fmt in formats:
        try:
            return datetime.strptime(value, fmt).strftime("%Y-%m-%d")
        except ValueError:
            continue
    return None


def main():
    parser = argparse.ArgumentParser(description="Clean a CSV into a new file (standard library only).")
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--missing", action="store_true", help="blank out NA/null-like markers")
    parser.add_argument("--numbers", nargs="*", default=[], metavar="COL")
    parser.add_argument("--dates", nargs="*", default=[], metavar="COL")
    parser.add_argument("--dayfirst", action="store_true", help="read 03/04/2024 as 3 April")
    parser.add_argument("--case", nargs="*", default=[], metavar="COL=MODE")
    parser.add_argument("--dedupe", action="store_true", help="drop exact duplicate rows")
    parser.add_argument("--delimiter", default=",")
    args = parser.parse_args()
    if os.path.abspath(args.input) == os.path.abspath(args.output):
        print("clean_csv: write to a new file; the input is kept as it is", file=sys.stderr)
        return 2
    try:
        with open(args.input, newline="", encoding="utf-8-sig", errors="replace") as handle:
            reader = csv.reader(handle, delimiter=args.delimiter)
            header = [h.strip() for h in next(reader, [])]
            rows = list(reader)
    except OSError as error:
        print(f"clean_csv: cannot read {args.input}: {error.strerror}", file=sys.stderr)
        return 1
    cases = {}
    for spec in args.case:
        column, _, mode = spec.partition("=")
        if mode not in ("lower", "upper", "title"):
            print(f"clean_csv: --case {spec}: use COL=lower, COL=upper or COL=title", file=sys.stderr)
            return 2
        cases[column] = mode
    wanted = set(args.numbers) | set(args.dates) | set(cases)
    unknown = sorted(wanted - set(header))
    if unknown:
        print(f"clean_csv: no such column: {', '.join(unknown)} (columns: {', '.join(header)})", file=sys.stderr)
        return 2
    changes = Counter()
    failures = defaultdict(set)
    cleaned = []
    seen = set()
    for row in rows:
        trimmed = sum(1 for cell in row if cell != cell.strip())
        if trimmed:
            changes["values trimmed"] += trimmed
        row = [cell.strip() for cell in row] + [""] * (len(header) - len(row))
        if not any(row):
            changes["empty rows dropped"] += 1
            continue
        for index, name in enumerate(header):
            value = row[index]
            if args.missing and value.lower() in MISSING:
                row[index] = ""
                changes[f"{name}: missing marker blanked"] += 1
                continue
            if not value:
                continue
            if name in args.numbers:
                number = clean_number(value)
                if number is None:
                    failures[name].add(value)
                elif number != value:
                    row[index] = number
                    changes[f"{name}: number normalised"] += 1
            if name in args.dates:
                date = clean_date(value, args.dayfirst)
                if date is None:
                    failures[name].add(value)
                elif date != value:
                    row[index] = date
                    changes[f"{name}: date rewritten"] += 1
            if name in cases:
                new = getattr(value, cases[name])()
                if new != value:
                    row[index] = new
                    changes[f"{name}: case changed"] += 1
        key = tuple(row)
        if args.dedupe and key in seen:
            changes["duplicate rows dropped"] += 1
            continue
        seen.add(key)
        cleaned.append(row)
    with open(args.output, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, delimiter=args.delimiter)
        writer.writerow(header)
        writer.writerows(cleaned)
    print(f"wrote {args.output}: {len(cleaned)} rows (from {len(rows)})")
    for what, count in sorted(changes.items()):
        print(f"  {what}: {count}")
    for name, values in sorted(failures.items()):
        shown = ", ".join(repr(v) for v in sorted(values)[:10])
        print(f"  {name}: left unchanged, not convertible: {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
