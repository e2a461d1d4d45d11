#!/usr/bin/env python3
"""List and read exported email offline: an mbox file, a Maildir, or a folder of .eml files.

  mail_list.py SOURCE                    one line per message: number, date, sender, subject, size
                                         (numbers count every message in SOURCE, oldest first)
  mail_list.py SOURCE --since 2026-11-01 only messages on or after a date
  mail_list.py SOURCE --show N           headers and the plain-text body of message N
  mail_list.py SOURCE --json             the listing as JSON (with a 300-character preview)

Messages are sorted oldest first. HTML-only bodies are reduced to text. Nothing is changed,
sent or fetched: this reads local files only.
"""
import argparse
import email
import email.policy
import html
import json
import mailbox
import os
import re
import sys
from email.utils import getaddresses, parsedate_to_datetime


def messages(source):
    if os.path.isdir(source):
        if all(os.path.isdir(os.path.join(source, d)) for d in ("cur", "new")):
            for key, message in mailbox.Maildir(source, factory=None).items():
                yield key, email.message_from_bytes(message.as_bytes(), policy=email.policy.default)
            return
        for name in sorted(os.listdir(source)):
            if name.endswith(".eml"):
                with open(os.path.join(source, name), "rb") as handle:
                    yield name, email.message_from_binary_file(handle, policy=email.policy.default)
        return
    for key, message in mailbox.mbox(source).items():
        yield str(key), email.message_from_bytes(message.as_bytes(), policy=email.policy.default)


def body_text(message):
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    try:
        text = part.get_content()
    except (LookupError, UnicodeError):
        text = part.get_payload(decode=True).decode("utf-8", "replace")
    if part.get_content_type() == "text/html":
        text = re.sub(r"(?is)<(script|style).*?</\1>", " ", text)
        text = re.sub(r"(?i)<br\s*/?>|</p>|</div>|</li>", "\n", text)
        text = html.unescape(re.sub(r"<[^>]+>", " ", text))
    return re.sub(r"[ \t]+", " ", re.sub(r"\n\s*\n\s*\n+", "\n\n", text)).strip()


def when(message):
    try:
        return parsedate_to_datetime(message["date"])
    except (TypeError, ValueError, IndexError):
        return None


def main():
    parser = argparse.ArgumentParser(description="List and read exported email (mbox, Maildir, .eml).")
    parser.add_argument("source")
    parser.add_argument("--since", help="YYYY-MM-DD")
    parser.add_argument("--show", type=int, metavar="N")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not os.path.exists(args.source):
        print(f"mail_list: {args.source} does not exist", file=sys.stderr)
        return 1
    items = []
    for key, message in messages(args.source):
        date = when(message)
        items.append({"key": key, "date": date, "message": message})
    items.sort(key=lambda m: (m["date"] is None, m["date"].timestamp() if m["date"] else 0))
    # Numbers belong to the whole source, so a number from a filtered listing works with --show.
    for number, item in enumerate(items, 1):
        item["n"] = number
    if args.show is not None:
        if not 1 <= args.show <= len(items):
            print(f"mail_list: no message {args.show} (there are {len(items)})", file=sys.stderr)
            return 1
        message = items[args.show - 1]["message"]
        for header in ("From", "To", "Cc", "Date", "Subject", "Message-ID", "In-Reply-To"):
            if message[header]:
                print(f"{header}: {message[header]}")
        attachments = [p.get_filename() for p in message.iter_attachments() if p.get_filename()]
        if attachments:
            print(f"Attachments: {', '.join(attachments)}")
        print()
        print(body_text(message))
        return 0
    if args.since:
        items = [m for m in items if m["date"] and m["date"].date().isoformat() >= args.since]
    rows = []
    for item in items:
        number = item["n"]
        message = item["message"]
        sender = getaddresses([str(message["from"] or "")])
        name, address = sender[0] if sender else ("", "")
        text = body_text(message)
        rows.append({"n": number, "date": item["date"].strftime("%Y-%m-%d %H:%M") if item["date"] else "?",
                     "from": name or address, "address": address, "subject": str(message["subject"] or "(no subject)"),
                     "chars": len(text), "reply": bool(message["in-reply-to"]),
                     "list": bool(message["list-id"] or message["list-unsubscribe"]), "preview": text[:300]})
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    for row in rows:
        marks = ("L" if row["list"] else "-") + ("R" if row["reply"] else "-")
        print(f"{row['n']:>4} {row['date']} {marks} {row['from'][:24]:<24} {row['subject'][:70]}  ({row['chars']} chars)")
    print(f"{len(rows)} messages (L = mailing list or newsletter, R = reply in a thread)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
