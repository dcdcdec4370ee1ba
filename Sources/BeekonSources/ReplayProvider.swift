import Foundation
import Beekon

/// A `LocationProvider` that replays recorded fixes (SRC-4) and drives a
/// `ReplayClock`, so the SDK's "now" follows the track.
///
/// - Fixes are delivered in the given (file) order, even when their
///   timestamps go backwards or repeat: the SDK's gate rejects not-later fixes,
///   so nothing is dropped or reordered here (the clock never goes backwards).
/// - The clock is advanced to each fix's timestamp *before* the fix is delivered.
/// - Back-pressure: the stream produces one fix each time the consumer asks
///   for the next one, so even `asFastAsPossible` never buffers the track.
/// - Pacing (`realTime`, `multiplier`) sleeps on the clock's real clock, on a
///   schedule computed from fix timestamps from the first fix after `start`;
///   each gap counts as at least 0 (time going backwards) and at most
///   `maxGap` of track time (default 300 s), so a recording paused for hours
///   does not stall a real-time replay. The fix timestamps — and so the clock
///   — still carry the full gap.
/// - `stop()` ends the current stream; a later `start` continues with the
///   next undelivered fix. The stream finishes normally after the last fix.
/// - Power modes are only recorded (`lastRequestedMode`): a replay cannot save power.
public actor ReplayProvider: LocationProvider {
    /// The fixes to replay, in delivery order, before any rebase.
    public nonisolated let fixes: [RawFix]
    /// The pacing.
    public nonisolated let speed: ReplaySpeed
    /// The clock this replay drives; give the same one to the SDK.
    public nonisolated let clock: ReplayClock
    /// Whether the track is shifted so its first fix is at the real time of the first `start`.
    public nonisolated let rebaseToNow: Bool
    /// The longest track-time gap honoured by pacing.
    public nonisolated let maxGap: Duration
    /// What the reader reported, when created from a file.
    public nonisolated let diagnostics: TrackDiagnostics?
    /// The one-shot fix behind `currentLocation` (BY-2), timed on the real clock.
    private nonisolated let fresh: FreshFixes

    /// The mode passed to the last `start(mode:)` or `setPowerMode(_:)`; nil before either.
    public private(set) var lastRequestedMode: PowerMode?
    /// How many fixes have been delivered so far.
    public private(set) var deliveredCount = 0
    /// Whether a stream is open and not yet finished or stopped.
    public private(set) var isRunning = false
    /// The last fix delivered (rebased), if any.
    public private(set) var lastDelivered: RawFix?

    private var pacer: ReplayPacer
    private var nextIndex = 0
    private var generation = 0
    private var rebaseOffset: TimeInterval = 0
    private var rebased = false
    private var pacingTask: Task<Void, Never>?

    /// Creates a replay of `fixes` at `speed`, driving `clock`.
    public init(
        fixes: [RawFix], speed: ReplaySpeed = .asFastAsPossible, clock: ReplayClock = ReplayClock(),
        rebaseToNow: Bool = false, maxGap: Duration = .seconds(300)
    ) {
        self.init(fixes: fixes, speed: speed, clock: clock, rebaseToNow: rebaseToNow, maxGap: maxGap, diagnostics: nil)
    }

    /// Creates a replay of a track file read with `TrackFile`; throws its one-line error.
    public init(
        contentsOf url: URL, format: TrackFormat? = nil, speed: ReplaySpeed = .asFastAsPossible,
        clock: ReplayClock = ReplayClock(), rebaseToNow: Bool = false, maxGap: Duration = .seconds(300)
    ) throws(TrackReadError) {
        let result = try TrackFile.read(contentsOf: url, format: format)
        self.init(
            fixes: result.fixes, speed: speed, clock: clock, rebaseToNow: rebaseToNow, maxGap: maxGap,
            diagnostics: result.diagnostics
        )
    }

    private init(
        fixes: [RawFix], speed: ReplaySpeed, clock: ReplayClock, rebaseToNow: Bool, maxGap: Duration,
        diagnostics: TrackDiagnostics?
    ) {
        self.fixes = fixes
        self.speed = speed
        self.clock = clock
        self.rebaseToNow = rebaseToNow
        self.maxGap = maxGap
        self.diagnostics = diagnostics
        self.pacer = ReplayPacer(speed: speed, maxGap: maxGap)
        self.fresh = FreshFixes(clock: clock.realClock)
    }

    /// How many fixes are still to be delivered.
    public var remainingCount: Int { fixes.count - nextIndex }

    /// Opens a stream of the remaining fixes; a previous stream from this provider finishes.
    public func start(mode: PowerMode) async throws -> AsyncThrowingStream<RawFix, any Error> {
        lastRequestedMode = mode
        generation += 1
        pacingTask?.cancel()
        pacer.restart()
        isRunning = true
        if rebaseToNow, !rebased, let first = fixes.first {
            rebaseOffset = clock.realNow().timeIntervalSince(first.timestamp)
            rebased = true
        }
        let gen = generation
        fresh.started()
        return AsyncThrowingStream(unfolding: { [self] in await self.next(gen) })
    }

    /// Records the mode; a replay has no power to save.
    public func setPowerMode(_ mode: PowerMode) async {
        lastRequestedMode = mode
    }

    /// Ends the current stream (a pacing wait in progress ends at once).
    public func stop() async {
        isRunning = false
        generation += 1
        pacingTask?.cancel()
        pacingTask = nil
        fresh.ended()
    }

    /// One fresh fix (BY-2, `Beekon.handleLocateRequest(id:)`): the next one the running
    /// replay delivers, else the next of the track from a run started for it (and stopped
    /// after); nil when none arrives within `timeout` of real time.
    public func currentLocation(timeout: Duration, mode: PowerMode) async throws -> RawFix? {
        try await fresh.next(timeout: timeout, start: { try await self.start(mode: mode) }, stop: { await self.stop() })
    }

    /// The next fix for the stream of generation `gen`, or nil when it is over.
    private func next(_ gen: Int) async -> RawFix? {
        guard gen == generation, isRunning else { return nil }
        guard nextIndex < fixes.count else {
            isRunning = false
            fresh.ended()
            return nil
        }
        let index = nextIndex
        if let delay = pacer.delay(before: fixes[index].timestamp, realNow: clock.realNow()), delay > 0 {
            let sleeper = clock.realClock
            let task = Task<Void, Never> { _ = try? await sleeper.sleep(for: .seconds(delay)) }
            pacingTask = task
            await withTaskCancellationHandler {
                await task.value
            } onCancel: {
                task.cancel()
            }
            if pacingTask == task { pacingTask = nil }
            guard gen == generation, isRunning, !Task.isCancelled, nextIndex == index else { return nil }
        }
        nextIndex = index + 1
        var fix = fixes[index]
        fix.timestamp += rebaseOffset
        clock.advance(to: fix.timestamp)
        deliveredCount += 1
        lastDelivered = fix
        fresh.delivered(fix)
        return fix
    }
}
