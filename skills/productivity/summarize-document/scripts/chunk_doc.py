#!/usr/bin/env python3
"""Split a long markdown or text document into chunks that each fit in one read.

Chunks break at headings first, then at blank lines, and never exceed --max-chars (a paragraph
longer than that is cut at line ends, and a single overlong line at spaces). Each chunk carries the numbered section path it
belongs to (for example "§2.1 Accuracy", the first subsection of section 2) and its line range, so a summary can cite
where each point came from.

  chunk_doc.py FILE                      print the chunk index only
  chunk_doc.py FILE --out DIR            also write DIR/chunk-01.md ... and DIR/index.tsv
  chunk_doc.py FILE --max-chars 6000     chunk size (default 6000 characters)
"""
import argparse
import os
import re
import sys

HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


def sections(lines):
    """Yields (section_label, start_line, lines) for each heading-delimited block (1-based lines).

    A document with a single level-1 heading treats it as its title: numbering starts one level
    down, so the first "##" section is §1 rather than §1.1.
    """
    top_level = sum(1 for line in lines if line.startswith("# "))
    base = 1 if top_level == 1 else 0
    counters = [0] * 6
    titles = [""] * 6
    label = "§0 (before the first heading)"
    start = 1
    block = []
    in_fence = False
    for number, line in enumerate(lines, 1):
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        match = None if in_fence else HEADING.match(line)
        if match:
            if any(part.strip() for part in block):
                yield label, start, block
            level = len(match.group(1)) - 1 - base
            if level < 0:
                label, start, block = f"§0 {match.group(2)}", number, [line]
                continue
            counters[level] += 1
            for deeper in range(level + 1, 6):
                counters[deeper] = 0
                titles[deeper] = ""
            titles[level] = match.group(2)
            used = [i for i in range(level + 1) if counters[i]]
            number_text = ".".join(str(counters[i]) for i in used)
            label = f"§{number_text} {titles[level]}"
            start, block = number, [line]
        else:
            block.append(line)
    if any(part.strip() for part in block):
        yield label, start, block


def wrap_long(line, limit):
    """A line longer than the limit (an unwrapped paragraph) cut at spaces into parts that fit."""
    parts = []
    while len(line) > limit:
        cut = line.rfind(" ", 0, limit)
        cut = cut if cut > limit // 2 else limit
        parts.append(line[:cut])
        line = line[cut:].lstrip(" ")
    return parts + [line]


def split_block(start, block, limit):
    """Cuts one section into (first_line, last_line, lines) pieces under the limit.

    When a piece is full it is cut after its last blank line (in its second half) so paragraphs
    stay whole; otherwise at the line that did not fit.
    """
    # Each entry keeps the document line it came from; a very long line yields several entries.
    entries = [(start + offset, part) for offset, line in enumerate(block) for part in wrap_long(line, limit - 1)]
    pieces, current, size = [], [], 0
    for entry in entries:
        while current and size + len(entry[1]) + 1 > limit:
            cut = len(current)
            for i in range(len(current) - 1, len(current) // 2, -1):
                if not current[i][1].strip():
                    cut = i + 1
                    break
            pieces.append(current[:cut])
            current = current[cut:]
            size = sum(len(text) + 1 for _, text in current)
        current.append(entry)
        size += len(entry[1]) + 1
    if current:
        pieces.append(current)
    return [(piece[0][0], piece[-1][0], [text for _, text in piece]) for piece in pieces]


def main():
    parser = argparse.ArgumentParser(description="Split a long document into cited chunks.")
    parser.add_argument("file")
    parser.add_argument("--max-chars", type=int, default=6000)
    parser.add_argument("--out", help="folder for chunk files and index.tsv")
    args = parser.parse_args()
    if args.max_chars < 200:
        print("chunk_doc: --max-chars must be at least 200", file=sys.stderr)
        return 2
    try:
        with open(args.file, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError as error:
        print(f"chunk_doc: cannot read {args.file}: {error.strerror}", file=sys.stderr)
        return 1
    chunks = []
    pending = None
    for label, start, block in sections(lines):
        for piece_start, piece_end, piece in split_block(start, block, args.max_chars):
            text = "\n".join(piece)
            # Small neighbouring sections share a chunk; the chunk lists every section it holds.
            if pending and len(pending["text"]) + len(text) + 1 <= args.max_chars:
                pending["text"] += "\n" + text
                pending["end"] = piece_end
                if label not in pending["sections"]:
                    pending["sections"].append(label)
                continue
            if pending:
                chunks.append(pending)
            pending = {"start": piece_start, "end": piece_end, "text": text, "sections": [label]}
    if pending:
        chunks.append(pending)
    if not chunks:
        print(f"chunk_doc: {args.file} has no text", file=sys.stderr)
        return 1
    width = max(2, len(str(len(chunks))))
    rows = []
    for i, chunk in enumerate(chunks, 1):
        name = f"chunk-{i:0{width}d}.md"
        rows.append((name, chunk["start"], chunk["end"], len(chunk["text"]), " | ".join(chunk["sections"])))
        if args.out:
            os.makedirs(args.out, exist_ok=True)
            header = f"<!-- {args.file} lines {chunk['start']}-{chunk['end']}; sections: {' | '.join(chunk['sections'])} -->\n"
            with open(os.path.join(args.out, name), "w", encoding="utf-8") as handle:
                handle.write(header + chunk["text"] + "\n")
    if args.out:
        with open(os.path.join(args.out, "index.tsv"), "w", encoding="utf-8") as handle:
            handle.write("chunk\tstart_line\tend_line\tchars\tsections\n")
            for row in rows:
                handle.write("\t".join(str(v) for v in row) + "\n")
    total = sum(len(line) + 1 for line in lines)
    print(f"{args.file}: {len(lines)} lines, {total} chars, {len(chunks)} chunks of at most {args.max_chars} chars")
    for name, start, end, size, labels in rows:
        print(f"{name}  lines {start}-{end}  {size} chars  {labels}")
    if args.out:
        print(f"wrote {len(rows)} chunk files and index.tsv to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
