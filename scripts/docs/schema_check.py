"""A small JSON Schema (2020-12 subset) validator for docs/schemas: type,
const, enum, required, properties, additionalProperties, items, pattern,
minimum, maximum (the keywords the schemas use; the Swift tests have their
own, Tests/IAPCoreTests/Support/SchemaValidator.swift)."""
import re

TYPES = {"null": type(None), "boolean": bool, "string": str, "array": list, "object": dict}


def _type_name(v):
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "integer" if v.is_integer() else "number"
    for name, t in TYPES.items():
        if isinstance(v, t):
            return name
    return "?"


def schema_errors(v, s, path="$"):
    out = []
    if "type" in s:
        allowed = s["type"] if isinstance(s["type"], list) else [s["type"]]
        actual = _type_name(v)
        if actual not in allowed and not (actual == "integer" and "number" in allowed):
            return ["%s: type %s, expected %s" % (path, actual, allowed)]
    if "const" in s and v != s["const"]:
        out.append("%s: %r is not the constant %r" % (path, v, s["const"]))
    if "enum" in s and v not in s["enum"]:
        out.append("%s: %r not in %r" % (path, v, s["enum"]))
    if isinstance(v, str) and "pattern" in s and not re.search(s["pattern"], v):
        out.append("%s: %r does not match %s" % (path, v, s["pattern"]))
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        if "minimum" in s and v < s["minimum"]:
            out.append("%s: %r < %r" % (path, v, s["minimum"]))
        if "maximum" in s and v > s["maximum"]:
            out.append("%s: %r > %r" % (path, v, s["maximum"]))
    if isinstance(v, dict):
        props = s.get("properties", {})
        for r in s.get("required", []):
            if r not in v:
                out.append("%s: missing required %r" % (path, r))
        for k, x in v.items():
            if k in props:
                out += schema_errors(x, props[k], path + "." + k)
            elif s.get("additionalProperties") is False:
                out.append("%s: %r is not in the schema" % (path, k))
            elif isinstance(s.get("additionalProperties"), dict):
                out += schema_errors(x, s["additionalProperties"], path + "." + k)
    if isinstance(v, list) and "items" in s:
        for i, x in enumerate(v):
            out += schema_errors(x, s["items"], "%s[%d]" % (path, i))
    return out
