import BeekonWire
import Foundation

/// A validated request for a share, from the command line or `POST /v1/shares`.
package struct ShareSpec: Sendable, Equatable {
    /// A share request that cannot be honoured; one line.
    package struct Invalid: Error, CustomStringConvertible {
        /// What is wrong.
        package let description: String
    }

    /// The devices; nil for all.
    package var devices: [UUID]?
    /// Lifetime in seconds; nil for no expiry.
    package var expiresInSeconds: Int?
    /// History window in seconds; nil for no limit.
    package var historySeconds: Int?
    /// Whether the live stream is included.
    package var live: Bool
    /// Precision in metres; nil for full precision.
    package var precisionMeters: Double?
    /// Free-text label.
    package var label: String?
    /// Whether viewers may request a fresh fix from its devices.
    package var locate: Bool

    /// Validates: exactly one of `devices` / `all`; positive durations; precision 1…100,000 m; label ≤ 200 code points (never grapheme clusters).
    package init(
        devices: [String]?, all: Bool, expiresInSeconds: Int?, historySeconds: Int?, live: Bool,
        precisionMeters: Double?, label: String?, locate: Bool = false
    ) throws(Invalid) {
        switch (devices, all) {
        case (nil, true): self.devices = nil
        case (let list?, false) where !list.isEmpty:
            var ids: [UUID] = []
            for text in list {
                guard text.utf8.count == 36, let id = UUID(uuidString: text) else {
                    throw Invalid(description: "'\(text)' is not a device install id (a UUID)")
                }
                ids.append(id)
            }
            self.devices = ids
        default:
            throw Invalid(
                description: "name the devices (--devices ID[,ID…] / \"devices\") or all of them (--all / \"all\": true), not both")
        }
        // Bounded like the CLI's durations (Int32 seconds, ~68 years): the server adds them to
        // millisecond times, which must not overflow (found by schemathesis).
        if let e = expiresInSeconds, !(1...Int(Int32.max)).contains(e) {
            throw Invalid(description: "the expiry must be 1…2147483647 seconds")
        }
        if let h = historySeconds, !(1...Int(Int32.max)).contains(h) {
            throw Invalid(description: "the history window must be 1…2147483647 seconds")
        }
        if let p = precisionMeters, !(p >= 1 && p <= 100_000) { throw Invalid(description: "the precision must be 1…100000 metres") }
        if let l = label, WireLimits.length(l) > 200 { throw Invalid(description: "the label must be at most \(WireLimits.describe(200))") }
        self.expiresInSeconds = expiresInSeconds
        self.historySeconds = historySeconds
        self.live = live
        self.precisionMeters = precisionMeters
        self.label = label
        self.locate = locate
    }

    /// Parses a duration: a number with an optional unit `s`, `m`, `h` or `d` (`90`, `15m`, `2h`, `7d`).
    package static func seconds(_ text: String) throws(Invalid) -> Int {
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400]
        var digits = Substring(text.trimmingCharacters(in: .whitespaces))
        var factor = 1
        if let last = digits.last, let f = units[last] {
            factor = f
            digits = digits.dropLast()
        }
        guard let n = Int(digits), n > 0, n <= Int(Int32.max) else {
            throw Invalid(description: "'\(text)' is not a duration (e.g. 90, 15m, 2h, 7d)")
        }
        return n * factor
    }
}

extension ShareService {
    /// Creates a share from a validated spec; returns it and its token (shown once).
    package func create(_ spec: ShareSpec) async throws(StoreError) -> (Share, String) {
        try await create(
            devices: spec.devices, expiresInSeconds: spec.expiresInSeconds, historySeconds: spec.historySeconds,
            live: spec.live, precisionMeters: spec.precisionMeters, label: spec.label, locate: spec.locate)
    }
}
