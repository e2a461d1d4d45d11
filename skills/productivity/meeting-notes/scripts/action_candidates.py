#!/usr/bin/env python3
"""List the lines of a meeting transcript that look like decisions, action items or dates.

Reads "Speaker: text" lines (optionally led by a timestamp such as "[00:12:03]" or "10:04")
and prints who spoke how much, then every candidate line with its line number, its kind and,
for action items, a guessed owner and due phrase. It is a shortlist for a careful read, not a
verdict: confirm each candidate against the surrounding lines before writing the notes.

usage: action_candidates.py TRANSCRIPT [--json]
"""
import argparse
import json
import re
import sys
from collections import Counter

SPEAKER = re.compile(r"^\s*(?:\[?\(?\d{1,2}:\d{2}(?::\d{2})?\)?\]?\s*[-–]?\s*)?([A-Z][\w.'-]*(?: [A-Z][\w.'-]*){0,2})\s*:\s*(.+)$")
DECISION = re.compile(r"\b(decided|decision|agreed|agree on|we'?ll go with|let'?s go with|settled on|final answer|approved|signed off|going forward)\b", re.I)
ACTION = re.compile(r"\b(I'?ll|I will|I can take|I'?m going to|will (?:send|update|draft|write|check|prepare|book|review|fix|share|follow up|look into|schedule|own)|action item|to-?do|can you|could you|please (?:send|update|draft|check|review|share)|take care of|follow up|owner)\b", re.I)
DUE = re.compile(r"\b(by|before|until|due|on|next|this)\s+((?:mon|tues|wednes|thurs|fri|satur|sun)day|tomorrow|tonight|end of (?:day|week|month)|eod|eow|week|month|\d{4}-\d{2}-\d{2}|\d{1,2}(?:st|nd|rd|th)?(?: of)? (?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\w*|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\w* \d{1,2}(?:st|nd|rd|th)?)\b", re.I)
NAMED_OWNER = re.compile(r"\b([A-Z][a-z]+)(?:,)? (?:will|can you|could you|to (?:send|update|draft|check|review))\b")


def owner_for(speaker, text):
    named = NAMED_OWNER.search(text)
    if named and named.group(1) not in ("I", "We", "You", "They", "It", "That", "This", "Then", "So", "And"):
        return named.group(1)
    if re.search(r"\b(I'?ll|I will|I can take|I'?m going to)\b", text, re.I):
        return speaker
    if re.search(r"\b(can|could) you\b", text, re.I):
        return "(the person addressed)"
    return "?"


def main():
    parser = argparse.ArgumentParser(description="Shortlist decisions and action items in a transcript.")
    parser.add_argument("transcript")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    try:
        with open(args.transcript, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError as error:
        print(f"action_candidates: cannot read {args.transcript}: {error.strerror}", file=sys.stderr)
        return 1
    spoken = Counter()
    found = []
    speaker = "?"
    for number, raw in enumerate(lines, 1):
        match = SPEAKER.match(raw)
        if match:
            speaker, text = match.group(1), match.group(2).strip()
            spoken[speaker] += 1
        else:
            text = raw.strip()
        if not text:
            continue
        due = DUE.search(text)
        if DECISION.search(text):
            kind = "decision"
        elif ACTION.search(text):
            kind = "action"
        elif due:
            kind = "date"
        else:
            continue
        item = {"line": number, "kind": kind, "speaker": speaker, "text": text}
        if kind == "action":
            item["owner"] = owner_for(speaker, text)
            item["due"] = due.group(0) if due else ""
        found.append(item)
    if args.json:
        print(json.dumps({"speakers": dict(spoken.most_common()), "candidates": found}, indent=2))
        return 0
    if spoken:
        print("speakers: " + ", ".join(f"{name} ({count} lines)" for name, count in spoken.most_common()))
    else:
        print("speakers: none found (expected 'Name: text' lines)")
    for item in found:
        extra = ""
        if item["kind"] == "action":
            extra = f"  [owner: {item['owner']}]" + (f" [due: {item['due']}]" if item["due"] else "")
        print(f"{item['kind']:<8} L{item['line']:<4} {item['speaker']}: {item['text']}{extra}")
    print(f"{len(found)} candidates in {len(lines)} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
