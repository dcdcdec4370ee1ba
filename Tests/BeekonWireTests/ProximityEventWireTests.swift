import Foundation
import Testing
@testable import BeekonWire

/// `proximity_events[]` (BY-5): an optional, must-ignore addition to schema v1.
@Suite("proximity_events")
struct ProximityEventWireTests {
    static var event: [String: Any] {
        [
            "id": "0190d4e2-7b1a-7c3e-9f10-2a4b6c8d0e30", "region": "pump-4", "uuid": "e2c56db5-dffb-48d2-b060-d0f5a71096e0",
            "major": 1, "minor": 3, "scanner": "hci0", "type": "enter", "timestamp": "2026-06-15T12:34:07.250Z", "distance": 0.82,
        ]
    }

    @Test("BY-5: absent means none, and an envelope without events encodes without the key (older receivers see no change)")
    func absentIsEmpty() throws {
        let e = try WireEnvelope.decode(try body([]) { _ in })
        #expect(e.proximityEvents.isEmpty)
        #expect(!WireJSONWriter.encode(e).utf8String.contains("proximity_events"))
    }

    @Test("BY-5: an event round-trips, optionals omitted when absent, unknown fields ignored")
    func roundTrip() throws {
        var silent = Self.event
        silent["id"] = "0190d4e2-7b1a-7c3e-9f10-2a4b6c8d0e31"
        silent["type"] = "exit"
        silent["major"] = nil
        silent["minor"] = nil
        silent["distance"] = nil
        silent["future"] = ["x": 1]
        let e = try WireEnvelope.decode(try body(set: ["proximity_events"], to: [Self.event, silent]))
        #expect(e.proximityEvents.count == 2)
        let first = e.proximityEvents[0]
        #expect(first.region == "pump-4" && first.major == 1 && first.minor == 3 && first.scanner == "hci0")
        #expect(
            first.type == .enter && first.distance == 0.82
                && first.timestamp.millis == WireTimestamp(wire: "2026-06-15T12:34:07.250Z")!.millis)
        #expect(e.proximityEvents[1].major == nil && e.proximityEvents[1].distance == nil && e.proximityEvents[1].type == .exit)
        let json = WireJSONWriter.encode(e).utf8String
        #expect(
            json.hasSuffix(
                #""proximity_events":[{"id":"0190d4e2-7b1a-7c3e-9f10-2a4b6c8d0e30","region":"pump-4","uuid":"e2c56db5-dffb-48d2-b060-d0f5a71096e0","major":1,"minor":3,"scanner":"hci0","type":"enter","timestamp":"2026-06-15T12:34:07.250Z","distance":0.82},{"id":"0190d4e2-7b1a-7c3e-9f10-2a4b6c8d0e31","region":"pump-4","uuid":"e2c56db5-dffb-48d2-b060-d0f5a71096e0","scanner":"hci0","type":"exit","timestamp":"2026-06-15T12:34:07.250Z"}]}"#
            ))
        #expect(try WireEnvelope.decode(WireJSONWriter.encode(e)) == e)
    }

    @Test(
        "BY-5: a broken event is refused naming its field",
        arguments: [
            ("type", #""near""#), ("major", "65536"), ("minor", "null"), ("distance", "-1"), ("region", #""""#),
            ("uuid", #""pump""#), ("timestamp", #""yesterday""#),
        ])
    func brokenEvents(_ key: String, _ json: String) throws {
        var event = Self.event
        event[key] = try JSONSerialization.jsonObject(with: Data(json.utf8), options: .fragmentsAllowed)
        let path = "proximity_events[0].\(key)"
        let error = decodeError(try body(set: ["proximity_events"], to: [event]))
        guard case .invalid(let p, _) = error else {
            Issue.record("expected .invalid, got \(String(describing: error))")
            return
        }
        #expect(p == path)
    }
}
