import Foundation
import Glibc
import ShelfTesting
import Synchronization

/// A `shelfd` process started by the benchmark, with the instant it exited.
final class Child: Sendable {
    private let process: Process
    private let exit = ExitMark()

    /// Set by the termination handler, which runs once the child is reaped.
    private final class ExitMark: Sendable {
        let time = Mutex<ContinuousClock.Instant?>(nil)
        let semaphore = DispatchSemaphore(value: 0)
    }

    /// Starts `executable arguments…` with exactly `environment`; stdout and stderr go to `log`.
    init(_ executable: URL, _ arguments: [String], environment: [String: String], log: URL) throws {
        process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let output = try FileHandle(forWritingTo: log)
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        process.terminationHandler = { [exit] _ in
            exit.time.withLock { $0 = .now }
            exit.semaphore.signal()
        }
        try process.run()
    }

    var pid: pid_t { process.processIdentifier }

    /// Waits for the exit (reaped, so its usage is in `RUSAGE_CHILDREN`); nil after `timeout`.
    func waitForExit(timeout: Duration) -> (status: Int32, at: ContinuousClock.Instant)? {
        guard exit.semaphore.wait(timeout: .now() + .milliseconds(Int(timeout / .milliseconds(1)))) == .success
        else { return nil }
        exit.semaphore.signal() // a later wait returns at once
        return (process.terminationStatus, exit.time.withLock { $0 } ?? .now)
    }

    func terminate() { process.terminate() } // SIGTERM
    func kill() { Glibc.kill(pid, SIGKILL) }
}

/// Usage figures of a process, read from /proc while it runs.
enum ProcFS {
    static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    /// User + system CPU of every thread, in seconds (clock-tick resolution, usually 10 ms).
    static func cpuSeconds(_ pid: pid_t) -> Double? {
        guard let text = read("/proc/\(pid)/stat"), let paren = text.lastIndex(of: ")") else { return nil }
        // After "pid (comm)": state is field 3, so utime (14) and stime (15) are the 12th and 13th.
        let fields = text[text.index(after: paren)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / ticksPerSecond
    }

    /// A `Vm…` line of /proc/PID/status (`VmRSS`, `VmHWM`), in MB.
    static func memoryMB(_ pid: pid_t, _ field: String) -> Double? {
        guard let text = read("/proc/\(pid)/status") else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            let kilobytes = line.split(separator: " ").compactMap { Double($0) }.first
            return kilobytes.map { $0 / 1024 }
        }
        return nil
    }

    /// Context switches of each thread so far: each one is a thread going to sleep or being woken.
    static func contextSwitches(_ pid: pid_t) -> [String: Int] {
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        var counts: [String: Int] = [:]
        for thread in threads {
            guard let text = read("/proc/\(pid)/task/\(thread)/status") else { continue }
            for line in text.split(separator: "\n") where line.contains("ctxt_switches:") { // voluntary + nonvoluntary
                counts[thread, default: 0] += Int(line.split(separator: "\t").last ?? "") ?? 0
            }
        }
        return counts
    }

    /// Switches made between two samples by the threads alive at the second one. Threads come and go
    /// (Dispatch's worker pool), so summing totals could even go negative; a thread that exited in
    /// between is not counted.
    static func contextSwitches(from before: [String: Int], to after: [String: Int]) -> Int {
        after.reduce(0) { $0 + max(0, $1.value - (before[$1.key] ?? 0)) }
    }

    /// /proc files report size 0, so read to the end rather than by size.
    private static func read(_ path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        return String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
    }
}

/// User + system CPU of every reaped child of this process, in seconds. The benchmark runs one child at
/// a time, so the difference across a child's life is that child's. (Not `ru_maxrss`: it also counts
/// children reaped before an exec, such as the `swift build` of the script that started us.)
func childrenCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_CHILDREN.rawValue), &usage)
    func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// Stamps each request the emulator logs with the moment it was first seen. The emulator logs a
/// request once it has read and checked it, just before its latency starts; a 1 ms poll on a
/// thread of our own is the only clock it has.
final class RequestClock: Sendable {
    private let arrivals = Mutex<[ContinuousClock.Instant]>([])
    private let stopped = Atomic(false)
    private let emulator: GeminiEmulator

    init(_ emulator: GeminiEmulator) {
        self.emulator = emulator
        let thread = Thread { [self] in
            while !stopped.load(ordering: .relaxed) {
                let count = emulator.requests.count
                let now = ContinuousClock.now
                arrivals.withLock { while $0.count < count { $0.append(now) } }
                usleep(1000)
            }
        }
        thread.name = "bench.request-clock"
        thread.start()
    }

    deinit { stop() }

    func stop() { stopped.store(true, ordering: .relaxed) }

    /// Arrival instants, in order.
    var all: [ContinuousClock.Instant] { arrivals.withLock { $0 } }

    /// Requests after the first `count` that the emulator refused with 429.
    func refused(from count: Int) -> Int { emulator.requests.dropFirst(count).filter { $0.status == 429 }.count }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
