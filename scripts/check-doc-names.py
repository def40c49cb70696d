#!/usr/bin/env python3
"""Every IAPBridge name the docs mention must exist (issue 23, item 9).

Reads README.md and docs/*.md and fails when
  - an `iap_*` identifier is not a function or type declared in
    include/iap_bridge.h (the sample helper iap_json_field counts when
    samples/c-common/iap_json_field.h defines it);
  - an `IAP_*` constant is not #defined there, unless it is an environment
    variable some script, test or source file reads;
  - a C# name of the Unity binding (`Bridge.Confirm`, `ErrorCode.NotSupported`,
    `bridge.DispatchPending`, an event such as `PurchaseReceived`) is not
    declared public in unity/com.iapbridge.sdk/Runtime/*.cs.
File names (`iap_bridge.h`, `iap_store.h`) are not identifiers and are skipped.
Prints one line per file and per failure; exits 1 on any failure.

Usage: python3 scripts/check-doc-names.py [file.md ...]   (default: README.md docs/*.md)
"""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADER = os.path.join(ROOT, "include", "iap_bridge.h")
SAMPLE_HELPER = os.path.join(ROOT, "samples", "c-common", "iap_json_field.h")
RUNTIME = os.path.join(ROOT, "unity", "com.iapbridge.sdk", "Runtime")
# Where an IAP_* environment variable must be read for a doc to name it.
CODE_DIRS = ["Sources", "Tests", "scripts", "Fuzz", "Benchmarks", "bindings", "samples", ".ci"]
AMBIGUOUS_TYPES = {"Message", "Offer"}
CODE_EXT = (".swift", ".c", ".h", ".hpp", ".cpp", ".sh", ".py", ".lua", ".cs", "run")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def strip_c_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def header_names():
    code = strip_c_comments(read(HEADER))
    defines = set(re.findall(r"#\s*define\s+(IAP_\w+)", code))
    functions = set(re.findall(r"\b(iap_\w+)\s*\(", code))
    types = set(re.findall(r"\b(iap_\w+)\b", code)) - functions  # typedef names, the struct tag
    return defines, functions | types


def sample_helper_names():
    """iap_* functions the samples' helper header and the Godot binding's C
    sources define (the Godot procedures GDScript calls by name)."""
    names = set()
    sources = [SAMPLE_HELPER] + sorted(glob.glob(os.path.join(ROOT, "bindings", "godot", "**", "*.c"), recursive=True))
    for path in sources:
        if os.path.exists(path):
            code = strip_c_comments(read(path))
            names.update(re.findall(r"\b(iap_\w+)\s*\(", code))
            # The Godot 3 procedures are declared through PROC(name): iap_gd_name.
            names.update("iap_gd_" + n for n in re.findall(r"^PROC\((\w+)\)", code, re.M))
    # Module and file names of the bindings and test kits (iap_bridge,
    # iap_testkit): a doc names them when it says what to import.
    for folder in ("bindings", "testkit"):
        for path in glob.glob(os.path.join(ROOT, folder, "**", "iap_*"), recursive=True):
            names.add(os.path.basename(path).split(".")[0])
    return names


def module_names():
    """iap_* modules a game imports by name: the Python and Lua files of the
    bindings and the test kit (`import iap_testkit`, `require("iap_bridge")`)."""
    names = set()
    for d in ("bindings", "testkit"):
        for path in glob.glob(os.path.join(ROOT, d, "**", "iap_*.*"), recursive=True):
            stem, ext = os.path.splitext(os.path.basename(path))
            if ext in (".py", ".lua"):
                names.add(stem)
    return names


def env_vars_read_by_code():
    """IAP_* names that code reads from the environment (getenv, ProcessInfo,
    environment[...], or a shell ${NAME...} / $NAME / NAME= assignment)."""
    found = set()
    for d in CODE_DIRS:
        for dirpath, _, files in os.walk(os.path.join(ROOT, d)):
            if "/.build" in dirpath:
                continue
            for name in files:
                if not name.endswith(CODE_EXT):
                    continue
                try:
                    text = read(os.path.join(dirpath, name))
                except (UnicodeDecodeError, OSError):
                    continue
                found.update(re.findall(r'getenv\("(IAP_\w+)"\)', text))
                found.update(re.findall(r'environment\["(IAP_\w+)"\]', text))
                found.update(re.findall(r'\$\{?(IAP_\w+)', text))
                found.update(re.findall(r'os\.environ(?:\.get)?[\[(]"(IAP_\w+)"', text))
                found.update(re.findall(r'-D(IAP_\w+)', text))  # compile-time switches (IAP_TEST_HOOKS)
    return found


def csharp_declarations():
    """Public type -> set of public member names, and the set of events."""
    types, events, all_members = {}, set(), set()
    for path in sorted(glob.glob(os.path.join(RUNTIME, "*.cs"))):
        text = read(path)
        # Types and the members declared in their bodies (by position: a
        # member belongs to the nearest type declared before it).
        decls = [(m.start(), m.group(1)) for m in
                 re.finditer(r"\bpublic\s+(?:static\s+|sealed\s+|abstract\s+)*(?:class|enum|struct)\s+(\w+)", text)]
        for m in re.finditer(r"\bpublic\s+(?:static\s+|readonly\s+|const\s+|override\s+|virtual\s+)*"
                             r"(?:event\s+)?[\w<>\[\],. ?]+?\s+(\w+)\s*(?=[({=;]|\{|$)", text, flags=re.M):
            owner = None
            for pos, name in decls:
                if pos < m.start():
                    owner = name
            member = m.group(1)
            all_members.add(member)
            if owner:
                types.setdefault(owner, set()).add(member)
        # enum members: `Name = value,` or `Name,` inside a public enum
        for em in re.finditer(r"\bpublic\s+enum\s+(\w+)\s*\{([^}]*)\}", text):
            members = re.findall(r"^\s*(\w+)\s*(?:=|,|$)", em.group(2), flags=re.M)
            types.setdefault(em.group(1), set()).update(members)
        events.update(re.findall(r"\bpublic\s+event\s+[\w<>]+\s+(\w+)", text))
        for _, name in decls:
            types.setdefault(name, set())
    return types, events, all_members


def identifiers(text):
    """(line number, token, next char) for every iap_/IAP_ token."""
    for lineno, line in enumerate(text.splitlines(), 1):
        for m in re.finditer(r"\b(iap_[a-z0-9_]*[a-z0-9]|IAP_[A-Z0-9_]*[A-Z0-9])\b", line):
            after = line[m.end():m.end() + 5]
            yield lineno, m.group(1), after


def main(argv):
    files = argv or [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    defines, c_names = header_names()
    helper = sample_helper_names()
    modules = module_names()
    env_vars = env_vars_read_by_code()
    cs_types, cs_events, cs_members = csharp_declarations()
    failures = 0
    for path in files:
        text = read(path)
        rel = os.path.relpath(path, ROOT)
        checked = set()
        bad = []
        for lineno, tok, after in identifiers(text):
            if re.match(r"\.(h|hpp|c|cpp|lua|py|so|a|md|log|txt)\b", after):
                continue  # a file name, not an identifier
            checked.add(tok)
            if tok.startswith("iap_"):
                if tok in c_names or tok in helper or tok in modules:
                    continue
                bad.append((lineno, tok, "not declared in include/iap_bridge.h"))
            else:
                if tok in defines or tok in env_vars:
                    continue
                bad.append((lineno, tok, "not #defined in include/iap_bridge.h, and no code reads it from the environment"))
        # C#: Type.Member for the binding's public types, bridge.Member (an
        # instance of Bridge), and events named ...Received / SheetClosed.
        # `Message` and `Offer` are also StoreKit's types (`Message.Reason`, `Transaction.Offer` in APPLE.md):
        # too ambiguous to check by name.
        owners = sorted((t for t in cs_types if t not in AMBIGUOUS_TYPES), key=len, reverse=True)
        type_pattern = r"\b(" + "|".join(owners) + r")\.([A-Z]\w*)" if owners else None
        for lineno, line in enumerate(text.splitlines(), 1):
            if type_pattern:
                for m in re.finditer(type_pattern, line):
                    if line[m.start() - 1:m.start()] == ".":
                        continue  # `Transaction.Offer.PaymentMode`: StoreKit's nested type, not the binding's
                    owner, member = m.group(1), m.group(2)
                    checked.add(owner + "." + member)
                    if member not in cs_types.get(owner, set()):
                        bad.append((lineno, owner + "." + member, "not a public member of " + owner + " in unity/com.iapbridge.sdk/Runtime"))
            for m in re.finditer(r"\bbridge\.([A-Z]\w*)", line):
                checked.add("Bridge." + m.group(1))
                if m.group(1) not in cs_types.get("Bridge", set()):
                    bad.append((lineno, "bridge." + m.group(1), "not a public member of Bridge in unity/com.iapbridge.sdk/Runtime"))
            for m in re.finditer(r"`(\w+(?:Received|Closed))`", line):
                checked.add(m.group(1))
                if m.group(1) not in cs_events:
                    bad.append((lineno, m.group(1), "no such event on Bridge in unity/com.iapbridge.sdk/Runtime"))
        for lineno, tok, why in bad:
            print("check-doc-names: FAILED: %s:%d: %s: %s" % (rel, lineno, tok, why))
        failures += len(bad)
        print("check-doc-names: %s: %d distinct names checked, %d unknown" % (rel, len(checked), len(bad)))
    if failures:
        print("check-doc-names: FAILED: %d unknown names" % failures)
        return 1
    print("check-doc-names: every iap_*, IAP_* and C# binding name in the docs exists")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
