import Logging

/// A swift-log handler that tees the SDK's own log lines into the diagnostic log (BY-6):
/// the wrapped handler keeps its level; the diagnostic log keeps what its level allows.
/// Every SDK component logs through it, so state changes, source events, sync outcomes
/// (status, backoff) and auth changes (never tokens: the SDK never logs them) are all kept.
struct DiagnosticLogHandler: LogHandler {
    var wrapped: any LogHandler
    let log: DiagnosticLog

    /// The more verbose of the two levels, so the `Logger` passes what either wants.
    var logLevel: Logger.Level {
        get { min(wrapped.logLevel, log.level.loggerLevel) }
        set { wrapped.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { wrapped.metadata }
        set { wrapped.metadata = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { wrapped.metadataProvider }
        set { wrapped.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { wrapped[metadataKey: key] }
        set { wrapped[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        if event.level >= wrapped.logLevel { wrapped.log(event: event) }
        let level = DiagnosticLevel(event.level)
        guard level >= log.level else { return }
        var flat: [String: String] = [:]
        for (k, v) in wrapped.metadata { flat[k] = "\(v)" }
        for (k, v) in event.metadata ?? [:] { flat[k] = "\(v)" }
        log.record(level: level, message: event.message.description, metadata: flat)
    }
}
