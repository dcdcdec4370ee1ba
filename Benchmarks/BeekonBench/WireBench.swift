// W1: the server's decoding of one upload — a 1,000-fix schema-v1 envelope as the SDK writes
// it, with full-precision coordinates as CoreLocation reports them. Ours: `WireEnvelope.decode`
// (the one-pass fast path, then validation); baseline: the same bytes through `JSONDecoder`
// then the same validation (what `decode` did before the fast path). Milliseconds per body.

import BeekonWire
import Foundation

func w1(runs: Int) async throws -> Comparison {
    let ids = UUIDv7Generator()
    let start = WireTimestamp(millis: 1_780_000_000_000)
    var locations: [WireLocation] = []
    for i in 0..<1000 {
        let x = Double(i)
        let latitude: Double = 45.27 + sin(x / 500) * 0.01
        let longitude: Double = 13.71 + cos(x / 500) * 0.01
        let accuracy: Double = 4.5 + Double(i % 7) / 3
        let speed: Double = 1.3 + Double(i % 5) / 7
        let altitude: Double = 260 + Double(i % 20) / 3
        locations.append(
            WireLocation(
                id: ids.next(), timestamp: WireTimestamp(millis: start.millis + Int64(i) * 1000), trigger: .interval,
                motion: .moving, latitude: latitude, longitude: longitude, accuracy: accuracy, speed: speed,
                bearing: Double(i % 360), altitude: altitude, activity: .walking))
    }
    let envelope = WireEnvelope(
        batchId: ids.next(), sessionId: ids.next(), sentAt: start,
        device: WireDevice(installId: ids.next(), platform: "ios", sdkVersion: BeekonVersion.current, model: "iPhone15,3"),
        extras: ["user_id": "bench"], locations: locations, geofenceEvents: [])
    let body = WireJSONWriter.encode(envelope)
    guard try WireEnvelope.decode(body) == envelope else { throw BenchError(description: "W1: the envelope does not round-trip") }
    let repeats = 20
    var ours: [Double] = []
    var raw: [Double] = []
    var sink = 0
    for run in 0...runs {  // run 0 warms up and is not counted
        let t = try await measure {
            for _ in 0..<repeats { sink &+= try WireEnvelope.decode(body).locations.count }
        }
        let tr = try await measure {
            for _ in 0..<repeats { sink &+= try WireEnvelope.decodeWithJSONDecoder(body).locations.count }
        }
        if run > 0 {
            ours.append(t * 1e3 / Double(repeats))
            raw.append(tr * 1e3 / Double(repeats))
        }
    }
    guard sink == 2 * (runs + 1) * repeats * 1000 else { throw BenchError(description: "W1: \(sink) locations decoded") }
    let o = Stats(ours)
    let b = Stats(raw)
    return Comparison(
        id: "W1", what: "server-side decode of one 1,000-fix envelope (\(body.count) B of JSON)", unit: "ms/body",
        ours: o, baseline: b, ratio: o.median / b.median,
        details: [
            "ours": "WireEnvelope.decode: one-pass reader, then schema-v1 validation",
            "baseline": "JSONDecoder into the same mirrors, then the same validation", "bytes": "\(body.count)",
        ])
}
