import BeekonPrimitives
import Foundation

/// Group commit (issue 32): concurrent uploads share one transaction and so one fsync.
///
/// One writer at a time: the first upload to arrive while no commit runs starts a writer,
/// which takes everything queued (at most `maxGroup` items), commits it in one transaction
/// and answers every upload in it; uploads arriving meanwhile wait for the next round, so a
/// group is whatever arrived while the previous commit was flushing. `commit` returns one
/// outcome per item, in order: each item runs in its own savepoint, so one bad batch fails
/// alone, and every success is answered only after the shared commit (a failed commit fails
/// them all).
final class GroupCommit<Item: Sendable, Outcome: Sendable>: Sendable {
    typealias Answer = Result<Outcome, StoreError>
    private let state = Locked(State())
    private let maxGroup: Int
    private let commit: @Sendable ([Item]) async -> [Answer]

    struct State: Sendable {
        var queue: [(Item, CheckedContinuation<Answer, Never>)] = []
        var running = false
        /// Groups committed and items in them, for the benchmark and the tests' metrics.
        var groups = 0, items = 0
    }

    init(maxGroup: Int = 512, commit: @escaping @Sendable ([Item]) async -> [Answer]) {
        self.maxGroup = maxGroup
        self.commit = commit
    }

    /// Queues `item` and returns its outcome once its group has committed.
    func submit(_ item: Item) async throws(StoreError) -> Outcome {
        let answer = await withCheckedContinuation { (c: CheckedContinuation<Answer, Never>) in
            let start = state.withLock { s -> Bool in
                s.queue.append((item, c))
                guard !s.running else { return false }
                s.running = true
                return true
            }
            // The writer is not tied to any one request: a client that goes away does not
            // cancel the commit of its neighbours.
            if start { Task { await self.drain() } }
        }
        return try answer.get()
    }

    /// Groups and items taken by the writer so far, and items waiting for the next group.
    var counts: GroupCommitCounts { state.withLock { GroupCommitCounts(groups: $0.groups, uploads: $0.items, waiting: $0.queue.count) } }

    private func drain() async {
        while true {
            let group = state.withLock { s -> [(Item, CheckedContinuation<Answer, Never>)] in
                let g = Array(s.queue.prefix(maxGroup))
                s.queue.removeFirst(g.count)
                if g.isEmpty {
                    s.running = false
                } else {
                    s.groups += 1
                    s.items += g.count
                }
                return g
            }
            guard !group.isEmpty else { return }
            let answers = await commit(group.map(\.0))
            for (i, waiter) in group.enumerated() {
                waiter.1.resume(returning: i < answers.count ? answers[i] : .failure(.queryFailed("no outcome for a grouped item")))
            }
        }
    }
}

/// What group commit has done so far (benchmarks and tests).
package struct GroupCommitCounts: Sendable, Equatable {
    /// Transactions the writer started (one per group).
    package var groups: Int
    /// Uploads in them.
    package var uploads: Int
    /// Uploads waiting for the next group.
    package var waiting: Int

    /// Creates counts.
    package init(groups: Int, uploads: Int, waiting: Int) {
        self.groups = groups
        self.uploads = uploads
        self.waiting = waiting
    }
}
