#if canImport(Glibc)
import Glibc
#endif
import IAPCore

// Shared by every fuzz target (compiled into each by scripts/fuzz.sh).

/// Crashes with a readable message: the fuzzer records the input.
func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
           file: StaticString = #fileID, line: UInt = #line) {
    if !condition() {
        fputs("FUZZ INVARIANT BROKEN at \(file):\(line): \(message())\n", stderr)
        abort()
    }
}

/// The fuzzer's bytes as an array.
func bytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
    guard let data, size > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: size))
}

/// A scratch directory for this fuzz process: $IAP_FUZZ_SCRATCH (the script
/// sets it and removes it afterwards), else /dev/shm or /tmp. RAM is best: the
/// outbox syncs every write.
let fuzzScratch: String = {
    let base: String
    if let s = getenv("IAP_FUZZ_SCRATCH") { base = String(cString: s) } else {
        base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
    }
    let dir = "\(base)/iap-fuzz-\(getpid())"
    mkdir(base, 0o700)
    mkdir(dir, 0o700)
    return dir
}()

/// The sample catalog ($IAP_FUZZ_CATALOG, else samples/catalog/Game.storekit
/// from the repository root), copied once into the scratch directory for the
/// targets that open bridges on it.
let sampleCatalogCopy: String = {
    let path = fuzzScratch + "/Game.storekit"
    let sample = getenv("IAP_FUZZ_CATALOG").map { String(cString: $0) } ?? "samples/catalog/Game.storekit"
    guard let bytes = try? POSIX.readFile(sample) else {
        check(false, "cannot read the sample catalog \(sample) (run from the repository root or set IAP_FUZZ_CATALOG)")
        return path
    }
    writeFile(path, bytes)
    return path
}()

/// rm -rf, for the fuzzer's own scratch directories only.
func removeTree(_ path: String) {
    guard let d = opendir(path) else {
        unlink(path)
        return
    }
    while let e = readdir(d) {
        let name = withUnsafeBytes(of: e.pointee.d_name) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        if name == "." || name == ".." { continue }
        let child = path + "/" + name
        var st = stat()
        if lstat(child, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR { removeTree(child) } else { unlink(child) }
    }
    closedir(d)
    rmdir(path)
}

/// Writes a whole file (test setup; not durable).
func writeFile(_ path: String, _ content: [UInt8]) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    check(fd >= 0, "cannot create \(path)")
    var off = 0
    content.withUnsafeBytes { b in
        while off < b.count {
            let n = write(fd, b.baseAddress! + off, b.count - off)
            check(n > 0, "cannot write \(path)")
            off += n
        }
    }
    close(fd)
}

/// Every string in a JSON value, depth first (for round-trip checks).
func allStrings(_ v: JSONValue, into out: inout [String]) {
    switch v {
    case .string(let s): out.append(s)
    case .array(let a): for e in a { allStrings(e, into: &out) }
    case .object(let o): for k in o.keys.sorted() { out.append(k); allStrings(o[k]!, into: &out) }
    default: break
    }
}

/// Checks that `message` is one valid JSON object with a string "type".
@discardableResult
func checkMessage(_ message: [UInt8], _ context: String) -> JSONValue {
    let v: JSONValue
    do { v = try JSONParser.parse(bytes: message) } catch {
        check(false, "\(context): emitted text is not JSON (\(error)): \(String(decoding: message, as: UTF8.self))")
        return .null
    }
    check(v["type"]?.stringValue != nil, "\(context): message without a string \"type\"")
    return v
}

/// The bytes of a NUL-terminated C string.
func cBytes(_ p: UnsafePointer<CChar>) -> [UInt8] {
    Array(UnsafeBufferPointer(start: UnsafeRawPointer(p).assumingMemoryBound(to: UInt8.self), count: strlen(p)))
}

/// Calls `body` with `bytes` as a NUL-terminated C string.
func withCString<T>(_ bytes: [UInt8], _ body: (UnsafePointer<CChar>) -> T) -> T {
    var c = bytes
    c.append(0)
    return c.withUnsafeBufferPointer { b in
        b.baseAddress!.withMemoryRebound(to: CChar.self, capacity: b.count) { body($0) }
    }
}
