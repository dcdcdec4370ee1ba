import Beekon
import BeekonBeacons
import BeekonTesting
import Foundation
import Logging
import Testing

@testable import BeekonAgent

/// Captured HCI monitor frames, returned one per read as the kernel's monitor socket does;
/// the test clock moves half a second per frame (the time of hearing).
final class CapturedFrames: MonitorFrameReader, @unchecked Sendable {
    private let lock = NSLock()
    private var frames: [[UInt8]]
    let clock: TestClock

    init(_ frames: [[UInt8]], clock: TestClock) {
        self.frames = frames
        self.clock = clock
    }

    struct End: Error {}

    func nextFrame() throws -> [UInt8] {
        let frame: [UInt8]? = lock.withLock { frames.isEmpty ? nil : frames.removeFirst() }
        guard let frame else { throw End() }
        clock.advance(by: .milliseconds(500))
        return frame
    }
}

/// The agent's live beacon path (`--beacon-source hci`, SPEC BY-5) on captured bytes: no
/// Bluetooth hardware here, so the monitor socket is replaced by the frames it would return.
@Suite struct BeaconFeedLiveTests {
    /// An LE Advertising Report event (HCI event 0x3E, subevent 0x02) carrying Apple's AirLocate
    /// iBeacon E2C56DB5-DFFB-48D2-B060-D0F5A71096E0 / 1 / 2 (power −59) heard at `rssi`, framed
    /// as the monitor channel delivers it: opcode 3 (event), controller index 0, payload length.
    static func monitorFrame(rssi: Int8) -> [UInt8] {
        let data: [UInt8] = [
            0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15, 0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60,
            0xD0, 0xF5, 0xA7, 0x10, 0x96, 0xE0, 0x00, 0x01, 0x00, 0x02, 0xC5,
        ]
        let params: [UInt8] =
            [0x02, 0x01, 0x00, 0x00, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, UInt8(data.count)] + data + [UInt8(bitPattern: rssi)]
        let event: [UInt8] = [0x3E, UInt8(params.count)] + params
        return [0x03, 0x00, 0x00, 0x00, UInt8(event.count), 0x00] + event
    }

    @Test("BY-5: live monitor frames are ranged and the entry is stored in the SDK; commands and broken frames are skipped")
    func capturedFramesEnterOnce() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("beekon-live-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let clock = TestClock(start: Date(timeIntervalSince1970: 1_800_000_000))
        let beekon = Beekon(
            dependencies: BeekonDependencies(
                databasePath: dir.appendingPathComponent("agent.sqlite").path, provider: NoLocationProvider(), clock: clock))
        let near = Self.monitorFrame(rssi: -50)
        let command: [UInt8] = [0x02, 0x00, 0x00, 0x00, 0x03, 0x00, 0x0C, 0x20, 0x00]
        let broken: [UInt8] = [0x03, 0x00, 0x00, 0x00, 0x09, 0x00, 0x3E]
        let frames = Array(repeating: near, count: 10) + [command, broken] + Array(repeating: near, count: 10)
        var config = BeaconRangingConfig()
        config.rule = ProximityRule(enterDistance: 1, exitDistance: 2, dwell: 3, silenceTimeout: 30)
        let feed = BeaconFeed(source: .hciMonitor, config: config, logger: Logger(label: "test"), clock: clock)
        let count = try await feed.live(CapturedFrames(frames, clock: clock), into: beekon)
        #expect(count == 1)
        let stored = try await beekon.proximityEventHistory(from: .distantPast, to: .distantFuture)
        #expect(stored.count == 1)
        let entry = try #require(stored.first)
        #expect(entry.transition == .enter && entry.scanner == "hci0" && entry.major == 1 && entry.minor == 2)
        #expect(entry.beacon == UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"))
        #expect((entry.distance ?? 99) < 1)
        await beekon.shutdown()
    }
}
