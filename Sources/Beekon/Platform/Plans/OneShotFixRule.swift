import Foundation

/// Which sample answers a one-shot location request (`currentLocation`, used by locate on
/// demand, BY-2): the first valid fix computed no earlier than `maximumAgeSeconds` before the
/// request. CoreLocation's `requestLocation()` may first hand back a cached position; an old
/// one must not answer a request as if it were fresh (a new timestamp on old data).
package struct OneShotFixRule: Sendable, Equatable {
    /// When the request was made.
    package var requestedAt: Date
    /// How much older than the request a fix may be and still count as fresh.
    package var maximumAgeSeconds: Double = 10

    package init(requestedAt: Date, maximumAgeSeconds: Double = 10) {
        self.requestedAt = requestedAt
        self.maximumAgeSeconds = maximumAgeSeconds
    }

    /// The fix among `samples` that answers the request, or nil to keep waiting.
    package func answer(from samples: [LocationSample]) -> RawFix? {
        samples.lazy.compactMap(\.rawFix).first { $0.timestamp >= requestedAt.addingTimeInterval(-maximumAgeSeconds) }
    }
}
