import Foundation

/// What one upload attempt's result means for the batch (SY-7). Pure.
enum UploadOutcome: Sendable, Hashable {
    /// 2xx: delete the rows from the queue.
    case accepted
    /// 400/422: set the batch aside, never retry.
    case rejected(status: Int)
    /// 401/403: keep; refresh the token if auth is configured and retry once.
    case unauthorized(status: Int)
    /// 408/429/5xx/timeout/network: keep; back off (honouring `Retry-After`).
    case retryable(status: Int?, retryAfter: Duration?)
    /// 413/404/3xx/other: keep; no retry until the next interval, `sync()` or `configure()`.
    case permanent(status: Int)
}

enum StatusPolicy {
    /// Classifies a transport result; `now` resolves an HTTP-date `Retry-After`.
    static func classify(_ result: Result<HTTPResponse, HTTPTransportError>, now: Date) -> UploadOutcome {
        switch result {
        case .failure:
            return .retryable(status: nil, retryAfter: nil)
        case .success(let r):
            switch r.status {
            case 200...299: return .accepted
            case 400, 422: return .rejected(status: r.status)
            case 401, 403: return .unauthorized(status: r.status)
            case 408, 429, 500...599:
                return .retryable(status: r.status, retryAfter: r.headers["retry-after"].flatMap { retryAfter($0, now: now) })
            default: return .permanent(status: r.status)
            }
        }
    }

    /// Parses `Retry-After`: delta-seconds or an IMF-fixdate. Capped at one hour; nil if unparseable.
    static func retryAfter(_ value: String, now: Date) -> Duration? {
        let v = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(v), seconds >= 0 { return .seconds(min(seconds, 3600)) }
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "GMT")
        f.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = f.date(from: v) else { return nil }
        return .seconds(min(3600, max(0, date.timeIntervalSince(now).rounded(.up))))
    }
}

/// Capped exponential backoff with jitter for transient upload failures.
struct Backoff: Sendable, Hashable {
    /// First delay.
    var base: Double = 5
    /// Upper bound for any delay.
    var cap: Double = 600

    /// The delay before retry number `attempt` (1-based): half fixed, half random
    /// ("equal jitter"), so retries spread out but never collapse to zero.
    func delay(attempt: Int, random unit: Double) -> Duration {
        let exp = min(cap, base * pow(2, Double(max(0, attempt - 1))))
        return .milliseconds(Int64((exp / 2 + exp / 2 * min(max(unit, 0), 1)) * 1000))
    }
}
