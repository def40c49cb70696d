import Foundation
import IAPCore

/// A small JSON Schema (2020-12 subset) validator for the message schemas in
/// docs/schemas: type, const, enum, required, properties,
/// additionalProperties, items, pattern, minimum, maximum.
struct SchemaValidator {
    let schema: JSONValue

    func errors(_ v: JSONValue, path: String = "$") -> [String] { check(v, schema, path) }

    private func typeName(_ v: JSONValue) -> String {
        switch v {
        case .null: return "null"
        case .bool: return "boolean"
        case .number(let n): return Int64(n) != nil ? "integer" : "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }

    private func check(_ v: JSONValue, _ s: JSONValue, _ path: String) -> [String] {
        var out: [String] = []
        if let t = s["type"] {
            let allowed = t.arrayValue?.compactMap(\.stringValue) ?? [t.stringValue ?? ""]
            let actual = typeName(v)
            let ok = allowed.contains(actual) || (actual == "integer" && allowed.contains("number"))
            if !ok { return ["\(path): type \(actual), expected \(allowed)"] }
        }
        if let c = s["const"], c != v { out.append("\(path): \(v.serialized) is not the constant \(c.serialized)") }
        if let e = s["enum"]?.arrayValue, !e.contains(v) { out.append("\(path): \(v.serialized) not in \(JSONValue.array(e).serialized)") }
        if case .string(let str) = v, let p = s["pattern"]?.stringValue {
            if let re = try? Regex(p), (try? re.firstMatch(in: str)) == nil { out.append("\(path): \"\(str)\" does not match \(p)") }
        }
        if let minimum = s["minimum"]?.doubleValue, let d = v.doubleValue, d < minimum { out.append("\(path): \(d) < \(minimum)") }
        if let maximum = s["maximum"]?.doubleValue, let d = v.doubleValue, d > maximum { out.append("\(path): \(d) > \(maximum)") }
        if case .object(let o) = v {
            for r in s["required"]?.arrayValue?.compactMap(\.stringValue) ?? [] where o[r] == nil {
                out.append("\(path): missing required \"\(r)\"")
            }
            let props = s["properties"]?.objectValue ?? [:]
            for (k, sub) in o {
                if let ps = props[k] {
                    out += check(sub, ps, "\(path).\(k)")
                } else if let ap = s["additionalProperties"] {
                    if ap == .bool(false) { out.append("\(path): unexpected property \"\(k)\"") }
                    else if ap.objectValue != nil { out += check(sub, ap, "\(path).\(k)") }
                }
            }
        }
        if case .array(let a) = v, let items = s["items"] {
            for (i, e) in a.enumerated() { out += check(e, items, "\(path)[\(i)]") }
        }
        return out
    }
}

/// Every message type the SDK emits, with its schema from docs/schemas.
enum MessageSchemas {
    static let repoRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { url.deleteLastPathComponent() }
        return url.path
    }()

    static let all: [String: SchemaValidator] = {
        var out: [String: SchemaValidator] = [:]
        let dir = repoRoot + "/docs/schemas"
        for type in ["7", "999", "pending", "entitlements", "revoked", "error", "outbox_damaged", "unvouched", "store", "promoted", "subscription", "app", "sheet", "storeMessage"] {
            let bytes = Array(FileManager.default.contents(atPath: "\(dir)/\(type).schema.json") ?? Data())
            out[type] = SchemaValidator(schema: (try? JSONParser.parse(bytes: bytes)) ?? .null)
        }
        return out
    }()

    /// Schema errors of one emitted message (empty when valid).
    static func validate(_ text: String) -> [String] {
        guard let v = try? JSONParser.parse(text) else { return ["not JSON: \(text)"] }
        guard let type = v["type"]?.stringValue else { return ["no string \"type\": \(text)"] }
        guard let validator = all[type], validator.schema != .null else { return ["no schema for type \"\(type)\""] }
        return validator.errors(v).map { "\(type): \($0) in \(text)" }
    }
}
