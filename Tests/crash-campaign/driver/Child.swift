#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One run of the game as a real child process.
struct Child {
    enum Outcome: Equatable {
        case exited(Int32)
        case killed        // SIGKILL: ours, or a fault point's
        case signalled(Int32)
    }

    let pid: pid_t

    /// Starts `path` with `args`, the given extra environment, and stdout and
    /// stderr appended to `log`.
    static func spawn(_ path: String, _ args: [String], env extra: [String], log: String) -> Child {
        var fa = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&fa)
        defer { posix_spawn_file_actions_destroy(&fa) }
        posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&fa, 1, 2)
        var env: [String] = []
        var p = environ
        while let e = p.pointee {
            let s = String(cString: e)
            if !s.hasPrefix("IAP_CRASH_AT=") && !s.hasPrefix("IAP_OUTBOX_COMPACT_BYTES=") && !s.hasPrefix("SWIFT_BACKTRACE=") {
                env.append(s)
            }
            p += 1
        }
        env.append(contentsOf: extra)
        env.append("SWIFT_BACKTRACE=enable=no")   // we kill it on purpose
        let argv = ([path] + args).map { strdup($0) } + [nil]
        let envp = env.map { strdup($0) } + [nil]
        defer {
            for a in argv { free(a) }
            for e in envp { free(e) }
        }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &fa, nil, argv, envp)
        guard rc == 0 else { fatalError("cannot start \(path): \(String(cString: strerror(rc)))") }
        return Child(pid: pid)
    }

    func kill9() { _ = kill(pid, SIGKILL) }

    /// Waits for the end; after `timeoutMs` (if given) kills it first.
    /// Returns the outcome and whether the timeout fired.
    func wait(timeoutMs: Int? = nil) -> (Outcome, timedOut: Bool) {
        var status: Int32 = 0
        var timedOut = false
        if let timeoutMs {
            let deadline = monotonicMs() + timeoutMs
            while waitpid(pid, &status, WNOHANG) == 0 {
                if monotonicMs() > deadline {
                    timedOut = true
                    kill9()
                    _ = waitpid(pid, &status, 0)
                    break
                }
                usleep(500)
            }
        } else {
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
        // The <sys/wait.h> macros, which Swift does not import.
        let sig = status & 0x7f
        if sig == 0 { return (.exited((status >> 8) & 0xff), timedOut) }
        return (sig == SIGKILL ? .killed : .signalled(sig), timedOut)
    }
}

func monotonicMs() -> Int {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int(ts.tv_sec) * 1000 + Int(ts.tv_nsec) / 1_000_000
}

