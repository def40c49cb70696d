#!/usr/bin/env python3
"""Every file the docs point at exists, and every link lands (issue 23, item 4).

For README.md and docs/*.md:
  - a Markdown link to a repository file, `[text](path)` or `[text](path#anchor)`,
    must name an existing file or folder (relative to the doc), and its anchor
    must be a heading of the target (GitHub's slugs);
  - a path written in backticks that starts at a top folder of the repository
    (`scripts/ci-45-unload.sh`, `Tests/mono/run.sh`, `samples/c-common/...h`)
    must exist. Build outputs (`out/`, `.build/`), placeholders (`<dataDir>`,
    `...`, `*`) and paths inside the Unity package (`Runtime/Plugins/`) are
    not checked: they are not files of this repository.
Prints one line per failure and a count per file; exits 1 on any failure.

Usage: python3 scripts/docs/check_doc_paths.py [file.md ...]
"""
import glob
import os
import re
import sys
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOP = ("include/", "Sources/", "Tests/", "samples/", "scripts/", "unity/", "bindings/", "testkit/",
       "docs/", "Fuzz/", "Benchmarks/", ".ci/")


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to '-'."""
    text = re.sub(r"`", "", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def anchors(path):
    seen, out = {}, set()
    in_code = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("```"):
                in_code = not in_code
            if in_code:
                continue
            m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
            if m:
                s = slug(m.group(1))
                n = seen.get(s, 0)
                out.add(s if n == 0 else "%s-%d" % (s, n))
                seen[s] = n + 1
    return out


def strip_code_blocks(text):
    """The prose of a Markdown file (fenced blocks blanked, line count kept)."""
    out, in_code = [], False
    for line in text.split("\n"):
        if line.startswith("```"):
            in_code = not in_code
            out.append("")
            continue
        out.append("" if in_code else line)
    return out


def check_file(path):
    rel = os.path.relpath(path, ROOT)
    base = os.path.dirname(path)
    with open(path, encoding="utf-8") as f:
        lines = strip_code_blocks(f.read())
    bad, links, paths = [], 0, 0
    for n, line in enumerate(lines, 1):
        for m in re.finditer(r"\]\(([^)\s]+)\)", line):
            target = m.group(1)
            if re.match(r"[a-z]+:", target):
                continue  # http(s), mailto
            links += 1
            file_part, _, anchor = target.partition("#")
            file_path = os.path.normpath(os.path.join(base, urllib.parse.unquote(file_part))) if file_part else path
            if not os.path.exists(file_path):
                bad.append((n, target, "no such file"))
                continue
            if anchor and file_path.endswith(".md") and anchor not in anchors(file_path):
                bad.append((n, target, "no heading with the anchor #" + anchor))
        for m in re.finditer(r"`([^`]+)`", line):
            if line[m.start() - 1:m.start()] == "[" and line[m.end():m.end() + 2] == "](":
                continue  # a link's label: the link itself is checked above
            for word in m.group(1).split():
                word = word.rstrip(",.;:)'\"").lstrip("('\"")
                if not word.startswith(TOP) or re.search(r"[<>*$…{}]|\.\.\.|OWNER", word):
                    continue
                paths += 1
                if not os.path.exists(os.path.join(ROOT, word)):
                    bad.append((n, word, "no such file in the repository"))
    for n, what, why in bad:
        print("doc paths: FAILED: %s:%d: %s: %s" % (rel, n, what, why))
    print("doc paths: %s: %d links, %d paths checked, %d broken" % (rel, links, paths, len(bad)))
    return len(bad)


def main(argv):
    files = argv or [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    failures = sum(check_file(p) for p in files)
    if failures:
        print("doc paths: FAILED: %d broken links or paths" % failures)
        return 1
    print("doc paths: every link and repository path in the docs exists")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
