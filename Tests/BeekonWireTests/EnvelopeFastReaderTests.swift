import Foundation
import BeekonTesting
import Testing
@testable import BeekonWire

/// The fast path of `WireEnvelope.decode` (`EnvelopeFastReader`) is an optimisation, never a
/// second definition of schema v1 (SY-2): whenever it answers, its answer is the one
/// `JSONDecoder` gives; everything else it leaves to `JSONDecoder`.
@Suite("Envelope decoding: the fast path agrees with JSONDecoder")
struct EnvelopeFastReaderTests {
    /// A random double of the kinds sensors and parsers produce: full precision, few
    /// decimals, integral, tiny, huge.
    static func number(_ rng: inout SeededRandom, in range: ClosedRange<Double>) -> Double {
        let v = Double.random(in: range, using: &rng)
        switch Int.random(in: 0..<5, using: &rng) {
        case 0: return v
        case 1: return (v * 1e6).rounded() / 1e6
        case 2: return v.rounded()
        case 3: return v * 1e-9
        default: return (v * 10).rounded() / 10
        }
    }

    static func id(_ rng: inout SeededRandom) -> UUID {
        UUIDv7Generator.make(
            millis: Int64.random(in: 1_700_000_000_000...1_900_000_000_000, using: &rng), counter: 1, randomBits: rng.next())
    }

    static func time(_ rng: inout SeededRandom) -> WireTimestamp {
        WireTimestamp(millis: Int64.random(in: 1_700_000_000_000...1_900_000_000_000, using: &rng))
    }

    /// A random envelope whose strings need no escaping (so the fast path must answer).
    static func envelope(_ rng: inout SeededRandom, fixes: Int) -> WireEnvelope {
        func maybe<T>(_ value: @autoclosure () -> T) -> T? { Bool.random(using: &rng) ? value() : nil }
        let models = ["iPhone15,3", "Pixel 8", "Raspberry Pi 4 — GNSS hat", "Zürich-Tracker ✓"]
        var device = WireDevice(
            installId: id(&rng), platform: ["ios", "android", "linux", "watchos"].randomElement(using: &rng)!,
            sdkVersion: "0.\(Int.random(in: 0...9, using: &rng)).1", model: models.randomElement(using: &rng)!)
        device.syncIntervalSeconds = maybe(Int.random(in: 1...86_400, using: &rng))
        device.checkInIntervalSeconds = maybe(Int.random(in: 1...86_400, using: &rng))
        var extras: [String: String] = [:]
        for i in 0..<Int.random(in: 0...3, using: &rng) { extras["key\(i)"] = ["trip", "ünïcödé", "", "a b"].randomElement(using: &rng)! }
        let locations = (0..<fixes).map { _ in
            var l = WireLocation(
                id: id(&rng), timestamp: time(&rng), trigger: Trigger.allCases.randomElement(using: &rng)!,
                motion: Motion.allCases.randomElement(using: &rng)!, isMock: Bool.random(using: &rng),
                latitude: number(&rng, in: -90...90), longitude: number(&rng, in: -180...180),
                accuracy: maybe(number(&rng, in: 0...500)), speed: maybe(number(&rng, in: -5...90)),
                bearing: maybe(number(&rng, in: 0...359)), altitude: maybe(number(&rng, in: -400...9000)),
                activity: maybe(Activity.allCases.randomElement(using: &rng)!),
                quality: maybe(Quality.allCases.randomElement(using: &rng)!),
                privacyZone: maybe("home"))
            l.locateRequestId = maybe(id(&rng))
            return l
        }
        let events = (0..<Int.random(in: 0...2, using: &rng)).map { _ in
            WireGeofenceEvent(
                id: id(&rng), geofenceId: ["home", "work", "pump-7"].randomElement(using: &rng)!,
                type: GeofenceTransition.allCases.randomElement(using: &rng)!, timestamp: time(&rng))
        }
        var envelope = WireEnvelope(
            batchId: id(&rng), sessionId: id(&rng), sentAt: time(&rng), device: device, extras: extras,
            locations: locations, geofenceEvents: events)
        envelope.proximityEvents = (0..<Int.random(in: 0...2, using: &rng)).map { _ in
            WireProximityEvent(
                id: id(&rng), region: "pump", uuid: id(&rng), major: maybe(Int.random(in: 0...65_535, using: &rng)),
                minor: maybe(Int.random(in: 0...65_535, using: &rng)), scanner: "hci0",
                type: Bool.random(using: &rng) ? .enter : .exit, timestamp: time(&rng), distance: maybe(number(&rng, in: 0...60)))
        }
        return envelope
    }

    /// Whether the fast path answered; fails the test when its answer differs from JSONDecoder's
    /// or when it answers a body JSONDecoder refuses.
    @discardableResult
    static func agree(_ body: Data, _ context: @autoclosure () -> String) -> Bool {
        let general = Result { () throws(WireDecodingError) in try WireEnvelope.generalRead(body) }
        guard let fast = EnvelopeFastReader.read(body) else { return false }
        switch general {
        case .success(let raw):
            #expect(fast == raw, "\(context()): \(String(decoding: body, as: UTF8.self))")
            // `==` takes -0.0 for 0.0: every number is compared bit for bit as well.
            #expect(bits(fast) == bits(raw), "\(context()): a number differs in its bits")
        case .failure(let error):
            Issue.record("\(context()): the fast path read a body JSONDecoder refuses (\(error)): \(String(decoding: body, as: UTF8.self))")
        }
        return true
    }

    /// Every number of a read envelope, as bit patterns.
    static func bits(_ e: RawEnvelope) -> [UInt64?] {
        e.locations.flatMap { l in [l.latitude, l.longitude, l.accuracy, l.speed, l.bearing, l.altitude].map { $0?.bitPattern } }
            + (e.proximity_events ?? []).map { $0.distance?.bitPattern }
    }

    @Test func everyEnvelopeTheWriterProducesTakesTheFastPathAndAgrees() throws {
        var rng = SeededRandom(seed: 0x5EED_0001)
        for n in 0..<300 {
            let envelope = Self.envelope(&rng, fixes: n % 7)
            let body = WireJSONWriter.encode(envelope)
            #expect(Self.agree(body, "envelope \(n)"), "the fast path left a written envelope to the general path (envelope \(n))")
            #expect(try WireEnvelope.decode(body) == envelope)
        }
    }

    @Test func bodiesReorderedAndReindentedStillTakeTheFastPath() throws {
        var rng = SeededRandom(seed: 0x5EED_0002)
        for n in 0..<100 {
            let body = WireJSONWriter.encode(Self.envelope(&rng, fixes: 3))
            let tree = try JSONSerialization.jsonObject(with: body)
            // Another producer's layout: pretty-printed, keys sorted (another order than the writer's).
            let other = try JSONSerialization.data(withJSONObject: tree, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            if !other.contains(0x5C) { #expect(Self.agree(other, "reordered \(n)")) }
        }
    }

    @Test func numbersConvertBitForBitAsJSONDecoderConvertsThem() {
        let tricky = [
            "0", "-0", "-0.0", "0.1", "0.3", "1e22", "1e23", "-1e-22", "1E5", "1e+5", "2.5e-3", "123456789012345",
            "1234567890123456", "12345678901234567890", "9007199254740993", "0.000000000000000000000000001",
            "2.2250738585072011e-308", "4.9e-324", "1.7976931348623157e308", "37.774912345678901234", "-122.41940000000000",
            "32.070000", "179.99999999999999", "89.999999999999999999", "1e-400", "-1e-400", "1e400", "4e-320",
            "1.5e-320", "0e5", "0.0000000000000000000000000000000000000000000000000001e52", "0.0e5", "0E0", "-0e-0",
            "0.000e1", "0.0", "-0.000", "1.0e5", "0.5e1", "5e-324", "2e-324", "1.0000000000000000000001",
        ]
        // A long fraction meeting a long exponent must not pass for a small power of ten.
        let long = [
            "0." + String(repeating: "0", count: 99_999) + "1e1000010", "0." + String(repeating: "0", count: 21) + "1e22",
            "1" + String(repeating: "0", count: 400) + "e-400", "0e50", "-0e5",
        ]
        var texts = tricky + long
        var rng = SeededRandom(seed: 0x5EED_0003)
        for _ in 0..<5000 {
            let v = Double.random(in: -180...180, using: &rng) * pow(10, Double(Int.random(in: -12...12, using: &rng)))
            texts.append(v.description)
            texts.append(String(format: "%.\(Int.random(in: 0...17, using: &rng))f", v))
            texts.append(String(format: "%.\(Int.random(in: 1...20, using: &rng))e", v))
        }
        var answered = 0
        for text in texts {
            let body = Data(
                (#"{"schema_version":1,"batch_id":"b","session_id":"s","sent_at":"t","device":{"install_id":"i","platform":"p","sdk_version":"v"},"locations":[{"id":"x","timestamp":"t","trigger":"interval","motion":"moving","is_mock":false,"latitude":"#
                    + text + #","longitude":0}],"geofence_events":[]}"#).utf8)
            if Self.agree(body, "number \(text)") { answered += 1 }
        }
        #expect(answered > texts.count * 99 / 100, "the fast path answered \(answered) of \(texts.count)")
    }

    @Test func mutatedBodiesAgreeWheneverTheFastPathAnswers() {
        var rng = SeededRandom(seed: 0x5EED_0004)
        let tokens: [[UInt8]] =
            [
                " ", "\n", "\t", ",", ":", "{", "}", "[", "]", "null", "\"", "\\", "\\n", "\\u00e9", "1", "-", ".", "e", "0", "true",
                "false", "\"x\":1,", "\"id\":\"dup\",", "\"latitude\":1,", "\"extra\":{\"a\":[1,{\"b\":null}]},", "é", "\u{212A}",
            ].map { Array($0.utf8) } + [[0xFF], [0x00], [0xC3]]
        var answered = 0
        let trials = 4000
        for n in 0..<trials {
            var body = Array(WireJSONWriter.encode(Self.envelope(&rng, fixes: 2)))
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                let at = Int.random(in: 0..<body.count, using: &rng)
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: body.removeSubrange(at..<min(body.count, at + Int.random(in: 1...4, using: &rng)))
                case 1: body.insert(contentsOf: tokens.randomElement(using: &rng)!, at: at)
                default: body[at] = UInt8.random(in: 0...255, using: &rng)
                }
                if body.isEmpty { body = [0x7B] }
            }
            if Self.agree(Data(body), "mutation \(n)") { answered += 1 }
        }
        // Some mutations (whitespace, an unknown member, a digit) leave a body it must still read.
        #expect(answered > trials / 20, "the fast path answered \(answered) of \(trials) mutated bodies")
    }

    @Test(arguments: [
        ("an escape in a string", #""model":"say \"hi\"""#),
        ("a null optional", #""model":null"#),
        ("a repeated key", #""model":"a","model":"b""#),
        ("an unknown key outside ASCII (the Kelvin sign, canonically a K)", "\"\u{212A}\":1"),
        ("an unknown member nested deeper than 32", #""deep":"# + String(repeating: "[", count: 40) + String(repeating: "]", count: 40)),
        ("an interval as a string", #""sync_interval_seconds":"60""#),
    ])
    func whatTheFastPathLeavesToJSONDecoder(_ what: String, _ member: String) throws {
        let body = Data(
            (#"{"schema_version":1,"batch_id":"0190d4e2-7b1a-7c3e-9f10-2a4b6c8d0e1f","session_id":"0190d4e0-1234-7000-8000-aabbccddeeff","sent_at":"2026-06-15T12:34:56.789Z","device":{"install_id":"0190c1a4-aaaa-7bbb-8ccc-ddddeeeeffff","platform":"ios","sdk_version":"0.1.1","#
                + member + #"},"locations":[],"geofence_events":[]}"#).utf8)
        #expect(EnvelopeFastReader.read(body) == nil, "\(what)")
        // …and the general path still decides it: the same answer as before the fast path existed.
        let decoded = Result { () throws(WireDecodingError) in try WireEnvelope.decode(body) }
        let general = Result { () throws(WireDecodingError) in try WireEnvelope.validated(WireEnvelope.generalRead(body)) }
        #expect(decoded == general, "\(what)")
    }

    @Test func bodiesThatAreNotAnEnvelopeObjectAreLeftToJSONDecoder() {
        var rng = SeededRandom(seed: 0x5EED_0005)
        let valid = WireJSONWriter.encode(Self.envelope(&rng, fixes: 1))
        for body in [Data(), Data("[]".utf8), Data([0xEF, 0xBB, 0xBF]) + valid, valid + Data("x".utf8), valid + Data("{}".utf8)] {
            #expect(EnvelopeFastReader.read(body) == nil)
        }
        #expect(EnvelopeFastReader.read(valid + Data(" \n\t\r".utf8)) != nil)
    }

    /// Each object's required keys, dropped or renamed one at a time: JSONDecoder refuses the
    /// body, so the fast path must not answer it.
    @Test func aMissingRequiredKeyIsNeverReadByTheFastPath() throws {
        let location: [String: Any] = [
            "id": "a", "timestamp": "t", "trigger": "interval", "motion": "moving", "is_mock": false, "latitude": 1.5, "longitude": 2.5,
        ]
        let event: [String: Any] = ["id": "e", "geofence_id": "home", "type": "exit", "timestamp": "t"]
        let proximity: [String: Any] = ["id": "p", "region": "pump", "uuid": "u", "scanner": "hci0", "type": "enter", "timestamp": "t"]
        let device: [String: Any] = ["install_id": "i", "platform": "ios", "sdk_version": "1"]
        let envelope: [String: Any] = [
            "schema_version": 1, "batch_id": "b", "session_id": "s", "sent_at": "t", "device": device,
            "locations": [location], "geofence_events": [event], "proximity_events": [proximity],
        ]
        #expect(Self.agree(try JSONSerialization.data(withJSONObject: envelope), "the complete body"))
        func variants(_ object: [String: Any], _ put: ([String: Any]) -> [String: Any]) -> [(String, [String: Any])] {
            object.keys.sorted().flatMap { key -> [(String, [String: Any])] in
                var dropped = object
                dropped[key] = nil
                var renamed = dropped
                renamed["x" + key] = object[key]
                return [("without \(key)", put(dropped)), ("\(key) renamed", put(renamed))]
            }
        }
        var cases = variants(envelope.filter { $0.key != "proximity_events" }) {
            $0.merging(["proximity_events": [proximity]]) { a, _ in a }
        }
        cases += variants(device) { d in envelope.merging(["device": d]) { _, new in new } }
        cases += variants(location) { l in envelope.merging(["locations": [l]]) { _, new in new } }
        cases += variants(event) { e in envelope.merging(["geofence_events": [e]]) { _, new in new } }
        cases += variants(proximity) { p in envelope.merging(["proximity_events": [p]]) { _, new in new } }
        let required = 7 + 3 + 7 + 4 + 6  // envelope (all but the optional proximity_events), device, location, event, proximity event
        #expect(cases.count == 2 * required)
        for (what, tree) in cases {
            let body = try JSONSerialization.data(withJSONObject: tree)
            #expect(throws: WireDecodingError.self, "\(what)") { try WireEnvelope.generalRead(body) }
            #expect(EnvelopeFastReader.read(body) == nil, "\(what)")
        }
    }
}
