import BeekonWire
import Foundation
import Testing

@testable import BeekonIngest

/// A share's opaque live ids (``LiveEventIDs``): one id per event, read back exactly, under a
/// key no viewer has.
@Suite struct LiveEventIDsTests {
    static let key = Array(repeating: UInt8(7), count: 32)

    @Test("BY-7: every sequence reads back from its id; ids are k and 16 hex digits and differ per key")
    func idsReadBackAndDependOnTheKey() {
        let ids = LiveEventIDs(key: Self.key)
        let other = LiveEventIDs(key: Array(repeating: UInt8(8), count: 32))
        let seqs: [Int64] = Array(0...2_000) + [1 << 31, 1 << 32, (1 << 40) + 3, Int64.max]
        var seen = Set<String>()
        for seq in seqs {
            let token = ids.token(seq)
            #expect(token.count == 17 && token.hasPrefix("k") && token.dropFirst().allSatisfy(\.isHexDigit))
            #expect(ids.seq(token) == seq)
            #expect(other.token(seq) != token)
            seen.insert(token)
        }
        #expect(seen.count == seqs.count, "two sequences share an id")
        // Consecutive sequences do not give ordered or close ids.
        let order = (1...100).map { ids.token(Int64($0)) }
        #expect(order != order.sorted())
    }

    @Test("BY-7: a share's reset (a cursor past the head) has an opaque id and names no head; an admin's names it")
    func aSharesResetNamesNoHead() throws {
        let ids = LiveEventIDs(key: Self.key)
        let marks = EventLogMarks(head: 41, prunedThrough: 0)
        for (opaque, id, head) in [(ids, ids.token(41), nil), (nil, "41", Int64(41))] as [(LiveEventIDs?, String, Int64?)] {
            let start = LiveStart(
                scope: .everything, grant: ViewerGrant(scope: .everything, shareId: opaque == nil ? nil : "s"), requested: 900,
                marks: marks, retryMillis: 2_000, ids: opaque)
            let text = String(buffer: start.preamble)
            #expect(text.contains("id: \(id)\nevent: reset\n"), "\(text)")
            let data = try #require(text.split(separator: "\n").first { $0.hasPrefix("data: ") }?.dropFirst(6))
            #expect(try WireLiveReset.decode(Data(data.utf8)) == WireLiveReset(reason: .unknownEventId, head: head))
            #expect(start.cursor == 41)
        }
        // The cursor a Last-Event-ID names: a share's own id or 0; an admin's number.
        #expect(LiveController.cursor(ids.token(7), ids: ids) == 7)
        #expect(LiveController.cursor("0", ids: ids) == 0)
        #expect(LiveController.cursor("7", ids: ids) == nil)
        #expect(LiveController.cursor("7", ids: nil) == 7)
        #expect(LiveController.cursor(ids.token(7), ids: nil) == nil)
    }

    @Test("BY-7: anything that is not an id it wrote reads as nil")
    func foreignTextIsNotAnID() {
        let ids = LiveEventIDs(key: Self.key)
        for text in ["", "0", "42", "k", "k123", "K" + String(ids.token(5).dropFirst()), ids.token(5) + "0", "kzzzzzzzzzzzzzzzz"] {
            #expect(ids.seq(text) == nil, "\(text)")
        }
    }
}
