import Foundation
import Testing
import Beekon
import BeekonTestSupport
@testable import BeekonSources
#if canImport(Glibc)
    import Glibc
#endif

/// Events in arrival order.
final class EventLog: @unchecked Sendable {
    private var events: [LiveSourceEvent] = []
    private let lock = NSLock()
    func append(_ e: LiveSourceEvent) { lock.withLock { events.append(e) } }
    var all: [LiveSourceEvent] { lock.withLock { events } }
}

/// Consumes a provider's stream and its events; tests wait on what arrived.
actor StreamCollector {
    private(set) var fixes: [RawFix] = []
    private nonisolated let eventLog = EventLog()
    var events: [LiveSourceEvent] { eventLog.all }
    private(set) var outcome: Result<Void, any Error>?
    private var waiters: [(id: Int, check: @Sendable (StreamCollector.Snapshot) -> Bool, c: CheckedContinuation<Void, Never>)] = []
    private var nextID = 0

    struct Snapshot: Sendable {
        var fixes: [RawFix]
        var events: [LiveSourceEvent]
        var finished: Bool
    }

    var snapshot: Snapshot { Snapshot(fixes: fixes, events: events, finished: outcome != nil) }

    nonisolated func eventHandler() -> @Sendable (LiveSourceEvent) -> Void {
        { [eventLog] event in
            eventLog.append(event)  // synchronously, so events keep their order relative to the stream
            Task { await self.eventArrived() }
        }
    }

    /// Starts consuming `stream` in a task.
    nonisolated func consume(_ stream: AsyncThrowingStream<RawFix, any Error>) {
        Task {
            do {
                for try await fix in stream { await self.add(fix) }
                await self.finish(.success(()))
            } catch {
                await self.finish(.failure(error))
            }
        }
    }

    func add(_ fix: RawFix) {
        fixes.append(fix)
        check()
    }
    func eventArrived() { check() }
    func finish(_ r: Result<Void, any Error>) {
        outcome = r
        check()
    }

    /// Waits (bounded) until `condition` holds; throws with the state on timeout or
    /// when the stream ends without it.
    func wait(
        _ what: String, timeout: Duration = .seconds(30),
        _ condition: @escaping @Sendable (Snapshot) -> Bool
    ) async throws {
        do {
            try await Deadline.run(timeout, what) { [self] in
                await self.suspend(until: condition)
            }
        } catch {
            let s = snapshot
            throw Deadline.Expired(
                description:
                    "\(error): \(s.fixes.count) fixes (last \(String(describing: s.fixes.last?.timestamp))), events \(s.events.suffix(6)), outcome \(String(describing: outcome))"
            )
        }
        let s = snapshot
        if !condition(s) {
            throw Deadline.Expired(
                description:
                    "stream ended before \(what): \(s.fixes.count) fixes, events \(s.events), outcome \(String(describing: outcome))")
        }
    }

    private func suspend(until condition: @escaping @Sendable (Snapshot) -> Bool) async {
        if condition(snapshot) || outcome != nil { return }
        nextID += 1
        let id = nextID
        await withTaskCancellationHandler {
            await withCheckedContinuation { c in waiters.append((id, condition, c)) }
        } onCancel: {
            Task { await self.cancel(id) }
        }
    }

    private func cancel(_ id: Int) {
        if let i = waiters.firstIndex(where: { $0.id == id }) { waiters.remove(at: i).c.resume() }
    }

    private func check() {
        let s = snapshot
        let ready = waiters.filter { $0.check(s) || outcome != nil }
        waiters.removeAll { w in ready.contains { $0.id == w.id } }
        for w in ready { w.c.resume() }
    }
}

extension RawFix {
    /// Milliseconds since midnight UTC: gpsd 3.22 may shift old logs' dates by 1024 weeks.
    var millisOfDay: Int64 {
        let ms = Int64((timestamp.timeIntervalSince1970 * 1000).rounded())
        return ((ms % 86_400_000) + 86_400_000) % 86_400_000
    }
}

/// Writes the first `count` lines of a shared NMEA log (lines `from..<from+count`) to a temp file.
func nmeaSlice(_ relative: String, from: Int = 0, count: Int, dir: URL) throws -> URL {
    let text = String(decoding: try SharedData.data(relative), as: UTF8.self)
    let lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).dropFirst(from).prefix(count)
    let url = dir.appendingPathComponent("slice-\(from)-\(count)-\(URL(fileURLWithPath: relative).lastPathComponent)")
    try (lines.joined(separator: "\n") + "\n").write(to: url, atomically: true, encoding: .utf8)
    return url
}

/// The parser's fixes for a whole file (the expected epochs).
func parsedFixes(_ url: URL) throws -> [RawFix] {
    var parser = NMEAParser()
    let data = try Data(contentsOf: url)
    return parser.feed(data) + parser.finish()
}
