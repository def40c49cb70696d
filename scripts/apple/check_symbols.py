#!/usr/bin/env python3
"""The symbol checks of scripts/check-apple.sh, for one Apple target.

    check_symbols.py --objects DIR --undefined FILE --expected FILE
                     --reference FILE --header FILE [--storekit-reference FILE]
                     [--write-expected]

--objects    the target's Mach-O objects (what libIAPBridge is linked from)
--undefined  what ld64.lld left undefined linking them against the SDK's
             stubs (one symbol a line), before any supplement
--expected   the committed list (scripts/apple/undefined-*.txt): each line
             "<symbol> <reason>", reasons explained in the file's header
--reference  the symbols Apple's own stubs of an older SDK export
             (iPhoneOS 16.5: tbd_symbols.py), for the reasons that need it
--storekit-reference  the symbols iPhoneOS 16.5's StoreKit.tbd exports
--header     include/iap_bridge.h

Checks, each printed, exit 1 when one fails:
 1. the undefined symbols are exactly the expected list (a new one fails; one
    the list names that is no longer undefined fails too: the list must
    stay true), and each line's reason holds (see REASONS);
 2. every StoreKit symbol the objects reference is in iOS 16.5's StoreKit
    (Apple's stub), or is referenced weakly: the compiler marks a reference
    weak only for a declaration newer than the deployment target, which it
    lets the code use only behind `#available`;
 3. the C functions the objects define (_iap_*) are the header's functions.
--write-expected rewrites the expected list from what the link reported
(each symbol with the reason the rules give it), for a reviewed update.
"""
import argparse, os, re, subprocess, sys

REASONS = {
    'stub-gap':
        "the SDK snapshot's stub lacks it; Apple's own iPhoneOS 16.5 stub exports it",
    'newer-than-16.5':
        "not in iPhoneOS 16.5; an API newer than iOS 16.5, referenced weakly (behind #available)",
    'no-foundation-stub':
        "a Foundation symbol; the MacOSX 15.5 snapshot has no Foundation.tbd to check it against",
}

def nm(objects):
    """(defined, {undefined symbol: weak?}) over every object."""
    files = sorted(os.path.join(objects, f) for f in os.listdir(objects) if f.endswith('.o'))
    out = subprocess.run(['llvm-nm', '-m'] + files, capture_output=True, text=True, check=True).stdout
    defined, refs = set(), {}
    for line in out.splitlines():
        sym = line.split()[-1] if line.split() else ''
        if '(undefined)' in line:
            weak = '(undefined) weak' in line
            refs[sym] = refs.get(sym, True) and weak   # weak only if every reference is
        elif 'external' in line and 'non-external' not in line:
            defined.add(sym)
    return defined, {s: w for s, w in refs.items() if s not in defined}

def is_foundation(sym):
    return sym.startswith('_$s10Foundation') or bool(re.match(r'_\$sS[a-zA-Z]\d*10FoundationE', sym)) \
        or sym.startswith('_$sSo') and '10FoundationE' in sym

def is_storekit(sym):
    return sym.startswith('_$s8StoreKit') or '8StoreKitE' in sym[:40] \
        or re.match(r'_OBJC_(META)?CLASS_\$_SK', sym) is not None

def reason_for(sym, weak, reference):
    if sym in reference:
        return 'stub-gap'
    if weak:
        return 'newer-than-16.5'
    if is_foundation(sym):
        return 'no-foundation-stub'
    return None

def demangle(syms):
    if not syms:
        return {}
    out = subprocess.run(['swift', 'demangle', '--compact'], input='\n'.join(syms), capture_output=True, text=True).stdout
    return dict(zip(syms, out.splitlines()))

def load(path):
    return set(l.split()[0] for l in open(path) if l.strip() and not l.startswith('#'))

def main():
    ap = argparse.ArgumentParser()
    for a in ('objects', 'undefined', 'expected', 'reference', 'header'):
        ap.add_argument('--' + a, required=True)
    ap.add_argument('--storekit-reference')
    ap.add_argument('--required')
    ap.add_argument('--write-expected', action='store_true')
    o = ap.parse_args()
    defined, refs = nm(o.objects)
    undefined = load(o.undefined)
    reference = load(o.reference)
    failed = False

    def fail(msg):
        nonlocal failed
        failed = True
        print('  FAIL: ' + msg)

    # 1. The undefined list.
    if o.write_expected:
        names = demangle(sorted(undefined))
        with open(o.expected) as f:
            head = [l for l in f if l.startswith('#')]
        with open(o.expected, 'w') as f:
            f.writelines(head)
            for s in sorted(undefined):
                f.write(f"{s} {reason_for(s, refs.get(s, False), reference) or 'UNEXPLAINED'}  # {names.get(s, '')}\n")
        print(f'  wrote {o.expected}: {len(undefined)} symbols')
    expected = {}
    for l in open(o.expected):
        if l.strip() and not l.startswith('#'):
            parts = l.split()
            expected[parts[0]] = parts[1] if len(parts) > 1 else ''
    new, gone = sorted(undefined - set(expected)), sorted(set(expected) - undefined)
    for s in new:
        fail(f'undefined and not in {os.path.basename(o.expected)}: {s} ({demangle([s]).get(s, "")})')
    for s in gone:
        fail(f'{os.path.basename(o.expected)} lists {s}, which is no longer undefined: remove the line')
    counts = {}
    for s in sorted(undefined & set(expected)):
        want = reason_for(s, refs.get(s, False), reference)
        if expected[s] not in REASONS:
            fail(f'{s}: unknown reason "{expected[s]}"')
        elif expected[s] != want:
            fail(f'{s}: listed as {expected[s]}, but the check finds {want or "no reason"}')
        counts[expected[s]] = counts.get(expected[s], 0) + 1
    print(f'  undefined against the SDK stubs: {len(undefined)} ({", ".join(f"{k} {v}" for k, v in sorted(counts.items()))}); '
          f'new {len(new)}, no longer undefined {len(gone)}')

    # 2. StoreKit against iOS 16.5's own StoreKit.tbd.
    if o.storekit_reference:
        sk = load(o.storekit_reference)
        used = sorted(s for s in refs if is_storekit(s))
        newer = [s for s in used if s not in sk]
        strong = [s for s in newer if not refs[s]]
        for s in strong:
            fail(f'StoreKit symbol not in iOS 16.5 and referenced strongly (no #available?): {s} ({demangle([s]).get(s, "")})')
        print(f'  StoreKit symbols referenced: {len(used)}; in iOS 16.5 StoreKit.tbd: {len(used) - len(newer)}; '
              f'newer, all weak: {len(newer) - len(strong)}; newer and strong: {len(strong)}')

    # 2b. StoreKit features this target must have compiled in: a feature
    # left out by an #if (promoted purchases on macOS were, once) shows as
    # a reference that is missing.
    if o.required:
        n = missing = 0
        for l in open(o.required):
            if not l.strip() or l.startswith('#'):
                continue
            parts = l.split(None, 1)
            pattern, why = parts[0], parts[1].strip() if len(parts) > 1 else ''
            n += 1
            if not any(re.search(pattern, s) for s in refs):
                missing += 1
                fail(f'no reference matches {pattern}: {why} is compiled out')
        print(f'  required StoreKit features referenced: {n - missing} of {n}')

    # 3. The C functions against the header.
    header = set(re.findall(r'\b(iap_[a-z0-9_]+)\s*\(', open(o.header).read()))
    header = {h for h in header if re.search(r'^\s*(IAP_API\s+)?[A-Za-z_][\w \*]*\b' + h + r'\s*\(', open(o.header).read(), re.M)}
    cfuncs = {s[1:] for s in defined if s.startswith('_iap_')}
    if cfuncs != header:
        fail(f'C functions differ from the header: only defined {sorted(cfuncs - header)}, only declared {sorted(header - cfuncs)}')
    print(f'  C functions defined: {len(cfuncs)}; declared in iap_bridge.h: {len(header)}')
    return 1 if failed else 0

sys.exit(main())
