import Foundation

/// Ranges many beacons heard by many scanners against a list of regions (SPEC BY-5):
/// per (region, beacon, scanner) an ``RSSISmoother`` feeding a ``ProximityTrigger``
/// through a ``DistanceModel``. A value type; ``state`` is what to persist between wakes.
public struct ProximityTracker: Sendable {
    /// The regions ranged (empty: ``BeaconRegion/any``).
    public let regions: [BeaconRegion]
    /// The rule of regions that have none of their own.
    public let rule: ProximityRule
    /// RSSI to metres.
    public let model: any DistanceModel
    /// The smoother every beacon starts with.
    public let smoother: RSSISmoother
    /// The decision state: smoothing windows and triggers. Persist it; assign it back to continue.
    public var state = ProximityTrackerState()

    /// Creates a tracker.
    public init(
        regions: [BeaconRegion], rule: ProximityRule = ProximityRule(), model: any DistanceModel = CurveFitDistanceModel(),
        smoother: RSSISmoother = RSSISmoother()
    ) {
        self.regions = regions.isEmpty ? [.any] : regions
        self.rule = rule
        self.model = model
        self.smoother = smoother
    }

    /// Feeds one reading; returns the events it completes (silence exits of other beacons
    /// that fell due first, then this beacon's transition).
    public mutating func observe(_ reading: BeaconReading) -> [ProximityEvent] {
        let time = reading.time.timeIntervalSince1970
        var events = tick(at: reading.time)
        for region in regions where region.matches(reading.identity) {
            let key = ProximityTrackerState.Key(region: region.identifier, identity: reading.identity, scanner: reading.scanner)
            // Taken out of the dictionary so that its buffers are unique: no copy per reading.
            var entry =
                state.entries.removeValue(forKey: key) ?? .init(smoother: smoother, trigger: ProximityTrigger(rule: region.rule ?? rule))
            entry.smoother.add(Double(reading.rssi), at: time)
            let distance = entry.smoother.value(at: time).map {
                model.distance(rssi: $0, measuredPower: Double(reading.measuredPower))
            }
            if let type = entry.trigger.observe(distance: distance, at: time) {
                events.append(
                    ProximityEvent(
                        region: region.identifier, identity: reading.identity, scanner: reading.scanner,
                        type: type, timestamp: reading.time, distance: distance))
            }
            state.entries[key] = entry
            // nil, not infinity, when nothing is inside: the state is persisted as JSON, which has no infinity.
            let next = min(state.nextSilence ?? .infinity, entry.trigger.silenceDeadline ?? .infinity)
            state.nextSilence = next.isFinite ? next : nil
        }
        return events
    }

    /// Fires the silence exits due by `date`, oldest first.
    public mutating func tick(at date: Date) -> [ProximityEvent] {
        let time = date.timeIntervalSince1970
        guard let due = state.nextSilence, due <= time else { return [] }
        var events: [ProximityEvent] = []
        var next = Double.infinity
        for (key, var entry) in state.entries {
            if let deadline = entry.trigger.silenceDeadline, deadline <= time, entry.trigger.tick(at: time) != nil {
                entry.smoother.reset()
                state.entries[key] = entry
                events.append(
                    ProximityEvent(
                        region: key.region, identity: key.identity, scanner: key.scanner, type: .exit,
                        timestamp: Date(timeIntervalSince1970: deadline), distance: nil))
            }
            next = min(next, entry.trigger.silenceDeadline ?? .infinity)
        }
        state.nextSilence = next.isFinite ? next : nil
        return events.sorted { ($0.timestamp, $0.scanner, $0.identity.description) < ($1.timestamp, $1.scanner, $1.identity.description) }
    }

    /// The beacons currently entered.
    public var entered: [ProximityTrackerState.Key] {
        state.entries.filter { $0.value.trigger.inside }.map(\.key)
    }
}

/// The persistable decision state of a ``ProximityTracker``.
public struct ProximityTrackerState: Sendable, Equatable, Codable {
    /// One (region, beacon, scanner).
    public struct Key: Sendable, Hashable, Codable {
        /// The region's identifier.
        public var region: String
        /// The beacon.
        public var identity: BeaconIdentity
        /// The scanner.
        public var scanner: String
    }

    /// The smoothing window and trigger of one key.
    public struct Entry: Sendable, Equatable, Codable {
        /// Recent readings.
        public var smoother: RSSISmoother
        /// The enter/exit state.
        public var trigger: ProximityTrigger
    }

    /// Every key seen.
    public var entries: [Key: Entry] = [:]
    /// The earliest silence deadline, if any beacon is entered.
    public var nextSilence: TimeInterval?

    /// An empty state.
    public init() {}
}
