import Foundation
import Beekon

/// An incremental NMEA 0183 parser (SRC-3): feed it bytes or lines as they
/// arrive from a file, a serial port or a socket, and take the fixes out.
///
/// - Every sentence's checksum is verified; a missing or wrong checksum skips
///   the sentence (counted as `badChecksum`). Bytes that are not a sentence
///   (binary noise, partial lines, a line longer than `maxLineLength`) are
///   counted as `malformed`; `#` comment lines are ignored. Any talker is
///   accepted (`$GP`, `$GN`, `$IN`, …).
/// - GGA, RMC, GSA and VTG are used; other sentences are counted in
///   `diagnostics.ignoredSentences`.
/// - One fix per epoch: consecutive GGA/RMC sentences with the same UTC time
///   are merged, and the untimed GSA/VTG that follow join the open epoch. An
///   epoch produces a fix only with a valid RMC (it carries the date); an
///   epoch with a position but no RMC is skipped as `incompleteEpoch`, and one
///   where the receiver reports no fix (RMC status V or mode N, GGA quality 0,
///   GSA fix type 1) as `invalidFix`.
/// - Position, speed (knots → m/s) and course come from RMC (VTG fills speed
///   and course if RMC lacks them); altitude from GGA (metres above mean sea
///   level); horizontal accuracy = HDOP × 5 m (GGA's HDOP, else GSA's; see
///   `FixValues.uereMeters`).
/// - An epoch is complete when a sentence of another epoch arrives, so a live
///   receiver's fix is delivered one epoch late; call `finish()` at the end.
/// - Fixes come out in input order, even when the receiver's time goes backwards.
public struct NMEAParser: Sendable {
    /// A partial line longer than this many bytes is dropped as noise.
    public static let maxLineLength = 4096

    /// Counts of what was read and skipped so far.
    public private(set) var diagnostics = TrackDiagnostics(format: .nmea)
    /// How many sentences passed the checksum so far.
    public private(set) var validSentences = 0

    private var buffer: [UInt8] = []
    private var overlong = false
    private var lastWasCR = false
    private var line = 1
    private var epoch: NMEAEpoch?

    /// Creates a parser with nothing read.
    public init() {}

    /// Feeds raw bytes (any chunking: partial lines are kept until their end
    /// arrives) and returns the fixes of the epochs completed by them.
    public mutating func feed<S: Sequence>(_ bytes: S) -> [RawFix] where S.Element == UInt8 {
        var out: [RawFix] = []
        for b in bytes {
            if b == 0x0D || b == 0x0A {
                if b == 0x0A, lastWasCR {
                    lastWasCR = false
                    continue
                }
                lastWasCR = b == 0x0D
                endLine(into: &out)
                line += 1
                continue
            }
            lastWasCR = false
            if overlong { continue }
            if buffer.count >= Self.maxLineLength {
                overlong = true
                buffer.removeAll(keepingCapacity: true)
                diagnostics.records += 1
                diagnostics.skip(.malformed, line: line, "line longer than \(Self.maxLineLength) bytes")
                continue
            }
            buffer.append(b)
        }
        return out
    }

    /// Feeds one complete line (a terminator is added) and returns the fixes it completed.
    public mutating func feed(line text: String) -> [RawFix] {
        feed(Array(text.utf8) + [0x0A])
    }

    /// Ends the input: parses a last unterminated line and returns the fix of the open epoch, if any.
    public mutating func finish() -> [RawFix] {
        var out: [RawFix] = []
        endLine(into: &out)
        flush(into: &out)
        return out
    }

    /// Emits the open epoch now if no partial line is buffered (a live source
    /// that went quiet after an epoch); returns nothing mid-line. A later
    /// sentence of the same epoch then starts a new one.
    public mutating func flushOpenEpoch() -> [RawFix] {
        guard buffer.isEmpty, !overlong else { return [] }
        var out: [RawFix] = []
        flush(into: &out)
        return out
    }

    private mutating func endLine(into out: inout [RawFix]) {
        defer {
            buffer.removeAll(keepingCapacity: true)
            overlong = false
        }
        guard !overlong else { return }
        var s = buffer[...]
        while let f = s.first, f == 0x20 || f == 0x09 || f == 0x00 { s = s.dropFirst() }
        while let l = s.last, l == 0x20 || l == 0x09 || l == 0x00 { s = s.dropLast() }
        guard !s.isEmpty, s.first != UInt8(ascii: "#") else { return }
        diagnostics.records += 1
        guard let start = s.lastIndex(where: { $0 == UInt8(ascii: "$") || $0 == UInt8(ascii: "!") }) else {
            diagnostics.skip(.malformed, line: line, "not an NMEA sentence (no $)")
            return
        }
        switch NMEASentence.parse(s[start...]) {
        case .failure(.noChecksum):
            diagnostics.skip(.badChecksum, line: line, "sentence has no *hh checksum")
        case .failure(.badChecksum(let expected, let found)):
            diagnostics.skip(.badChecksum, line: line, "checksum \(found) does not match \(NMEASentence.hex(expected))")
        case .failure(.malformed(let why)):
            diagnostics.skip(.malformed, line: line, why)
        case .success(let sentence):
            validSentences += 1
            handle(sentence, into: &out)
        }
    }

    private mutating func handle(_ s: NMEASentence, into out: inout [RawFix]) {
        switch s.type {
        case "GGA": handleGGA(s, into: &out)
        case "RMC": handleRMC(s, into: &out)
        case "GSA":
            guard epoch != nil else {
                diagnostics.ignoredSentences += 1
                return
            }
            if let mode = s.field(1), mode == "1" { epoch?.receiverSaysNoFix = true }
            epoch?.gsaHDOP = s.number(15)
        case "VTG":
            guard epoch != nil else {
                diagnostics.ignoredSentences += 1
                return
            }
            if let mode = s.field(8), mode == "N" { return }
            epoch?.vtgCourse = s.number(0)
            if let knots = s.number(4) {
                epoch?.vtgSpeed = knots * FixValues.metersPerSecondPerKnot
            } else if let kmh = s.number(6) {
                epoch?.vtgSpeed = kmh / 3.6
            }
        default:
            diagnostics.ignoredSentences += 1
        }
    }

    private mutating func handleGGA(_ s: NMEASentence, into out: inout [RawFix]) {
        guard let time = s.timeOfDay(0), let qualityText = s.field(5), let quality = Int(qualityText) else {
            diagnostics.skip(.malformed, line: line, "\(s.talker)GGA without a valid time or fix quality")
            return
        }
        open(time: time, slot: .gga, into: &out)
        epoch?.hasGGA = true
        if quality == 0 {
            epoch?.receiverSaysNoFix = true
            return
        }
        guard let lat = s.coordinate(1, hemisphere: 2, isLatitude: true),
            let lon = s.coordinate(3, hemisphere: 4, isLatitude: false)
        else {
            epoch?.counted = true
            diagnostics.skip(.badCoordinate, line: line, "\(s.talker)GGA has an invalid position")
            return
        }
        epoch?.ggaPosition = (lat, lon)
        epoch?.ggaHDOP = s.number(7)
        if s.field(9) == nil || s.field(9) == "M" { epoch?.altitude = s.number(8) }
    }

    private mutating func handleRMC(_ s: NMEASentence, into out: inout [RawFix]) {
        guard let time = s.timeOfDay(0), let status = s.field(1) else {
            diagnostics.skip(.malformed, line: line, "\(s.talker)RMC without a valid time or status")
            return
        }
        open(time: time, slot: .rmc, into: &out)
        epoch?.hasRMC = true
        if status != "A" || s.field(11) == "N" {
            epoch?.receiverSaysNoFix = true
            return
        }
        guard let (y, m, d) = s.date(8), let dayMillis = FixValues.dayMillis(year: y, month: m, day: d) else {
            epoch?.counted = true
            diagnostics.skip(.malformed, line: line, "\(s.talker)RMC has no valid ddmmyy date")
            return
        }
        guard let lat = s.coordinate(2, hemisphere: 3, isLatitude: true),
            let lon = s.coordinate(4, hemisphere: 5, isLatitude: false)
        else {
            epoch?.counted = true
            diagnostics.skip(.badCoordinate, line: line, "\(s.talker)RMC has an invalid position")
            return
        }
        epoch?.rmc = NMEAEpoch.RMC(
            timestamp: Date(timeIntervalSince1970: Double(dayMillis + Int64(time)) / 1000),
            latitude: lat, longitude: lon,
            speed: s.number(6).map { $0 * FixValues.metersPerSecondPerKnot },
            course: s.number(7)
        )
    }

    /// Makes `time` the open epoch, flushing the previous one if it is another
    /// time or already has this kind of sentence.
    private mutating func open(time: Int, slot: NMEAEpoch.Slot, into out: inout [RawFix]) {
        if let e = epoch, e.timeOfDay == time, !e.has(slot) { return }
        flush(into: &out)
        epoch = NMEAEpoch(timeOfDay: time, line: line)
    }

    private mutating func flush(into out: inout [RawFix]) {
        guard let e = epoch else { return }
        epoch = nil
        switch e.outcome() {
        case .fix(let fix):
            diagnostics.fixes += 1
            out.append(fix)
        case .skip(let reason, let why):
            if !e.counted { diagnostics.skip(reason, line: e.line, why) }
        case .nothing:
            break
        }
    }
}
