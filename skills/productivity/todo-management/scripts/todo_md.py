#!/usr/bin/env python3
"""Keep a todo.md checklist: list, add, complete, reopen and archive tasks.

The file is plain markdown that any editor shows well:

    ## Work
    - [ ] Send the Q4 report (due: 2026-12-01) #finance
    - [x] Book the venue (done: 2026-11-20)

Tasks are numbered in file order (every "- [ ]" or "- [x]" line counts), the number `list`
prints. Section headings group tasks; `add --section` creates the heading when it is missing.
Every change rewrites the file in place and prints what changed, so it can be shown to the user.

  todo_md.py list FILE [--open] [--due-before YYYY-MM-DD] [--tag TAG]
  todo_md.py add FILE "text" [--due YYYY-MM-DD] [--section NAME]
  todo_md.py done FILE N [N ...]     or   done FILE --match "words"
  todo_md.py reopen FILE N
  todo_md.py archive FILE            move finished tasks under "## Done"
"""
import argparse
import datetime
import os
import re
import sys

TASK = re.compile(r"^(\s*)[-*] \[([ xX])\] (.*)$")
DUE = re.compile(r"\(due: (\d{4}-\d{2}-\d{2})\)")


def read(path, create=False):
    if not os.path.exists(path):
        if create:
            return ["# Todo", ""]
        raise SystemExit(f"todo_md: {path} does not exist (add a task to create it)")
    with open(path, encoding="utf-8") as handle:
        return handle.read().splitlines()


def write(path, lines):
    text = "\n".join(lines).rstrip("\n") + "\n"
    temp = f"{path}.tmp"
    with open(temp, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(temp, path)


def tasks(lines):
    """(number, line index, done, text) for every task line."""
    out = []
    for index, line in enumerate(lines):
        match = TASK.match(line)
        if match:
            out.append((len(out) + 1, index, match.group(2) != " ", match.group(3)))
    return out


def pick(lines, numbers, match):
    found = tasks(lines)
    if match:
        words = match.lower().split()
        chosen = [t for t in found if all(w in t[3].lower() for w in words)]
        if len(chosen) != 1:
            listing = "; ".join(f"{t[0]}: {t[3]}" for t in chosen) or "none"
            raise SystemExit(f"todo_md: --match {match!r} must fit exactly one task (fits: {listing})")
        return chosen
    by_number = {t[0]: t for t in found}
    missing = [n for n in numbers if n not in by_number]
    if missing:
        raise SystemExit(f"todo_md: no task number {', '.join(map(str, missing))} (there are {len(found)})")
    return [by_number[n] for n in numbers]


def cmd_list(args):
    lines = read(args.file)
    section = ""
    shown = 0
    numbered = {t[1]: t for t in tasks(lines)}
    for index, line in enumerate(lines):
        if line.startswith("#"):
            section = line.lstrip("#").strip()
            continue
        task = numbered.get(index)
        if not task:
            continue
        number, _, done, text = task
        due = DUE.search(text)
        if args.open and done:
            continue
        if args.tag and f"#{args.tag.lstrip('#')}" not in text.split():
            continue
        if args.due_before and (not due or due.group(1) >= args.due_before):
            continue
        print(f"{number:>3}. [{'x' if done else ' '}] {text}" + (f"   ({section})" if section else ""))
        shown += 1
    open_count = sum(1 for t in numbered.values() if not t[2])
    print(f"{shown} shown; {open_count} open, {len(numbered) - open_count} done")


def cmd_add(args):
    lines = read(args.file, create=True)
    if args.due:
        datetime.date.fromisoformat(args.due)
    text = args.text.strip().replace("\n", " ")
    entry = f"- [ ] {text}" + (f" (due: {args.due})" if args.due else "")
    if args.section:
        heading = next((i for i, l in enumerate(lines) if l.startswith("#") and l.lstrip("#").strip().lower() == args.section.lower()), None)
        if heading is None:
            lines += ["", f"## {args.section}", entry]
        else:
            end = heading + 1
            while end < len(lines) and not lines[end].startswith("#"):
                end += 1
            while end > heading + 1 and not lines[end - 1].strip():
                end -= 1
            lines.insert(end, entry)
    else:
        last = max((t[1] for t in tasks(lines)), default=len(lines) - 1)
        lines.insert(last + 1, entry)
    write(args.file, lines)
    print(f"added: {entry}")


def cmd_done(args, done=True):
    lines = read(args.file)
    today = datetime.date.today().isoformat()
    for number, index, was_done, text in pick(lines, args.numbers, getattr(args, "match", None)):
        indent = TASK.match(lines[index]).group(1)
        text = re.sub(r"\s*\(done: [\d-]+\)", "", text)
        lines[index] = f"{indent}- [x] {text} (done: {today})" if done else f"{indent}- [ ] {text}"
        state = "already done, date refreshed" if done and was_done else "done" if done else "reopened"
        print(f"{state}: {number}. {text}")
    write(args.file, lines)


def cmd_archive(args):
    lines = read(args.file)
    finished = [t for t in tasks(lines) if t[2] and not any(
        l.strip().lower() == "## done" for l in lines[:t[1]])]
    if not finished:
        print("nothing to archive")
        return
    moved = [lines[t[1]].strip() for t in finished]
    keep = [l for i, l in enumerate(lines) if i not in {t[1] for t in finished}]
    if not any(l.strip().lower() == "## done" for l in keep):
        keep += ["", "## Done"]
    at = next(i for i, l in enumerate(keep) if l.strip().lower() == "## done") + 1
    keep[at:at] = moved
    write(args.file, keep)
    print(f"archived {len(moved)} finished tasks under ## Done")


def main():
    parser = argparse.ArgumentParser(description="Manage a todo.md checklist.")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("list")
    p.add_argument("file")
    p.add_argument("--open", action="store_true")
    p.add_argument("--due-before")
    p.add_argument("--tag")
    p = sub.add_parser("add")
    p.add_argument("file")
    p.add_argument("text")
    p.add_argument("--due")
    p.add_argument("--section")
    p = sub.add_parser("done")
    p.add_argument("file")
    p.add_argument("numbers", nargs="*", type=int)
    p.add_argument("--match")
    p = sub.add_parser("reopen")
    p.add_argument("file")
    p.add_argument("numbers", nargs="+", type=int)
    p = sub.add_parser("archive")
    p.add_argument("file")
    args = parser.parse_args()
    try:
        if args.command == "list":
            cmd_list(args)
        elif args.command == "add":
            cmd_add(args)
        elif args.command == "done":
            if not args.numbers and not args.match:
                raise SystemExit("todo_md: done needs task numbers or --match")
            cmd_done(args)
        elif args.command == "reopen":
            cmd_done(args, done=False)
        else:
            cmd_archive(args)
    except ValueError as error:
        raise SystemExit(f"todo_md: {error}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
