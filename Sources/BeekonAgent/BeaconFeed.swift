import Beekon
import BeekonBeacons
import BeekonSources
import Foundation
import Logging

/// The agent's beacon ranging beside (or instead of) its location source (SPEC BY-5): reads a
/// beacon source, runs the readings through a ``ProximityTracker`` and records each transition
/// in the SDK, which stores it, emits it and uploads it at once.
struct BeaconFeed: Sendable {
    /// Where readings come from.
    enum Source: Sendable, Equatable {
        /// A btsnoop capture or JSON scan log, replayed at ``BeaconFeed/pace`` like the track.
        case replay(path: String)
        /// The kernel's HCI monitor channel (Linux, `CAP_NET_RAW`).
        case hciMonitor
    }

    let source: Source
    let config: BeaconRangingConfig
    /// Name of the scanner of a btsnoop capture.
    var scannerName = "btsnoop"
    let logger: Logger
    /// The time of hearing for live readings.
    var clock: any BeekonClock = SystemClock()
    /// How fast a replay delivers its readings: `beekon track --speed`, as for the track (SRC-4).
    var pace = ReplaySpeed.asFastAsPossible
    /// The real clock a paced replay waits on: the track replay's (`ReplayClock.realClock`).
    var realClock: any BeekonClock = SystemClock()

    /// Parses `replay:FILE` or `hci`; nil otherwise.
    static func source(_ argument: String) -> Source? {
        if argument == "hci" { return .hciMonitor }
        guard argument.hasPrefix("replay:"), argument.count > "replay:".count else { return nil }
        return .replay(path: String(argument.dropFirst("replay:".count)))
    }

    /// Reads the source to its end (a replay) or until cancelled (live), recording every event;
    /// returns how many were recorded. Throws a one-line ``Failure`` when the source cannot be read.
    func run(into beekon: Beekon) async throws(Failure) -> Int {
        switch source {
        case .replay(let path):
            let result = BeaconRecording.read(contentsOf: URL(fileURLWithPath: path), scanner: scannerName)
            for message in result.messages { logger.warning("beacon recording", metadata: ["problem": "\(message)"]) }
            guard !result.readings.isEmpty || result.errorCount == 0 else {
                throw Failure(description: "\(path): no beacon readings (\(result.summary))")
            }
            let count = try await replay(result.readings, into: beekon)
            logger.info("beacon replay done", metadata: ["file": "\(path)", "events": "\(count)"])
            return count
        case .hciMonitor:
            let socket: HCIMonitorSocket
            do { socket = try HCIMonitorSocket() } catch { throw Failure(description: error.description) }
            return try await live(socket, into: beekon)
        }
    }

    /// Ranges recorded readings in time order, paced by ``pace`` on ``realClock`` as the track
    /// replay is, recording each event when its reading is delivered; returns how many were
    /// recorded. Ends early (without error) when the task is cancelled.
    func replay(_ readings: [BeaconReading], into beekon: Beekon) async throws(Failure) -> Int {
        var tracker = config.makeTracker()
        var pacer = ReplayPacer(speed: pace)
        var count = 0
        for reading in BeaconReplay.ordered(readings) {
            if let delay = pacer.delay(before: reading.time, realNow: realClock.now()), delay > 0 {
                do { try await realClock.sleep(for: .seconds(delay)) } catch { break }
            }
            let events = tracker.observe(reading)
            try await record(events, into: beekon)
            count += events.count
        }
        return count
    }

    /// Ranges the frames `reader` returns (one monitor frame per call) until it throws,
    /// recording every event; a frame that does not decode is skipped.
    func live(_ reader: any MonitorFrameReader, into beekon: Beekon) async throws(Failure) -> Int {
        var tracker = config.makeTracker()
        var count = 0
        for await batch in Self.frames(of: reader, clock: clock) {
            var events: [ProximityEvent] = []
            for reading in batch { events += tracker.observe(reading) }
            events += tracker.tick(at: clock.now())
            try await record(events, into: beekon)
            count += events.count
        }
        return count
    }

    private func record(_ events: [ProximityEvent], into beekon: Beekon) async throws(Failure) {
        guard !events.isEmpty else { return }
        do { try await beekon.recordProximity(events) } catch {
            throw Failure(description: "storing proximity events: \(error.description)")
        }
    }

    /// The readings of each monitor frame, read on a thread of their own (`read(2)` blocks).
    private static func frames(of reader: any MonitorFrameReader, clock: any BeekonClock) -> AsyncStream<[BeaconReading]> {
        AsyncStream { continuation in
            let thread = Thread {
                while true {
                    guard let bytes = try? reader.nextFrame() else { break }
                    // A frame that does not decode is skipped, never fatal.
                    guard let frame = try? HCIMonitorFrame.parse(bytes) else { continue }
                    let readings = (try? frame.readings(at: clock.now())) ?? []
                    if !readings.isEmpty, case .terminated = continuation.yield(readings) { break }
                }
                continuation.finish()
            }
            thread.start()
        }
    }

    /// Why the beacon source stopped: one line.
    struct Failure: Error, Sendable, CustomStringConvertible {
        /// The message.
        var description: String
    }
}

extension BeaconFeed {
    /// ``run(into:)`` with its outcome logged and printed (ranging never stops the location source).
    func runLogged(into beekon: Beekon) async {
        do {
            let count = try await run(into: beekon)
            Terminal.out("beacons: \(count) proximity events recorded")
        } catch {
            Terminal.error("beacons: \(error.description)")
        }
    }
}

/// The location source of the beacons-only mode: none (tracking is never started).
struct NoLocationProvider: LocationProvider {
    func start(mode: PowerMode) async throws -> AsyncThrowingStream<RawFix, any Error> {
        AsyncThrowingStream { $0.finish() }
    }
    func setPowerMode(_ mode: PowerMode) async {}
    func stop() async {}
}

/// Where live monitor frames come from: the kernel's HCI monitor channel, or captured bytes in tests.
protocol MonitorFrameReader: Sendable {
    /// Blocks for the next frame; throws when the channel ends.
    func nextFrame() throws -> [UInt8]
}

extension HCIMonitorSocket: MonitorFrameReader {
    func nextFrame() throws -> [UInt8] { try next() }
}
