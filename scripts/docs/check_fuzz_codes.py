#!/usr/bin/env python3
"""The ABI fuzzer's table of the codes each function may return
(Fuzz/targets/abi.swift, `documented`) must be exactly the codes the
header's comment of that function names (include/iap_bridge.h): a code the
header adds (IAP_E_BUSY for requests, say) and the table lacks makes the
fuzzer fail at random on correct behaviour; one the table has and the
header does not lets an undocumented code through.

`--self-test`: a table missing one code is caught."""
import os, re, sys

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def header_codes(text):
    codes = {m.group(1): int(m.group(2)) for m in re.finditer(r"#define (IAP_(?:OK|E_\w+))\s+\(?(-?\d+)\)?", text)}
    out = {}
    for m in re.finditer(r"/\*((?:(?!\*/).)*)\*/\s*[\w\s\*]+?\b(iap_\w+)\(", text, re.S):
        out[m.group(2)] = {codes[x] for x in re.findall(r"\bIAP_(?:OK|E_\w+)\b", m.group(1)) if x in codes}
    return out


def fuzz_table(text):
    block = re.search(r"documented: \[String: Set<Int32>\] = \[(.*?)\n\]", text, re.S).group(1)
    return {m.group(1): {int(x) for x in m.group(2).split(",") if x.strip()}
            for m in re.finditer(r'"(iap_\w+)": \[([^\]]*)\]', block)}


def problems(header, table):
    out = []
    for fn, codes in sorted(table.items()):
        want = header.get(fn)
        if want is None:
            out.append(f"{fn}: in the fuzzer's table, not in the header")
        elif codes != want:
            out.append(f"{fn}: fuzzer {sorted(codes)}, header {sorted(want)} "
                       f"(missing {sorted(want - codes)}, extra {sorted(codes - want)})")
    return out


def main():
    header = header_codes(open(os.path.join(ROOT, "include/iap_bridge.h")).read())
    table = fuzz_table(open(os.path.join(ROOT, "Fuzz/targets/abi.swift")).read())
    if "--self-test" in sys.argv:
        fn = "iap_request_products"
        planted = dict(table, **{fn: table[fn] - {-9}})
        assert any(p.startswith(fn) for p in problems(header, planted)), "a missing code was not caught"
        print("fuzz codes self-test: a table missing IAP_E_BUSY for iap_request_products is caught")
        return 0
    found = problems(header, table)
    for p in found:
        print("fuzz codes: FAILED: " + p)
    if found:
        return 1
    print(f"fuzz codes: the ABI fuzzer's codes for {len(table)} functions are the header's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
