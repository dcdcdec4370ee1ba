import Logging

/// The diagnostic log's level (BY-6): entries below it are not kept. Adjustable at run time
/// through `configure(_:)` (`diagnosticLogLevel`).
public enum DiagnosticLevel: String, Sendable, Hashable, Codable, Comparable, CaseIterable {
    /// Everything, including per-batch and per-probe detail.
    case debug
    /// State changes, profile switches, sync outcomes (default).
    case info
    /// Failures that are retried.
    case warning
    /// Failures that stop something.
    case error

    /// The swift-log level this keeps entries from.
    var loggerLevel: Logger.Level {
        switch self {
        case .debug: .debug
        case .info: .info
        case .warning: .warning
        case .error: .error
        }
    }

    /// The diagnostic level of a swift-log level (trace counts as debug, notice as info, critical as error).
    init(_ level: Logger.Level) {
        switch level {
        case .trace, .debug: self = .debug
        case .info, .notice: self = .info
        case .warning: self = .warning
        case .error, .critical: self = .error
        }
    }

    /// Orders by severity.
    public static func < (a: Self, b: Self) -> Bool {
        let order = Self.allCases
        return order.firstIndex(of: a)! < order.firstIndex(of: b)!
    }
}
