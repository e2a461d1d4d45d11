#!/usr/bin/env python3
"""Profile a CSV file with the standard library only.

Prints the row count, then one block per column: its inferred type, how many values are
missing, how many are distinct, and min/max/mean/median for numeric columns (values such as
"1,200", "$30" or "12%" count as numbers; anything else in a numeric column is reported as
unparsed). --json prints the same facts as JSON for further processing.

usage: csv_profile.py FILE [--delimiter ,] [--json] [--top 5]
"""
import argparse
import csv
import json
import re
import statistics
import sys
from collections import Counter
from datetime import datetime

MISSING = {"", "na", "n/a", "nan", "null", "none", "-", "--", "?", "missing", "#n/a"}
NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
DATE_FORMATS = ("%Y-%m-%d", "%Y/%m/%d", "%d/%m/%Y", "%m/%d/%Y", "%d.%m.%Y", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S")


def is_missing(value):
    return value.strip().lower() in MISSING


def to_number(value):
    """A float for '1,234.5', '$30', '(12)', '45%'; None when the text is not a number."""
    text = value.strip().replace("\u00a0", "").replace(" ", "")
    negative = text.startswith("(") and text.endswith(")")
    if negative:
        text = text[1:-1]
    text = text.lstrip("$€£¥").rstrip("%")
    if re.fullmatch(r"[+-]?\d{1,3}(,\d{3})+(\.\d+)?", text):
        text = text.replace(",", "")
    if not NUMBER.match(text):
        return None
    number = float(text)
    return -number if negative else number


def to_date(value):
    text = value.strip()
    for fmt in DATE_FORMATS:
        try:
            return datetime.strptime(text, fmt)
        except ValueError:
            continue
    return None


def read_rows(path, delimiter):
    with open(path, newline="", encoding="utf-8-sig", errors="replace") as handle:
        sample = handle.read(65536)
        handle.seek(0)
        if delimiter is None:
            try:
                delimiter = csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
            except csv.Error:
                delimiter = ","
        reader = csv.reader(handle, delimiter=delimiter)
        header = next(reader, None)
        if header is None:
            return [], [], delimiter
        rows = [row for row in reader if any(cell.strip() for cell in row)]
    return [h.strip() or f"column_{i + 1}" for i, h in enumerate(header)], rows, delimiter


def fmt(number):
    if number is None:
        return "-"
    if float(number).is_integer() and abs(number) < 1e15:
        return str(int(number))
    return f"{number:.4g}" if abs(number) >= 1e6 or abs(number) < 1e-3 else f"{number:.4f}".rstrip("0").rstrip(".")


def profile_column(name, values, top):
    present = [v for v in values if not is_missing(v)]
    info = {"name": name, "count": len(values), "missing": len(values) - len(present), "distinct": len({v.strip() for v in present})}
    numbers = [n for n in (to_number(v) for v in present) if n is not None]
    dates = [d for d in (to_date(v) for v in present) if d is not None]
    if present and len(numbers) > 0.5 * len(present):
        info["type"] = "integer" if all(n.is_integer() for n in numbers) else "number"
        info["min"] = min(numbers)
        info["max"] = max(numbers)
        info["mean"] = statistics.fmean(numbers)
        info["median"] = statistics.median(numbers)
        info["stdev"] = statistics.stdev(numbers) if len(numbers) > 1 else 0.0
        info["unparsed"] = sorted({v for v in present if to_number(v) is None})[:top]
    elif present and len(dates) > 0.5 * len(present):
        info["type"] = "date"
        info["min"] = min(dates).isoformat()
        info["max"] = max(dates).isoformat()
        info["unparsed"] = sorted({v for v in present if to_date(v) is None})[:top]
    elif present and {v.strip().lower() for v in present} <= {"true", "false", "yes", "no", "y", "n", "0", "1"}:
        info["type"] = "boolean"
    else:
        info["type"] = "text" if present else "empty"
    info["top"] = Counter(v.strip() for v in present).most_common(top)
    return info


def main():
    parser = argparse.ArgumentParser(description="Profile a CSV file (standard library only).")
    parser.add_argument("file")
    parser.add_argument("--delimiter", default=None, help="field separator (default: detected)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument("--top", type=int, default=5, help="most common values to show per column")
    args = parser.parse_args()
    try:
        header, rows, delimiter = read_rows(args.file, args.delimiter)
    except OSError as error:
        print(f"csv_profile: cannot read {args.file}: {error.strerror}", file=sys.stderr)
        return 1
    if not header:
        print(f"csv_profile: {args.file} is empty", file=sys.stderr)
        return 1
    ragged = sum(1 for row in rows if len(row) != len(header))
    columns = []
    for index, name in enumerate(header):
        values = [row[index] if index < len(row) else "" for row in rows]
        columns.append(profile_column(name, values, args.top))
    duplicates = len(rows) - len({tuple(row) for row in rows})
    report = {"file": args.file, "delimiter": delimiter, "rows": len(rows), "columns": len(header),
              "ragged_rows": ragged, "duplicate_rows": duplicates, "profile": columns}
    if args.json:
        print(json.dumps(report, indent=2, default=str))
        return 0
    print(f"file: {args.file}")
    print(f"rows: {len(rows)}  columns: {len(header)}  delimiter: {delimiter!r}")
    print(f"duplicate rows: {duplicates}  rows with a different field count: {ragged}")
    for col in columns:
        print(f"\n[{col['name']}] type={col['type']} missing={col['missing']} distinct={col['distinct']}")
        if col["type"] in ("integer", "number"):
            print(f"  min={fmt(col['min'])} max={fmt(col['max'])} mean={fmt(col['mean'])} "
                  f"median={fmt(col['median'])} stdev={fmt(col['stdev'])}")
        elif col["type"] == "date":
            print(f"  min={col['min']} max={col['max']}")
        if col.get("unparsed"):
            print(f"  unparsed values: {', '.join(repr(v) for v in col['unparsed'])}")
        if col["type"] in ("text", "boolean") and col["top"]:
            print("  top: " + ", ".join(f"{value!r} x{count}" for value, count in col["top"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
