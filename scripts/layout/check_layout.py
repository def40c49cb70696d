#!/usr/bin/env python3
"""IAPCore's parts and which may use which (issue 21, item 8).

Each folder of Sources/IAPCore is a part. A part uses another when one of
its files names a type, or a top-level function, declared in the other
(comments and string literals left out). The uses found must be exactly the
ones allowed below: a new one fails (a layer reaching up), and so does an
allowed one no longer found (this table would lie). `--print` shows the
uses with one example each.

Self-test (`--self-test`): a planted upward use is caught.
"""
import os, re, sys

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "Sources", "IAPCore")

# Lowest first. A part may use only parts listed for it.
ALLOWED = {
    "": set(),                                  # IAPError.swift, ByteBuffer.swift, IntKeyed.swift: every part's error type, the writers' buffer, integer-keyed tables
    "JSON": {""},
    "Runtime": {""},
    "Store": {"", "JSON", "Runtime"},
    "Storage": {"", "JSON", "Runtime", "Store"},
    "Messages": {"", "JSON", "Store", "Storage"},
    "Delivery": {"", "JSON", "Runtime", "Store", "Storage", "Messages"},
}
WHAT = {
    "": "the error type; the byte buffer the JSON writer and the record codec append to; integer-keyed tables",
    "JSON": "a strict JSON reader and writer, UTF-8 checks",
    "Runtime": "the OS: threads, executors, locks, clocks, POSIX files",
    "Store": "the store interface: Store, StoreEvent, a transaction's facts, the purchase token, the words messages carry",
    "Storage": "the outbox: record frames, the durable-log interface, typed facts, the v1 migration",
    "Messages": "every message the game is shown, as values and as JSON",
    "Delivery": "the Coordinator (by job), keys, the message queue, the config",
}

DECL = re.compile(r"^(?:@[\w()]+\s+)*(?:public |internal |fileprivate |private |final |indirect |nonisolated(?:\(unsafe\))? )*"
                  r"(?:class|struct|enum|protocol|typealias|actor|func|let|var)\s+(\w+)", re.M)
WORD = re.compile(r"\b[A-Za-z_]\w*\b")


def strip(text):
    """Source without comments and string literals."""
    text = re.sub(r'"""[\s\S]*?"""', '""', text)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*[\s\S]*?\*/", "", text)
    return re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)


def parts(root):
    out = {}
    for dirpath, _, files in os.walk(root):
        part = os.path.relpath(dirpath, root)
        part = "" if part == "." else part
        for f in sorted(files):
            if f.endswith(".swift"):
                out.setdefault(part, []).append(os.path.join(dirpath, f))
    return out


def top_level_names(text):
    """What a file declares at its top level (types, functions, constants):
    declarations starting in column 0. Members and nested types are reached
    through their type's name, so the type's name is the use."""
    return {m.group(1) for line in text.split("\n") for m in [DECL.match(line)] if m}


def uses(root, extra=None):
    ps = parts(root)
    texts = {p: {f: strip(open(f, encoding="utf-8").read()) for f in fs} for p, fs in ps.items()}
    if extra:
        for p, (f, t) in extra.items():
            texts.setdefault(p, {})[f] = t
    declared = {}
    for p, fs in texts.items():
        for t in fs.values():
            for n in top_level_names(t):
                declared.setdefault(n, p)
    found = {}
    for p, fs in texts.items():
        for f, t in fs.items():
            for w in set(WORD.findall(t)):
                q = declared.get(w)
                if q is not None and q != p:
                    found.setdefault((p, q), (os.path.basename(f), w))
    return ps, found


def check(found, known_parts):
    problems = []
    for part in sorted(known_parts):
        if part not in ALLOWED:
            problems.append(f"part '{part}' is not in the layout table")
    for (p, q), (f, w) in sorted(found.items()):
        if q not in ALLOWED.get(p, set()):
            problems.append(f"{p or 'IAPCore'} uses {q or 'IAPCore root'} ({f} names {w}): not allowed; a lower part must not reach up")
    for p, qs in ALLOWED.items():
        for q in qs:
            if p in known_parts and (p, q) not in found:
                problems.append(f"{p} is allowed to use {q or 'the root'} but does not: tighten the table")
    return problems


def main():
    if "--self-test" in sys.argv:
        _, found = uses(ROOT, {"Runtime": ("Planted.swift", "func planted() { _ = Coordinator.self }")})
        problems = check(found, set(ALLOWED))
        assert any("Runtime uses Delivery" in p for p in problems), problems
        print("layout self-test: a planted Runtime -> Delivery use is caught")
        return 0
    ps, found = uses(ROOT)
    if "--print" in sys.argv:
        for (p, q), (f, w) in sorted(found.items()):
            print(f"{p or 'root':9} -> {q or 'root':9}  e.g. {f}: {w}")
    problems = check(found, set(ps))
    for p in problems:
        print("layout: " + p)
    if problems:
        return 1
    n = sum(len(v) for v in ps.values())
    print(f"layout: IAPCore has {len(ps)} parts, {n} files; {len(found)} uses between parts, each allowed (lowest first: "
          + ", ".join((k or "root") for k in ALLOWED) + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
