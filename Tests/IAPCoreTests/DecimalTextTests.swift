import IAPCore
import Testing

/// UTF8Text.decimal, the open's integer-to-text path, against the standard
/// library's `String(_:)`: the same text for every edge and digit-count
/// boundary and for a spread of values, signed and unsigned.
@Suite("Decimal text")
struct DecimalTextTests {
    @Test("edges and every power-of-ten boundary, signed and unsigned")
    func boundaries() {
        var signed: [Int64] = [0, 1, -1, 9, -9, Int64.max, Int64.min, Int64.max - 1, Int64.min + 1]
        var unsigned: [UInt64] = [0, 1, UInt64.max, UInt64.max - 1, UInt64(Int64.max) + 1]
        var p: UInt64 = 1
        for _ in 0..<19 {
            p *= 10
            for v in [p - 1, p, p + 1] {
                unsigned.append(v)
                if v <= UInt64(Int64.max) { signed.append(Int64(v)); signed.append(-Int64(v)) }
            }
        }
        for v in signed { #expect(UTF8Text.decimal(v) == String(v), "\(v)") }
        for v in unsigned { #expect(UTF8Text.decimal(v) == String(v), "\(v)") }
    }

    @Test("200,000 values spread over the whole range")
    func spread() {
        var rng = SystemRandomNumberGenerator()
        var wrong: [Int64] = []
        for i in 0..<200_000 {
            // Every magnitude: shift a random value right by 0 to 63 bits.
            let v = Int64(bitPattern: rng.next()) >> (i % 64)
            if UTF8Text.decimal(v) != String(v) { wrong.append(v) }
            let u = rng.next() as UInt64 >> UInt64(i % 64)
            if UTF8Text.decimal(u) != String(u) { wrong.append(Int64(bitPattern: u)) }
        }
        #expect(wrong.isEmpty, "first: \(wrong.prefix(5))")
    }

    @Test("the JSON writer's integers, bare and quoted, at every boundary and 50,000 spread values")
    func jsonIntegers() {
        var values: [Int64] = [0, 1, -1, 9, -9, 10, 99, 100, -100, Int64.max, Int64.min, Int64.max - 1, Int64.min + 1]
        var p: Int64 = 1
        for _ in 0..<18 {
            p *= 10
            values += [p - 1, p, p + 1, -(p - 1), -p, -(p + 1)]
        }
        var rng = SystemRandomNumberGenerator()
        for i in 0..<50_000 { values.append(Int64(bitPattern: rng.next()) >> (i % 64)) }
        var wrong: [Int64] = []
        for v in values {
            var w = JSONObjectWriter()
            w.int("n", v)
            w.intString("k", v)
            if String(decoding: w.finish(), as: UTF8.self) != "{\"n\":\(v),\"k\":\"\(v)\"}" { wrong.append(v) }
        }
        #expect(wrong.isEmpty, "first: \(wrong.prefix(5))")
    }
}
