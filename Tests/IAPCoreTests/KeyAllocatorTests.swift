@testable import IAPCore
import IAPTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Issue 21, item 8: the game thread takes keys from a small allocator
/// whose mark only rises; the SDK thread tells it what became of each key
/// and never takes the game-facing lock. These tests drive it as both
/// threads do and check C7 (keys only increase) and the in-flight bound.
@Suite("Key allocator")
struct KeyAllocatorTests {
    @Test("20,000 random calls: every key is above every key and every raised mark before it, below the key limit; refusals take nothing; at most maxInFlight in flight")
    func model() {
        var rng = SplitMix64(seed: 21)
        // Around the lowest click that is its own key (10^12: below it, an
        // engine clock's click gets a key past the wall clock).
        let low = KeyAllocator.lowestClickKey
        let a = KeyAllocator(mark: low + 1_000, awaiting: [7], maxInFlight: 4)
        var highest: Int64 = low + 1_000  // the model's mark
        var inFlight = Set<Int64>(), awaiting: Set<Int64> = [7]
        var now: Int64 = low + 500
        var taken = 0, busy = 0, closed = 0, exhausted = 0
        for step in 0..<20_000 {
            now += Int64(rng.next() % 3)
            switch rng.next() % 6 {
            case 0, 1:
                let click: Int64 = switch rng.next() % 5 {
                case 0: 0
                case 1: highest - Int64(rng.next() % 5)  // at or below the mark
                case 2: highest + 1 + Int64(rng.next() % 10)
                // Near the limit only at the end: it uses up every key.
                case 3 where step > 19_000: Outbox.keyLimit - 1 - Int64(rng.next() % 2)
                case 4 where step % 2 == 0: Int64(rng.next() % 4_000)  // an engine clock
                default: low - 2_000 + Int64(rng.next() % 8_000)
                }
                let accept = rng.next() % 10 != 0
                do throws(IAPError) {
                    let k = try a.take(clickMs: click, nowMs: now) { _ in accept }
                    #expect(accept, "a key was taken though its purchase was not posted")
                    #expect(k > highest && k < Outbox.keyLimit, "key \(k) after mark \(highest)")
                    #expect(k == (click > highest && click >= low ? click : max(now, highest + 1)))
                    highest = k
                    inFlight.insert(k)
                    awaiting.insert(k)
                    taken += 1
                } catch {
                    switch error.code {
                    case .busy: busy += 1; #expect(inFlight.count == 4)
                    case .closed: closed += 1; #expect(!accept)
                    case .invalidArgument: exhausted += 1; #expect(highest >= Outbox.keyLimit - 1 || click >= Outbox.keyLimit)
                    default: Issue.record("unexpected \(error)")
                    }
                }
            case 2:
                if let k = inFlight.sorted().randomElement(using: &rng) { a.answered(k); inFlight.remove(k) }
            case 3:
                if let k = awaiting.sorted().randomElement(using: &rng) { a.resolved(k); awaiting.remove(k) }
            case 4:
                if let k = inFlight.sorted().randomElement(using: &rng) { a.abandoned(k); inFlight.remove(k); awaiting.remove(k) }
            default:
                // The store answers with a click key, maybe one from before a restore.
                let k = rng.next() % 4 == 0 ? Outbox.keyLimit + 5 : highest - 100 + Int64(rng.next() % 200)
                a.raise(to: k)
                if k < Outbox.keyLimit { highest = max(highest, k) }
            }
            #expect(a.currentMark == highest)
            #expect(a.inFlightCount == inFlight.count && a.inFlightCount <= 4)
            for k in [7, highest] { #expect(a.isAwaiting(k) == awaiting.contains(k)) }
        }
        print("key allocator model: \(taken) taken, \(busy) busy, \(closed) not posted, \(exhausted) past the key limit")
        #expect(taken > 1_000 && busy > 100 && closed > 100 && exhausted > 0)
    }

    @Test("4 threads taking keys at once: all distinct, and in the order their purchases were posted they only increase")
    func concurrent() {
        let a = KeyAllocator(mark: 0, awaiting: [], maxInFlight: 1 << 20)
        let posted = Locked<[Int64]>([])
        let threads = 4, perThread = 5_000
        var ids: [pthread_t] = []
        for _ in 0..<threads {
            var t = pthread_t()
            let box = Unmanaged.passRetained(Job {
                for i in 0..<perThread {
                    // Low and zero clicks: the allocator must pick past its mark.
                    _ = try? a.take(clickMs: Int64(i % 3), nowMs: 1) { k in posted.withLock { $0.append(k) }; return true }
                }
            })
            pthread_create(&t, nil, { p in
                Unmanaged<Job>.fromOpaque(p!).takeRetainedValue().body()
                return nil
            }, box.toOpaque())
            ids.append(t)
        }
        for t in ids { pthread_join(t, nil) }
        let keys = posted.withLock { $0 }
        #expect(keys.count == threads * perThread)
        #expect(zip(keys, keys.dropFirst()).allSatisfy { $0 < $1 }, "keys posted out of order")
        #expect(a.currentMark == keys.last)
    }

    final class Job: @unchecked Sendable {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }
}
