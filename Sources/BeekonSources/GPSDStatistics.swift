/// Counters of what a gpsd connection delivered and what was made of it.
public struct GPSDStatistics: Sendable, Hashable {
    /// Complete lines read.
    public var lines = 0
    /// TPV reports decoded.
    public var tpvReports = 0
    /// SKY reports decoded.
    public var skyReports = 0
    /// Lines that were not a gpsd JSON report (garbage, truncated, over-long).
    public var malformedLines = 0
    /// TPV reports without a fix (mode 0/1) or without a position.
    public var noFixReports = 0
    /// TPV reports without a usable `time` (gpsd sends these before the receiver has time).
    public var untimedReports = 0
    /// TPV reports merged into an epoch already seen (gpsd sends several per epoch).
    public var mergedReports = 0
    /// Fixes produced: one per epoch.
    public var fixes = 0
    /// Connections made to gpsd (1 + reconnects).
    public var connections = 0

    /// Creates zeroed counters.
    public init() {}
}
