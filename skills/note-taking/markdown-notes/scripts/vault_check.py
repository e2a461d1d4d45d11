#!/usr/bin/env python3
"""Report on a folder of markdown notes (an Obsidian-style vault).

  vault_check.py VAULT                  note count, broken [[links]], orphan notes, top tags
  vault_check.py VAULT --backlinks NOTE notes that link to NOTE, with the linking line
  vault_check.py VAULT --tag TAG        notes carrying #TAG (inline or in frontmatter tags)

Links understood: [[Note]], [[Note|shown text]], [[Note#Heading]], ![[embed]] and relative
markdown links [text](other-note.md). Note names match file names without ".md", ignoring case,
anywhere in the vault, as Obsidian resolves them. Folders starting with "." are skipped.
"""
import argparse
import os
import re
import sys
from collections import Counter, defaultdict

WIKILINK = re.compile(r"!?\[\[([^\]|#^]+)(?:[#^][^\]|]*)?(?:\|[^\]]*)?\]\]")
MDLINK = re.compile(r"\[[^\]]*\]\(([^)\s]+\.md)(?:#[^)]*)?\)")
INLINE_TAG = re.compile(r"(?:^|\s)#([A-Za-z][\w/-]*)")
FENCE = re.compile(r"^\s*(```|~~~)")


def load(vault):
    notes = {}
    for root, dirs, files in os.walk(vault):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if name.endswith(".md"):
                path = os.path.join(root, name)
                with open(path, encoding="utf-8", errors="replace") as handle:
                    notes[os.path.relpath(path, vault)] = handle.read().splitlines()
    return notes


def frontmatter_tags(lines):
    if not lines or lines[0].strip() != "---":
        return set(), 0
    tags, end, in_list = set(), 0, False
    for i, line in enumerate(lines[1:], 1):
        if line.strip() == "---":
            end = i + 1
            break
        if line.startswith("tags:"):
            rest = line[5:].strip().strip("[]")
            tags.update(t.strip().strip("'\"#") for t in rest.split(",") if t.strip())
            in_list = not rest
        elif in_list and line.strip().startswith("- "):
            tags.add(line.strip()[2:].strip().strip("'\"#"))
        else:
            in_list = False
    return tags, end


def scan(notes):
    by_name = defaultdict(list)
    for rel in notes:
        by_name[os.path.splitext(os.path.basename(rel))[0].lower()].append(rel)
    links, tags = defaultdict(list), defaultdict(set)
    for rel, lines in notes.items():
        fm_tags, body_start = frontmatter_tags(lines)
        tags[rel].update(fm_tags)
        fenced = False
        for number, line in enumerate(lines, 1):
            if number <= body_start:
                continue
            if FENCE.match(line):
                fenced = not fenced
            if fenced:
                continue
            for match in WIKILINK.finditer(line):
                links[rel].append((match.group(1).strip(), number, line.strip()))
            for match in MDLINK.finditer(line):
                if "://" not in match.group(1):
                    target = os.path.normpath(os.path.join(os.path.dirname(rel), match.group(1)))
                    links[rel].append((os.path.splitext(target)[0], number, line.strip()))
            tags[rel].update(INLINE_TAG.findall(line))
    return by_name, links, tags


def resolve(target, by_name):
    key = os.path.basename(target).lower()
    if key.endswith(".md"):
        key = key[:-3]
    return by_name.get(key, [])


def main():
    parser = argparse.ArgumentParser(description="Check links and tags in a markdown vault.")
    parser.add_argument("vault")
    parser.add_argument("--backlinks", metavar="NOTE")
    parser.add_argument("--tag")
    args = parser.parse_args()
    if not os.path.isdir(args.vault):
        print(f"vault_check: {args.vault} is not a folder", file=sys.stderr)
        return 1
    notes = load(args.vault)
    by_name, links, tags = scan(notes)
    if args.backlinks:
        wanted = args.backlinks.lower().removesuffix(".md")
        hits = [(rel, n, text) for rel, items in links.items() for target, n, text in items
                if os.path.basename(target).lower() == os.path.basename(wanted)]
        for rel, number, text in sorted(hits):
            print(f"{rel}:{number}: {text}")
        print(f"{len(hits)} links to {args.backlinks}")
        return 0
    if args.tag:
        wanted = args.tag.lstrip("#").lower()
        hits = sorted(rel for rel, t in tags.items() if any(x.lower() == wanted or x.lower().startswith(wanted + "/") for x in t))
        for rel in hits:
            print(rel)
        print(f"{len(hits)} notes tagged #{wanted}")
        return 0
    inbound = Counter()
    broken = []
    for rel, items in links.items():
        for target, number, _ in items:
            found = resolve(target, by_name)
            if not found:
                broken.append((rel, number, target))
            for hit in found:
                if hit != rel:
                    inbound[hit] += 1
    orphans = sorted(rel for rel in notes if inbound[rel] == 0 and not links.get(rel))
    duplicates = {k: v for k, v in by_name.items() if len(v) > 1}
    tag_counts = Counter(t for ts in tags.values() for t in ts)
    print(f"{len(notes)} notes, {sum(len(v) for v in links.values())} links, {len(tag_counts)} tags")
    print(f"broken links: {len(broken)}")
    for rel, number, target in sorted(broken):
        print(f"  {rel}:{number} -> [[{target}]]")
    print(f"orphans (no links in or out): {len(orphans)}")
    for rel in orphans:
        print(f"  {rel}")
    if duplicates:
        print("ambiguous names (same file name in several folders):")
        for name, rels in sorted(duplicates.items()):
            print(f"  {name}: {', '.join(sorted(rels))}")
    if tag_counts:
        print("top tags: " + ", ".join(f"#{t} ({c})" for t, c in tag_counts.most_common(15)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
