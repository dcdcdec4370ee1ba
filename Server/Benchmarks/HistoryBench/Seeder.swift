import BeekonIngest
import BeekonWire
import Foundation

/// A month of 1 Hz fixes of one device, made on the fly (never all in memory): a day of
/// stays (GPS jitter of a few metres), walks (1.4 m/s, wandering heading) and drives
/// (12 m/s, turns at corners), deterministic for a seed. Stored through the server's own
/// `LocationStore.ingest` in one-hour envelopes, so the overview tier is marked as in
/// production.
struct Seeder: Sendable {
    let install: UUID
    let start: Int64
    let fixes: Int
    let stepMillis: Int64

    /// A small deterministic generator (PCG-style LCG), no Foundation randomness.
    struct Random: Sendable {
        var state: UInt64
        mutating func next() -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(state >> 11) / Double(1 << 53)
        }
    }

    /// The mover's state between batches.
    struct Mover: Sendable {
        var random = Random(state: 42)
        var lat = 52.52
        var lon = 13.405
        var heading = 0.0
        var mode = 0  // 0 stay, 1 walk, 2 drive
        var left = 0  // fixes left in this mode

        mutating func step(seconds: Double) -> (Double, Double) {
            if left <= 0 {
                let r = random.next()
                mode = r < 0.5 ? 0 : r < 0.8 ? 1 : 2
                left = Int((mode == 0 ? 600 + random.next() * 5_400 : 300 + random.next() * 2_400) / max(seconds, 0.001))
                // Drift back towards home when far from it.
                let dy = 52.52 - lat
                let dx = (13.405 - lon) * cos(lat * .pi / 180)
                if dx * dx + dy * dy > 0.06 * 0.06 { heading = atan2(dx, dy) }
            }
            left -= 1
            switch mode {
            case 1:
                heading += (random.next() - 0.5) * 0.25
                move(1.4 * seconds)
            case 2:
                if random.next() < 0.004 { heading += random.next() < 0.5 ? .pi / 2 : -.pi / 2 }
                move(12 * seconds)
            default: break
            }
            let jitter = mode == 2 ? 2.0 : 6.0
            return (
                lat + (random.next() - 0.5) * jitter / 110_540,
                lon + (random.next() - 0.5) * jitter / (111_320 * cos(lat * .pi / 180))
            )
        }

        mutating func move(_ meters: Double) {
            lat += cos(heading) * meters / 110_540
            lon += sin(heading) * meters / (111_320 * cos(lat * .pi / 180))
        }
    }

    /// Stores every fix (envelopes of `batch` fixes, one session per day); returns the seconds it took.
    func seed(into store: any LocationStore, batch: Int = 3_600) async throws -> Double {
        let ids = UUIDv7Generator()
        var mover = Mover()
        let began = Bench.now()
        var session = ids.next()
        var i = 0
        while i < fixes {
            var locations: [WireLocation] = []
            locations.reserveCapacity(batch)
            for _ in 0..<min(batch, fixes - i) {
                let t = start + Int64(i) * stepMillis
                if t % 86_400_000 < stepMillis { session = ids.next() }
                let (lat, lon) = mover.step(seconds: Double(stepMillis) / 1000)
                locations.append(
                    WireLocation(
                        id: ids.next(), timestamp: WireTimestamp(millis: t), trigger: .interval,
                        motion: mover.mode == 0 ? .stationary : .moving, latitude: lat, longitude: lon, accuracy: 5))
                i += 1
            }
            let envelope = WireEnvelope(
                batchId: ids.next(), sessionId: session, sentAt: locations[locations.count - 1].timestamp,
                device: WireDevice(installId: install, platform: "linux", sdkVersion: "0.1.0", model: "month-at-1hz"),
                extras: [:], locations: locations, geofenceEvents: [])
            _ = try await store.ingest(IngestBatch(envelope: envelope, receivedAt: envelope.sentAt))
        }
        return Bench.now() - began
    }
}
