#!/usr/bin/env python3
"""Draw a bar or line chart from a CSV as a standalone SVG file (standard library only).

Bar charts group rows by the X column and sum (or average, or count) the Y column; line charts
plot each Y column in row order, one line per column. Values like "1,200" and "$30" are read as
numbers; rows whose Y value is not a number are skipped and counted on stderr.

usage: svg_chart.py FILE --x COL --y COL [COL ...] [--kind bar|line] [--agg sum|mean|count]
                    [--title TEXT] [--out chart.svg] [--width 800] [--height 450]
"""
import argparse
import csv
import re
import sys
from collections import OrderedDict
from xml.sax.saxutils import escape

COLORS = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1"]


def number(text):
    text = text.strip().replace(" ", "").lstrip("$€£").rstrip("%")
    if re.fullmatch(r"[+-]?\d{1,3}(,\d{3})+(\.\d+)?", text):
        text = text.replace(",", "")
    try:
        return float(text)
    except ValueError:
        return None


def nice_max(value):
    if value <= 0:
        return 1.0
    magnitude = 10 ** (len(str(int(value))) - 1)
    for step in (1, 2, 2.5, 5, 10):
        if value <= step * magnitude:
            return step * magnitude
    return 10 * magnitude


def label(value):
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}".rstrip("0")


def main():
    parser = argparse.ArgumentParser(description="CSV to SVG bar or line chart.")
    parser.add_argument("file")
    parser.add_argument("--x", required=True)
    parser.add_argument("--y", required=True, nargs="+")
    parser.add_argument("--kind", choices=["bar", "line"], default="bar")
    parser.add_argument("--agg", choices=["sum", "mean", "count"], default="sum")
    parser.add_argument("--title", default="")
    parser.add_argument("--out", default="chart.svg")
    parser.add_argument("--width", type=int, default=800)
    parser.add_argument("--height", type=int, default=450)
    args = parser.parse_args()
    with open(args.file, newline="", encoding="utf-8-sig", errors="replace") as handle:
        rows = list(csv.DictReader(handle))
    columns = rows[0].keys() if rows else []
    missing = [c for c in [args.x, *args.y] if c not in columns]
    if missing:
        print(f"svg_chart: no such column: {', '.join(missing)} (columns: {', '.join(columns)})", file=sys.stderr)
        return 2
    # Bars: one slot per distinct X value (in first-seen order); lines: one slot per row.
    labels = []
    for row in rows:
        key = (row.get(args.x) or "").strip()
        if args.kind == "line" or key not in labels:
            labels.append(key)
    points = OrderedDict((y, [None] * len(labels)) for y in args.y)
    skipped = 0
    for r, row in enumerate(rows):
        slot_index = r if args.kind == "line" else labels.index((row.get(args.x) or "").strip())
        for y in args.y:
            value = 1.0 if args.agg == "count" else number(row.get(y) or "")
            if value is None:
                skipped += 1
                continue
            if points[y][slot_index] is None:
                points[y][slot_index] = []
            points[y][slot_index].append(value)
    for y, groups in points.items():
        points[y] = [(labels[i], None if g is None else sum(g) / len(g) if args.agg == "mean" else sum(g))
                     for i, g in enumerate(groups)]
    values = [v for pts in points.values() for _, v in pts if v is not None]
    if not values:
        print("svg_chart: no numeric values to plot", file=sys.stderr)
        return 1
    top = nice_max(max(values))
    bottom = min(0.0, min(values))
    w, h = args.width, args.height
    left, right, upper, lower = 70, 20, 50 if args.title else 20, 70
    plot_w, plot_h = w - left - right, h - upper - lower

    def ypos(v):
        return upper + plot_h * (top - v) / (top - bottom)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
           'font-family="sans-serif" font-size="12">', f'<rect width="{w}" height="{h}" fill="white"/>']
    if args.title:
        out.append(f'<text x="{w / 2}" y="28" text-anchor="middle" font-size="16">{escape(args.title)}</text>')
    for i in range(6):
        v = bottom + (top - bottom) * i / 5
        y = ypos(v)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{w - right}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end">{label(v)}</text>')
    slot = plot_w / max(len(labels), 1)
    for i, name in enumerate(labels):
        x = left + slot * (i + 0.5)
        out.append(f'<text x="{x:.1f}" y="{h - lower + 18}" text-anchor="end" '
                   f'transform="rotate(-35 {x:.1f} {h - lower + 18})">{escape(name[:24])}</text>')
    for s, (y_name, pts) in enumerate(points.items()):
        color = COLORS[s % len(COLORS)]
        if args.kind == "bar":
            bar_w = slot * 0.8 / len(points)
            for i, (_, v) in enumerate(pts):
                if v is None:
                    continue
                x = left + slot * i + slot * 0.1 + bar_w * s
                y0, y1 = sorted((ypos(v), ypos(0)))
                out.append(f'<rect x="{x:.1f}" y="{y0:.1f}" width="{bar_w:.1f}" height="{y1 - y0:.1f}" '
                           f'fill="{color}"><title>{escape(pts[i][0])}: {label(v)}</title></rect>')
        else:
            coords = [f"{left + slot * (i + 0.5):.1f},{ypos(v):.1f}" for i, (_, v) in enumerate(pts) if v is not None]
            joined = " ".join(coords)
            out.append(f'<polyline points="{joined}" fill="none" stroke="{color}" stroke-width="2"/>')
        out.append(f'<rect x="{left + 10 + 130 * s}" y="{h - 16}" width="10" height="10" fill="{color}"/>')
        out.append(f'<text x="{left + 24 + 130 * s}" y="{h - 7}">{escape(y_name)}</text>')
    out.append(f'<line x1="{left}" y1="{ypos(0):.1f}" x2="{w - right}" y2="{ypos(0):.1f}" stroke="#333"/>')
    out.append("</svg>")
    with open(args.out, "w", encoding="utf-8") as handle:
        handle.write("\n".join(out) + "\n")
    print(f"wrote {args.out}: {args.kind} chart, {len(labels)} categories, {len(points)} series")
    if skipped:
        print(f"svg_chart: skipped {skipped} non-numeric values", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
