import Foundation
import Testing
@testable import BeekonWire

/// A clock whose value tests move by hand.
final class ManualClock: @unchecked Sendable {
    private let lock = NSLock()
    private var millis: Int64
    private let step: Int64

    /// `step` is added to the time after every read (negative: a clock running backwards).
    init(millis: Int64, step: Int64 = 0) {
        self.millis = millis
        self.step = step
    }

    func setMillis(_ value: Int64) { lock.withLock { millis = value } }

    func read() -> Date {
        lock.withLock {
            let m = millis
            millis += step
            return WireTimestamp(millis: m).date
        }
    }
}

enum Fixtures {
    static let batchId = UUID(uuidString: "0190d4e2-7b1a-7c3e-9f10-2a4b6c8d0e1f")!
    static let sessionId = UUID(uuidString: "0190d4e0-1234-7000-8000-aabbccddeeff")!
    static let installId = UUID(uuidString: "0190c1a4-aaaa-7bbb-8ccc-ddddeeeeffff")!
    static let locationId = UUID(uuidString: "0190d4e2-7b1a-7c3e-9f10-2a4b6c8d0e20")!
    static let eventId = UUID(uuidString: "0190d4e2-7b1a-7c3e-9f10-2a4b6c8d0e21")!
    /// 2026-06-15T12:34:56.789Z
    static let sentAt = WireTimestamp(wire: "2026-06-15T12:34:56.789Z")!
    /// 2026-06-15T12:34:10.000Z
    static let fixTime = WireTimestamp(wire: "2026-06-15T12:34:10.000Z")!

    static func id(_ n: UInt64) -> UUID {
        UUIDv7Generator.make(millis: 1_781_526_850_000 + Int64(n), counter: UInt16(n & 0xFFF), randomBits: n &* 0x0123_4567_89AB_CDEF)
    }

    static func device(model: String? = "iPhone15,3", platform: String = "ios") -> WireDevice {
        WireDevice(installId: installId, platform: platform, sdkVersion: "0.1.1", model: model)
    }

    static func envelope(
        device: WireDevice = device(), extras: [String: String] = [:],
        locations: [WireLocation] = [], events: [WireGeofenceEvent] = []
    ) -> WireEnvelope {
        WireEnvelope(
            batchId: batchId, sessionId: sessionId, sentAt: sentAt, device: device, extras: extras,
            locations: locations, geofenceEvents: events)
    }

    static func location(
        id: UUID = locationId, latitude: Double = 37.7749, longitude: Double = -122.4194,
        accuracy: Double? = nil, speed: Double? = nil, bearing: Double? = nil, altitude: Double? = nil,
        activity: Activity? = nil, quality: Quality? = nil
    ) -> WireLocation {
        WireLocation(
            id: id, timestamp: fixTime, trigger: .interval, motion: .moving, isMock: false,
            latitude: latitude, longitude: longitude, accuracy: accuracy, speed: speed, bearing: bearing,
            altitude: altitude, activity: activity, quality: quality)
    }
}

extension Data {
    var utf8String: String { String(decoding: self, as: UTF8.self) }
}
