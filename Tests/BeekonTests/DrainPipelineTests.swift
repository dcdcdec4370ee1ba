import BeekonTesting
import BeekonWire
import Foundation
import Testing

@testable import Beekon

/// The drain pipeline's decisions, event by event (SY-4..7): what overlaps, what waits,
/// and what a failure on the batch on the wire leaves behind.
@Suite struct DrainPipelineTests {
    /// An action without its payload, comparable.
    enum Step: Equatable, CustomStringConvertible {
        case prepare(Set<Int>, ack: Int?)
        case send(Int)
        case acknowledge(Int)
        case finish(DrainPipeline.End)

        var description: String {
            switch self {
            case .prepare(let x, let a): return "prepare(excluding \(x.sorted()), ack \(a.map(String.init) ?? "-"))"
            case .send(let n): return "send(\(n))"
            case .acknowledge(let n): return "acknowledge(\(n))"
            case .finish(let e): return "finish(\(e))"
            }
        }
    }

    static func id(_ n: Int) -> UUID { UUIDv7Generator.make(millis: 1_767_225_600_000, counter: 0, randomBits: UInt64(n)) }
    static func number(_ id: UUID) -> Int { (1...10_000).first { Self.id($0) == id } ?? -1 }

    /// Batch `n` with `fixes` fixes (2 = full at batch size 2).
    static func batch(_ n: Int, fixes: Int = 2) -> PreparedBatch {
        let session = id(9_999)
        let locations = (0..<fixes).map { i in
            Location(
                id: id(1_000 + n * 10 + i), sessionId: session, timestamp: Date(timeIntervalSince1970: Double(n * 10 + i)),
                latitude: 48, longitude: 11, accuracy: 5, speed: nil, bearing: nil, altitude: nil, trigger: .interval, motion: .unknown)
        }
        let pending = PendingBatch(
            id: id(n), sessionId: session, createdAt: Date(timeIntervalSince1970: 0), extras: [:], locations: locations,
            events: [], attempts: 0)
        return PreparedBatch(batch: pending, device: WireDevice(installId: id(9_998), platform: "linux", sdkVersion: "test"))
    }

    static func steps(_ actions: [DrainPipeline.Action]) -> [Step] {
        actions.map {
            switch $0 {
            case .prepare(let x, let a): return .prepare(Set(x.map(number)), ack: a.map(number))
            case .send(let b): return .send(number(b.batch.id))
            case .acknowledge(let id): return .acknowledge(number(id))
            case .finish(let e): return .finish(e)
            }
        }
    }

    /// A pipeline driven by hand, its actions returned as steps.
    final class Run {
        typealias T = DrainPipelineTests
        var pipeline = DrainPipeline(batchSize: 2)
        func start() -> [Step] { T.steps(pipeline.start()) }
        func failedPreparation() -> [Step] { T.steps(pipeline.handle(.prepared(.failure(.storage("disk"))))) }
        func prepared(_ n: Int?, fixes: Int = 2) -> [Step] {
            T.steps(pipeline.handle(.prepared(.success(n.map { T.batch($0, fixes: fixes) }))))
        }
        func answered(_ n: Int, _ accepted: Bool = true) -> [Step] { T.steps(pipeline.handle(.answered(T.id(n), accepted: accepted))) }
        func marked(_ n: Int, failed: Bool = false) -> [Step] {
            T.steps(pipeline.handle(.acknowledged(T.id(n), failure: failed ? .storage("injected") : nil)))
        }
    }

    /// SY-4: while a full batch is on the wire the next one is prepared; it goes out only
    /// once the first is accepted; a short batch prepares nothing ahead of it.
    @Test func theNextBatchIsPreparedWhileOneIsOnTheWireAndSentOnlyAfterItsAcceptance() {
        let r = Run()
        #expect(r.start() == [.prepare([], ack: nil)])
        #expect(r.prepared(1) == [.send(1), .prepare([1], ack: nil)])
        #expect(r.prepared(2, fixes: 1) == [], "held until batch 1 is accepted")
        #expect(r.answered(1) == [.send(2), .acknowledge(1)], "short: nothing prepared ahead of it")
        #expect(r.marked(1) == [])
        #expect(r.answered(2) == [.prepare([2], ack: 2)], "marked in the transaction that looks for more")
        #expect(r.marked(2) == [])
        #expect(r.prepared(nil) == [.finish(.drained)])
    }

    /// Steady state: when N is accepted, N+1 goes on the wire and one transaction marks N
    /// and assembles N+2 (left out: N+1 and N, in case the mark fails).
    @Test func theMarkOfNAndTheAssemblyOfNPlusTwoShareATransaction() {
        let r = Run()
        _ = r.start()
        _ = r.prepared(1)
        #expect(r.prepared(2) == [])
        #expect(r.answered(1) == [.send(2), .prepare([1, 2], ack: 1)])
        #expect(r.marked(1) == [])
        #expect(r.prepared(3) == [])
        #expect(r.answered(2) == [.send(3), .prepare([2, 3], ack: 2)])
    }

    /// The server's answer to N arrives before N+1 is prepared: N is marked on its own, and
    /// N+1 goes out as soon as it is ready (N left out of the next assembly while its mark runs).
    @Test func anAnswerBeforeTheNextBatchIsReadyWaitsForIt() {
        let r = Run()
        _ = r.start()
        _ = r.prepared(1)
        #expect(r.answered(1) == [.acknowledge(1)], "batch 2 is still being prepared")
        #expect(r.prepared(2) == [.send(2), .prepare([1, 2], ack: nil)], "batch 1's mark is still committing")
        #expect(r.marked(1) == [])
        #expect(r.answered(2) == [.acknowledge(2)])
        #expect(r.prepared(nil) == [])
        #expect(r.marked(2) == [.finish(.drained)])
    }

    /// SY-7: a failed exchange on N (5xx, 401, 413, 400, network, budget) sends nothing more;
    /// N+1, prepared meanwhile, is neither sent nor marked, and the drain ends only once its
    /// preparation is over — in either order.
    @Test(arguments: [false, true])
    func aFailureOnTheBatchOnTheWireSendsNothingMore(preparedFirst: Bool) {
        let r = Run()
        _ = r.start()
        _ = r.prepared(1)
        if preparedFirst {
            #expect(r.prepared(2) == [])
            #expect(r.answered(1, false) == [.finish(.stopped)])
        } else {
            #expect(r.answered(1, false) == [])
            #expect(r.prepared(2) == [.finish(.stopped)])
        }
    }

    /// A mark that fails stops the drain after the batch already on the wire: that batch's
    /// acceptance is still marked, the batch prepared meanwhile is not sent, the engine retries.
    @Test func aFailedMarkStopsTheDrainAfterTheBatchOnTheWire() {
        let r = Run()
        _ = r.start()
        _ = r.prepared(1)
        _ = r.prepared(2)
        #expect(r.answered(1) == [.send(2), .prepare([1, 2], ack: 1)])
        #expect(r.marked(1, failed: true) == [])
        #expect(r.prepared(3) == [], "prepared, kept queued, not sent")
        #expect(r.answered(2) == [.acknowledge(2)])
        #expect(r.marked(2) == [.finish(.acknowledgementFailed)])
    }

    /// The exchange's own outcome (already acted on: retry, hold) wins over a failed mark.
    @Test func aFailedExchangeOutranksAFailedMark() {
        let r = Run()
        _ = r.start()
        _ = r.prepared(1)
        _ = r.prepared(2)
        _ = r.answered(1)
        _ = r.marked(1, failed: true)
        _ = r.prepared(3)
        #expect(r.answered(2, false) == [.finish(.stopped)])
    }

    @Test func anAssemblyThatFailsEndsTheDrainOnceNothingIsOutstanding() {
        let r = Run()
        _ = r.start()
        let first = r.failedPreparation()
        if first.count != 1 { Issue.record("ended with \(first)") }
        if case .finish(.preparationFailed) = first.first {} else { Issue.record("ended with \(first)") }
        let ahead = Run()
        _ = ahead.start()
        _ = ahead.prepared(1)
        #expect(ahead.failedPreparation() == [])
        #expect(ahead.answered(1) == [.acknowledge(1)], "accepted: marked, nothing more sent")
        let end = ahead.marked(1)
        #expect(end.count == 1)
        if case .finish(.preparationFailed) = end.first {} else { Issue.record("ended with \(end)") }
    }

    @Test func anEmptyQueueEndsAtOnce() {
        let r = Run()
        _ = r.start()
        #expect(r.prepared(nil) == [.finish(.drained)])
    }
}

/// The pipeline against a model queue, with every completion order and outcome drawn at
/// random (seeded): whatever happens, one batch on the wire at a time, sends in queue
/// order each after the previous one's acceptance, a mark only after an acceptance and
/// once, one `finish` with nothing outstanding — and over repeated drains every batch is
/// accepted, first acceptances in queue order (no fix skipped), SY-4..7.
@Suite struct DrainPipelineModelTests {
    typealias T = DrainPipelineTests

    /// The store as the pipeline sees it: batches assembled in order, open until marked.
    struct Queue {
        var unassembled: Int
        var next = 1
        var open: [Int] = []
        var total: Int

        init(batches: Int) {
            unassembled = batches
            total = batches
        }

        mutating func assemble(excluding: Set<Int>) -> Int? {
            if let oldest = open.first(where: { !excluding.contains($0) }) { return oldest }
            guard unassembled > 0 else { return nil }
            unassembled -= 1
            defer { next += 1 }
            open.append(next)
            return next
        }
    }

    @Test(arguments: 0..<200)
    func invariantsHoldInEveryInterleaving(seed: Int) {
        var random = SeededRandom(seed: UInt64(seed))
        var queue = Queue(batches: Int.random(in: 0...6, using: &random))
        var firstAccepted: [Int] = []
        for _ in 0..<200 {
            if drain(&queue, &random, &firstAccepted) { break }
        }
        #expect(queue.open.isEmpty && queue.unassembled == 0, "seed \(seed): left \(queue.open)")
        #expect(firstAccepted == (0..<queue.total).map { $0 + 1 }, "seed \(seed)")
    }

    /// One drain; true when it ended drained.
    private func drain(_ queue: inout Queue, _ random: inout SeededRandom, _ firstAccepted: inout [Int]) -> Bool {
        var pipeline = DrainPipeline(batchSize: 2)
        var outstanding: [DrainPipeline.Action] = pipeline.start()
        var accepted: Set<Int> = []
        var marked: Set<Int> = []
        var lastSent = 0
        while true {
            if let f = outstanding.firstIndex(where: { if case .finish = $0 { return true } else { return false } }) {
                guard case .finish(let end) = outstanding.remove(at: f) else { return false }
                #expect(outstanding.isEmpty, "finish with work outstanding: \(outstanding.count)")
                if end == .drained { #expect(queue.open.isEmpty && queue.unassembled == 0) }
                return end == .drained
            }
            #expect(outstanding.filter { if case .send = $0 { return true } else { return false } }.count <= 1, "two on the wire")
            guard !outstanding.isEmpty else {
                Issue.record("stalled: nothing outstanding and no finish")
                return true
            }
            var events: [DrainPipeline.Event] = []
            switch outstanding.remove(at: Int.random(in: 0..<outstanding.count, using: &random)) {
            case .prepare(let excluding, let mark):
                if Int.random(in: 0..<30, using: &random) == 0 {  // the whole transaction fails
                    if let mark { events.append(.acknowledged(mark, failure: .storage("injected"))) }
                    events.append(.prepared(.failure(.storage("injected"))))
                } else {
                    if let mark { events.append(Self.mark(mark, &queue, &random, accepted: accepted, marked: &marked)) }
                    let n = queue.assemble(excluding: Set(excluding.map(T.number)))
                    let short = n == queue.total && queue.unassembled == 0
                    events.append(.prepared(.success(n.map { T.batch($0, fixes: short ? 1 : 2) })))
                }
            case .send(let batch):
                let n = T.number(batch.batch.id)
                #expect(n > lastSent, "sent \(n) after \(lastSent)")
                #expect(queue.open.first(where: { !accepted.contains($0) }) == n, "\(n) is the oldest unaccepted open batch")
                lastSent = n
                let ok = Int.random(in: 0..<8, using: &random) != 0
                if ok {
                    accepted.insert(n)
                    if !firstAccepted.contains(n) { firstAccepted.append(n) }
                }
                events.append(.answered(batch.batch.id, accepted: ok))
            case .acknowledge(let id):
                events.append(Self.mark(id, &queue, &random, accepted: accepted, marked: &marked))
            case .finish:
                return false
            }
            for event in events { outstanding += pipeline.handle(event) }
        }
    }

    /// Marks batch `id` in the model (failing one time in twenty); checks it was accepted and is marked once.
    private static func mark(
        _ id: UUID, _ queue: inout Queue, _ random: inout SeededRandom, accepted: Set<Int>, marked: inout Set<Int>
    ) -> DrainPipeline.Event {
        let n = T.number(id)
        #expect(accepted.contains(n) && !marked.contains(n), "marked \(n) without acceptance, or twice")
        marked.insert(n)
        let fails = Int.random(in: 0..<20, using: &random) == 0
        if !fails { queue.open.removeAll { $0 == n } }
        return .acknowledged(id, failure: fails ? .storage("injected") : nil)
    }
}
