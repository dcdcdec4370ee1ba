import BeekonWire
import Foundation

/// A validated request for a share, from the command line or `POST /v1/shares`.
package struct ShareSpec: Sendable, Equatable {
    /// A share request that cannot be honoured; one line.
    package struct Invalid: Error, CustomStringConvertible {
        /// What is wrong.
        package let description: String

        /// Creates the error.
        package init(description: String) { self.description = description }
    }

    /// The devices; nil for all.
    package var devices: [UUID]?
    /// Lifetime in seconds; nil for no expiry.
    package var expiresInSeconds: Int?
    /// Free-text label.
    package var label: String?
    /// What its viewers may see (validated).
    package var scope: ShareScope

    /// Validates: exactly one of `devices` / `all`; a positive expiry; label ≤ 200 code points (never
    /// grapheme clusters); and the scope (`ShareScope.validate`).
    package init(devices: [String]?, all: Bool, expiresInSeconds: Int?, label: String?, scope: ShareScope) throws(Invalid) {
        switch (devices, all) {
        case (nil, true): self.devices = nil
        case (let list?, false) where !list.isEmpty:
            var ids: [UUID] = []
            for text in list {
                guard text.utf8.count == 36, let id = UUID(uuidString: text) else {
                    throw Invalid(description: "devices: '\(text)' is not a device install id (a UUID)")
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
            throw Invalid(description: "expires_in_seconds: the expiry must be 1…2147483647 seconds")
        }
        if let l = label, WireLimits.length(l) > 200 {
            throw Invalid(description: "label: the label must be at most \(WireLimits.describe(200))")
        }
        if let l = label, let problem = WireLimits.textProblem(l) { throw Invalid(description: "label: the label \(problem)") }
        try scope.validate()
        self.expiresInSeconds = expiresInSeconds
        self.label = label
        self.scope = scope
    }

    /// Validates a share of the keys it had before `ShareScope` (history, live, precision, locate).
    package init(
        devices: [String]?, all: Bool, expiresInSeconds: Int?, historySeconds: Int?, live: Bool,
        precisionMeters: Double?, label: String?, locate: Bool = false
    ) throws(Invalid) {
        try self.init(
            devices: devices, all: all, expiresInSeconds: expiresInSeconds, label: label,
            scope: ShareScope(historySeconds: historySeconds, live: live, precisionMeters: precisionMeters, locate: locate))
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
        let nowMs = WireTimestamp(now()).millis
        let share = Share(
            id: "sh_" + Self.randomHex(8), label: spec.label, devices: spec.devices, createdAtMillis: nowMs,
            expiresAtMillis: spec.expiresInSeconds.map { nowMs + Int64($0) * 1000 }, scope: spec.scope)
        let token = Self.tokenPrefix + Self.randomHex(32)
        try await store.createShare(share, tokenHash: Self.hash(token))
        return (share, token)
    }
}
