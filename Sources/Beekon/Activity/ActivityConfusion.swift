import BeekonPrimitives
import Foundation

/// A confusion table of an `ActivityClassifier` on a labelled track (BY-4): rows are the
/// truth, columns the classifier's answers. Truth per fix: `stationary` when the median
/// ground speed over the 30 s of fix time centred on it is below 0.5 m/s, else the track's
/// label (the track is known to be one activity: the walk is walking, the bus automotive).
package struct ActivityConfusion: Sendable, Equatable {
    /// The track's activity while moving.
    package let label: Activity
    /// `counts[truth][answer]`: fixes.
    package private(set) var counts: [Activity: [Activity: Int]] = [:]

    /// Runs `classifier` over `fixes` (file order; fixes not later than the previous are skipped).
    package init(fixes: [RawFix], label: Activity, classifier: some ActivityClassifier) {
        self.label = label
        var classifier = classifier
        let ordered = Self.ordered(fixes)
        let moving = Self.movingFlags(ordered)
        for (i, fix) in ordered.enumerated() {
            let answer = classifier.classify(fix)
            counts[moving[i] ? label : .stationary, default: [:]][answer, default: 0] += 1
        }
    }

    /// Moving fixes (truth = the label) that the classifier called the label, as a fraction.
    package var movingCorrect: Double {
        let row = counts[label] ?? [:]
        let total = row.values.reduce(0, +)
        return total == 0 ? 0 : Double(row[label] ?? 0) / Double(total)
    }

    /// Moving fixes the classifier called something other than the label or `unknown` (a wrong guess).
    package var movingWrong: Double {
        let row = counts[label] ?? [:]
        let total = row.values.reduce(0, +)
        let wrong = row.filter { $0.key != label && $0.key != .unknown }.values.reduce(0, +)
        return total == 0 ? 0 : Double(wrong) / Double(total)
    }

    /// The table as text: one row per truth, one column per activity.
    package var table: String {
        let columns: [Activity] = [.stationary, .walking, .running, .cycling, .automotive, .unknown]
        var lines = ["truth \\ answer".padding(toLength: 16, withPad: " ", startingAt: 0) + columns.map { pad($0.rawValue) }.joined()]
        for truth in [label, .stationary] where truth != .stationary || label != .stationary {
            let row = counts[truth] ?? [:]
            lines.append(
                truth.rawValue.padding(toLength: 16, withPad: " ", startingAt: 0) + columns.map { pad("\(row[$0] ?? 0)") }.joined())
        }
        return lines.joined(separator: "\n")
    }

    private func pad(_ s: String) -> String { String(repeating: " ", count: max(1, 12 - s.count)) + s }

    /// Fixes with strictly increasing timestamps, in file order.
    static func ordered(_ fixes: [RawFix]) -> [RawFix] {
        var out: [RawFix] = []
        for f in fixes where out.last.map({ f.timestamp > $0.timestamp }) ?? true { out.append(f) }
        return out
    }

    /// Whether each fix is moving: median ground speed over ±15 s of fix time ≥ 0.5 m/s.
    static func movingFlags(_ fixes: [RawFix]) -> [Bool] {
        var speeds: [Double?] = [nil]
        for (a, b) in zip(fixes, fixes.dropFirst()) {
            let dt = b.timestamp.timeIntervalSince(a.timestamp)
            speeds.append(dt <= 30 ? Geodesy.distance(a.latitude, a.longitude, b.latitude, b.longitude) / dt : nil)
        }
        return fixes.indices.map { i in
            var window: [Double] = []
            var j = i
            while j >= 0, fixes[i].timestamp.timeIntervalSince(fixes[j].timestamp) <= 15 {
                if let s = speeds[j] { window.append(s) }
                j -= 1
            }
            j = i + 1
            while j < fixes.count, fixes[j].timestamp.timeIntervalSince(fixes[i].timestamp) <= 15 {
                if let s = speeds[j] { window.append(s) }
                j += 1
            }
            guard !window.isEmpty else { return false }
            return window.sorted()[window.count / 2] >= 0.5
        }
    }
}
