import BeekonPrimitives
import Foundation
import Hummingbird

/// A cap on what one credential holds open at once (issue 50): live streams per share, command
/// long-polls per device credential. One share held 300 never-reading streams and one device
/// credential 200 idle long-polls; each held memory and a subscription for as long as it liked.
/// A hold is taken when the stream or poll starts and given back when it ends (``Hold/release()``,
/// at the latest when the hold is dropped).
final class HoldLimit: Sendable {
    /// The most holds one key may have at once.
    let maximum: Int
    /// What is held (`live streams`, `command long-polls`), for the 429's message.
    let what: String
    private let held = Locked([String: Int]())

    /// A cap of `maximum` (at least 1) holds per key.
    init(maximum: Int, what: String) {
        self.maximum = max(1, maximum)
        self.what = what
    }

    /// A hold for `key`, or nil when it already has ``maximum``.
    func take(_ key: String) -> Hold? {
        let taken = held.withLock { h -> Bool in
            guard h[key, default: 0] < maximum else { return false }
            h[key, default: 0] += 1
            return true
        }
        guard taken else { return nil }
        return Hold { [held] in
            held.withLock { h in
                let left = h[key, default: 1] - 1
                h[key] = left > 0 ? left : nil
            }
        }
    }

    /// What `key` holds now.
    func count(_ key: String) -> Int { held.withLock { $0[key, default: 0] } }

    /// The 429 for a key that holds ``maximum`` already (`whose`: "this share", "this credential").
    func refusal(_ whose: String, option: String) -> Response {
        var headers = HTTPFields()
        headers[.retryAfter] = "\(Self.retryAfterSeconds)"
        return APIResponse.error(
            .tooManyRequests, "too_many_open",
            "\(whose) already holds \(maximum) \(what) (\(option)); close one, or retry in \(Self.retryAfterSeconds) s", headers: headers)
    }

    /// The `Retry-After` of a refusal.
    static let retryAfterSeconds = 10
}

/// One slot of a ``HoldLimit``, given back once: by ``release()``, or when it is dropped.
final class Hold: Sendable {
    private let giveBack: Locked<(@Sendable () -> Void)?>

    init(_ giveBack: @escaping @Sendable () -> Void) { self.giveBack = Locked(giveBack) }

    /// Gives the slot back (again: nothing).
    func release() {
        let give = giveBack.withLock { g -> (@Sendable () -> Void)? in
            defer { g = nil }
            return g
        }
        give?()
    }

    deinit { release() }
}
