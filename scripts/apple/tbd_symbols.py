#!/usr/bin/env python3
"""The symbols Apple .tbd link stubs export, for scripts/check-apple.sh.

    tbd_symbols.py ARCH FILE_OR_DIR...     one exported symbol a line, sorted

Reads text stubs of versions 1-4 (YAML) and 5 (JSON). Only the export
sections count (not "undefineds"), and only blocks whose targets or archs
name ARCH (arm64, x86_64; arm64e counts for nothing here). Objective-C
classes become _OBJC_CLASS_$_X and _OBJC_METACLASS_$_X, ivars _OBJC_IVAR_$_X,
exception types _OBJC_EHTYPE_$_X, as the linker names them.
"""
import json, os, re, sys

OBJC = {'objc-classes': ['_OBJC_CLASS_$_', '_OBJC_METACLASS_$_'],
        'objc-eh-types': ['_OBJC_EHTYPE_$_'], 'objc-ivars': ['_OBJC_IVAR_$_']}
PLAIN = ('symbols', 'weak-symbols', 'weak-def-symbols', 'thread-local-symbols')

def names(kind, items):
    out = []
    for s in items:
        for p in OBJC.get(kind, ['']):
            out.append(p + s)
    return out

def arch_matches(targets, arch):
    return any(t == arch or t.startswith(arch + '-') for t in targets)

def from_json(text, arch):
    doc = json.loads(text)
    out = []
    for sect in ('exported_symbols', 'reexported_symbols'):
        for block in doc.get('main_library', {}).get(sect, []):
            if 'targets' in block and not arch_matches(block['targets'], arch):
                continue
            for group in ('data', 'text'):
                g = block.get(group, {})
                for k, v in g.items():
                    kind = {'objc_class': 'objc-classes', 'objc_eh_type': 'objc-eh-types',
                            'objc_ivar': 'objc-ivars'}.get(k, 'symbols')
                    out += names(kind, v)
    return out

def from_yaml(text, arch):
    out = []
    # Documents of one file (re-exported libraries inlined) are separated by ---.
    for doc in re.split(r'^---', text, flags=re.M):
        m = re.search(r'^exports:\s*\n(.*?)(?=^\S|\Z)', doc, flags=re.M | re.S)
        if not m:
            continue
        for block in re.split(r'^\s*-\s+(?=(?:targets|archs):)', m.group(1), flags=re.M):
            t = re.match(r'(?:targets|archs):\s*\[([^\]]*)\]', block.strip())
            if not t or not arch_matches([x.strip() for x in t.group(1).split(',')], arch):
                continue
            for key, body in re.findall(r'([a-z-]+):\s*\[([^\]]*)\]', block, flags=re.S):
                if key in PLAIN or key in OBJC:
                    items = [x.strip().strip("'\"") for x in body.replace('\n', ' ').split(',')]
                    out += names(key, [x for x in items if x])
    return out

def main():
    arch, paths = sys.argv[1], sys.argv[2:]
    files = []
    for p in paths:
        if os.path.isdir(p):
            for root, _, fs in os.walk(p):
                files += [os.path.join(root, f) for f in fs if f.endswith('.tbd')]
        elif os.path.exists(p):
            files.append(p)
    syms = set()
    for f in files:
        text = open(f, encoding='utf-8', errors='replace').read()
        syms.update(from_json(text, arch) if text.lstrip().startswith('{') else from_yaml(text, arch))
    sys.stdout.write(''.join(s + '\n' for s in sorted(syms)))

main()
