import Foundation
import IAPCore
import Testing

/// The SDK's threads carry names a game developer recognises in a profiler,
/// a debugger or a crash report (Xcode, Instruments, Unity's profiler, gdb).
/// Each thread reads its own name from Linux's /proc/thread-self/comm, which
/// is what gdb and perf show.
@Suite("Thread names")
struct ThreadNameTests {
    static func ownName() -> String? {
        (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("the SDK thread is \"IAPBridge SDK\", the callback thread \"IAPBridge calls\"",
          .enabled(if: ThreadNameTests.ownName() != nil, "no /proc/thread-self/comm on this system"))
    func named() throws {
        let mine = ThreadNameTests.ownName()
        let env = TestEnv()
        let bridge = try env.open()
        defer { bridge.close() }
        let sdk = Locked<String?>(nil)
        #expect(bridge.c.executor.runAndWait { sdk.withLock { $0 = ThreadNameTests.ownName() } })
        #expect(sdk.withLock { $0 } == "IAPBridge SDK")

        let calls = Locked<String?>(nil)
        let heard = OneShot()
        bridge.c.queue.setListener { _ in
            calls.withLock { $0 = ThreadNameTests.ownName() }
            heard.signal()
        }
        bridge.c.queue.push(Array("{\"type\":\"test\"}".utf8))
        #expect(heard.wait(timeoutMs: 10_000))
        #expect(calls.withLock { $0 } == "IAPBridge calls")
        // The game's own thread keeps its name.
        #expect(ThreadNameTests.ownName() == mine)
    }
}
