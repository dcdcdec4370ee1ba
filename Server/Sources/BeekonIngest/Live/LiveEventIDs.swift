import Crypto

/// Event ids as a share's viewers see them: opaque, so that they do not count the server's
/// events.
///
/// An admin stream's ids are the event log's sequence (`id: 1041`). A share sees only some
/// events, and the gap between two ids it sees is the number it did not: a share limited to
/// hours of the day read from the ids of its first fix after 07:00 how many fixes, geofence
/// events and locate steps the night had — on every device of the server — and a `reset`
/// carried the head. A share's stream writes each sequence through a keyed permutation of the
/// 64-bit numbers instead (`id: k3f9c…`, 16 hex digits): still one id per event and still
/// resumable with `Last-Event-ID`, but neither ordered nor counting.
///
/// The permutation is a four-round Feistel network on the two 32-bit halves, each round an
/// HMAC-SHA256 of the other half under a key derived from the server's signing key. The key
/// lives in the database, so every instance on it reads every other's ids (a viewer that
/// reconnects to another instance behind the load balancer resumes where it was).
struct LiveEventIDs: Sendable {
    /// One key a round, as bytes (`SymmetricKey` is not `Sendable`).
    private let roundKeys: [[UInt8]]

    /// The label of the key derived from the server's signing key.
    static let keyLabel = "beekon live event ids v1"

    /// A permutation under `key` (at least 32 bytes: the signing key's derivation).
    init(key: [UInt8]) {
        roundKeys = (0..<4).map { round in
            Array(HMAC<SHA256>.authenticationCode(for: Array("round \(round)".utf8), using: SymmetricKey(data: key)))
        }
    }

    /// The opaque id of the event with sequence `seq` (≥ 0).
    func token(_ seq: Int64) -> String {
        let v = permute(UInt64(bitPattern: seq), inverse: false)
        let hex = String(v, radix: 16)
        return "k" + String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// The sequence behind an id ``token(_:)`` wrote; nil for anything else.
    func seq(_ token: String) -> Int64? {
        guard token.utf8.count == 17, token.hasPrefix("k"), let v = UInt64(token.dropFirst(), radix: 16) else { return nil }
        let seq = Int64(bitPattern: permute(v, inverse: true))
        return seq >= 0 ? seq : nil
    }

    private func permute(_ value: UInt64, inverse: Bool) -> UInt64 {
        var left = UInt32(truncatingIfNeeded: value >> 32)
        var right = UInt32(truncatingIfNeeded: value)
        if inverse {
            for key in roundKeys.reversed() { (left, right) = (right ^ Self.round(left, key), left) }
        } else {
            for key in roundKeys { (left, right) = (right, left ^ Self.round(right, key)) }
        }
        return UInt64(left) << 32 | UInt64(right)
    }

    private static func round(_ half: UInt32, _ key: [UInt8]) -> UInt32 {
        let bytes = withUnsafeBytes(of: half.bigEndian) { Array($0) }
        return HMAC<SHA256>.authenticationCode(for: bytes, using: SymmetricKey(data: key)).withUnsafeBytes { raw in
            raw.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        }
    }
}
