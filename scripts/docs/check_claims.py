#!/usr/bin/env python3
"""The docs' facts about this project against its sources (issue 23, item 4).

Reads README.md and docs/{SIMULATOR,PROTOCOL,INTEGRATION,CONTRACT,TESTKIT}.md
and compares, without building anything:
  - the simulator ops of SIMULATOR.md's table with the cases of its command
    dispatcher (Sources/IAPSimulator/*Commands.swift), both ways, and every
    argument the table names with a key those files read;
  - every `"simulator": {...}` / `"storekit": {...}` key the docs write with
    the keys the config parsers accept, and every key they accept is documented;
  - the error tables (README.md, INTEGRATION.md) with include/iap_bridge.h and
    the C# ErrorCode constants;
  - the message types of README.md's and PROTOCOL.md's tables with
    docs/schemas/*.json; every JSON example of PROTOCOL.md against its schema;
    the "7" result table, the subscription states, the sheet outcomes, the
    pending reasons and the error ops with the schemas' enums and the code;
  - numbers and defaults (claims.py's NUMBERS: a doc regex and a source regex
    each) and the commands the README names (Package.swift products, scripts).
Prints one line per claim ("ok" or "FAILED"); exits 1 on any failure.
Run by scripts/ci-05-docs.sh; scripts/docs/check_runtime_claims.py checks
the behaviour behind some of the same claims on the library.
"""
import glob
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from claims_numbers import NUMBERS  # noqa: E402
from schema_check import schema_errors  # noqa: E402

ROOT = os.environ.get("IAP_CLAIMS_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
results = []


def read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


def claim(name, problems):
    """Records one claim; `problems` is a list of strings (empty: it holds)."""
    results.append((name, list(problems)))
    print("claims: %s: %s%s" % ("ok" if not problems else "FAILED", name,
                                "" if not problems else ": " + "; ".join(problems)))


def table_rows(text, header_start):
    """The rows (lists of cells) of the Markdown table whose header line starts with header_start."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.startswith(header_start):
            rows = []
            for row in lines[i + 2:]:
                if not row.startswith("|"):
                    break
                rows.append([c.strip() for c in row.strip().strip("|").split("|")])
            return rows
    return []


def ticked(cell):
    return re.findall(r"`([^`]+)`", cell)


def section(text, heading):
    start = text.index(heading)
    nxt = text.find("\n## ", start + len(heading))
    return text[start:] if nxt < 0 else text[start:nxt]


def diff(what_a, a, what_b, b):
    out = []
    name = lambda x: " ".join(x) if isinstance(x, tuple) else x
    if a - b:
        out.append("%s but not %s: %s" % (what_a, what_b, ", ".join(name(x) for x in sorted(a - b))))
    if b - a:
        out.append("%s but not %s: %s" % (what_b, what_a, ", ".join(name(x) for x in sorted(b - a))))
    return out


# ---------------------------------------------------------------- simulator ops
sim_doc = read("docs/SIMULATOR.md")
sim_src = "".join(read(p) for p in sorted(glob.glob(os.path.join(ROOT, "Sources/IAPSimulator/*Commands.swift"))))
op_rows = table_rows(sim_doc, "| op |")
doc_ops = {ticked(r[0])[0] for r in op_rows}
src_ops = set()
for m in re.finditer(r"^\s*case ((?:\"\w+\"(?:, )?)+):", sim_src, re.M):
    src_ops.update(re.findall(r"\"(\w+)\"", m.group(1)))
claim("SIMULATOR.md's op table lists exactly the ops the simulator's dispatcher handles (%d)" % len(doc_ops),
      diff("in SIMULATOR.md", doc_ops, "in Sources/IAPSimulator/*Commands.swift", src_ops))
arg_problems = []
for r in op_rows:
    for arg in re.findall(r"(?<!e\.g\. )`\"(\w+)\"`", r[1]):
        if '"%s"' % arg not in sim_src:
            arg_problems.append("%s: argument \"%s\" is not read by the dispatcher" % (ticked(r[0])[0], arg))
claim("every argument SIMULATOR.md's op table names is read by the dispatcher", arg_problems)
others = set()
for rel in ["README.md", "docs/INTEGRATION.md", "docs/PROTOCOL.md", "docs/TESTKIT.md", "docs/MIGRATING.md", "docs/SIMULATOR.md"]:
    text = read(rel)
    others.update(re.findall(r"\{\\?\"op\\?\":\s*\\?\"(\w+)", text))
    for m in re.finditer(r"(?:simulator(?:'s)? ops?|simulator op) ((?:`\w+`(?:, | and | or )?)+)", text):
        others.update(ticked(m.group(1)))
claim("every op the other docs name (%d) is one the dispatcher handles" % len(others),
      ["unknown op %s" % o for o in sorted(others - src_ops)])

# ---------------------------------------------------------------- config keys
def known_keys(rel):
    m = re.search(r"let known: Set<String> = \[([^\]]*)\]", read(rel))
    return set(re.findall(r"\"(\w+)\"", m.group(1)))


top_keys = known_keys("Sources/IAPCore/Delivery/BridgeConfig.swift")
sim_keys = known_keys("Sources/IAPSimulator/SimulatorOptions.swift")
sk_keys = known_keys("Sources/IAPStoreKit/StoreKitOptions.swift")
docs_text = {rel: read(rel) for rel in ["README.md"] + ["docs/%s.md" % n for n in
             ("INTEGRATION", "SIMULATOR", "PROTOCOL", "CONTRACT", "TESTKIT", "MIGRATING", "APPLE", "DURABILITY", "HARDENING")]}
written = {"simulator": set(), "storekit": set()}
for text in docs_text.values():
    for obj in ("simulator", "storekit"):
        for m in re.finditer(r"\"%s\":\s*\{([^}`]*)" % obj, text):
            written[obj].update(re.findall(r"\"(\w+)\":", m.group(1)))
claim("every \"simulator\" key the docs write is one SimulatorOptions accepts",
      ["\"simulator\".\"%s\" is not accepted" % k for k in sorted(written["simulator"] - sim_keys)])
claim("every \"storekit\" key the docs write is one StoreKitOptions accepts",
      ["\"storekit\".\"%s\" is not accepted" % k for k in sorted(written["storekit"] - sk_keys)])
all_docs = "\n".join(docs_text.values()) + read("include/iap_bridge.h")
claim("every config key the parsers accept (%d) is documented in the docs or the header" % len(top_keys | sim_keys | sk_keys),
      ["\"%s\" is documented nowhere" % k for k in sorted(top_keys | sim_keys | sk_keys) if '"%s"' % k not in all_docs])

# ---------------------------------------------------------------- error codes
header = read("include/iap_bridge.h")
h_codes = {name: int(v) for name, v in re.findall(r"#define (IAP_E_\w+)\s+\((-\d+)\)", header)}
cs = read("unity/com.iapbridge.sdk/Runtime/BridgeException.cs")
cs_codes = {name: int(v) for name, v in re.findall(r"public const int (\w+) = (-?\d+);", cs)}
for rel, start in (("README.md", "| code | name |"), ("docs/INTEGRATION.md", "| code | name (`ErrorCode.`) |")):
    rows = table_rows(read(rel), start)
    problems, named = [], set()
    for r in rows:
        code, names = int(r[0]), ticked(r[1])
        named.add(names[0])
        if h_codes.get(names[0]) != code:
            problems.append("%s is %s in the header, %d here" % (names[0], h_codes.get(names[0]), code))
        if len(names) > 1 and cs_codes.get(names[1]) != code:
            problems.append("ErrorCode.%s is %s in BridgeException.cs, %d here" % (names[1], cs_codes.get(names[1]), code))
    problems += ["missing %s" % n for n in sorted(set(h_codes) - named)]
    claim("%s's error table: every code of the header, with its number%s" % (rel, " and C# name" if "INTEGRATION" in rel else ""), problems)
problems = []
for rel, text in docs_text.items():
    for name, num in re.findall(r"`(IAP_E_\w+)` \((-\d+)\)", text):
        if h_codes.get(name) != int(num):
            problems.append("%s: %s (%s)" % (rel, name, num))
    for name, num in re.findall(r"`ErrorCode\.(\w+)` \((-\d+)\)", text):
        if cs_codes.get(name) != int(num):
            problems.append("%s: ErrorCode.%s (%s)" % (rel, name, num))
claim("every \"NAME (number)\" error code in the prose matches the header and the C# constants", problems)

# ---------------------------------------------------------------- messages
schemas = {}
for path in glob.glob(os.path.join(ROOT, "docs/schemas/*.schema.json")):
    s = json.load(open(path, encoding="utf-8"))
    schemas[s["properties"]["type"]["const"]] = s
proto = read("docs/PROTOCOL.md")
readme = read("README.md")
proto_types = {ticked(r[0])[0].strip('"') for r in table_rows(proto, "| type | when |")}
readme_types = {ticked(r[0])[0].strip('"') for r in table_rows(readme, "| type | what |")}
claim("PROTOCOL.md's message table lists exactly the types of docs/schemas (%d)" % len(schemas),
      diff("in PROTOCOL.md", proto_types, "in docs/schemas", set(schemas)))
claim("README.md's message table lists exactly the types of docs/schemas",
      diff("in README.md", readme_types, "in docs/schemas", set(schemas)))
stored = {ticked(r[0])[0].strip('"') for r in table_rows(proto, "| type | when |") if "**yes**" in r[2]}
readme_confirm = {ticked(r[0])[0].strip('"') for r in table_rows(readme, "| type | what |") if "**yes**" in r[2]}
claim("the types to confirm are \"7\" and \"revoked\", in both tables",
      diff("PROTOCOL.md", stored, "the contract", {"7", "revoked"}) + diff("README.md", readme_confirm, "the contract", {"7", "revoked"}))
problems, examples = [], 0
for block in re.findall(r"```json\n(.*?)```", proto, re.S):
    try:
        value = json.loads(block)
    except ValueError as e:
        problems.append("an example does not parse (%s): %s" % (e, block[:60]))
        continue
    examples += 1
    schema = schemas.get(value.get("type"))
    if schema is None:
        problems.append("example of unknown type %r" % value.get("type"))
        continue
    problems += ["\"%s\" example: %s" % (value["type"], e) for e in schema_errors(value, schema)]
claim("every JSON example of PROTOCOL.md (%d) parses and validates against its schema" % examples, problems)
problems = []
for t, head in (("7", "## \"7\""), ("subscription", "## \"subscription\"")):
    sec = section(proto, head)
    documented = {x for r in table_rows(sec, "| field |") for x in ticked(r[0])}
    # A top-level field described in the prose ("`reason`: `open` ...").
    documented |= {f for f in re.findall(r"`(\w+)`: ", sec) if f in schemas[t]["properties"] and f != "type"}
    props = set(schemas[t]["properties"]) - {"type"}
    if t == "subscription":
        props = (props - {"groups"}) | set(schemas[t]["properties"]["groups"]["items"]["properties"])
    problems += ["\"%s\": %s" % (t, p) for p in diff("in the field table", documented, "in the schema", props)]
claim("PROTOCOL.md's field tables of \"7\" and \"subscription\" list exactly their schemas' fields", problems)

# "7" results: PROTOCOL.md's table, the schema and the code (Store.swift's PurchaseFailure).
rows = table_rows(proto, "| `result` | `resultName` |")
doc_results = {(ticked(r[0])[0].strip('"'), ticked(r[1])[0]) for r in rows}
store = read("Sources/IAPCore/Store/Store.swift")
# PurchaseFailure.resultText: `case .cancelled: return ("1", "cancelled")`.
code_results = {("0", "success"), ("6", "unverified")} | set(re.findall(r"case \.\w+: return \(\"(\d)\", \"(\w+)\"\)", store))
code_count = ["found %d results in Store.swift's PurchaseFailure.resultText, not 9: has its form changed?" % len(code_results)] \
    if len(code_results) != 9 else []
s7 = schemas["7"]["properties"]
claim("PROTOCOL.md's result table: the codes and names the code sends (Store.swift) and 7.schema.json allows",
      code_count + diff("in PROTOCOL.md", doc_results, "in Store.swift", code_results)
      + diff("codes in PROTOCOL.md", {c for c, _ in doc_results}, "in the schema", set(s7["result"]["enum"]))
      + diff("names in PROTOCOL.md", {n for _, n in doc_results}, "in the schema", set(s7["resultName"]["enum"])))
readme_results = set(re.findall(r"`\"(\d)\"` ([a-z][a-z ]+?)[,)]", "".join(r[1] for r in table_rows(readme, "| type | what |") if r[0] == '`"7"`')))
claim("README.md's \"7\" row names the results as PROTOCOL.md does",
      ["%s %s" % x for x in sorted(readme_results) if (x[0], {"network error": "networkError", "not allowed": "notAllowed",
       "product unavailable": "productUnavailable", "unverified": "unverified"}.get(x[1], x[1])) not in doc_results])


def enum_of(schema, *path):
    node = schema
    for p in path:
        node = node["properties"][p] if p != "[]" else node["items"]
    return set(node["enum"])


sub = section(proto, "## \"subscription\"")
sheet = section(proto, "## \"sheet\"")
claim("PROTOCOL.md's subscription states are the schema's",
      diff("in PROTOCOL.md", {ticked(r[0])[0] for r in table_rows(sub, "| `state` | meaning |")}, "in the schema",
           enum_of(schemas["subscription"], "groups", "[]", "state")))
claim("PROTOCOL.md's sheet outcomes are the schema's",
      diff("in PROTOCOL.md", {ticked(r[0])[0] for r in table_rows(sheet, "| `outcome` |")}, "in the schema",
           enum_of(schemas["sheet"], "outcome")))
pend = section(proto, "## \"pending\"")
claim("PROTOCOL.md's pending reasons are the schema's",
      diff("in PROTOCOL.md", set(re.findall(r"`(\w+)` \(", pend.split("`reason` is", 1)[1].split("Show \"waiting")[0])), "in the schema",
           enum_of(schemas["pending"], "reason")))
err = section(proto, "## \"error\"")
doc_ops_err = set(re.findall(r"(?:^\s*|\), |, )`(\w+)`", err.split("`op` says what failed:", 1)[1].split("`key` and `productID` are present when")[0]))
claim("PROTOCOL.md's error ops are the schema's",
      diff("in PROTOCOL.md", doc_ops_err, "in the schema", enum_of(schemas["error"], "op")))

# ---------------------------------------------------------------- numbers and defaults
for name, doc, doc_re, src, src_re in NUMBERS:
    problems = []
    if not re.search(doc_re, read(doc), re.S):
        problems.append("%s no longer says it (/%s/)" % (doc, doc_re))
    if not re.search(src_re, read(src), re.S | re.M):
        problems.append("%s does not (/%s/)" % (src, src_re))
    claim(name, problems)

# ---------------------------------------------------------------- commands
package = read("Package.swift")
products = set(re.findall(r"\.executable(?:Target)?\(\s*name: \"([\w-]+)\"", package))
problems = []
for rel, text in docs_text.items():
    for exe in re.findall(r"swift run ([\w-]+)", text):
        if exe not in products:
            problems.append("%s: swift run %s: no such executable in Package.swift" % (rel, exe))
claim("every `swift run X` of the docs names an executable of Package.swift", problems)
problems, n = [], 0
for rel, text in docs_text.items():
    for m in re.finditer(r"`(?:[A-Z_]+=\S+ )*(?:bash )?((?:scripts|Tests|samples|bindings|testkit)/[\w/.-]+\.sh)((?: [^`]*)?)`", text):
        n += 1
        script, args = m.group(1), m.group(2)
        body = read(script) if os.path.exists(os.path.join(ROOT, script)) else None
        if body is None:
            problems.append("%s: %s does not exist" % (rel, script))
            continue
        for flag in re.findall(r"(--[\w-]+)", args):
            if flag not in body:
                problems.append("%s: %s does not take %s" % (rel, script, flag))
claim("every script command of the docs (%d) exists and takes the options written" % n, problems)
problems, n = [], 0
for rel, text in docs_text.items():
    for script, step in re.findall(r"`(?:bash )?([\w/.-]+\.sh)` \([^()]*?run by `(scripts/ci-[\w-]+\.sh)`\)", text):
        n += 1
        if script not in read(step):
            problems.append("%s: %s does not run %s" % (rel, step, script))
claim("every \"X (... run by scripts/ci-NN.sh)\" of the docs (%d): that step runs X" % n, problems)
# ---------------------------------------------------------------- the test kits' names
testkit = read("docs/TESTKIT.md")
kits = {
    "C (testkit/c/iap_testkit.h)": (set(re.findall(r"\b(iaptk_\w+)", testkit)), read("testkit/c/iap_testkit.h"), r"\b%s\b"),
    "Python (testkit/python/iap_testkit.py)": (set(re.findall(r"\b(?:kit|tk|iap_testkit)\.([a-z_]+)\(", section(testkit, "## Python"))),
                                               read("testkit/python/iap_testkit.py"), r"def %s\("),
    "Lua (testkit/lua/iap_testkit.lua)": (set(re.findall(r"\b(?:kit:|tk\.|require\(\"iap_testkit\"\)\.)([a-z_]+)\(", section(testkit, "## Lua"))),
                                         read("testkit/lua/iap_testkit.lua"), r"(?:function [\w.:]*\b%s\b|\b%s\s*=\s*function)"),
    "C# (unity/com.iapbridge.sdk/Testing)": (set(re.findall(r"\bkit\.([A-Z]\w+)\(", testkit)) | set(re.findall(r"\bStoreTestKit\.([A-Z]\w+)\(", testkit)),
                                            "".join(read(os.path.relpath(q, ROOT)) for q in glob.glob(os.path.join(ROOT, "unity/com.iapbridge.sdk/Testing/*.cs"))),
                                            r"public [\w<>\[\] ]*\b%s\s*\("),
}
for kit, (names, source, pattern) in kits.items():
    missing = [n for n in sorted(names) if not re.search(pattern.replace("%s", re.escape(n)), source)]
    claim("TESTKIT.md: every %s name it uses (%d) is defined there" % (kit, len(names)), ["%s is not defined" % n for n in missing] if names else ["no names found"])

# ---------------------------------------------------------------- the Unity sample
integration = read("docs/INTEGRATION.md")
step3 = integration.split("**3. Import the example.**", 1)[1].split("**4.", 1)[0]
sample_files = re.findall(r"`([\w.]+\.(?:cs|storekit))`", step3)
claim("INTEGRATION.md: the Example Store sample holds the files the import copies (%s)" % ", ".join(sample_files),
      ["missing %s" % f for f in sample_files if not os.path.exists(os.path.join(ROOT, "unity/com.iapbridge.sdk/Samples~/Example Store", f))]
      or ([] if len(sample_files) >= 4 else ["fewer than 4 files named"]))
example = read("unity/com.iapbridge.sdk/Samples~/Example Store/IAPStoreExample.cs")
claim("INTEGRATION.md: the example keeps iap/, iap-appstore/ and example-save.txt in persistentDataPath",
      [f for f in ("\"iap\"", "\"iap-appstore\"", "\"example-save.txt\"") if f not in example]
      + ([] if "`iap/` (the SDK's outbox), `iap-appstore/`" in integration and "`example-save.txt` (the game's save)" in integration else ["INTEGRATION.md no longer says it"]))

# ---------------------------------------------------------------- docs/CLAIMS.md's tests exist
if os.path.exists(os.path.join(ROOT, "docs/CLAIMS.md")):
    swift = {os.path.relpath(q, ROOT): read(os.path.relpath(q, ROOT)) for q in glob.glob(os.path.join(ROOT, "Tests/**/*.swift"), recursive=True)}
    named, problems = set(re.findall(r"`(\w+Tests)(?:\.(\w+))?`", read("docs/CLAIMS.md"))), []
    for suite, func in sorted(named):
        holders = [t for t in swift.values() if re.search(r"\b(?:struct|final class|class|enum) %s\b" % suite, t)]
        if not holders:
            problems.append("no suite %s in Tests/" % suite)
        elif func and not any(re.search(r"func %s\(" % func, t) for t in holders):
            problems.append("no test %s.%s" % (suite, func))
    claim("every Swift test docs/CLAIMS.md names (%d) exists" % len(named), problems)

failed = [n for n, p in results if p]
print("claims: %d checked, %d failed" % (len(results), len(failed)))
sys.exit(1 if failed else 0)
