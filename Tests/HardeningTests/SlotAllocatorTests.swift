@testable import IAPBridge
import Testing

/// Issue 21, item 11: the handle table's slot search is bounded. Before,
/// the guard counted live bridges only: with every other slot reserved
/// (opens and closes in progress) `iap_open` spun under the registry lock
/// for ever, and every other call that takes that lock with it.
@Suite("Handle slots")
struct SlotAllocatorTests {
    @Test("every slot reserved or live but one live: reserve answers nil at once (the old search spun for ever); a released slot is handed out again")
    func fullOfReservations() {
        var a = SlotAllocator(capacity: 4)
        let first = a.reserve()
        #expect(first != nil)
        a.commit(first!)
        var held: [Int] = []
        for _ in 0..<3 { if let s = a.reserve() { held.append(s) } }
        #expect(Set(held + [first!]).count == 4, "four distinct slots")
        #expect(a.live == 1 && a.reserved == 3 && a.free == 0)
        #expect(a.reserve() == nil, "nothing free: refused, not searched for ever")
        a.release(held[1])
        #expect(a.reserve() == held[1])
        a.retire(first!)
        #expect(a.reserve() == nil, "a bridge being closed keeps its slot until released")
        a.release(first!)
        #expect(a.reserve() == first)
    }

    @Test("20,000 random opens, failed opens, closes and releases against a model: counts agree, a slot is never handed out twice, reserve fails only when nothing is free")
    func randomAgainstModel() {
        var a = SlotAllocator(capacity: 16)
        var model: [SlotAllocator.State] = Array(repeating: .free, count: 16)
        var rng = SystemRandomNumberGenerator()
        var refusals = 0
        for _ in 0..<20_000 {
            switch Int.random(in: 0..<4, using: &rng) {
            case 0:
                if let s = a.reserve() {
                    #expect(model[s] == .free, "slot \(s) handed out while \(model[s])")
                    model[s] = .reserved
                } else {
                    #expect(!model.contains(.free), "refused with a free slot")
                    refusals += 1
                }
            case 1:
                if let s = model.indices.filter({ model[$0] == .reserved }).randomElement(using: &rng) {
                    if Bool.random(using: &rng) { a.commit(s); model[s] = .live } else { a.release(s); model[s] = .free }
                }
            case 2:
                if let s = model.indices.filter({ model[$0] == .live }).randomElement(using: &rng) { a.retire(s); model[s] = .reserved }
            default:
                if let s = model.indices.randomElement(using: &rng) {
                    a.release(s)
                    if model[s] == .reserved { model[s] = .free }
                }
            }
            #expect(a.states == model)
            #expect(a.live == model.filter { $0 == .live }.count && a.reserved == model.filter { $0 == .reserved }.count)
        }
        #expect(refusals > 0, "the run reached a full table")
    }
}
