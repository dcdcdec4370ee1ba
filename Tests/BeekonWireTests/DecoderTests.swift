import Foundation
import Testing
@testable import BeekonWire

/// The example payload from "The upload payload" in the integration guide (hand-typed).
let referenceExample = #"""
    { "schema_version": 1, "batch_id": "0190d4e2-7b1a-7c3e-9f10-2a4b6c8d0e1f", "session_id": "0190d4e0-1234-7000-8000-aabbccddeeff", "sent_at": "2026-06-15T12:34:56.789Z", "device": { "install_id": "0190c1a4-aaaa-7bbb-8ccc-ddddeeeeffff", "platform": "ios", "sdk_version": "0.1.1", "model": "iPhone15,3" }, "extras": { "user_id": "app-user-123", "trip": "morning-commute" }, "locations": [ { "id": "0190d4e2-7b1a-7c3e-9f10-2a4b6c8d0e20", "timestamp": "2026-06-15T12:34:10.000Z", "trigger": "interval", "motion": "moving", "is_mock": false, "latitude": 37.7749, "longitude": -122.4194, "accuracy": 5.2, "speed": 2.5, "bearing": 180, "altitude": 14.3, "activity": "walking" } ], "geofence_events": [ { "id": "0190d4e2-7b1a-7c3e-9f10-2a4b6c8d0e21", "geofence_id": "home", "type": "exit", "timestamp": "2026-06-15T12:34:05.000Z" } ]}
    """#

/// A minimal valid body as a mutable JSON tree, so each test breaks exactly one thing.
func validTree() -> [String: Any] {
    [
        "schema_version": 1,
        "batch_id": "0190d4e2-7b1a-7c3e-9f10-2a4b6c8d0e1f",
        "session_id": "0190d4e0-1234-7000-8000-aabbccddeeff",
        "sent_at": "2026-06-15T12:34:56.789Z",
        "device": ["install_id": "0190c1a4-aaaa-7bbb-8ccc-ddddeeeeffff", "platform": "ios", "sdk_version": "0.1.1"] as [String: Any],
        "locations": [
            [
                "id": "0190d4e2-7b1a-7c3e-9f10-2a4b6c8d0e20", "timestamp": "2026-06-15T12:34:10.000Z",
                "trigger": "interval", "motion": "moving", "is_mock": false, "latitude": 37.7749, "longitude": -122.4194,
            ] as [String: Any]
        ],
        "geofence_events": [
            [
                "id": "0190d4e2-7b1a-7c3e-9f10-2a4b6c8d0e21", "geofence_id": "home", "type": "exit",
                "timestamp": "2026-06-15T12:34:05.000Z",
            ] as [String: Any]
        ],
    ]
}

/// Applies `change` to the value at `path` (keys and array indices) and serialises the tree.
func body(_ path: [Any], _ change: (inout Any?) -> Void) throws -> Data {
    func edit(_ node: Any?, _ rest: ArraySlice<Any>) -> Any? {
        guard let head = rest.first else {
            var v = node
            change(&v)
            return v
        }
        if let key = head as? String {
            var dict = node as? [String: Any] ?? [:]
            dict[key] = edit(dict[key], rest.dropFirst())
            return dict
        }
        let index = head as! Int
        var array = node as? [Any] ?? []
        array[index] = edit(array[index], rest.dropFirst()) as Any
        return array
    }
    let tree = edit(validTree(), path[...])!
    return try JSONSerialization.data(withJSONObject: tree, options: [.sortedKeys])
}

func body(set path: [Any], to value: Any) throws -> Data { try body(path) { $0 = value } }
func body(remove path: [Any]) throws -> Data { try body(path) { $0 = nil } }

func decodeError(_ data: Data) -> WireDecodingError? {
    do {
        _ = try WireEnvelope.decode(data)
        return nil
    } catch {
        return error
    }
}

@Suite("WireEnvelope.decode")
struct DecoderTests {
    @Test("accepts the reference example payload")
    func referencePayload() throws {
        let e = try WireEnvelope.decode(Data(referenceExample.utf8))
        #expect(e.batchId == Fixtures.batchId)
        #expect(e.sessionId == Fixtures.sessionId)
        #expect(e.sentAt.description == "2026-06-15T12:34:56.789Z")
        #expect(e.device == WireDevice(installId: Fixtures.installId, platform: "ios", sdkVersion: "0.1.1", model: "iPhone15,3"))
        #expect(e.extras == ["user_id": "app-user-123", "trip": "morning-commute"])
        #expect(
            e.locations == [
                WireLocation(
                    id: Fixtures.locationId, timestamp: Fixtures.fixTime, trigger: .interval, motion: .moving, isMock: false,
                    latitude: 37.7749, longitude: -122.4194, accuracy: 5.2, speed: 2.5, bearing: 180, altitude: 14.3,
                    activity: .walking, quality: nil)
            ])
        #expect(
            e.geofenceEvents == [
                WireGeofenceEvent(
                    id: Fixtures.eventId, geofenceId: "home", type: .exit, timestamp: WireTimestamp(wire: "2026-06-15T12:34:05.000Z")!)
            ])
    }

    @Test("re-encoding the reference example gives the same document, minified, extras sorted")
    func referenceReencodes() throws {
        let e = try WireEnvelope.decode(Data(referenceExample.utf8))
        let expected =
            referenceExample
            .replacingOccurrences(
                of: #""user_id": "app-user-123", "trip": "morning-commute""#,
                with: #""trip": "morning-commute", "user_id": "app-user-123""#
            )
            .replacingOccurrences(of: ": ", with: ":").replacingOccurrences(of: ", ", with: ",")
            .replacingOccurrences(of: "{ ", with: "{").replacingOccurrences(of: " }", with: "}")
            .replacingOccurrences(of: "[ ", with: "[").replacingOccurrences(of: " ]", with: "]")
        #expect(WireJSONWriter.encode(e).utf8String == expected)
    }

    @Test("a valid tree decodes (baseline for the rejection tests)")
    func baseline() throws {
        let e = try WireEnvelope.decode(try body([]) { _ in })
        #expect(e.locations.count == 1)
        #expect(e.device.model == nil)
        #expect(e.extras.isEmpty)
    }

    @Test("unknown fields are ignored at every level")
    func unknownFieldsIgnored() throws {
        let unknown: [String: Any] = ["nested": ["a": [1, 2.5, "x", NSNull(), true]], "n": 1e300]
        var data = try body(set: ["future_root"], to: unknown)
        var tree = try JSONSerialization.jsonObject(with: data) as! [String: Any]
        var device = tree["device"] as! [String: Any]
        device["future_device"] = unknown
        device["battery"] = 0.5
        tree["device"] = device
        var loc = (tree["locations"] as! [[String: Any]])[0]
        loc["floor"] = 3
        loc["provider"] = ["name": "gps"]
        loc["vertical_accuracy"] = NSNull()
        tree["locations"] = [loc]
        var ev = (tree["geofence_events"] as! [[String: Any]])[0]
        ev["dwell_ms"] = 1000
        ev["meta"] = [unknown]
        tree["geofence_events"] = [ev]
        data = try JSONSerialization.data(withJSONObject: tree)
        let e = try WireEnvelope.decode(data)
        #expect(e == (try WireEnvelope.decode(try body([]) { _ in })))
    }

    @Test("unknown platform values are accepted", arguments: ["linux", "macos", "android", "ios", "windows", "web-😀"])
    func unknownPlatform(_ platform: String) throws {
        let e = try WireEnvelope.decode(try body(set: ["device", "platform"], to: platform))
        #expect(e.device.platform == platform)
    }

    @Test("optional fields: present values decode, empty model becomes nil, empty extras decode")
    func optionals() throws {
        #expect(try WireEnvelope.decode(try body(set: ["device", "model"], to: "")).device.model == nil)
        #expect(try WireEnvelope.decode(try body(set: ["device", "model"], to: "Mac15,3")).device.model == "Mac15,3")
        #expect(try WireEnvelope.decode(try body(set: ["extras"], to: [String: String]())).extras == [:])
        #expect(try WireEnvelope.decode(try body(set: ["locations"], to: [Any]())).locations.isEmpty)
        #expect(try WireEnvelope.decode(try body(set: ["locations", 0, "bearing"], to: 0)).locations[0].bearing == 0)
        #expect(try WireEnvelope.decode(try body(set: ["locations", 0, "bearing"], to: 359.9)).locations[0].bearing == 359.9)
        #expect(try WireEnvelope.decode(try body(set: ["locations", 0, "latitude"], to: -90)).locations[0].latitude == -90)
        #expect(try WireEnvelope.decode(try body(set: ["locations", 0, "longitude"], to: 180)).locations[0].longitude == 180)
        #expect(try WireEnvelope.decode(try body(set: ["locations", 0, "accuracy"], to: 0)).locations[0].accuracy == 0)
        // An integral JSON number where a Double is expected is fine.
        #expect(try WireEnvelope.decode(try body(set: ["locations", 0, "latitude"], to: 10)).locations[0].latitude == 10)
    }

    // MARK: - Rejections

    struct Rejection: Sendable, CustomTestStringConvertible {
        let name: String
        let data: @Sendable () throws -> Data
        /// Expected error: either an exact `.invalid` path, or a `.malformed` message prefix.
        let expected: Expectation
        var testDescription: String { name }

        enum Expectation: Sendable {
            case invalid(String)
            case malformed(String)
            case version(Int)
        }
    }

    static let rejections: [Rejection] = {
        func r(_ name: String, _ expected: Rejection.Expectation, _ data: @escaping @Sendable () throws -> Data) -> Rejection {
            Rejection(name: name, data: data, expected: expected)
        }
        var list: [Rejection] = []
        // Missing required fields.
        for key in ["schema_version", "batch_id", "session_id", "sent_at", "device", "locations", "geofence_events"] {
            list.append(r("missing \(key)", .malformed("\(key): missing")) { try body(remove: [key]) })
        }
        for key in ["install_id", "platform", "sdk_version"] {
            list.append(r("missing device.\(key)", .malformed("device.\(key): missing")) { try body(remove: ["device", key]) })
        }
        for key in ["id", "timestamp", "trigger", "motion", "is_mock", "latitude", "longitude"] {
            list.append(
                r("missing locations[0].\(key)", .malformed("locations[0].\(key): missing")) {
                    try body(remove: ["locations", 0, key])
                })
        }
        for key in ["id", "geofence_id", "type", "timestamp"] {
            list.append(
                r("missing geofence_events[0].\(key)", .malformed("geofence_events[0].\(key): missing")) {
                    try body(remove: ["geofence_events", 0, key])
                })
        }
        // Wrong types.
        list += [
            r("string latitude", .malformed("locations[0].latitude: wrong type")) {
                try body(set: ["locations", 0, "latitude"], to: "37.7")
            },
            r("number is_mock", .malformed("locations[0].is_mock: wrong type")) { try body(set: ["locations", 0, "is_mock"], to: 0) },
            r("string is_mock", .malformed("locations[0].is_mock: wrong type")) {
                try body(set: ["locations", 0, "is_mock"], to: "false")
            },
            r("number batch_id", .malformed("batch_id: wrong type")) { try body(set: ["batch_id"], to: 42) },
            r("string schema_version", .malformed("schema_version: wrong type")) { try body(set: ["schema_version"], to: "1") },
            r("fractional schema_version", .malformed("")) { try body(set: ["schema_version"], to: 1.5) },
            r("object locations", .malformed("locations: wrong type")) { try body(set: ["locations"], to: ["id": "x"]) },
            r("number extras value", .malformed("extras.k: wrong type")) { try body(set: ["extras"], to: ["k": 1]) },
            r("array device", .malformed("device: wrong type")) { try body(set: ["device"], to: [1]) },
            r("string accuracy", .malformed("locations[0].accuracy: wrong type")) { try body(set: ["locations", 0, "accuracy"], to: "5") },
            r("top-level array", .malformed("$: wrong type")) { Data("[]".utf8) },
            r("top-level string", .malformed("$: wrong type")) { Data(#""x""#.utf8) },
        ]
        // Null in required fields.
        list += [
            r("null latitude", .malformed("locations[0].latitude: null where a value is required")) {
                try body(set: ["locations", 0, "latitude"], to: NSNull())
            },
            r("null batch_id", .malformed("batch_id: null where a value is required")) { try body(set: ["batch_id"], to: NSNull()) },
            r("null device.platform", .malformed("device.platform: null where a value is required")) {
                try body(set: ["device", "platform"], to: NSNull())
            },
            r("null locations", .malformed("locations: null where a value is required")) { try body(set: ["locations"], to: NSNull()) },
            r("null geofence type", .malformed("geofence_events[0].type: null where a value is required")) {
                try body(set: ["geofence_events", 0, "type"], to: NSNull())
            },
            // Found by schemathesis (scripts/contract.sh): optionals are omitted, never null (SY-5).
            r("null quality", .invalid("locations[0].quality")) { try body(set: ["locations", 0, "quality"], to: NSNull()) },
            r("null accuracy", .invalid("locations[0].accuracy")) { try body(set: ["locations", 0, "accuracy"], to: NSNull()) },
            r("null activity", .invalid("locations[0].activity")) { try body(set: ["locations", 0, "activity"], to: NSNull()) },
            r("null extras", .invalid("extras")) { try body(set: ["extras"], to: NSNull()) },
            r("null device.model", .invalid("device.model")) { try body(set: ["device", "model"], to: NSNull()) },
        ]
        // Format and range violations.
        list += [
            r("bad batch_id", .invalid("batch_id")) { try body(set: ["batch_id"], to: "not-a-uuid") },
            r("batch_id without dashes", .invalid("batch_id")) { try body(set: ["batch_id"], to: "0190d4e27b1a7c3e9f102a4b6c8d0e1f") },
            r("batch_id with braces", .invalid("batch_id")) { try body(set: ["batch_id"], to: "{0190d4e2-7b1a-7c3e-9f10-2a4b6c8d0e1f}") },
            r("empty session_id", .invalid("session_id")) { try body(set: ["session_id"], to: "") },
            r("bad install_id", .invalid("device.install_id")) {
                try body(set: ["device", "install_id"], to: "0190c1a4-aaaa-7bbb-8ccc-ddddeeeeffzz")
            },
            r("bad location id", .invalid("locations[0].id")) { try body(set: ["locations", 0, "id"], to: "x") },
            r("bad event id", .invalid("geofence_events[0].id")) {
                try body(set: ["geofence_events", 0, "id"], to: "0190d4e2-7b1a-7c3e-9f10-2a4b6c8d0e2")
            },
            r("sent_at without fraction", .invalid("sent_at")) { try body(set: ["sent_at"], to: "2026-06-15T12:34:56Z") },
            r("sent_at with offset", .invalid("sent_at")) { try body(set: ["sent_at"], to: "2026-06-15T12:34:56.789+00:00") },
            r("bad location timestamp", .invalid("locations[0].timestamp")) {
                try body(set: ["locations", 0, "timestamp"], to: "2026-13-15T12:34:10.000Z")
            },
            r("bad event timestamp", .invalid("geofence_events[0].timestamp")) {
                try body(set: ["geofence_events", 0, "timestamp"], to: "2026-02-30T00:00:00.000Z")
            },
            r("latitude 91", .invalid("locations[0].latitude")) { try body(set: ["locations", 0, "latitude"], to: 91) },
            r("latitude -90.0001", .invalid("locations[0].latitude")) { try body(set: ["locations", 0, "latitude"], to: -90.0001) },
            r("longitude -181", .invalid("locations[0].longitude")) { try body(set: ["locations", 0, "longitude"], to: -181) },
            r("longitude 180.5", .invalid("locations[0].longitude")) { try body(set: ["locations", 0, "longitude"], to: 180.5) },
            r("bearing 360", .invalid("locations[0].bearing")) { try body(set: ["locations", 0, "bearing"], to: 360) },
            r("bearing -1", .invalid("locations[0].bearing")) { try body(set: ["locations", 0, "bearing"], to: -1) },
            r("negative accuracy", .invalid("locations[0].accuracy")) { try body(set: ["locations", 0, "accuracy"], to: -0.5) },
            r("unknown trigger", .invalid("locations[0].trigger")) { try body(set: ["locations", 0, "trigger"], to: "timer") },
            r("upper-case trigger", .invalid("locations[0].trigger")) { try body(set: ["locations", 0, "trigger"], to: "INTERVAL") },
            r("camelCase trigger", .invalid("locations[0].trigger")) { try body(set: ["locations", 0, "trigger"], to: "checkIn") },
            r("unknown motion", .invalid("locations[0].motion")) { try body(set: ["locations", 0, "motion"], to: "driving") },
            r("unknown quality", .invalid("locations[0].quality")) { try body(set: ["locations", 0, "quality"], to: "bad") },
            r("camelCase quality", .invalid("locations[0].quality")) { try body(set: ["locations", 0, "quality"], to: "lowAccuracy") },
            r("unknown activity", .invalid("locations[0].activity")) { try body(set: ["locations", 0, "activity"], to: "flying") },
            r("unknown event type", .invalid("geofence_events[0].type")) { try body(set: ["geofence_events", 0, "type"], to: "dwell") },
            r("empty geofence_id", .invalid("geofence_events[0].geofence_id")) {
                try body(set: ["geofence_events", 0, "geofence_id"], to: "")
            },
            r("empty platform", .invalid("device.platform")) { try body(set: ["device", "platform"], to: "") },
            r("empty sdk_version", .invalid("device.sdk_version")) { try body(set: ["device", "sdk_version"], to: "") },
            r("second location bad", .invalid("locations[1].latitude")) {
                try body(
                    set: ["locations"],
                    to: [
                        [
                            "id": "0190d4e2-7b1a-7c3e-9f10-2a4b6c8d0e20", "timestamp": "2026-06-15T12:34:10.000Z", "trigger": "interval",
                            "motion": "moving", "is_mock": false, "latitude": 1, "longitude": 1,
                        ] as [String: Any],
                        [
                            "id": "0190d4e2-7b1a-7c3e-9f10-2a4b6c8d0e22", "timestamp": "2026-06-15T12:34:10.000Z", "trigger": "interval",
                            "motion": "moving", "is_mock": false, "latitude": 95, "longitude": 1,
                        ] as [String: Any],
                    ])
            },
        ]
        // Schema version.
        list += [
            r("schema_version 2", .version(2)) { try body(set: ["schema_version"], to: 2) },
            r("schema_version 0", .version(0)) { try body(set: ["schema_version"], to: 0) },
        ]
        // Not JSON / not UTF-8 / pathological.
        list += [
            r("empty body", .malformed("")) { Data() },
            r("whitespace body", .malformed("")) { Data("  \n".utf8) },
            r("truncated JSON", .malformed("")) {
                let d = try validBody()
                return d.prefix(d.count / 2)
            },
            r("truncated by one byte", .malformed("")) { try validBody().dropLast() },
            r("trailing garbage", .malformed("")) { try validBody() + Data("}".utf8) },
            r("invalid UTF-8 in a string", .malformed("")) {
                let d = Data(#"{"schema_version":1,"batch_id":"X"}"#.utf8)
                var bytes = [UInt8](d)
                bytes[bytes.firstIndex(of: UInt8(ascii: "X"))!] = 0xFF
                return Data(bytes)
            },
            r("invalid UTF-8 in the platform", .malformed("")) {
                var bytes = [UInt8](try body(set: ["device", "platform"], to: "i@@"))
                let at = bytes.firstIndex(of: UInt8(ascii: "@"))!
                bytes[at] = 0xC3
                bytes[at + 1] = 0x28  // invalid 2-byte sequence
                return Data(bytes)
            },
            r("latitude 1e400", .malformed("")) {
                try bodyText(
                    in: try body(remove: ["locations", 0, "latitude"]), replacing: #""longitude""#, with: #""latitude":1e400,"longitude""#)
            },
            r("accuracy -1e400", .malformed("")) { try bodyText(replacing: #""latitude""#, with: #""accuracy":-1e400,"latitude""#) },
            r("NaN token", .malformed("")) { try bodyText(replacing: #""latitude""#, with: #""accuracy":NaN,"latitude""#) },
            r("10,000 nested arrays in an unknown field", .malformed("")) {
                try bodyText(
                    replacing: #""latitude""#,
                    with: #""deep":"# + String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000) + #","latitude""#)
            },
            r("10,000 nested objects at the root", .malformed("")) {
                Data((String(repeating: #"{"a":"#, count: 10_000) + "1" + String(repeating: "}", count: 10_000)).utf8)
            },
            r("unterminated deep nesting", .malformed("")) { Data(String(repeating: "[", count: 100_000).utf8) },
        ]
        return list
    }()

    static func bodyText(in data: Data? = nil, replacing target: String, with replacement: String) throws -> Data {
        let text = String(decoding: try data ?? validBody(), as: UTF8.self)
        precondition(text.contains(target))
        return Data(text.replacingOccurrences(of: target, with: replacement).utf8)
    }

    @Test("rejects invalid bodies with the right error", arguments: rejections)
    func rejects(_ c: Rejection) throws {
        let data = try c.data()
        let error = try #require(decodeError(data), "\(c.name) was accepted")
        switch (c.expected, error) {
        case (.invalid(let path), .invalid(let actual, let reason)):
            #expect(actual == path)
            #expect(!reason.isEmpty)
            #expect(error.description.hasPrefix(path + ": "))
        case (.malformed(let prefix), .malformed(let message)):
            #expect(message.hasPrefix(prefix), "message: \(message)")
            #expect(!message.isEmpty)
        case (.version(let v), .unsupportedSchemaVersion(let actual)):
            #expect(actual == v)
        default:
            Issue.record("\(c.name): expected \(c.expected), got \(error)")
        }
    }
}

private func bodyText(in data: Data? = nil, replacing target: String, with replacement: String) throws -> Data {
    try DecoderTests.bodyText(in: data, replacing: target, with: replacement)
}

func validBody() throws -> Data { try body([]) { _ in } }
