import Foundation

/// Smooths RSSI (not distance) over a sliding time window: the readings of the last
/// ``window`` are sorted, a fraction is trimmed from each end (single readings 30 dB off
/// happen), and the rest averaged. Fewer than ``minimumSamples`` readings: unknown (SPEC BY-5).
public struct RSSISmoother: Sendable, Equatable, Codable {
    /// How far back readings count.
    public var window: TimeInterval
    /// The fraction trimmed from each end of the sorted readings (0 ..< 0.5).
    public var trimFraction: Double
    /// Readings needed in the window for a value.
    public var minimumSamples: Int

    private var times: [TimeInterval] = []
    private var values: [Double] = []
    private var head = 0
    /// The values in the window, kept sorted (insert and remove by binary search: no sort per reading).
    private var sorted: [Double] = []

    /// Creates a smoother (defaults: 10 s window, 20 % trimmed at each end, 5 samples).
    public init(window: TimeInterval = 10, trimFraction: Double = 0.2, minimumSamples: Int = 5) {
        self.window = window
        self.trimFraction = min(max(trimFraction, 0), 0.49)
        self.minimumSamples = max(1, minimumSamples)
    }

    /// Readings currently in the window.
    public var count: Int { times.count - head }

    /// Adds a reading taken at `time` (seconds since 1970); readings must come in time order
    /// (an older one is treated as taken at the newest time).
    public mutating func add(_ rssi: Double, at time: TimeInterval) {
        let t = max(time, times.last ?? time)
        times.append(t)
        values.append(rssi)
        sorted.insert(rssi, at: position(of: rssi))
        expire(before: t - window)
    }

    /// The smoothed RSSI at `time`, or nil (unknown) with too few readings in the window.
    public mutating func value(at time: TimeInterval) -> Double? {
        expire(before: time - window)
        let n = count
        guard n >= minimumSamples else { return nil }
        let cut = Int(Double(n) * trimFraction)
        var sum = 0.0
        for i in cut..<(n - cut) { sum += sorted[i] }
        return sum / Double(n - 2 * cut)
    }

    /// Forgets every reading.
    public mutating func reset() {
        times.removeAll(keepingCapacity: true)
        values.removeAll(keepingCapacity: true)
        sorted.removeAll(keepingCapacity: true)
        head = 0
    }

    /// The first index in `sorted` whose value is not below `value`.
    private func position(of value: Double) -> Int {
        var lo = 0
        var hi = sorted.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if sorted[mid] < value { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    private mutating func expire(before cutoff: TimeInterval) {
        while head < times.count, times[head] <= cutoff {
            sorted.remove(at: position(of: values[head]))
            head += 1
        }
        if head > 64, head * 2 > times.count {
            times.removeFirst(head)
            values.removeFirst(head)
            head = 0
        }
    }
}
