import Foundation
import Testing
@testable import BeekonWire
import BeekonTesting

@Suite("WireTimestamp")
struct WireTimestampTests {
    static let minMillis: Int64 = -62_135_596_800_000  // 0001-01-01T00:00:00.000Z
    static let maxMillis: Int64 = 253_402_300_799_999  // 9999-12-31T23:59:59.999Z

    @Test(
        "formats exactly YYYY-MM-DDTHH:MM:SS.mmmZ",
        arguments: [
            (Int64(0), "1970-01-01T00:00:00.000Z"),
            (1, "1970-01-01T00:00:00.001Z"),
            (999, "1970-01-01T00:00:00.999Z"),
            (1000, "1970-01-01T00:00:01.000Z"),
            (-1, "1969-12-31T23:59:59.999Z"),
            (-1000, "1969-12-31T23:59:59.000Z"),
            (-1001, "1969-12-31T23:59:58.999Z"),
            (-86_400_000, "1969-12-31T00:00:00.000Z"),
            (-86_400_001, "1969-12-30T23:59:59.999Z"),
            (1_709_164_800_000, "2024-02-29T00:00:00.000Z"),
            (1_709_251_199_999, "2024-02-29T23:59:59.999Z"),
            (1_709_251_200_000, "2024-03-01T00:00:00.000Z"),
            (951_782_400_000, "2000-02-29T00:00:00.000Z"),
            (4_107_456_000_000, "2100-02-28T00:00:00.000Z"),
            (4_107_542_400_000, "2100-03-01T00:00:00.000Z"),  // 2100 is not a leap year
            (1_781_526_896_789, "2026-06-15T12:34:56.789Z"),
            (1_735_689_599_999, "2024-12-31T23:59:59.999Z"),
            (253_402_300_799_999, "9999-12-31T23:59:59.999Z"),
            (253_370_764_800_000, "9999-01-01T00:00:00.000Z"),
            (-62_135_596_800_000, "0001-01-01T00:00:00.000Z"),
            (-2_208_988_800_000, "1900-01-01T00:00:00.000Z"),
            (-12_219_292_800_000, "1582-10-15T00:00:00.000Z"),
            (-12_219_292_800_001, "1582-10-14T23:59:59.999Z"),  // proleptic Gregorian, no Julian gap
            (2_147_483_648_000, "2038-01-19T03:14:08.000Z"),
        ])
    func format(_ millis: Int64, _ expected: String) {
        let t = WireTimestamp(millis: millis)
        #expect(t.description == expected)
        #expect(WireTimestamp(wire: expected) == t)
        #expect(WireTimestamp(iso8601: expected) == t)
    }

    @Test("Date input is truncated to the millisecond, never rounded")
    func truncation() {
        #expect(WireTimestamp(Date(timeIntervalSince1970: 0.0009)).millis == 0)
        #expect(WireTimestamp(Date(timeIntervalSince1970: 1.2345)).millis == 1234)
        #expect(WireTimestamp(Date(timeIntervalSince1970: 1.9999)).millis == 1999)
        #expect(WireTimestamp(Date(timeIntervalSince1970: 1_781_526_896.789_9)).description == "2026-06-15T12:34:56.789Z")
        // Before 1970 truncation goes towards the past (floor), so the millisecond containing the instant is kept.
        #expect(WireTimestamp(Date(timeIntervalSince1970: -0.0005)).millis == -1)
        #expect(WireTimestamp(Date(timeIntervalSince1970: -1.2345)).millis == -1235)
        #expect(WireTimestamp(Date(timeIntervalSince1970: -0.0005)).description == "1969-12-31T23:59:59.999Z")
    }

    @Test("whole-millisecond Dates keep their millisecond (no off-by-one from binary floating point)")
    func dateRoundTrip() {
        var rng = SeededRandom(seed: 0xDA7E)
        var failures: [Int64] = []
        for _ in 0..<20_000 {
            let ms = Int64.random(in: -2_208_988_800_000...4_102_444_800_000, using: &rng)
            let t = WireTimestamp(millis: ms)
            if WireTimestamp(t.date) != t { failures.append(ms) }
            // And through Date's own arithmetic.
            if WireTimestamp(Date(timeIntervalSince1970: Double(ms) / 1000)) != t { failures.append(ms) }
        }
        #expect(failures.isEmpty, "e.g. \(failures.prefix(5))")
        #expect(WireTimestamp(Date(timeIntervalSince1970: 40_980_054.558)).millis == 40_980_054_558)
    }

    @Test("date property is the same instant")
    func dateProperty() {
        #expect(WireTimestamp(millis: 1_500).date == Date(timeIntervalSince1970: 1.5))
        #expect(WireTimestamp(millis: -1_500).date == Date(timeIntervalSince1970: -1.5))
    }

    @Test("ordering follows millis")
    func ordering() {
        #expect(WireTimestamp(millis: -1) < WireTimestamp(millis: 0))
        #expect(!(WireTimestamp(millis: 5) < WireTimestamp(millis: 5)))
        // The wire form sorts like the instant (within 0001...9999).
        var rng = SeededRandom(seed: 3)
        let ts = (0..<500).map { _ in WireTimestamp(millis: Int64.random(in: Self.minMillis...Self.maxMillis, using: &rng)) }
        #expect(ts.sorted().map(\.description) == ts.map(\.description).sorted())
    }

    @Test(
        "strict parse rejects near-misses",
        arguments: [
            "", "2026-06-15T12:34:56.789", "2026-06-15T12:34:56.789z", "2026-06-15T12:34:56.78Z", "2026-06-15T12:34:56.7890Z",
            "2026-06-15T12:34:56Z", "2026-06-15T12:34:56.789+00:00", "2026-06-15 12:34:56.789Z", "2026-06-15t12:34:56.789Z",
            "2026-13-15T12:34:56.789Z", "2026-00-15T12:34:56.789Z", "2026-06-00T12:34:56.789Z", "2026-06-31T12:34:56.789Z",
            "2026-02-29T12:34:56.789Z", "2026-02-30T00:00:00.000Z", "1900-02-29T00:00:00.000Z", "2026-06-15T24:00:00.000Z",
            "2026-06-15T12:60:00.000Z", "2026-06-15T12:34:61.000Z", "26-06-15T12:34:56.789Z", "02026-06-15T12:34:56.789Z",
            "2026/06/15T12:34:56.789Z", "2026-06-15T12-34-56.789Z", "2026-06-15T12:34:56,789Z", "2026-6-15T12:34:56.789ZZ",
            "+026-06-15T12:34:56.789Z", "2026-06-15T12:34:5a.789Z", "2026-06-15T12:34:56.78aZ", " 2026-06-15T12:34:56.789Z",
            "2026-06-15T12:34:56.789Z ", "2026-06-15", "２026-06-15T12:34:56.789Z", "2026-06-15T12:34:56.-89Z",
        ])
    func strictRejects(_ text: String) {
        #expect(WireTimestamp(wire: text) == nil)
    }

    @Test(
        "lenient parse accepts common ISO 8601 forms",
        arguments: [
            ("2026-06-15", "2026-06-15T00:00:00.000Z"),
            ("2024-02-29", "2024-02-29T00:00:00.000Z"),
            ("2026-06-15T12:34:56Z", "2026-06-15T12:34:56.000Z"),
            ("2026-06-15T12:34:56", "2026-06-15T12:34:56.000Z"),
            ("2026-06-15 12:34:56", "2026-06-15T12:34:56.000Z"),
            ("2026-06-15t12:34:56z", "2026-06-15T12:34:56.000Z"),
            ("2026-06-15T12:34:56.7Z", "2026-06-15T12:34:56.700Z"),
            ("2026-06-15T12:34:56.78Z", "2026-06-15T12:34:56.780Z"),
            ("2026-06-15T12:34:56.789Z", "2026-06-15T12:34:56.789Z"),
            ("2026-06-15T12:34:56.7891Z", "2026-06-15T12:34:56.789Z"),
            ("2026-06-15T12:34:56.78999Z", "2026-06-15T12:34:56.789Z"),
            ("2026-06-15T12:34:56.123456Z", "2026-06-15T12:34:56.123Z"),
            ("2026-06-15T12:34:56.9999999Z", "2026-06-15T12:34:56.999Z"),
            ("2026-06-15T12:34:56.12345678Z", "2026-06-15T12:34:56.123Z"),
            ("2026-06-15T12:34:56.123456789Z", "2026-06-15T12:34:56.123Z"),
            ("2026-06-15T12:34:56,5Z", "2026-06-15T12:34:56.500Z"),
            ("2026-06-15T12:34:56.5", "2026-06-15T12:34:56.500Z"),
            ("2026-06-15T14:34:56+02:00", "2026-06-15T12:34:56.000Z"),
            ("2026-06-15T14:34:56.789+02:00", "2026-06-15T12:34:56.789Z"),
            ("2026-06-15T07:04:56-0530", "2026-06-15T12:34:56.000Z"),
            ("2026-06-15T07:04:56.1-05:30", "2026-06-15T12:34:56.100Z"),
            ("2026-06-15T12:34:56+00:00", "2026-06-15T12:34:56.000Z"),
            ("2026-06-15T12:34:56-00:00", "2026-06-15T12:34:56.000Z"),
            ("2026-06-15T14:34:56+02", "2026-06-15T12:34:56.000Z"),
            ("2026-06-16T01:00:00+02:00", "2026-06-15T23:00:00.000Z"),  // crosses midnight
            ("2026-12-31T22:00:00-03:00", "2027-01-01T01:00:00.000Z"),  // crosses a year
            ("2024-03-01T00:30:00+01:00", "2024-02-29T23:30:00.000Z"),  // back into a leap day
            ("1969-12-31T23:59:59.999Z", "1969-12-31T23:59:59.999Z"),
        ])
    func lenientAccepts(_ text: String, _ expected: String) throws {
        let t = try #require(WireTimestamp(iso8601: text))
        #expect(t.description == expected)
    }

    @Test(
        "lenient parse still rejects garbage",
        arguments: [
            "", "2026", "2026-06", "2026-6-15", "2026-06-15T", "2026-06-15T12", "2026-06-15T12:34", "2026-06-15T12:34:56.",
            "2026-06-15T12:34:56.Z", "2026-06-15T12:34:56+2:00", "2026-06-15T12:34:56+02:0", "2026-06-15T12:34:56+24:00",
            "2026-06-15T12:34:56+02:60", "2026-06-15T12:34:56X", "2026-06-15T12:34:56Z ", "2026-06-15T12:34:56ZZ",
            "2026-02-30", "2026-13-01", "2026-06-15T24:00:00Z", "2026-06-15T12:34:56.123abc", "2026-06-15x12:34:56Z",
            "June 15, 2026", "1781526896789",
        ])
    func lenientRejects(_ text: String) {
        #expect(WireTimestamp(iso8601: text) == nil)
    }

    @Test("random values: format → strict parse → lenient parse round-trip, cross-checked against Foundation's calendar")
    func randomRoundTrip() throws {
        var rng = SeededRandom(seed: 20_260_615)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        let mismatches = (0..<20_000).compactMap { i -> String? in
            let ms = Int64.random(in: Self.minMillis...Self.maxMillis, using: &rng)
            let t = WireTimestamp(millis: ms)
            let text = t.description
            guard text.utf8.count == 24 else { return "length \(text)" }
            guard WireTimestamp(wire: text) == t else { return "strict \(text)" }
            guard WireTimestamp(iso8601: text) == t else { return "lenient \(text)" }
            // Foundation's Gregorian calendar switches to Julian before 1582; only compare after that.
            if i % 4 == 0, ms > -12_219_292_800_000 {
                let c = calendar.dateComponents(
                    [.year, .month, .day, .hour, .minute, .second],
                    from: Date(timeIntervalSince1970: Double(ms / 1000) + (ms % 1000 < 0 ? -1 : 0)))
                let expected = String(format: "%04d-%02d-%02dT%02d:%02d:%02d", c.year!, c.month!, c.day!, c.hour!, c.minute!, c.second!)
                guard text.hasPrefix(expected) else { return "calendar \(text) vs \(expected)" }
                let msPart = ((ms % 1000) + 1000) % 1000
                guard text.hasSuffix(String(format: ".%03dZ", Int(msPart))) else { return "millis \(text)" }
            }
            // An offset form of the same instant parses to the same value.
            let shifted = WireTimestamp(millis: ms + 2 * 3_600_000).description
            if shifted.utf8.count == 24, WireTimestamp(iso8601: String(shifted.dropLast()) + "+02:00") != t { return "offset \(text)" }
            return nil
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }

    @Test("every day of a leap and a common year formats and parses")
    func everyDay() {
        for year in [2023, 2024, 2000, 1900] {
            var days = 0
            for month in 1...12 {
                for day in 1...31 {
                    let text = String(format: "%04d-%02d-%02dT12:00:00.000Z", year, month, day)
                    guard let t = WireTimestamp(wire: text) else { continue }
                    days += 1
                    #expect(t.description == text)
                }
            }
            let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
            #expect(days == (leap ? 366 : 365), "year \(year)")
        }
    }
}
