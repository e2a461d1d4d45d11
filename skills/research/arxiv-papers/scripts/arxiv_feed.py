#!/usr/bin/env python3
"""Turn a saved arXiv API response (Atom XML) into a readable list of papers.

Save the response first (see the skill's Procedure), then:

  arxiv_feed.py results.xml                 id, date, title, authors, categories, links
  arxiv_feed.py results.xml --abstracts     the same plus each abstract
  arxiv_feed.py results.xml --bibtex        a BibTeX entry per paper
  arxiv_feed.py results.xml --json          everything as JSON

Reads a local file only. Malformed or empty responses give a clear error.
"""
import argparse
import json
import re
import sys
import xml.etree.ElementTree as ET

NS = {"a": "http://www.w3.org/2005/Atom", "arxiv": "http://arxiv.org/schemas/atom",
      "os": "http://a9.com/-/spec/opensearch/1.1/"}


def clean(text):
    return re.sub(r"\s+", " ", text or "").strip()


def parse(path):
    root = ET.parse(path).getroot()
    total = root.findtext("os:totalResults", default="?", namespaces=NS)
    papers = []
    for entry in root.findall("a:entry", NS):
        raw_id = clean(entry.findtext("a:id", namespaces=NS))
        short = raw_id.rsplit("/abs/", 1)[-1]
        links = {link.get("title") or link.get("rel"): link.get("href") for link in entry.findall("a:link", NS)}
        papers.append({
            "id": short,
            "title": clean(entry.findtext("a:title", namespaces=NS)),
            "authors": [clean(a.findtext("a:name", namespaces=NS)) for a in entry.findall("a:author", NS)],
            "published": clean(entry.findtext("a:published", namespaces=NS))[:10],
            "updated": clean(entry.findtext("a:updated", namespaces=NS))[:10],
            "categories": [c.get("term") for c in entry.findall("a:category", NS)],
            "primary": (entry.find("arxiv:primary_category", NS).get("term")
                        if entry.find("arxiv:primary_category", NS) is not None else ""),
            "doi": clean(entry.findtext("arxiv:doi", namespaces=NS)),
            "journal": clean(entry.findtext("arxiv:journal_ref", namespaces=NS)),
            "comment": clean(entry.findtext("arxiv:comment", namespaces=NS)),
            "abstract": clean(entry.findtext("a:summary", namespaces=NS)),
            "abs_url": links.get("alternate", raw_id),
            "pdf_url": links.get("pdf", ""),
        })
    return total, papers


def bibtex(paper):
    first = paper["authors"][0].split()[-1] if paper["authors"] else "anon"
    key = re.sub(r"\W", "", f"{first}{paper['published'][:4]}{paper['title'].split()[0] if paper['title'] else ''}").lower()
    base_id = re.sub(r"v\d+$", "", paper["id"])
    fields = [("title", "{" + paper["title"] + "}"), ("author", " and ".join(paper["authors"])),
              ("year", paper["published"][:4]), ("eprint", base_id), ("archivePrefix", "arXiv"),
              ("primaryClass", paper["primary"])]
    if paper["doi"]:
        fields.append(("doi", paper["doi"]))
    body = ",\n".join(f"  {k} = {{{v}}}" for k, v in fields if v)
    return f"@misc{{{key},\n{body}\n}}"


def main():
    parser = argparse.ArgumentParser(description="Read a saved arXiv API Atom response.")
    parser.add_argument("file")
    parser.add_argument("--abstracts", action="store_true")
    parser.add_argument("--bibtex", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    try:
        total, papers = parse(args.file)
    except (OSError, ET.ParseError) as error:
        print(f"arxiv_feed: cannot read {args.file} as Atom XML: {error}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({"total_results": total, "papers": papers}, indent=2, ensure_ascii=False))
        return 0
    if args.bibtex:
        print("\n\n".join(bibtex(p) for p in papers))
        return 0
    for number, p in enumerate(papers, 1):
        authors = ", ".join(p["authors"][:4]) + (" et al." if len(p["authors"]) > 4 else "")
        revised = f" (revised {p['updated']})" if p["updated"] != p["published"] else ""
        print(f"{number}. [{p['id']}] {p['title']}")
        print(f"   {authors} | {p['published']}{revised} | {', '.join(p['categories'])}")
        print(f"   {p['abs_url']}  pdf: {p['pdf_url'] or '-'}")
        if p["journal"] or p["doi"]:
            print(f"   published: {p['journal'] or ''} {('doi:' + p['doi']) if p['doi'] else ''}".rstrip())
        if args.abstracts:
            print(f"   {p['abstract']}")
    print(f"{len(papers)} papers shown; {total} matched the query")
    return 0


if __name__ == "__main__":
    sys.exit(main())
