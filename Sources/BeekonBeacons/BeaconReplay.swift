import Foundation

/// Runs a recording's readings through a ``ProximityTracker`` in time order (SPEC BY-5).
public enum BeaconReplay {
    /// The readings in time order (stable: equal times keep file order); a multi-scanner log
    /// concatenates its scanners' streams, so their readings interleave only after this.
    public static func ordered(_ readings: [BeaconReading]) -> [BeaconReading] {
        readings.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
    }

    /// The events of `readings` (optionally only those of `scanner`), in order.
    public static func events(of readings: [BeaconReading], scanner: String? = nil, tracker: inout ProximityTracker) -> [ProximityEvent] {
        var events: [ProximityEvent] = []
        for reading in ordered(readings) where scanner == nil || reading.scanner == scanner {
            events += tracker.observe(reading)
        }
        return events
    }
}
