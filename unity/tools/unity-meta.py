#!/usr/bin/env python3
"""The .meta files of the Unity package unity/com.iapbridge.sdk, and a check of its layout.

    python3 unity/tools/unity-meta.py --write      create/refresh every .meta
    python3 unity/tools/unity-meta.py --check      fail on anything missing, stale or orphaned (Tests/mono/run.sh, in CI)
    python3 unity/tools/unity-meta.py --self-test  plant problems in a copy of the package; --check must report each

Every file and folder of the package (except hidden ones and those inside folders whose names end
with "~", which Unity does not import) has a .meta whose GUID is the md5 of
"com.iapbridge.sdk/<path inside the package>": stable across machines and clones, unique, and
the same whenever the file is recreated. The native libraries (PLUGINS below) are committed with
their .meta files (PluginImporter, with their platforms): scripts/build-plugins.sh rebuilds them.

--check also verifies: the .meta contents are what this script writes (right importer), no .meta
anywhere in the package (Samples~, Documentation~ and hidden folders included) is left without
its asset file or folder, the assembly definitions reference assemblies that exist, Editor code is
Editor-only, package.json's version is the header's IAP_VERSION_STRING, and the sample's catalog
is samples/catalog/Game.storekit.

A native library slot whose library is missing is a problem like any other: a git-URL install
would have no library for that platform.
"""
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
PKG_NAME = "com.iapbridge.sdk"
PKG = os.path.join(ROOT, "unity", PKG_NAME)

TAIL = "  userData: \n  assetBundleName: \n  assetBundleVariant: \n"


def guid(rel):
    return hashlib.md5((PKG_NAME + "/" + rel).encode("utf-8")).hexdigest()


def simple(importer, rel, folder=False):
    head = "fileFormatVersion: 2\nguid: %s\n" % guid(rel)
    if folder:
        head += "folderAsset: yes\n"
    return head + importer + ":\n  externalObjects: {}\n" + TAIL


def mono(rel):
    return ("fileFormatVersion: 2\nguid: %s\nMonoImporter:\n  externalObjects: {}\n  serializedVersion: 2\n"
            "  defaultReferences: []\n  executionOrder: 0\n  icon: {instanceID: 0}\n" % guid(rel)) + TAIL


# Platform entries of a PluginImporter: (first key, first value, enabled, settings lines).
def plugin(rel, any_excludes, entries):
    s = ("fileFormatVersion: 2\nguid: %s\nPluginImporter:\n  externalObjects: {}\n  serializedVersion: 2\n"
         "  iconMap: {}\n  executionOrder: {}\n  defineConstraints: []\n  isPreloaded: 0\n  isOverridable: 0\n"
         "  isExplicitlyReferenced: 0\n  validateReferences: 1\n  platformData:\n" % guid(rel))
    s += "  - first:\n      : Any\n    second:\n      enabled: 0\n      settings:\n"
    for k in sorted(any_excludes):
        s += "        Exclude %s: %d\n" % (k, any_excludes[k])
    s += "  - first:\n      Any: \n    second:\n      enabled: 0\n      settings: {}\n"
    for key, value, enabled, settings in entries:
        s += "  - first:\n      %s: %s\n    second:\n      enabled: %d\n      settings:\n" % (key, value, enabled)
        for line in settings:
            s += "        %s\n" % line
    return s + TAIL


def desktop_entries(editor_os, editor_cpu, linux_on, osx_on):
    return [
        ("Editor", "Editor", 1, ["CPU: %s" % editor_cpu, "DefaultValueInitialized: true", "OS: %s" % editor_os]),
        ("Standalone", "Linux64", 1 if linux_on else 0, ["CPU: %s" % ("x86_64" if linux_on else "None")]),
        ("Standalone", "OSXUniversal", 1 if osx_on else 0, ["CPU: %s" % ("AnyCPU" if osx_on else "None")]),
        ("Standalone", "Win", 0, ["CPU: None"]),
        ("Standalone", "Win64", 0, ["CPU: None"]),
        ("iPhone", "iOS", 0, ["AddToEmbeddedBinaries: false", "CPU: AnyCPU", "CompileFlags: ", "FrameworkDependencies: "]),
    ]


# The native libraries: where they go and on which platforms Unity loads them.
PLUGINS = {
    # Linux x86_64: the editor on Linux and Linux players.
    "Runtime/Plugins/Linux/x86_64/libIAPBridge.so": lambda rel: plugin(
        rel, {"Editor": 0, "Linux64": 0, "OSXUniversal": 1, "Win": 1, "Win64": 1, "iOS": 1},
        desktop_entries("Linux", "x86_64", True, False)),
    # macOS, universal (arm64 + x86_64): the editor on macOS and macOS players.
    "Runtime/Plugins/macOS/libIAPBridge.dylib": lambda rel: plugin(
        rel, {"Editor": 0, "Linux64": 1, "OSXUniversal": 0, "Win": 1, "Win64": 1, "iOS": 1},
        desktop_entries("OSX", "AnyCPU", False, True)),
    # iOS devices: linked into the Xcode project with StoreKit.
    "Runtime/Plugins/iOS/libIAPBridgeStatic.a": lambda rel: plugin(
        rel, {"Editor": 1, "Linux64": 1, "OSXUniversal": 1, "Win": 1, "Win64": 1, "iOS": 0},
        [("Editor", "Editor", 0, ["CPU: AnyCPU", "DefaultValueInitialized: true", "OS: AnyOS"]),
         ("Standalone", "Linux64", 0, ["CPU: None"]),
         ("Standalone", "OSXUniversal", 0, ["CPU: None"]),
         ("Standalone", "Win", 0, ["CPU: None"]),
         ("Standalone", "Win64", 0, ["CPU: None"]),
         ("iPhone", "iOS", 1, ["AddToEmbeddedBinaries: false", "CPU: ARM64", "CompileFlags: ",
                               "FrameworkDependencies: StoreKit;"])]),
}


# Assemblies Unity defines (the Unity Test Framework's), which test .asmdef files reference.
UNITY_ASSEMBLIES = {"UnityEngine.TestRunner", "UnityEditor.TestRunner"}


def meta_for(rel, is_dir):
    if is_dir:
        return simple("DefaultImporter", rel, folder=True)
    if rel in PLUGINS:
        return PLUGINS[rel](rel)
    name = os.path.basename(rel)
    ext = os.path.splitext(name)[1].lower()
    if ext == ".cs":
        return mono(rel)
    if ext == ".asmdef":
        return simple("AssemblyDefinitionImporter", rel)
    if rel == "package.json":
        return simple("PackageManifestImporter", rel)
    if ext in (".md", ".txt", ".xml", ".json", ".bytes"):
        return simple("TextScriptImporter", rel)
    return simple("DefaultImporter", rel)


def imported(rel):
    """False for paths Unity does not import: hidden, or inside a folder ending with ~."""
    for part in rel.split("/"):
        if part.startswith(".") or part.endswith("~"):
            return False
    return True


def assets(pkg=PKG):
    """(rel, is_dir) of every path that needs a .meta: what exists, plus the plugin slots and their folders."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(pkg):
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and not d.endswith("~")]
        for d in dirnames:
            rel = os.path.relpath(os.path.join(dirpath, d), pkg).replace(os.sep, "/")
            found[rel] = True
        for f in filenames:
            rel = os.path.relpath(os.path.join(dirpath, f), pkg).replace(os.sep, "/")
            if f.endswith(".meta") or not imported(rel):
                continue
            found[rel] = False
    for rel in PLUGINS:
        found[rel] = False
        parts = rel.split("/")
        for i in range(1, len(parts)):
            found["/".join(parts[:i])] = True
    return found


def orphans(pkg, found):
    """Problems with .meta files that belong to no asset, and the plugin slots waiting for their
    library. Every folder is searched, also those Unity does not import (Samples~ is copied into
    the project with its .meta files when a sample is imported)."""
    problems, empty_slots = [], []
    for dirpath, dirnames, filenames in os.walk(pkg):
        dirnames.sort()
        for f in sorted(filenames):
            if not f.endswith(".meta"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, f[:-5]), pkg).replace(os.sep, "/")
            if not os.path.lexists(os.path.join(pkg, rel)):
                if rel in PLUGINS:
                    empty_slots.append(rel)
                    problems.append("%s has only its .meta: the package ships this library "
                                    "(bash scripts/build-plugins.sh)" % rel)
                else:
                    problems.append("%s.meta has no asset (no file or folder %s): delete it" % (rel, rel))
            elif imported(rel) and rel not in found:
                problems.append("%s.meta belongs to %s, which Unity does not import: delete it" % (rel, rel))
    return problems, empty_slots


def check(pkg=PKG):
    """Everything --check verifies. Returns (problems, summary)."""
    problems = []
    found = assets(pkg)
    seen_guids = {}
    for rel in sorted(found):
        path = os.path.join(pkg, rel) + ".meta"
        want = meta_for(rel, found[rel])
        g = guid(rel)
        if g in seen_guids:
            problems.append("GUID %s of %s is also %s's" % (g, rel, seen_guids[g]))
        seen_guids[g] = rel
        have = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if have is None:
            problems.append("%s has no .meta (python3 unity/tools/unity-meta.py --write)" % rel)
        elif have != want:
            problems.append("%s.meta is not what unity-meta.py writes (importer or GUID changed?)" % rel)

    orphan_problems, empty_slots = orphans(pkg, found)
    problems += orphan_problems

    # Assembly definitions.
    asmdefs = {}
    for dirpath, _, filenames in os.walk(pkg):
        for f in filenames:
            if f.endswith(".asmdef"):
                with open(os.path.join(dirpath, f), encoding="utf-8") as fh:
                    asmdefs[os.path.relpath(os.path.join(dirpath, f), pkg).replace(os.sep, "/")] = json.load(fh)
    # Unity's own assemblies a package may reference: the Test Framework's (edit-mode tests).
    names = {a["name"] for a in asmdefs.values()} | UNITY_ASSEMBLIES
    for rel, a in asmdefs.items():
        if os.path.basename(rel) != a["name"] + ".asmdef":
            problems.append("%s: file name and \"name\" (%s) differ" % (rel, a["name"]))
        for r in a.get("references", []):
            if r not in names:
                problems.append("%s references %s, which no .asmdef of the package defines" % (rel, r))
        if (rel.startswith("Editor/") or rel.startswith("Testing/") or "/Tests/Editor/" in rel) \
                and a.get("includePlatforms") != ["Editor"]:
            problems.append("%s must be Editor-only (includePlatforms: [\"Editor\"])" % rel)
    for need in ("Runtime/IAPBridge.Runtime.asmdef", "Editor/IAPBridge.Editor.asmdef",
                 "Samples~/Example Store/IAPBridge.Example.asmdef"):
        if need not in asmdefs:
            problems.append("missing %s" % need)

    # package.json against the header; the sample's samples entry; the sample catalog.
    with open(os.path.join(pkg, "package.json"), encoding="utf-8") as fh:
        manifest = json.load(fh)
    header = open(os.path.join(ROOT, "include", "iap_bridge.h"), encoding="utf-8").read()
    m = re.search(r'#define IAP_VERSION_STRING "([^"]+)"', header)
    if not m or manifest.get("version") != m.group(1):
        problems.append("package.json version %s is not the header's IAP_VERSION_STRING %s"
                        % (manifest.get("version"), m.group(1) if m else "?"))
    for k in ("name", "version", "displayName", "unity", "description", "documentationUrl", "author", "samples"):
        if k not in manifest:
            problems.append("package.json has no \"%s\"" % k)
    if manifest.get("name") != PKG_NAME:
        problems.append("package.json name is not %s" % PKG_NAME)
    for sample in manifest.get("samples", []):
        if not os.path.isdir(os.path.join(pkg, sample["path"])):
            problems.append("sample path %s does not exist" % sample["path"])
    cat = os.path.join(pkg, "Samples~", "Example Store", "Game.storekit")
    src = os.path.join(ROOT, "samples", "catalog", "Game.storekit")
    if not os.path.exists(cat) or open(cat, "rb").read() != open(src, "rb").read():
        problems.append("Samples~/Example Store/Game.storekit differs from samples/catalog/Game.storekit (copy it)")

    summary = ("%d assets, each with a .meta and a unique stable GUID; no orphaned .meta; "
               "%d assembly definitions; package.json %s"
               % (len(found), len(asmdefs), manifest.get("version")))
    summary += "; %d of %d native libraries present" % (len(PLUGINS) - len(empty_slots), len(PLUGINS))
    return problems, summary


def write(pkg=PKG):
    found = assets(pkg)
    for rel, is_dir in found.items():
        if is_dir:
            os.makedirs(os.path.join(pkg, rel), exist_ok=True)
    for rel in sorted(found):
        path = os.path.join(pkg, rel) + ".meta"
        want = meta_for(rel, found[rel])
        have = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if have != want:
            with open(path, "w", encoding="utf-8", newline="\n") as f:
                f.write(want)
            print("wrote %s.meta" % rel)


def self_test():
    """--check on a copy of the package: clean, it passes; with each planted problem, it reports
    that problem. Returns the number of failures."""
    failures = cases = 0
    tmp = tempfile.mkdtemp(prefix="unity-meta-self-test.")
    try:
        def fresh():
            copy = os.path.join(tmp, PKG_NAME)
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(PKG, copy, ignore=shutil.ignore_patterns("*.xcframework"))
            return copy

        def expect(what, plant, reported):
            nonlocal failures, cases
            copy = fresh()
            plant(copy)
            problems, _ = check(copy)
            hit = [p for p in problems if reported in p]
            ok = hit if reported else not problems
            if not ok:
                print("unity-meta self-test: FAIL %s: got %s" % (what, problems or "no problem"))
            failures += 0 if ok else 1
            cases += 1

        def touch(copy, rel, text="fileFormatVersion: 2\nguid: 0123456789abcdef0123456789abcdef\n"):
            path = os.path.join(copy, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)

        def remove(copy, rel):
            path = os.path.join(copy, rel)
            shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)

        expect("a clean copy passes (its three native libraries in place)", lambda c: None, "")
        expect("a native library missing from its slot is found",
               lambda c: remove(c, "Runtime/Plugins/macOS/libIAPBridge.dylib"),
               "Runtime/Plugins/macOS/libIAPBridge.dylib has only its .meta")
        expect("a script deleted without its .meta is an orphan",
               lambda c: remove(c, "Runtime/Utf8.cs"), "Runtime/Utf8.cs.meta has no asset")
        expect("a .meta of a file that never existed is an orphan",
               lambda c: touch(c, "Runtime/Gone.cs.meta"), "Runtime/Gone.cs.meta has no asset")
        expect("a folder's .meta without the folder is an orphan",
               lambda c: touch(c, "Tests.meta"), "Tests.meta has no asset")
        expect("an orphan inside Samples~ (copied into projects) is found",
               lambda c: touch(c, "Samples~/Example Store/Old.cs.meta"), "Samples~/Example Store/Old.cs.meta has no asset")
        expect("an orphan inside Documentation~ is found",
               lambda c: touch(c, "Documentation~/old.md.meta"), "Documentation~/old.md.meta has no asset")
        expect("an orphan inside a hidden folder is found",
               lambda c: touch(c, ".backup/Bridge.cs.meta"), ".backup/Bridge.cs.meta has no asset")
        expect("a .meta of a .meta is found",
               lambda c: touch(c, "Runtime/Bridge.cs.meta.meta"), "Runtime/Bridge.cs.meta.meta belongs to")
        expect("an orphan next to the native libraries (not a library slot) is found",
               lambda c: touch(c, "Runtime/Plugins/Linux/x86_64/libOld.so.meta"), "libOld.so.meta has no asset")
        expect("an asset without its .meta is found",
               lambda c: remove(c, "Runtime/Utf8.cs.meta"), "Runtime/Utf8.cs has no .meta")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("unity-meta self-test: %d cases (a clean copy, 10 planted problems), %s"
          % (cases, "%d FAILED" % failures if failures else "each as expected"))
    return failures


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "--check"
    if mode == "--write":
        write()
        return 0
    if mode == "--self-test":
        return 1 if self_test() else 0
    if mode != "--check":
        print(__doc__)
        return 2
    problems, summary = check()
    if problems:
        for p in problems:
            print("unity-meta: " + p)
        print("unity-meta: FAILED (%d problems)" % len(problems))
        return 1
    print("unity-meta: " + summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
