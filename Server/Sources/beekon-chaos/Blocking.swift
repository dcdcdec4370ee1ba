import Foundation

/// Runs blocking work (a `pg_ctl` restart, filling a disk, a viewer's socket loop) on a
/// thread of its own, so that it never holds one of the few cooperative threads.
enum Blocking {
    /// `work`'s result, computed on a new thread.
    static func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: work()) }.start()
        }
    }
}
