import Foundation
import Testing
@testable import BeekonWire
import BeekonTesting

extension UUID {
    var bytes: [UInt8] { withUnsafeBytes(of: uuid) { Array($0) } }
}

/// Asserts `ids` are strictly increasing in byte order (= wire-string order); returns the first violation index.
func firstOrderViolation(_ ids: [UUID]) -> Int? {
    var previous: [UInt8]?
    for (i, id) in ids.enumerated() {
        let b = id.bytes
        if let p = previous, !p.lexicographicallyPrecedes(b) { return i }
        previous = b
    }
    return nil
}

@Suite("UUIDv7")
struct UUIDv7Tests {
    static let now: Int64 = 1_781_526_896_789  // 2026-06-15T12:34:56.789Z

    @Test("version 7, RFC 9562 variant, lowercase canonical wire string")
    func layout() {
        let gen = UUIDv7Generator()
        for _ in 0..<1_000 {
            let id = gen.next()
            let b = id.bytes
            #expect(b[6] >> 4 == 7)
            #expect(b[8] >> 6 == 0b10)
            let s = id.wireString
            #expect(s == s.lowercased())
            #expect(s.utf8.count == 36)
            #expect(s.split(separator: "-").map(\.count) == [8, 4, 4, 4, 12])
            #expect(Array(s.utf8)[14] == UInt8(ascii: "7"))
            #expect("89ab".utf8.contains(Array(s.utf8)[19]))
            #expect(UUID(uuidString: s) == id)
        }
    }

    @Test(
        "uuidV7Millis equals the injected time",
        arguments: [
            Int64(0), 1, 999, 1_000, 1_781_526_896_789, 1_700_000_000_001, 4_102_444_800_000, 281_474_976_710_655,
        ])
    func embeddedTime(_ millis: Int64) {
        let gen = UUIDv7Generator(now: { WireTimestamp(millis: millis).date })
        #expect(gen.next().uuidV7Millis == millis)
    }

    @Test("uuidV7Millis equals the injected time for random whole-millisecond clocks")
    func embeddedTimeRandom() {
        var rng = SeededRandom(seed: 77)
        var wrong: [Int64] = []
        for _ in 0..<5_000 {
            let millis = Int64.random(in: 0...4_102_444_800_000, using: &rng)
            let gen = UUIDv7Generator(now: { Date(timeIntervalSince1970: Double(millis) / 1000) })
            if gen.next().uuidV7Millis != millis { wrong.append(millis) }
        }
        #expect(wrong.isEmpty, "e.g. \(wrong.prefix(5))")
        // A sub-millisecond clock is truncated, like timestamps.
        #expect(UUIDv7Generator(now: { Date(timeIntervalSince1970: 1.9996) }).next().uuidV7Millis == 1_999)
    }

    @Test("make() lays out millis, counter and random bits")
    func make() {
        let id = UUIDv7Generator.make(millis: 0x0190_D4E2_7B1A, counter: 0xC3E, randomBits: 0xFFFF_FFFF_FFFF_FFFF)
        #expect(id.wireString == "0190d4e2-7b1a-7c3e-bfff-ffffffffffff")
        let zero = UUIDv7Generator.make(millis: 0, counter: 0, randomBits: 0)
        #expect(zero.wireString == "00000000-0000-7000-8000-000000000000")
        #expect(zero.uuidV7Millis == 0)
        // Only 12 counter bits are used.
        #expect(UUIDv7Generator.make(millis: 1, counter: 0xFFFF, randomBits: 0).wireString == "00000000-0001-7fff-8000-000000000000")
    }

    @Test("uuidV7Millis is nil for other versions")
    func otherVersions() {
        #expect(UUID(uuidString: "0190d4e2-7b1a-4c3e-9f10-2a4b6c8d0e1f")!.uuidV7Millis == nil)
        #expect(UUID().uuidV7Millis == nil)  // random v4
        #expect(UUID(uuidString: "0190d4e2-7b1a-7c3e-9f10-2a4b6c8d0e1f")!.uuidV7Millis == 0x0190_D4E2_7B1A)
    }

    @Test("100,000 ids in one millisecond are strictly increasing and stay close to the clock")
    func frozenClock() throws {
        let gen = UUIDv7Generator(now: { WireTimestamp(millis: Self.now).date })
        let ids = (0..<100_000).map { _ in gen.next() }
        #expect(firstOrderViolation(ids) == nil)
        #expect(Set(ids).count == ids.count)
        #expect(ids.first?.uuidV7Millis == Self.now)
        // The 12-bit counter borrows the next millisecond only when exhausted: at least 2,048 ids per millisecond.
        let last = try #require(ids.last?.uuidV7Millis)
        #expect(last > Self.now)
        #expect(last - Self.now <= 100_000 / 2_048 + 1)
        #expect(ids.allSatisfy { $0.bytes[6] >> 4 == 7 && $0.bytes[8] >> 6 == 0b10 })
        // The wire strings sort the same way (lowercase hex).
        let strings = ids.map(\.wireString)
        #expect(strings == strings.sorted())
    }

    @Test("a clock stepping backwards never produces a smaller id")
    func backwardsClock() throws {
        let clock = ManualClock(millis: Self.now, step: -1)
        let gen = UUIDv7Generator(now: clock.read)
        let ids = (0..<100_000).map { _ in gen.next() }
        #expect(firstOrderViolation(ids) == nil)
        #expect(Set(ids).count == ids.count)
        #expect(ids.allSatisfy { ($0.uuidV7Millis ?? 0) >= Self.now })
    }

    @Test("a clock jumping back by an hour, then forward again")
    func clockJumps() {
        let times: [Int64] = [
            Self.now, Self.now + 5, Self.now - 3_600_000, Self.now - 3_599_999, Self.now + 5, Self.now + 6, Self.now + 10_000,
        ]
        let box = ManualClock(millis: 0)
        var ids: [UUID] = []
        var gens: [Int64] = []
        let gen = UUIDv7Generator(now: { box.read() })
        for t in times {
            box.set(t)
            let id = gen.next()
            ids.append(id)
            gens.append(id.uuidV7Millis!)
        }
        #expect(firstOrderViolation(ids) == nil)
        #expect(gens.first == Self.now)
        #expect(gens[1] == Self.now + 5)
        #expect(gens[2] == Self.now + 5)  // held, not stepped back
        #expect(gens.last == Self.now + 10_000)  // follows the clock again once it is ahead
    }

    @Test("a running clock yields ids stamped with each millisecond")
    func forwardClock() {
        let clock = ManualClock(millis: Self.now, step: 1)
        let gen = UUIDv7Generator(now: clock.read)
        let ids = (0..<10_000).map { _ in gen.next() }
        #expect(firstOrderViolation(ids) == nil)
        for (i, id) in ids.enumerated() where id.uuidV7Millis != Self.now + Int64(i) {
            Issue.record("id \(i) has millis \(id.uuidV7Millis.map(String.init) ?? "nil")")
            break
        }
    }

    @Test("concurrent tasks get unique ids, each task's sequence increasing")
    func concurrent() async {
        let gen = UUIDv7Generator(now: { WireTimestamp(millis: Self.now).date })
        let perTask = 5_000
        let tasks = 16
        let results = await withTaskGroup(of: [UUID].self) { group in
            for _ in 0..<tasks {
                group.addTask { (0..<perTask).map { _ in gen.next() } }
            }
            var all: [[UUID]] = []
            for await ids in group { all.append(ids) }
            return all
        }
        #expect(results.count == tasks)
        for ids in results { #expect(firstOrderViolation(ids) == nil) }
        let all = results.flatMap { $0 }
        #expect(Set(all).count == tasks * perTask)
        // Together they still form one strictly ordered sequence of (millis, counter) slots.
        let slots = Set(all.map { Array($0.bytes[0..<8]) })
        #expect(slots.count == tasks * perTask)
    }

    @Test("ids from the system clock are increasing and near now")
    func systemClock() throws {
        let gen = UUIDv7Generator()
        let before = WireTimestamp(Date()).millis
        let ids = (0..<10_000).map { _ in gen.next() }
        let after = WireTimestamp(Date()).millis
        #expect(firstOrderViolation(ids) == nil)
        let first = try #require(ids.first?.uuidV7Millis)
        #expect(first >= before && first <= after + 3)
    }
}

extension ManualClock {
    func set(_ millis: Int64) { setMillis(millis) }
}

@Suite("UUID wire text: hand-written formatter and parser agree with Foundation")
struct UUIDWireTextTests {
    @Test func formatsAndParsesLikeFoundation() {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let id = UUID(
                uuid: (
                    bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                    bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
                ))
            #expect(id.wireString == id.uuidString.lowercased())
            #expect(UUID(wire: id.wireString) == id)
            #expect(UUID(wire: id.uuidString) == id, "uppercase hex is accepted, as UUID(uuidString:) does")
        }
    }

    @Test(
        "rejects malformed text",
        arguments: [
            "", "0", "01890a5d-ac96-774b-bcce-b302099a8057x", "01890a5d-ac96-774b-bcce-b302099a805",
            "01890a5dac96-774b-bcce-b302099a8057-", "01890a5d-ac96-774b-bcce_b302099a8057",
            "01890a5d-ac96-774b-bcce-b302099a805g", "g1890a5d-ac96-774b-bcce-b302099a8057",
            "01890a5d-ac96-774b-bcce-b302099a80é", " 1890a5d-ac96-774b-bcce-b302099a8057",
            "+1890a5d-ac96-774b-bcce-b302099a8057",
        ])
    func rejectsMalformedText(_ text: String) {
        #expect(UUID(wire: text) == nil)
    }

    /// Foundation on Linux parses with `sscanf`, which skips a leading space in a group and
    /// so accepts " 1890a5d-…" as 1890a50d-…: a different id. The wire decoder used to
    /// inherit that; it now rejects the text.
    @Test func aLeadingSpaceInAGroupIsNotAnotherID() {
        let text = " 1890a5d-ac96-774b-bcce-b302099a8057"
        #expect(UUID(wire: text) == nil)
        let valid = String(decoding: WireJSONWriter.encode(Fixtures.envelope(locations: [Fixtures.location()])), as: UTF8.self)
        #expect((try? WireEnvelope.decode(Data(valid.utf8))) != nil, "baseline: the untouched envelope decodes")
        let tampered = valid.replacingOccurrences(of: Fixtures.batchId.wireString, with: text)
        #expect(tampered != valid)
        #expect(throws: WireDecodingError.self) { try WireEnvelope.decode(Data(tampered.utf8)) }
    }
}
