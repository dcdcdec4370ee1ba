import BeekonPrimitives
import BeekonWire
import Foundation

/// Geofence evaluation as a value type (GF-1..4): the set of fences, each
/// fence's inside/outside state, and the enter/exit decisions for one fix at a
/// time. No I/O: the `Beekon` actor persists fences, state changes and events.
///
/// ## Hysteresis (GF-3)
///
/// For a fix at distance `d` (haversine) from a fence's centre, with reported
/// horizontal accuracy `a` (nil counts as 0), the margin is
/// `h = max(minimumMarginMeters, a)` = `max(5 m, a)`:
///
/// - **enter** (from outside or unknown) when `d ≤ r − min(h, r/2)`: the fix is
///   inside by at least its margin, but never more than half the radius, so small
///   fences can still be entered with a coarse fix;
/// - **exit** (from inside) when `d > r + h`: the whole accuracy circle (at
///   least 5 m) lies outside, so one poor fix cannot fake an exit;
/// - in the band between, the state does not change.
///
/// A fix must cross the whole band (at least `min(5 m, r/2) + 5 m` wide) to
/// flip the state, so noise at the edge does not flap enter/exit.
///
/// ## State
///
/// A fence is *inside* or *not inside*; a fence with no recorded state
/// (newly added) is treated as outside, so the first fix that satisfies the
/// enter rule emits `enter`, while a first fix outside or in the band emits
/// nothing. ``insideIDs`` is the complete persisted state: restore it with
/// ``init(fences:insideIDs:)`` after a relaunch, and a fix inside a fence that
/// was inside before emits no second enter. Crossings change the state whether
/// or not the fence asks to be notified.
///
/// Re-adding an id with the same centre and radius keeps its state (apps can
/// re-register their fences at every launch without duplicate enters); a changed
/// centre or radius is a new fence and its state resets to unknown (no exit is
/// emitted for the old region).
package struct GeofenceEngine: Sendable {
    /// The margin for fixes without (or with a better than) 5 m accuracy.
    static let minimumMarginMeters = 5.0

    /// The result of evaluating one fix.
    package struct Evaluation: Sendable, Hashable {
        /// Crossings of fences that asked to be notified, exits first, each group by fence id.
        package var events: [GeofenceEvent] = []
        /// Every state change, notified or not: fence id → inside now. Persist these in the
        /// same transaction as `events`, so a crash cannot record one without the other.
        package var stateChanges: [String: Bool] = [:]
    }

    private var index = GeofenceIndex()
    /// The ids of the fences the device is inside: the complete persisted state.
    private(set) var insideIDs: Set<String> = []
    /// The index slots of `insideIDs` (the same fences, also marked in the index), so a
    /// fix checks them without hashing strings. Rebuilt by `syncInsideSlots()` after
    /// fences change; kept in step by `evaluateCrossings`.
    private var insideSlots: [Int32] = []

    /// Creates an engine with no fences.
    package init() {}

    /// Restores an engine from the store: `fences` as stored, and the ids that were
    /// inside. Invalid fences and ids of unknown fences are dropped.
    package init(fences: [Geofence], insideIDs: Set<String>) {
        for fence in fences where fence.problem == nil { index.insert(fence) }
        self.insideIDs = insideIDs.filter { index.fence(id: $0) != nil }
        syncInsideSlots()
    }

    /// Rebuilds `insideSlots` and the index marks from `insideIDs` (after fences change:
    /// replacing or removing a fence may move or free its slot, and clears its mark).
    private mutating func syncInsideSlots() {
        for slot in insideSlots where index.entry(slot: slot).marked { index.setMarked(slot, false) }
        insideSlots = insideIDs.map { index.slot(id: $0)! }
        for slot in insideSlots { index.setMarked(slot, true) }
    }

    /// The number of fences.
    var count: Int { index.count }

    /// All fences, sorted by id.
    func list() -> [Geofence] { index.fences.sorted { $0.id < $1.id } }

    /// The fence with `id`, if any.
    func fence(id: String) -> Geofence? { index.fence(id: id) }

    /// Whether the device is inside the fence with `id` (false for unknown ids).
    func isInside(_ id: String) -> Bool { insideIDs.contains(id) }

    /// Adds `fences` atomically: all are validated first and nothing changes if one is
    /// invalid (the error names it). An existing id is replaced (see the type's notes on
    /// state); when an id repeats within `fences`, the last one wins.
    mutating func add(_ fences: [Geofence]) throws(BeekonError) {
        for fence in fences { try fence.validate() }
        for fence in fences {
            if let old = index.fence(id: fence.id), !old.hasSameRegion(as: fence) {
                insideIDs.remove(fence.id)
            }
            index.insert(fence)
        }
        syncInsideSlots()
    }

    /// Removes the fences with these ids and their state; unknown ids are ignored.
    mutating func remove(ids: some Sequence<String>) {
        for id in ids {
            index.remove(id: id)
            insideIDs.remove(id)
        }
        syncInsideSlots()
    }

    /// Takes the inside/outside states a stored crossing changed (`Evaluation.stateChanges`,
    /// evaluated on a copy); fences removed since are ignored.
    mutating func adopt(_ stateChanges: [String: Bool]) {
        guard !stateChanges.isEmpty else { return }
        for (id, inside) in stateChanges where index.fence(id: id) != nil {
            if inside { insideIDs.insert(id) } else { insideIDs.remove(id) }
        }
        syncInsideSlots()
    }

    /// The margin `h` for a fix with this accuracy (see the type's notes).
    package static func margin(accuracy: Double?) -> Double {
        guard let accuracy, accuracy.isFinite, accuracy > 0 else { return minimumMarginMeters }
        return max(minimumMarginMeters, accuracy)
    }

    /// Whether a fix at `distance` with margin `h` enters a fence of radius `r`.
    package static func enters(distance: Double, radius r: Double, margin h: Double) -> Bool {
        distance <= r - min(h, r / 2)
    }

    /// Whether a fix at `distance` with margin `h` leaves a fence of radius `r`.
    package static func exits(distance: Double, radius r: Double, margin h: Double) -> Bool {
        distance > r + h
    }

    /// Evaluates one (sanitised) fix against every fence and returns the events to
    /// persist and emit. See ``evaluateCrossings(latitude:longitude:accuracy:timestamp:makeID:)``.
    mutating func evaluate(
        latitude: Double, longitude: Double, accuracy: Double?, timestamp: Date, makeID: () -> UUID
    ) -> [GeofenceEvent] {
        evaluateCrossings(
            latitude: latitude, longitude: longitude, accuracy: accuracy, timestamp: timestamp, makeID: makeID
        ).events
    }

    /// Evaluates one (sanitised) fix against every fence: updates the state and returns
    /// the events (ids from `makeID`, timestamps truncated to milliseconds) and every
    /// state change. A fix with unusable coordinates changes nothing.
    package mutating func evaluateCrossings(
        latitude: Double, longitude: Double, accuracy: Double?, timestamp: Date, makeID: () -> UUID
    ) -> Evaluation {
        guard latitude.isFinite, longitude.isFinite, (-90...90).contains(latitude),
            (-180...180).contains(longitude)
        else { return Evaluation() }
        let h = Self.margin(accuracy: accuracy)
        // Each fence is first compared through its chord (SphereChord); only the fences that
        // this leaves undecided get the haversine distance. The decisions are the rules' own.
        let here = SphereChord.Point(latitude: latitude, longitude: longitude)
        var exited: [Int32] = []
        var entered: [Int32] = []
        for slot in insideSlots {
            let e = index.entry(slot: slot)
            let limit = e.radiusMeters + h
            let stays =
                SphereChord.isWithin(chordSquared: here.chordSquared(to: e.centre), limit: limit)
                ?? {
                    let f = index.fence(slot: slot)
                    return !Self.exits(
                        distance: Geodesy.distance(latitude, longitude, f.latitude, f.longitude),
                        radius: f.radiusMeters, margin: h)
                }()
            if !stays { exited.append(slot) }
        }
        // Entering needs d ≤ r, so the index (margin 0) returns every fence that can be entered.
        index.forEachCandidateSlot(latitude: latitude, longitude: longitude) { slot, e in
            guard !e.marked else { return }  // already inside
            let r = e.radiusMeters
            let enters =
                SphereChord.isWithin(chordSquared: here.chordSquared(to: e.centre), limit: r - min(h, r / 2))
                ?? {
                    let f = index.fence(slot: slot)
                    return Self.enters(
                        distance: Geodesy.distance(latitude, longitude, f.latitude, f.longitude),
                        radius: f.radiusMeters, margin: h)
                }()
            if enters { entered.append(slot) }
        }
        guard !exited.isEmpty || !entered.isEmpty else { return Evaluation() }

        let at = WireTimestamp(timestamp).date
        var result = Evaluation()
        for f in exited.map({ index.fence(slot: $0) }).sorted(by: { $0.id < $1.id }) {
            insideIDs.remove(f.id)
            result.stateChanges[f.id] = false
            if f.notifyOnExit {
                result.events.append(GeofenceEvent(id: makeID(), geofenceId: f.id, transition: .exit, timestamp: at))
            }
        }
        for slot in exited { index.setMarked(slot, false) }
        insideSlots.removeAll { !index.entry(slot: $0).marked }
        for f in entered.map({ index.fence(slot: $0) }).sorted(by: { $0.id < $1.id }) {
            insideIDs.insert(f.id)
            result.stateChanges[f.id] = true
            if f.notifyOnEntry {
                result.events.append(GeofenceEvent(id: makeID(), geofenceId: f.id, transition: .enter, timestamp: at))
            }
        }
        for slot in entered { index.setMarked(slot, true) }
        insideSlots += entered
        return result
    }
}
