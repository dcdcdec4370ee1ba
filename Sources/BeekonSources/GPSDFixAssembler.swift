import Foundation
import Beekon

/// Turns the byte stream of a gpsd watch into one `RawFix` per epoch.
///
/// - Lines are split on `\n`; a line longer than `GPSDMessage.maxLineLength`
///   or one that is not a gpsd JSON object is counted in
///   `statistics.malformedLines` and skipped.
/// - gpsd sends several TPV reports per epoch (one per NMEA sentence it used).
///   Reports with the same `time` are merged — a field of a later report
///   replaces the earlier value, a field it lacks keeps it — and the epoch is
///   emitted once, when a report with another `time` arrives, when nothing has
///   been added to it for `settle` seconds (`idle(now:)`), or when the
///   connection ends (`flush()`). A late report of an epoch already emitted is
///   dropped.
/// - An epoch whose merged mode is below 2 (no fix) or that has no position
///   is skipped; a TPV without `time` is skipped (the SDK's gate works on fix time).
/// - Mapping: `lat`/`lon` → position; `altMSL` (else `alt`, else `altHAE`) →
///   altitude; `speed` (m/s) → speed; `track` → bearing; accuracy per
///   `horizontalAccuracy(_:hdop:)`.
public struct GPSDFixAssembler: Sendable {
    /// How long a SKY report's HDOP stays usable as an accuracy fallback, in seconds.
    public static let skyMaxAge: Double = 5

    /// Seconds without a new report of the open epoch before it is emitted.
    public var settle: Double
    /// What was read so far.
    public private(set) var statistics = GPSDStatistics()

    private var buffer: [UInt8] = []
    private var overlong = false
    private var pending: (key: String, tpv: GPSDMessage.TPV, updated: Double)?
    private var lastEmittedKey: String?
    private var lastSKY: (hdop: Double, at: Double)?

    /// Creates an assembler; `settle` defaults to 1 s (a 1 Hz receiver's next epoch emits sooner).
    public init(settle: Double = 1.0) { self.settle = settle }

    /// Feeds raw bytes in any chunking; returns the fixes of the epochs completed by them.
    /// `now` is a monotonic time in seconds.
    public mutating func feed<S: Sequence>(_ bytes: S, now: Double) -> [RawFix] where S.Element == UInt8 {
        var out: [RawFix] = []
        for b in bytes {
            if b == 0x0A {
                if overlong {
                    overlong = false
                } else {
                    if buffer.last == 0x0D { buffer.removeLast() }
                    handle(line: buffer, now: now, into: &out)
                }
                buffer.removeAll(keepingCapacity: true)
                continue
            }
            if overlong { continue }
            if buffer.count >= GPSDMessage.maxLineLength {
                overlong = true
                statistics.lines += 1
                statistics.malformedLines += 1
                buffer.removeAll(keepingCapacity: true)
                continue
            }
            buffer.append(b)
        }
        return out
    }

    /// Emits the open epoch if nothing was added to it for `settle` seconds.
    public mutating func idle(now: Double) -> [RawFix] {
        guard let p = pending, now - p.updated >= settle else { return [] }
        var out: [RawFix] = []
        emitPending(into: &out)
        return out
    }

    /// The connection ended: drops a partial line and emits the open epoch.
    public mutating func flush() -> [RawFix] {
        buffer.removeAll(keepingCapacity: true)
        overlong = false
        var out: [RawFix] = []
        emitPending(into: &out)
        return out
    }

    /// Counts a new connection.
    public mutating func connected() { statistics.connections += 1 }

    /// The horizontal accuracy for a TPV, in metres (gpsd's figures are ~95 %
    /// confidence, so larger than a 68 % figure for the same receiver):
    /// 1. `eph` when present and positive;
    /// 2. else `sqrt(epx² + epy²)` when both are present (the half-diagonal of
    ///    the 95 % error box: conservative, never smaller than either axis);
    /// 3. else the recent SKY `hdop` × `FixValues.uereMeters` (5 m), the same
    ///    rule the NMEA parser uses;
    /// 4. else nil.
    public static func horizontalAccuracy(_ t: GPSDMessage.TPV, hdop: Double?) -> Double? {
        if let eph = t.eph, eph > 0 { return eph }
        if let x = t.epx, let y = t.epy, x >= 0, y >= 0, x + y > 0 { return (x * x + y * y).squareRoot() }
        return FixValues.accuracy(hdop: hdop)
    }

    private mutating func handle(line: [UInt8], now: Double, into out: inout [RawFix]) {
        guard line.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }) else { return }
        statistics.lines += 1
        let message: GPSDMessage
        do { message = try GPSDMessage.decode(line) } catch {
            statistics.malformedLines += 1
            return
        }
        switch message {
        case .sky(let sky):
            statistics.skyReports += 1
            if let h = sky.hdop, h > 0 { lastSKY = (h, now) }
        case .other:
            break
        case .tpv(let tpv):
            statistics.tpvReports += 1
            take(tpv, now: now, into: &out)
        }
    }

    private mutating func take(_ tpv: GPSDMessage.TPV, now: Double, into out: inout [RawFix]) {
        guard let key = tpv.timeText, tpv.time != nil else {
            statistics.untimedReports += 1
            return
        }
        if key == lastEmittedKey {
            statistics.mergedReports += 1
            return
        }
        if let p = pending, p.key == key {
            statistics.mergedReports += 1
            pending = (key, Self.merge(p.tpv, tpv), now)
            return
        }
        emitPending(into: &out)
        pending = (key, tpv, now)
    }

    private mutating func emitPending(into out: inout [RawFix]) {
        guard let p = pending else { return }
        pending = nil
        lastEmittedKey = p.key
        let t = p.tpv
        guard t.mode >= 2, let time = t.time, let lat = t.lat, let lon = t.lon else {
            statistics.noFixReports += 1
            return
        }
        let hdop = lastSKY.flatMap { p.updated - $0.at <= Self.skyMaxAge ? $0.hdop : nil }
        statistics.fixes += 1
        out.append(
            RawFix(
                timestamp: time, latitude: lat, longitude: lon,
                accuracy: Self.horizontalAccuracy(t, hdop: hdop),
                speed: t.speed.flatMap { $0 >= 0 ? $0 : nil },
                bearing: t.track,
                altitude: t.altMSL ?? t.altHAE
            ))
    }

    /// Fields of `newer` win; fields it lacks keep `older`'s value.
    static func merge(_ older: GPSDMessage.TPV, _ newer: GPSDMessage.TPV) -> GPSDMessage.TPV {
        var m = newer
        m.time = newer.time ?? older.time
        m.lat = newer.lat ?? older.lat
        m.lon = newer.lon ?? older.lon
        if newer.lat == nil || newer.lon == nil {
            m.lat = older.lat
            m.lon = older.lon
        }
        m.altMSL = newer.altMSL ?? older.altMSL
        m.altHAE = newer.altHAE ?? older.altHAE
        m.speed = newer.speed ?? older.speed
        m.track = newer.track ?? older.track
        m.eph = newer.eph ?? older.eph
        m.epx = newer.epx ?? older.epx
        m.epy = newer.epy ?? older.epy
        m.epv = newer.epv ?? older.epv
        m.device = newer.device ?? older.device
        return m
    }
}
