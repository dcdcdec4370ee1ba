import BeekonTesting
import Foundation
import Testing

@testable import BeekonWire

/// Issue 48: `ValidUTF8.string` answers as the standard library's `String(validating:as:)`
/// (iOS 18+, so not callable from the SDK at iOS 16) on every kind of well-formed and ill-formed
/// UTF-8, including the cases where the replacement character is as long as what it replaces.
@Suite struct ValidUTF8Tests {
    static let cases: [[UInt8]] = [
        [], Array("plain ascii".utf8), Array("é ü ß 日本 🐝".utf8), [0xEF, 0xBF, 0xBD], [0x00], [0x41, 0x00, 0x42],
        [0x80], [0xBF, 0x41], [0xC3], [0xC3, 0x28], [0xC0, 0x80], [0xC1, 0xBF], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80],
        [0xE2, 0x82], [0xE2, 0x82, 0x41], [0xF0, 0x9F, 0x98], [0xF0, 0x9F, 0x98, 0x41], [0xF0, 0x9F, 0x98, 0x80],
        [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xFE], [0xFF, 0xFE], [0x41, 0xEF, 0xBF], [0xEF, 0xBF, 0xBE],
    ]

    static func reference(_ bytes: [UInt8]) -> String?? {
        if #available(macOS 15.0, iOS 18.0, *) { return .some(String(validating: bytes, as: UTF8.self)) }
        return .none  // no reference on older Apple systems: the fixed expectations below still run
    }

    static func answer(_ bytes: [UInt8]) -> String? { bytes.withUnsafeBytes { ValidUTF8.string($0) } }

    @Test func agreesWithTheStandardLibraryOnKnownCases() {
        for bytes in Self.cases {
            if case .some(let expected) = Self.reference(bytes) { #expect(Self.answer(bytes) == expected, "\(bytes)") }
        }
        #expect(Self.answer(Array("é 🐝".utf8)) == "é 🐝")
        #expect(Self.answer([0xEF, 0xBF, 0xBD]) == "\u{FFFD}")
        #expect(Self.answer([0xF0, 0x9F, 0x98, 0x41]) == nil, "3 bytes replaced by 3 bytes")
        #expect(Self.answer([0xED, 0xA0, 0x80]) == nil, "a surrogate")
        #expect(Self.answer([0xC0, 0x80]) == nil, "an overlong NUL")
        #expect(ValidUTF8.string(Data([0x61, 0xFF])) == nil)
        #expect(ValidUTF8.string(Data("ok".utf8)) == "ok")
    }

    @Test func agreesWithTheStandardLibraryOnRandomBytes() {
        var rng = SeededRandom(seed: 0x0007_F848)
        let alphabet: [UInt8] = [
            0x00, 0x41, 0x7F, 0x80, 0x8F, 0x9F, 0xA0, 0xBD, 0xBF, 0xC0, 0xC2, 0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF,
        ]
        var invalid = 0
        for _ in 0..<20_000 {
            let bytes = (0..<Int.random(in: 1...8, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }
            let answer = Self.answer(bytes)
            if answer == nil { invalid += 1 }
            if case .some(let expected) = Self.reference(bytes) { #expect(answer == expected, "\(bytes)") }
            if let answer { #expect(Array(answer.utf8) == bytes) }
        }
        #expect(invalid > 1_000 && invalid < 20_000, "\(invalid) ill-formed of 20,000")
    }
}
