/// Reads the one JSON shape a game passes on every product request, an
/// array of plain strings (`["coins_100","remove_ads"]`), without building
/// a JSON tree: the request runs on the game's thread, often the first call
/// after a second of idling, so the less code and memory it touches the
/// less it costs cold (the tree cost 2,600 of a request's 7,700
/// instructions warm, BENCHMARKS.md).
///
/// Only the plain case is read here: JSON whitespace, `[`, `]`, `,`, and
/// strings of printable ASCII (0x20-0x7E) with no backslash. Anything else
/// (an escape, UTF-8, a number, damage) returns nil and the caller falls
/// back to `JSONParser`, so both always agree: a list read here is the list
/// the parser would return (`StringListReaderTests` checks that on
/// generated inputs), and every error comes from the parser.
public enum StringListReader {
    public static func plainStrings(_ b: UnsafeBufferPointer<UInt8>) -> [String]? {
        guard let base = b.baseAddress else { return nil }
        let n = b.count
        var i = 0
        @inline(__always) func skipSpace() {
            while i < n, base[i] == 0x20 || base[i] == 0x0A || base[i] == 0x0D || base[i] == 0x09 { i += 1 }
        }
        skipSpace()
        guard i < n, base[i] == UInt8(ascii: "[") else { return nil }
        i += 1
        skipSpace()
        var out: [String] = []
        if i < n, base[i] == UInt8(ascii: "]") {
            i += 1
        } else {
            // Sized once: a comma a string at most. Capped where a request
            // is refused anyway (over 1,000 IDs), so text of nothing but
            // commas takes no memory for strings it will never hold.
            var commas = 1
            for j in i..<n where base[j] == UInt8(ascii: ",") { commas += 1 }
            out.reserveCapacity(min(commas, 1001))
            while true {
                guard i < n, base[i] == 0x22 else { return nil }
                i += 1
                let start = i
                while i < n {
                    let c = base[i]
                    if c == 0x22 { break }
                    guard c >= 0x20, c < 0x7F, c != 0x5C else { return nil }
                    i += 1
                }
                guard i < n else { return nil }
                out.append(String(decoding: UnsafeBufferPointer(start: base + start, count: i - start), as: UTF8.self))
                i += 1
                skipSpace()
                guard i < n else { return nil }
                if base[i] == UInt8(ascii: "]") { i += 1; break }
                guard base[i] == UInt8(ascii: ",") else { return nil }
                i += 1
                skipSpace()
            }
        }
        skipSpace()
        return i == n ? out : nil
    }
}
