#!/usr/bin/env python3
"""Checks docs/APPLE.md's table of the StoreKit APIs the backend uses against
Apple's iPhoneOS 26.2 StoreKit interface.

    python3 scripts/apple/check_api_table.py [INTERFACE] [--doc FILE] [--explain]

INTERFACE  the iPhoneOS 26.2 StoreKit .swiftinterface (default, relative to the
           repository root: .build-apple/sdk/iPhoneOS26.2.sdk/System/Library/
           Frameworks/StoreKit.framework/Modules/StoreKit.swiftmodule/
           arm64e-apple-ios.swiftinterface, which scripts/check-apple.sh
           unpacks with ../shared/apple-sdk/prepare.sh)
--doc      the document holding the table (default docs/APPLE.md)
--explain  also print, for every cited line, the availability the file gives it

The table is the first Markdown table after the heading that starts with
"## Every StoreKit API the backend uses". Its columns "API", "26.2 line" and
"availability" are read (others, such as notes, are not):

  API          names in backticks, `Owner.member`, `Owner.member(label:label:)`,
               `Owner.member(label: Type, label:)` (a type after a label must
               occur on the line too), `Owner<Arg>.member` (Arg must occur in
               the where clause of the enclosing extension), or a type
               `Owner.Type`. `.member` reuses the owner of the name before it.
  26.2 line    one line number per name, in the same order ("1143, 1144" or a
               range "2001-2005" for as many names)
  availability clauses separated by "; ", all checked against every name of
               the row:
                 "iOS 15.0, macOS 12.0, tvOS unavailable, macCatalyst 17.0"
                   introduced per platform, or unavailable; iOS, macOS and tvOS
                   (the platforms the package builds for) are required
                 "deprecated iOS 18.4, macOS 15.4"
                 "back-deployed before iOS 17.0, macOS 14.0"
                 "@MainActor"

For each name and its line the check is:
 - the line declares the member (`func|var|let|case|struct|enum|...` name),
   with the argument labels given, inside a scope whose qualified name ends
   with the owner (extensions and nested types are followed by brace depth);
 - the availability the file gives that declaration, from the attributes just
   above it and those of every enclosing scope (the innermost mention of a
   platform wins; `unavailable` anywhere wins; macCatalyst follows iOS unless
   named), matches the column: every platform the column names, and always
   iOS, macOS and tvOS; a deprecation or back-deployment the file declares
   for iOS, macOS or tvOS must be in the column; @MainActor both ways.
Prints one line per mismatch and exits 1; else
"api table: N rows, M cited lines, all match".
"""
import argparse, os, re, sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_INTERFACE = os.path.join(
    ".build-apple", "sdk", "iPhoneOS26.2.sdk", "System", "Library", "Frameworks",
    "StoreKit.framework", "Modules", "StoreKit.swiftmodule", "arm64e-apple-ios.swiftinterface")
HEADING = "## Every StoreKit API the backend uses"
PLATFORMS = ["iOS", "macOS", "tvOS", "macCatalyst", "watchOS", "visionOS"]
REQUIRED = ["iOS", "macOS", "tvOS"]
DECL_KEYWORDS = r"(?:func|var|let|case|struct|enum|class|protocol|actor|typealias|init)"
# A line of attributes only (a declaration may start with one: "@MainActor public func").
ATTRIBUTES_ONLY = re.compile(r"(?:@[\w.]+(?:\([^)]*\))?\s*)+")


def strip_strings(text):
    """Removes string literals and // comments (braces and commas in messages)."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', text)
    return re.sub(r"//.*", "", text)


def version_key(v):
    parts = [int(p) for p in v.split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


# ---------------------------------------------------------------------------
# The interface: scopes and attributes


def parse_block(block):
    """The @available and @backDeployed attributes of one attribute block. A
    block that names iOS but not macCatalyst gives macCatalyst the same (Swift
    falls back from Mac Catalyst to iOS per declaration)."""
    b = {"intro": {}, "unavailable": set(), "deprecated": {}, "backdeployed": {}, "mentioned": set()}
    for line in block:
        for attr, args in re.findall(r"@(available|backDeployed)\(([^)]*)\)", strip_strings(line)):
            parts = [p.strip() for p in args.split(",") if p.strip()]
            if attr == "backDeployed":
                if parts and parts[0].startswith("before:"):
                    parts[0] = parts[0][len("before:"):].strip()
                for p in parts:
                    plat, _, ver = p.partition(" ")
                    if plat in PLATFORMS and ver:
                        b["backdeployed"][plat] = ver.strip()
                continue
            head = parts[0] if parts else ""
            if head in PLATFORMS:
                # long form: @available(iOS, introduced: 15.0, deprecated: 18.4, message: "")
                b["mentioned"].add(head)
                for r in parts[1:]:
                    key, _, val = r.partition(":")
                    key, val = key.strip(), val.strip()
                    if key == "unavailable":
                        b["unavailable"].add(head)
                    elif key == "introduced":
                        b["intro"][head] = val
                    elif key == "deprecated":
                        b["deprecated"][head] = val
            else:
                # shorthand: @available(iOS 15.0, macOS 12.0, *)
                for p in parts:
                    plat, _, ver = p.partition(" ")
                    if plat in PLATFORMS and ver:
                        b["mentioned"].add(plat)
                        b["intro"][plat] = ver.strip()
    if "iOS" in b["mentioned"] and "macCatalyst" not in b["mentioned"]:
        b["mentioned"].add("macCatalyst")
        for key in ("intro", "deprecated"):
            if "iOS" in b[key]:
                b[key]["macCatalyst"] = b[key]["iOS"]
        if "iOS" in b["unavailable"]:
            b["unavailable"].add("macCatalyst")
    return b


class Interface:
    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            self.lines = f.read().split("\n")
        if self.lines and self.lines[-1] == "":
            self.lines.pop()
        self.scopes_at = []  # per line (0-based): the scope stack when the line starts
        self._scan()

    def _scan(self):
        stack = []  # entries: None (anonymous) or dict(path, header, line)
        header_re = re.compile(
            r"^\s*(?:@[\w.]+(?:\([^)]*\))?\s+)*(?:(?:public|internal|private|fileprivate|open|final|indirect)\s+)*"
            r"(struct|enum|class|protocol|actor|extension)\s+([\w.]+)")
        for i, raw in enumerate(self.lines):
            self.scopes_at.append([s for s in stack if s is not None])
            text = strip_strings(raw)
            m = header_re.match(text)
            first_open = True
            for ch in text:
                if ch == "{":
                    entry = None
                    if m and first_open:
                        kind, name = m.group(1), m.group(2)
                        comps = [c for c in name.split(".") if c != "StoreKit"]
                        if kind == "extension":
                            path = comps
                        else:
                            named = [s for s in stack if s is not None]
                            path = (named[-1]["path"] if named else []) + comps
                        entry = {"path": path, "header": text, "line": i}
                    first_open = False
                    stack.append(entry)
                elif ch == "}":
                    if stack:
                        stack.pop()

    def attribute_block(self, i):
        """The attribute lines just above line i (0-based), plus line i itself."""
        out = [self.lines[i]]
        j = i - 1
        while j >= 0 and ATTRIBUTES_ONLY.fullmatch(strip_strings(self.lines[j]).strip()):
            out.append(self.lines[j])
            j -= 1
        return out

    def availability(self, i):
        """Effective availability of the declaration on line i (0-based)."""
        blocks = [self.attribute_block(i)]
        for scope in reversed(self.scopes_at[i]):
            blocks.append(self.attribute_block(scope["line"]))
        intro, unavailable, deprecated, backdeployed = {}, set(), {}, {}
        for block in blocks:  # innermost first: the innermost mention of a platform wins
            b = parse_block(block)
            for plat in b["mentioned"]:
                if plat in b["unavailable"]:
                    unavailable.add(plat)
                if plat in b["intro"]:
                    intro.setdefault(plat, b["intro"][plat])
                if plat in b["deprecated"]:
                    deprecated.setdefault(plat, b["deprecated"][plat])
            for plat, ver in b["backdeployed"].items():
                backdeployed.setdefault(plat, ver)
        main_actor = any("MainActor" in l for l in blocks[0])
        return {"intro": intro, "unavailable": unavailable, "deprecated": deprecated,
                "backdeployed": backdeployed, "main_actor": main_actor}


def describe(av):
    items = []
    for p in PLATFORMS:
        if p in av["unavailable"]:
            items.append(p + " unavailable")
        elif p in av["intro"]:
            items.append(p + " " + av["intro"][p])
    out = [", ".join(items)]
    if av["deprecated"]:
        out.append("deprecated " + ", ".join(f"{p} {v}".strip() for p, v in av["deprecated"].items()))
    if av["backdeployed"]:
        out.append("back-deployed before " + ", ".join(f"{p} {v}" for p, v in av["backdeployed"].items()))
    if av["main_actor"]:
        out.append("@MainActor")
    return "; ".join(out)


# ---------------------------------------------------------------------------
# The table


def split_name(name):
    """`Owner.member(labels)` -> (owner components, generic args, member, labels or None)."""
    depth, cut = 0, -1
    for k, ch in enumerate(name):
        if ch in "(<":
            depth += 1
        elif ch in ")>":
            depth -= 1
        elif ch == "." and depth == 0:
            cut = k
    owner_text, member = (name[:cut], name[cut + 1:]) if cut >= 0 else ("", name)
    labels = None
    m = re.match(r"^(\w+)\((.*)\)$", member)
    if m:
        member = m.group(1)
        inner = m.group(2).strip()
        labels = []
        if inner:
            if ":" in inner and "," not in inner and inner.count(":") > 1:
                # compact form for:in: -> ["for", "in"]
                labels = [(l, None) for l in inner.split(":") if l]
            else:
                for part in inner.split(","):
                    label, _, typ = part.strip().partition(":")
                    labels.append((label.strip(), typ.strip() or None))
    owner, generics = [], []
    for comp in [c for c in owner_text.split(".") if c]:
        g = re.match(r"^(\w+)<(.*)>$", comp)
        if g:
            owner.append(g.group(1))
            generics += [a.strip() for a in g.group(2).split(",")]
        else:
            owner.append(comp)
    return owner, generics, member, labels


def parse_lines(cell):
    out = []
    for part in re.split(r"[,\s]+", cell.strip()):
        if not part:
            continue
        r = re.match(r"^(\d+)[-\u2013](\d+)$", part)
        if r:
            a, b = int(r.group(1)), int(r.group(2))
            if b < a:
                raise ValueError(f"range {part} runs backwards")
            out += list(range(a, b + 1))
        elif part.isdigit():
            out.append(int(part))
        else:
            raise ValueError(f"not a line number: {part!r}")
    return out


def parse_availability(cell):
    want = {"intro": {}, "unavailable": set(), "deprecated": {}, "backdeployed": {}, "main_actor": False}
    for clause in [c.strip() for c in cell.split(";") if c.strip()]:
        if clause == "@MainActor":
            want["main_actor"] = True
            continue
        key = None
        for prefix, k in (("deprecated ", "deprecated"), ("back-deployed before ", "backdeployed")):
            if clause.startswith(prefix):
                key, clause = k, clause[len(prefix):]
        for item in [i.strip() for i in clause.split(",") if i.strip()]:
            plat, _, val = item.partition(" ")
            val = val.strip()
            if plat not in PLATFORMS or not val:
                raise ValueError(f"cannot read {item!r} (a platform and a version, or 'unavailable')")
            if key:
                want[key][plat] = val
            elif val == "unavailable":
                want["unavailable"].add(plat)
            elif re.match(r"^\d+(\.\d+)*$", val):
                want["intro"][plat] = val
            else:
                raise ValueError(f"cannot read {item!r}")
    return want


def read_table(doc_path):
    with open(doc_path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    start = next((k for k, l in enumerate(lines) if l.startswith(HEADING)), None)
    if start is None:
        raise SystemExit(f"api table: FAILED: no heading starting with {HEADING!r} in {doc_path}")
    k = start + 1
    while k < len(lines) and not lines[k].startswith("|"):
        if lines[k].startswith("## "):
            raise SystemExit(f"api table: FAILED: no table under {HEADING!r} in {doc_path}")
        k += 1
    rows = []
    while k < len(lines) and lines[k].startswith("|"):
        rows.append((k + 1, [c.strip() for c in lines[k].strip().strip("|").split("|")]))
        k += 1
    if len(rows) < 3:
        raise SystemExit(f"api table: FAILED: the table under {HEADING!r} has no rows")
    header = [h.lower() for h in rows[0][1]]
    try:
        col = {name: header.index(name) for name in ("api", "26.2 line", "availability")}
    except ValueError:
        raise SystemExit(f"api table: FAILED: the table needs the columns API, 26.2 line and availability (has {rows[0][1]})")
    return [(n, cells, col) for n, cells in rows[2:]]


# ---------------------------------------------------------------------------
# The checks


def declared_labels(text, member):
    """The external argument labels of `member(...)` on a declaration line, or
    None when the member has no parameter list there."""
    m = re.search(r"\b" + re.escape(member) + r"\s*(?:<[^>]*>)?\s*\(", text)
    if not m:
        return None
    depth, k, params, cur = 1, m.end(), [], ""
    while k < len(text) and depth:
        ch = text[k]
        if ch in "([<":
            depth += 1
        elif ch in ")]>" and not (ch == ">" and text[k - 1] == "-"):
            depth -= 1
        if depth == 1 and ch == ",":
            params.append(cur)
            cur = ""
        elif depth:
            cur += ch
        k += 1
    if cur.strip():
        params.append(cur)
    return [p.split(":", 1)[0].split()[0] for p in params if p.strip()]


def check_declaration(iface, lineno, owner, generics, member, labels):
    """Problems with `member` being declared on line `lineno` (1-based)."""
    problems = []
    text = strip_strings(iface.lines[lineno - 1])
    decl = re.search(r"\b(" + DECL_KEYWORDS + r")\s+" + re.escape(member) + r"\b", text)
    if not decl:
        return [f"does not declare `{member}`: {iface.lines[lineno - 1].strip()}"]
    if labels is None and decl.group(1) in ("func", "init"):
        problems.append(f"`{member}` is a function here: name it with its labels, `{member}(...)`")
    if labels is not None:
        declared = declared_labels(text, member)
        wanted = [label for label, _ in labels]
        if declared is None:
            problems.append(f"`{member}` takes no argument list here")
        elif declared != wanted:
            problems.append(f"argument labels here are ({''.join(l + ':' for l in declared)}), "
                            f"the table says ({''.join(l + ':' for l in wanted)})")
        for _, typ in labels:
            if typ and typ not in text:
                problems.append(f"no `{typ}` on the line")
    scopes = iface.scopes_at[lineno - 1]
    path = scopes[-1]["path"] if scopes else []
    if owner and path[-len(owner):] != owner:
        problems.append(f"declared in {'.'.join(path) or 'the top level'}, not in {'.'.join(owner)}")
    if generics:
        header = scopes[-1]["header"] if scopes else ""
        for g in generics:
            if not re.search(r"\b" + re.escape(g) + r"\b", header.split(" where ", 1)[-1] if " where " in header else ""):
                problems.append(f"the enclosing extension is not constrained to {g}: {header.strip()}")
    return problems


def check_availability(have, want):
    problems = []
    for plat in PLATFORMS:
        stated = plat in want["intro"] or plat in want["unavailable"]
        if not stated and plat not in REQUIRED:
            continue
        h = "unavailable" if plat in have["unavailable"] else have["intro"].get(plat)
        w = "unavailable" if plat in want["unavailable"] else want["intro"].get(plat)
        if not stated:
            problems.append(f"{plat} not stated (the file: {h or 'nothing'})")
        elif h is None:
            problems.append(f"{plat} {w} stated, the file declares no {plat} availability")
        elif (h == "unavailable") != (w == "unavailable") or (h != "unavailable" and version_key(h) != version_key(w)):
            problems.append(f"{plat} {w} stated, the file says {plat} {h}")
    for key, word in (("deprecated", "deprecated"), ("backdeployed", "back-deployed before")):
        for plat in PLATFORMS:
            h, w = have[key].get(plat), want[key].get(plat)
            if w is not None and h is None:
                problems.append(f"'{word} {plat} {w}' stated, the file declares none")
            elif w is not None and version_key(h or "0") != version_key(w):
                problems.append(f"'{word} {plat} {w}' stated, the file says {h}")
            elif w is None and h is not None and plat in REQUIRED:
                problems.append(f"the file declares '{word} {plat} {h}', the table does not")
    if have["main_actor"] != want["main_actor"]:
        problems.append("@MainActor in the file, not in the table" if have["main_actor"] else
                        "@MainActor in the table, not in the file")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("interface", nargs="?", default=os.path.join(ROOT, DEFAULT_INTERFACE))
    ap.add_argument("--doc", default=os.path.join(ROOT, "docs", "APPLE.md"))
    ap.add_argument("--explain", action="store_true")
    args = ap.parse_args()
    if not os.path.isfile(args.interface):
        raise SystemExit(f"api table: FAILED: no interface at {args.interface} "
                         "(scripts/check-apple.sh unpacks it there; or run: bash ../shared/apple-sdk/prepare.sh .build-apple/sdk)")
    iface = Interface(args.interface)
    head = "\n".join(iface.lines[:5])
    if "apple-ios26.2" not in head or "-module-name StoreKit" not in head:
        raise SystemExit(f"api table: FAILED: {args.interface} is not the iPhoneOS 26.2 StoreKit interface")
    failures, rows, cited = [], 0, 0
    for docline, cells, col in read_table(args.doc):
        rows += 1
        where = f"{os.path.basename(args.doc)}:{docline}"
        try:
            names = re.findall(r"`([^`]+)`", cells[col["api"]])
            numbers = parse_lines(cells[col["26.2 line"]])
            want = parse_availability(cells[col["availability"]])
        except (IndexError, ValueError) as e:
            failures.append(f"{where}: {e}")
            continue
        if not names:
            failures.append(f"{where}: no API name in backticks")
            continue
        if len(names) != len(numbers):
            failures.append(f"{where}: {len(names)} names but {len(numbers)} line numbers")
            continue
        owner = []
        for name, n in zip(names, numbers):
            cited += 1
            if name.startswith("."):
                if not owner:
                    failures.append(f"{where}: `{name}` needs a name with an owner before it in the row")
                    continue
                name = ".".join(owner) + name
            o, generics, member, labels = split_name(name)
            owner = [c if not generics or c != o[-1] else f"{c}<{', '.join(generics)}>" for c in o]
            label = f"{where}: `{name}` at 26.2:{n}"
            if not 1 <= n <= len(iface.lines):
                failures.append(f"{label}: the file has {len(iface.lines)} lines")
                continue
            have = iface.availability(n - 1)
            if args.explain:
                print(f"26.2:{n} {name}: {describe(have)}")
            for p in check_declaration(iface, n, o, generics, member, labels) + check_availability(have, want):
                failures.append(f"{label}: {p}")
    for f in failures:
        print("api table: MISMATCH " + f)
    if failures:
        print(f"api table: {rows} rows, {cited} cited lines, {len(failures)} mismatch(es)", file=sys.stderr)
        return 1
    print(f"api table: {rows} rows, {cited} cited lines, all match")
    return 0


if __name__ == "__main__":
    sys.exit(main())
