#!/usr/bin/env python3
"""Outline a Jupyter notebook without Jupyter: headings, code cells, outputs and errors.

  ipynb_outline.py NOTEBOOK.ipynb            one line per cell, errors and execution order flagged
  ipynb_outline.py NOTEBOOK.ipynb --cell N   the full source and text outputs of cell N
  ipynb_outline.py NOTEBOOK.ipynb --export-py OUT.py   the code cells as one script (markdown as comments)

Execution counts out of order, cells never run and cells whose output is an error are listed at
the end, since they are the usual reasons a notebook does not reproduce.
"""
import argparse
import json
import sys


def source(cell):
    text = cell.get("source", "")
    return "".join(text) if isinstance(text, list) else text


def outputs_text(cell):
    parts = []
    for out in cell.get("outputs", []):
        kind = out.get("output_type")
        if kind == "stream":
            parts.append("".join(out.get("text", [])))
        elif kind in ("execute_result", "display_data"):
            data = out.get("data", {})
            if "text/plain" in data:
                parts.append("".join(data["text/plain"]))
            else:
                parts.append(f"[{', '.join(sorted(data))}]")
        elif kind == "error":
            parts.append(f"{out.get('ename')}: {out.get('evalue')}")
    return "\n".join(parts)


def main():
    parser = argparse.ArgumentParser(description="Outline a Jupyter notebook.")
    parser.add_argument("notebook")
    parser.add_argument("--cell", type=int)
    parser.add_argument("--export-py", metavar="OUT")
    args = parser.parse_args()
    try:
        with open(args.notebook, encoding="utf-8") as handle:
            cells = json.load(handle).get("cells", [])
    except (OSError, ValueError) as error:
        print(f"ipynb_outline: cannot read {args.notebook}: {error}", file=sys.stderr)
        return 1
    if args.cell is not None:
        if not 1 <= args.cell <= len(cells):
            print(f"ipynb_outline: no cell {args.cell} (there are {len(cells)})", file=sys.stderr)
            return 1
        cell = cells[args.cell - 1]
        print(f"cell {args.cell} ({cell.get('cell_type')}, execution count {cell.get('execution_count')})")
        print(source(cell))
        if outputs_text(cell):
            print("--- output ---")
            print(outputs_text(cell))
        return 0
    if args.export_py:
        with open(args.export_py, "w", encoding="utf-8") as handle:
            for number, cell in enumerate(cells, 1):
                text = source(cell)
                if cell.get("cell_type") == "code":
                    handle.write(f"# cell {number}\n{text}\n\n")
                elif text.strip():
                    handle.write("".join(f"# {line}\n" for line in text.splitlines()) + "\n")
        print(f"wrote {args.export_py}")
        return 0
    last, errors, unrun, out_of_order = 0, [], [], []
    for number, cell in enumerate(cells, 1):
        kind = cell.get("cell_type")
        text = source(cell).strip()
        first = text.splitlines()[0][:90] if text else "(empty)"
        if kind == "markdown":
            if first.startswith("#"):
                print(f"{number:>3} md   {first}")
            continue
        if kind != "code":
            continue
        count = cell.get("execution_count")
        flags = []
        if count is None and text:
            unrun.append(number)
            flags.append("not run")
        elif count is not None:
            if count < last:
                out_of_order.append(number)
                flags.append("out of order")
            last = max(last, count)
        if any(o.get("output_type") == "error" for o in cell.get("outputs", [])):
            errors.append(number)
            flags.append("ERROR " + outputs_text(cell).splitlines()[-1][:80])
        lines = len(text.splitlines())
        print(f"{number:>3} code [{count if count is not None else ' '}] {first}  ({lines} lines)"
              + (f"  <- {'; '.join(flags)}" if flags else ""))
    print(f"\n{len(cells)} cells; errors in {errors or 'none'}; not run: {unrun or 'none'}; "
          f"out of order: {out_of_order or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
