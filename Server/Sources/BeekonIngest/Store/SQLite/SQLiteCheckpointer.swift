import BeekonPrimitives
import Foundation
import GRDB
import GRDBSQLite

/// Runs SQLite's WAL checkpoints on a connection of their own, off the one writer (issue 32).
///
/// By default SQLite checkpoints inside a commit: once the WAL holds 1,000 pages, the
/// connection that committed copies them into the database file and syncs it before its
/// `COMMIT` returns. For the ingest path that connection is the one writer, so every upload
/// queued behind a group also waited for that copy and sync. Under 1,000 devices' uploads the
/// WAL passes 1,000 pages every few groups (BENCHMARKS.md has the writer's phases).
///
/// Here the writer connection's WAL hook (`sqlite3_wal_hook`, which replaces SQLite's automatic
/// checkpoint) only *asks* for a checkpoint once the WAL holds ``Policy/backgroundFrames``.
/// A separate connection runs a `PASSIVE` checkpoint, which copies what no reader still needs
/// without the write lock, so the writer keeps committing meanwhile; requests that arrive while
/// one runs fold into one more run after it. A checkpoint on another connection rarely
/// *completes* while uploads keep arriving, and until one completes the WAL cannot restart and
/// only grows; so once a background run leaves at most ``Policy/finishFrames`` uncopied, the
/// writer's next commit copies that remainder itself (a few pages instead of a thousand), and
/// the transaction after it restarts the WAL. The bound stays: should the WAL still reach
/// ``Policy/writerFrames`` (the background connection is behind, or a long read pins old
/// pages), the writer checkpoints on its own, as SQLite's hook would.
///
/// Durability does not change: a commit is on disk once its WAL frames are synced
/// (`synchronous=FULL`), before any checkpoint; a checkpoint only moves committed pages.
final class SQLiteCheckpointer: Sendable {
    /// When checkpoints run, in WAL frames (pages).
    struct Policy: Sendable, Equatable {
        /// Ask the background connection for a checkpoint at this many frames.
        var backgroundFrames: Int32
        /// A background checkpoint that leaves at most this many frames uncopied is finished by
        /// the writer at its next commit (``CheckpointSchedule/WriterCheckpoint/finish``).
        var finishFrames: Int32
        /// The writer checkpoints itself at this many (the bound on the WAL's growth).
        var writerFrames: Int32

        /// 4,096 frames (16 MiB at SQLite's 4 KiB pages) in the background; the writer copies
        /// the last 128 or fewer (SQLite's own hook made it copy about 1,000 every time), and
        /// checkpoints on its own at 65,536 (256 MiB).
        static let standard = Policy(backgroundFrames: 4_096, finishFrames: 128, writerFrames: 65_536)
    }

    /// Checkpoints so far, for `/metrics` and tests.
    struct Counts: Sendable, Equatable {
        /// Completed background checkpoints (a refused one is not counted).
        var background = 0
        /// Checkpoints the writer ran to finish a background one (``CheckpointSchedule/WriterCheckpoint/finish``).
        var writerFinish = 0
        /// Checkpoints the writer ran because the WAL reached ``Policy/writerFrames``.
        var writerBound = 0
        /// Checkpoints the writer asked for and SQLite refused (`SQLITE_BUSY`: the background
        /// connection was checkpointing); a refused finish is tried again at the next commit.
        var writerBusy = 0
        /// Seconds the background connection spent checkpointing.
        var backgroundSeconds = 0.0
        /// The most frames the WAL held after a commit.
        var largestWAL: Int32 = 0
        /// Frames in the WAL after the latest commit.
        var walFrames: Int32 = 0
    }

    private struct State {
        /// The background connection, once ``open(path:)`` has run.
        var connection: DatabaseQueue?
        var schedule: CheckpointSchedule
    }

    private let state: Locked<State>
    private let hook: HookContext
    private let finished: (@Sendable (Counts) -> Void)?

    /// A checkpointer with `policy`; `finished` is told after each background checkpoint
    /// (tests). The store installs it on the writer connection as the pool opens it, then
    /// opens the background connection (``open(path:)``) once the file is in WAL mode.
    init(policy: Policy = .standard, finished: (@Sendable (Counts) -> Void)? = nil) {
        self.finished = finished
        state = Locked(State(schedule: CheckpointSchedule(policy: policy)))
        hook = HookContext(policy: policy)
        hook.checkpointer.withLock { $0.value = self }
    }

    /// Opens the background connection to the database at `path`. Until it is open only the
    /// writer's bound applies.
    func open(path: String) throws {
        var config = Configuration()
        config.label = "beekon-ingest.checkpoint"
        config.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        let connection = try DatabaseQueue(path: path, configuration: config)
        state.withLock { $0.connection = connection }
    }

    /// Checkpoints so far.
    var counts: Counts { state.withLock { $0.schedule.counts } }

    /// The Prometheus text of `counts`.
    static func metricsText(_ counts: Counts) -> String {
        """
        # HELP beekon_sqlite_checkpoints_total WAL checkpoints, by the connection that ran them.
        # TYPE beekon_sqlite_checkpoints_total counter
        beekon_sqlite_checkpoints_total{connection="background"} \(counts.background)
        beekon_sqlite_checkpoints_total{connection="writer",reason="finish"} \(counts.writerFinish)
        beekon_sqlite_checkpoints_total{connection="writer",reason="bound"} \(counts.writerBound)
        # HELP beekon_sqlite_checkpoints_refused_total Checkpoints the writer asked for while another was running.
        # TYPE beekon_sqlite_checkpoints_refused_total counter
        beekon_sqlite_checkpoints_refused_total \(counts.writerBusy)
        # HELP beekon_sqlite_checkpoint_seconds_total Time the background connection spent checkpointing.
        # TYPE beekon_sqlite_checkpoint_seconds_total counter
        beekon_sqlite_checkpoint_seconds_total \(counts.backgroundSeconds)
        # HELP beekon_sqlite_wal_frames_max The most frames the WAL held after a commit.
        # TYPE beekon_sqlite_wal_frames_max gauge
        beekon_sqlite_wal_frames_max \(counts.largestWAL)

        """
    }

    /// Installs the WAL hook on the writer connection `db` (from its `prepareDatabase`).
    ///
    /// The hook's context is retained for the life of the process, a few bytes per store
    /// opened: SQLite may call the hook for as long as the connection lives, which GRDB, not
    /// this object, decides. It refers to the checkpointer weakly.
    func install(on db: Database) {
        let context = Unmanaged.passRetained(hook).toOpaque()
        sqlite3_wal_hook(
            db.sqliteConnection,
            { context, connection, name, frames in
                guard let context else { return SQLITE_OK }
                let hook = Unmanaged<HookContext>.fromOpaque(context).takeUnretainedValue()
                return hook.committed(frames: frames, connection: connection, name: name)
            }, context)
    }

    /// Called on the writer's thread after a commit left `frames` in the WAL: starts a
    /// background checkpoint when due, and says whether the writer should run one itself.
    fileprivate func committed(frames: Int32) -> CheckpointSchedule.WriterCheckpoint? {
        let (action, connection) = state.withLock { state in
            (state.schedule.committed(frames: frames, backgroundOpen: state.connection != nil), state.connection)
        }
        switch action {
        case .none: return nil
        case .startBackground:
            if let connection { run(on: connection) }
            return nil
        case .checkpointOnWriter(let reason): return reason
        }
    }

    /// Records a checkpoint the writer ran; `ok`: SQLite returned `SQLITE_OK`.
    fileprivate func ranOnWriter(_ reason: CheckpointSchedule.WriterCheckpoint, ok: Bool) {
        state.withLock { $0.schedule.writerRan(reason, ok: ok) }
    }

    private func run(on connection: DatabaseQueue) {
        connection.asyncWriteWithoutTransaction { [self] db in
            let started = ContinuousClock.now
            // PASSIVE never waits for the writer or readers; SQLITE_BUSY (the writer's own
            // backstop is running) just means the next request will do it.
            let frames = try? db.checkpoint(.passive)
            let seconds = (ContinuousClock.now - started).seconds
            let (again, counts): (Bool, Counts) = state.withLock { state in
                let again = state.schedule.backgroundFinished(
                    remaining: frames.map { $0.walFrameCount - $0.checkpointedFrameCount }, seconds: seconds)
                return (again, state.schedule.counts)
            }
            finished?(counts)
            if again { run(on: connection) }
        }
    }
}

/// What the C hook sees: the checkpointer, if it still exists, and the writer's bound.
private final class HookContext: Sendable {
    /// A weak reference.
    struct Weak {
        weak var value: SQLiteCheckpointer?
    }

    let policy: SQLiteCheckpointer.Policy
    let checkpointer = Locked(Weak())

    init(policy: SQLiteCheckpointer.Policy) { self.policy = policy }

    /// Runs on the writer's thread inside its commit; checkpoints here when the checkpointer
    /// says so, or past the writer bound when it is gone.
    func committed(frames: Int32, connection: OpaquePointer?, name: UnsafePointer<CChar>?) -> Int32 {
        let checkpointer = self.checkpointer.value.value
        let onWriter = checkpointer?.committed(frames: frames) ?? (frames >= policy.writerFrames ? .bound : nil)
        if let onWriter {
            let code = sqlite3_wal_checkpoint_v2(connection, name, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            checkpointer?.ranOnWriter(onWriter, ok: code == SQLITE_OK)
        }
        return SQLITE_OK
    }
}

/// When WAL checkpoints run (issue 32): a value whose methods take one event each and return
/// what to do, carried out by ``SQLiteCheckpointer`` (and tested without SQLite).
struct CheckpointSchedule: Sendable, Equatable {
    /// Why the writer checkpoints itself.
    enum WriterCheckpoint: Sendable, Equatable {
        /// The background connection copied all but a few frames: the writer copies the rest,
        /// so the checkpoint is complete and the next transaction restarts the WAL. (A
        /// checkpoint on another connection rarely completes while uploads keep arriving, and
        /// until one does the WAL only grows.)
        case finish
        /// The WAL reached ``SQLiteCheckpointer/Policy/writerFrames``.
        case bound
    }

    /// What a commit calls for.
    enum Action: Sendable, Equatable {
        case none
        /// Run a checkpoint on the background connection.
        case startBackground
        /// Checkpoint on the writer, inside this commit.
        case checkpointOnWriter(WriterCheckpoint)
    }

    let policy: SQLiteCheckpointer.Policy
    private(set) var counts = SQLiteCheckpointer.Counts()
    /// A background checkpoint is running; `again`: a commit asked for one meanwhile.
    private var running = false
    private var again = false
    /// The writer's next commit finishes the checkpoint.
    private var finishOnWriter = false

    init(policy: SQLiteCheckpointer.Policy) { self.policy = policy }

    /// A commit left `frames` in the WAL; `backgroundOpen`: the background connection exists.
    mutating func committed(frames: Int32, backgroundOpen: Bool) -> Action {
        counts.largestWAL = max(counts.largestWAL, frames)
        counts.walFrames = frames
        if frames >= policy.writerFrames { return .checkpointOnWriter(.bound) }
        if finishOnWriter {
            finishOnWriter = false
            return .checkpointOnWriter(.finish)
        }
        guard frames >= policy.backgroundFrames, backgroundOpen else { return .none }
        if running {
            again = true
            return .none
        }
        running = true
        return .startBackground
    }

    /// The background checkpoint ended after `seconds`, leaving `remaining` frames uncopied
    /// (nil: SQLite refused it); whether to run another one now.
    mutating func backgroundFinished(remaining: Int?, seconds: Double) -> Bool {
        counts.backgroundSeconds += seconds
        if let remaining {
            counts.background += 1
            // A few frames left (or none): the writer finishes at its next commit, which also
            // copies what commits added while this one ran (`remaining` counts only the frames
            // there were when it began; without the finish, a run that copied all of those kept
            // being followed by another, and the WAL grew to the bound). Otherwise copy more.
            if remaining <= Int(policy.finishFrames) {
                finishOnWriter = true
                again = false
            }
        }
        let runAgain = again
        again = false
        running = runAgain
        return runAgain
    }

    /// The writer ran a checkpoint for `reason`; `ok`: SQLite did it (a refused finish is tried
    /// again at the next commit).
    mutating func writerRan(_ reason: WriterCheckpoint, ok: Bool) {
        switch (reason, ok) {
        case (.finish, true): counts.writerFinish += 1
        case (.bound, true): counts.writerBound += 1
        case (.finish, false):
            counts.writerBusy += 1
            finishOnWriter = true
        case (.bound, false): counts.writerBusy += 1
        }
    }
}
