import Foundation
import Testing
@testable import BeekonWire
import BeekonTesting

/// One golden case: the envelope to encode, and the value the decoder must return
/// for those bytes (differs only where the wire format normalises: blank model,
/// non-finite optionals, -0.0).
struct GoldenCase: Sendable, CustomTestStringConvertible {
    let name: String
    let envelope: WireEnvelope
    let decoded: WireEnvelope
    var testDescription: String { name }

    init(_ name: String, _ envelope: WireEnvelope, decoded: WireEnvelope? = nil) {
        self.name = name
        self.envelope = envelope
        self.decoded = decoded ?? envelope
    }
}

enum GoldenCases {
    static let fullLocation = Fixtures.location(
        accuracy: 5.2, speed: 2.5, bearing: 180, altitude: 14.3, activity: .walking, quality: .lowAccuracy)

    static let all: [GoldenCase] = [
        // Every optional present: model, extras (sorted on the wire), all location optionals, a geofence event.
        GoldenCase(
            "full",
            Fixtures.envelope(
                extras: ["user_id": "app-user-123", "trip": "morning-commute", "a": "1", "Z": "upper"],
                locations: [fullLocation],
                events: [WireGeofenceEvent(id: Fixtures.eventId, geofenceId: "home", type: .exit, timestamp: Fixtures.fixTime)])),
        // The optional device intervals (schema v1 additions, must-ignore for older receivers).
        GoldenCase(
            "device-intervals",
            Fixtures.envelope(
                device: WireDevice(
                    installId: Fixtures.device(model: nil).installId, platform: "linux", sdkVersion: "0.1.1",
                    syncIntervalSeconds: 300, checkInIntervalSeconds: 900))),
        // Nothing optional: no model, no extras, a bare location, no events.
        GoldenCase("minimal", Fixtures.envelope(device: Fixtures.device(model: nil), locations: [Fixtures.location()])),
        // Empty arrays are still written.
        GoldenCase("empty", Fixtures.envelope(device: Fixtures.device(model: nil))),
        // Number rendering.
        GoldenCase(
            "numbers",
            Fixtures.envelope(
                device: Fixtures.device(model: nil),
                locations: [
                    Fixtures.location(
                        id: Fixtures.id(1), latitude: 0, longitude: 180, accuracy: 5.2, speed: 0, bearing: 359.999, altitude: -0.5),
                    Fixtures.location(
                        id: Fixtures.id(2), latitude: -90, longitude: -180, accuracy: 1e-7, speed: .leastNonzeroMagnitude,
                        bearing: 0.1 + 0.2, altitude: 1e16),
                    Fixtures.location(
                        id: Fixtures.id(3), latitude: 90, longitude: 1e-300, accuracy: 9_007_199_254_740_991, speed: 9_007_199_254_740_992,
                        altitude: 1.7976931348623157e308),
                    Fixtures.location(
                        id: Fixtures.id(4), latitude: 12.345678901234567, longitude: -0.000001, accuracy: 123_456_789_012_345_680,
                        altitude: -8848.86),
                ])),
        // -0.0 renders as 0 and decodes to a value equal to 0.
        GoldenCase(
            "negative-zero",
            Fixtures.envelope(
                device: Fixtures.device(model: nil),
                locations: [
                    Fixtures.location(latitude: -0.0, longitude: -0.0, accuracy: -0.0, speed: -0.0, bearing: -0.0, altitude: -0.0)
                ]),
            decoded: Fixtures.envelope(
                device: Fixtures.device(model: nil),
                locations: [
                    Fixtures.location(latitude: 0, longitude: 0, accuracy: 0, speed: 0, bearing: 0, altitude: 0)
                ])),
        // Non-finite optionals are dropped, never written as null/NaN/Infinity.
        GoldenCase(
            "non-finite-optionals",
            Fixtures.envelope(
                device: Fixtures.device(model: nil),
                locations: [
                    Fixtures.location(accuracy: .nan, speed: .infinity, bearing: -.infinity, altitude: .signalingNaN, activity: .automotive)
                ]),
            decoded: Fixtures.envelope(
                device: Fixtures.device(model: nil),
                locations: [
                    Fixtures.location(activity: .automotive)
                ])),
        // Geofence-only batch, both transitions, every trigger / motion / quality.
        GoldenCase(
            "geofence",
            Fixtures.envelope(
                locations: [
                    WireLocation(
                        id: Fixtures.id(10), timestamp: Fixtures.fixTime, trigger: .geofence, motion: .moving, isMock: true,
                        latitude: 52.52, longitude: 13.405, quality: .implausibleSpeed),
                    WireLocation(
                        id: Fixtures.id(11), timestamp: WireTimestamp(millis: 0), trigger: .checkIn, motion: .stationary,
                        latitude: 1, longitude: 2, activity: .stationary),
                    WireLocation(
                        id: Fixtures.id(12), timestamp: WireTimestamp(millis: -1), trigger: .motion, motion: .unknown,
                        latitude: 3, longitude: 4, activity: .unknown),
                    WireLocation(
                        id: Fixtures.id(13), timestamp: WireTimestamp(millis: 1), trigger: .manual, motion: .moving,
                        latitude: 5, longitude: 6, activity: .cycling),
                ],
                events: [
                    WireGeofenceEvent(id: Fixtures.id(20), geofenceId: "office", type: .enter, timestamp: Fixtures.fixTime),
                    WireGeofenceEvent(id: Fixtures.id(21), geofenceId: "office", type: .exit, timestamp: Fixtures.sentAt),
                ])),
        // Strings that need escaping, and non-ASCII passed through as UTF-8.
        GoldenCase(
            "escapes",
            Fixtures.envelope(
                device: WireDevice(
                    installId: Fixtures.installId, platform: "linux", sdkVersion: "1.0.0-\"beta\"\\x",
                    model: "Pixel \"8\"\n\r\t\u{2}\u{1F}\u{7F}/é日本🚀"),
                extras: ["quote\"key": "back\\slash", "ctrl": "\u{1}\u{8}\u{C}\u{1B}", "é": "Ünïcødé 🚀", "line\u{2028}sep": "\u{2029}"],
                events: [
                    WireGeofenceEvent(id: Fixtures.eventId, geofenceId: "</script>\"{}[],:", type: .enter, timestamp: Fixtures.fixTime)
                ])),
    ]

    /// Blank models encode exactly like an absent model.
    static let blankModels: [String?] = [nil, "", " ", "   ", "\t", " \n "]
}

@Suite("Golden envelopes")
struct GoldenEnvelopeTests {
    static func golden(_ name: String) throws -> Data {
        let url = try #require(
            Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Golden"),
            "missing golden file Golden/\(name).json")
        return try Data(contentsOf: url)
    }

    /// Set BEEKON_RECORD_GOLDEN=1 to (re)write the golden files into the source tree. Review the diff!
    static func recordIfAsked(_ name: String, _ data: Data) throws {
        guard ProcessInfo.processInfo.environment["BEEKON_RECORD_GOLDEN"] == "1" else { return }
        let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden")
        try data.write(to: dir.appendingPathComponent("\(name).json"))
    }

    @Test("encoder output matches the golden bytes", arguments: GoldenCases.all)
    func bytesMatchGolden(_ c: GoldenCase) throws {
        let data = WireJSONWriter.encode(c.envelope)
        try Self.recordIfAsked(c.name, data)
        let expected = try Self.golden(c.name)
        #expect(data.utf8String == expected.utf8String)
        #expect(data == expected)
    }

    @Test("golden bytes are valid JSON", arguments: GoldenCases.all)
    func goldenParsesWithJSONSerialization(_ c: GoldenCase) throws {
        let data = try Self.golden(c.name)
        let object = try JSONSerialization.jsonObject(with: data)
        let dict = try #require(object as? [String: Any])
        #expect(dict["schema_version"] as? Int == 1)
        #expect(dict["locations"] is [Any])
        #expect(dict["geofence_events"] is [Any])
        // Never a null anywhere, never a NaN/Infinity token.
        let text = data.utf8String
        #expect(!text.contains("null"))
        #expect(!text.contains("nan") && !text.contains("inf"))
        // Exact key sets: the decoder and the writer agree with the frozen list.
        let allowedRoot: Set = ["schema_version", "batch_id", "session_id", "sent_at", "device", "extras", "locations", "geofence_events"]
        #expect(Set(dict.keys).isSubset(of: allowedRoot))
        let allowedLocation: Set = [
            "id", "timestamp", "trigger", "motion", "is_mock", "latitude", "longitude",
            "accuracy", "speed", "bearing", "altitude", "activity", "quality",
        ]
        for case let l as [String: Any] in dict["locations"] as? [Any] ?? [] {
            #expect(Set(l.keys).isSubset(of: allowedLocation))
        }
    }

    @Test("golden bytes decode back to the envelope", arguments: GoldenCases.all)
    func goldenRoundTrips(_ c: GoldenCase) throws {
        let data = try Self.golden(c.name)
        let decoded = try WireEnvelope.decode(data)
        #expect(decoded == c.decoded)
        // Re-encoding the decoded value is a fixed point.
        #expect(WireJSONWriter.encode(decoded) == data)
    }

    @Test("numbers keep their exact Double value through the wire")
    func numbersBitExact() throws {
        let c = try #require(GoldenCases.all.first { $0.name == "numbers" })
        let decoded = try WireEnvelope.decode(try Self.golden("numbers"))
        for (a, b) in zip(c.envelope.locations, decoded.locations) {
            #expect(a.latitude.bitPattern == b.latitude.bitPattern)
            #expect(a.longitude.bitPattern == b.longitude.bitPattern)
            for (x, y) in [(a.accuracy, b.accuracy), (a.speed, b.speed), (a.bearing, b.bearing), (a.altitude, b.altitude)] {
                #expect(x?.bitPattern == y?.bitPattern)
            }
        }
    }

    @Test("blank or nil model is omitted", arguments: GoldenCases.blankModels)
    func blankModelOmitted(_ model: String?) throws {
        let data = WireJSONWriter.encode(Fixtures.envelope(device: Fixtures.device(model: model), locations: [Fixtures.location()]))
        #expect(data == (try Self.golden("minimal")))
        #expect(!data.utf8String.contains("model"))
    }

    @Test("a model with surrounding spaces is written as is")
    func modelNotTrimmed() {
        let data = WireJSONWriter.encode(Fixtures.envelope(device: Fixtures.device(model: " X1 ")))
        #expect(data.utf8String.contains(#""sdk_version":"0.1.1","model":" X1 "}"#))
    }

    @Test("empty extras are omitted, set extras are sorted by key")
    func extras() throws {
        let none = WireJSONWriter.encode(Fixtures.envelope(extras: [:])).utf8String
        #expect(!none.contains("extras"))
        #expect(none.contains(#""model":"iPhone15,3"},"locations":[]"#))

        var rng = SeededRandom(seed: 7)
        let keys = (0..<50).map { "k\($0)" } + ["", "A", "a", "_", "é", "z"]
        let extras = Dictionary(uniqueKeysWithValues: keys.shuffled(using: &rng).map { ($0, "v" + $0) })
        let text = WireJSONWriter.encode(Fixtures.envelope(extras: extras)).utf8String
        let start = try #require(text.range(of: #""extras":{"#))
        let end = try #require(text[start.upperBound...].firstIndex(of: "}"))
        let body = String(text[start.upperBound..<end])
        let expected = keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            .map { "\"\($0)\":\"v\($0)\"" }.joined(separator: ",")
        #expect(body == expected)
    }

    @Test(
        "the writer's number rendering",
        arguments: [
            (180.0, "180"), (5.2, "5.2"), (-122.4194, "-122.4194"), (0.0, "0"), (-0.0, "0"), (1.0, "1"), (-1.0, "-1"),
            (0.5, "0.5"), (1e-7, "1e-07"), (359.999, "359.999"), (9_007_199_254_740_991, "9007199254740991"),
            (1e15, "1000000000000000"), (-1e15, "-1000000000000000"), (0.1 + 0.2, "0.30000000000000004"),
            (9_007_199_254_740_992, "9007199254740992"), (9_007_199_254_740_994, "9007199254740994"), (1e16, "10000000000000000"),
            (-1e18, "-1000000000000000000"), (0x1p62, "4611686018427387904"), (1e19, "1e+19"), (1e300, "1e+300"),
            (1.7976931348623157e308, "1.7976931348623157e+308"), (-1.5e-7, "-1.5e-07"), (1e-300, "1e-300"),
            (.leastNonzeroMagnitude, "5e-324"), (123.456, "123.456"),
        ])
    func numberRendering(_ value: Double, _ expected: String) throws {
        var w = WireJSONWriter()
        w.number(value)
        let text = String(decoding: w.bytes, as: UTF8.self)
        #expect(text == expected)
        // A valid JSON number (JSONSerialization accepts it) that parses back to the same value.
        #expect(try JSONSerialization.jsonObject(with: Data("[\(text)]".utf8)) is [Any])
        #expect(try JSONDecoder().decode([Double].self, from: Data("[\(text)]".utf8)) == [value])
    }

    @Test("every finite Double renders as a JSON number that round-trips; integral ones within Int64 have no '.' or 'e'")
    func randomNumbers() throws {
        var rng = SeededRandom(seed: 42)
        var texts: [String] = []
        var values: [Double] = []
        for i in 0..<5_000 {
            let v: Double
            switch i % 4 {
            case 0: v = Double(bitPattern: rng.next())
            case 1: v = Double.random(in: -180...180, using: &rng)
            case 2: v = Double(Int64.random(in: .min ... .max, using: &rng)) * (Bool.random(using: &rng) ? 1 : 1e-6)
            default: v = Double.random(in: -1...1, using: &rng) * pow(10, Double(Int.random(in: -320...300, using: &rng)))
            }
            guard v.isFinite else { continue }
            var w = WireJSONWriter()
            w.number(v)
            let text = String(decoding: w.bytes, as: UTF8.self)
            if v == v.rounded(), abs(v) < 0x1p63 {
                #expect(!text.contains(".") && !text.contains("e"), "\(v) -> \(text)")
            }
            #expect(!text.hasSuffix(".0"), "\(v) -> \(text)")
            texts.append(text)
            values.append(v)
        }
        let json = Data("[\(texts.joined(separator: ","))]".utf8)
        // Valid JSON for JSONSerialization; exact values via JSONDecoder (corelibs' JSONSerialization
        // parses some doubles 1 ulp off, e.g. 0.30000000000000004).
        #expect((try JSONSerialization.jsonObject(with: json) as? [Any])?.count == values.count)
        let parsed = try JSONDecoder().decode([Double].self, from: json)
        #expect(parsed.count == values.count)
        for (n, v) in zip(parsed, values) where n != v {
            Issue.record("\(v) did not round-trip: \(n)")
        }
    }

    @Test("a location encoded alone matches its slice of the envelope")
    func singleLocation() throws {
        let data = WireJSONWriter.encode(GoldenCases.fullLocation)
        let full = try Self.golden("full").utf8String
        #expect(full.contains("\"locations\":[\(data.utf8String)]"))
        var w = WireJSONWriter()
        w.write(GoldenCases.fullLocation, extra: [("x_debug", "[1,2]")])
        #expect(String(decoding: w.bytes, as: UTF8.self) == String(data.utf8String.dropLast()) + #","x_debug":[1,2]}"#)
    }

    @Test("a large batch round-trips")
    func largeBatch() throws {
        var rng = SeededRandom(seed: 99)
        let gen = UUIDv7Generator(now: { Date(timeIntervalSince1970: 1_781_526_850) })
        let locations = (0..<2_000).map { _ in
            WireLocation(
                id: gen.next(), timestamp: WireTimestamp(millis: Int64.random(in: 0...4_102_444_800_000, using: &rng)),
                trigger: Trigger.allCases.randomElement(using: &rng)!, motion: Motion.allCases.randomElement(using: &rng)!,
                isMock: Bool.random(using: &rng),
                latitude: Double.random(in: -90...90, using: &rng), longitude: Double.random(in: -180...180, using: &rng),
                accuracy: Bool.random(using: &rng) ? Double.random(in: 0...5000, using: &rng) : nil,
                speed: Bool.random(using: &rng) ? Double.random(in: 0...100, using: &rng) : nil,
                bearing: Bool.random(using: &rng) ? Double.random(in: 0..<360, using: &rng).rounded(.down) : nil,
                altitude: Bool.random(using: &rng) ? Double.random(in: -500...9000, using: &rng) : nil,
                activity: Bool.random(using: &rng) ? Activity.allCases.randomElement(using: &rng) : nil,
                quality: Bool.random(using: &rng) ? Quality.allCases.randomElement(using: &rng) : nil)
        }
        let envelope = Fixtures.envelope(extras: ["k": "v"], locations: locations)
        let data = WireJSONWriter.encode(envelope)
        #expect(try WireEnvelope.decode(data) == envelope)
        #expect(try JSONSerialization.jsonObject(with: data) is [String: Any])
    }
}
