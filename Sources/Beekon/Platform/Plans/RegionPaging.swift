/// The paging state machine the CoreLocation provider drives: feed it positions and
/// fence sets; it returns the OS changes to make, or nil when the slots stay as they are.
package struct RegionPaging: Sendable {
    private var pager: RegionPager
    private var fences: [Geofence]
    private var slots: Int
    /// Our regions the OS kept from an earlier process, to drop at the first re-page.
    private var orphans: Set<String> = []
    /// The page currently in the OS slots.
    package private(set) var current: RegionPage?
    /// The last position seen, for re-paging when the fence set changes.
    private var position: (latitude: Double, longitude: Double)?

    /// The OS slots this paging fills by default: the app's 20 minus the stationary wake
    /// region's own (``StationaryWakePlan``, kept apart from the fences and the refresh region).
    package static let defaultSlots = RegionPager.osSlots - StationaryWakePlan.reservedSlots

    /// Starts with `fences` and nothing monitored.
    package init(fences: [Geofence] = [], slots: Int = RegionPaging.defaultSlots) {
        self.fences = fences
        self.slots = slots
        self.pager = RegionPager(fences: fences, slots: slots)
    }

    /// A position (a fix, or the OS's last location after the refresh region's exit):
    /// re-pages when there is no page yet or the device left the refresh region.
    package mutating func observe(latitude: Double, longitude: Double) -> RegionChange? {
        position = (latitude, longitude)
        if let current, current.contains(latitude: latitude, longitude: longitude) { return nil }
        return repage(latitude: latitude, longitude: longitude)
    }

    /// The application's fence set changed: re-index and re-page at the last position.
    package mutating func replace(fences new: [Geofence]) -> RegionChange? {
        fences = new
        pager = RegionPager(fences: new, slots: slots)
        guard let position else { return nil }
        return repage(latitude: position.latitude, longitude: position.longitude)
    }

    /// The OS slots this paging fills (20 minus the wake region's, the regions others hold and refusals).
    package var slotCount: Int { slots }

    /// Launch reconciliation (XR-1): the OS keeps monitored regions and `CLMonitor` conditions
    /// across launches (`CLLocationManager.h`, `monitoredRegions`: "If any location manager has
    /// been instructed to monitor a region, during this or previous launches of your
    /// application, it will be present in this set"), while this paging starts empty. Our held
    /// regions (`isOurs`) become orphans the first re-page removes unless it keeps them; the
    /// others (beacon regions, the host's own) share the app's 20 slots, so they shrink ours.
    /// The stationary wake region is neither: it has its own slot, and the provider replaces it.
    package mutating func adopt(held all: [String], isOurs: (String) -> Bool) {
        let ids = all.filter { $0 != StationaryWakePlan.identifier }
        let ours = ids.filter(isOurs)
        slots = max(1, Self.defaultSlots - (Set(ids).count - Set(ours).count))
        pager = RegionPager(fences: fences, slots: slots)
        orphans = Set(ours)
    }

    /// Whether `id` names one of this paging's regions (a known fence or the refresh region).
    package func isOurs(_ id: String) -> Bool {
        id == RegionPager.refreshIdentifier || fences.contains { $0.id == id }
    }

    /// The OS refused a region (`monitoringDidFailFor`, or `CLMonitor`'s condition limit):
    /// one slot fewer from now on, re-paged at the last position so the refused fence's slot
    /// goes to the refresh region's shrinking radius instead of failing again.
    package mutating func refused(_ id: String) -> RegionChange? {
        slots = max(1, slots - 1)
        pager = RegionPager(fences: fences, slots: slots)
        guard let position else { return nil }
        return repage(latitude: position.latitude, longitude: position.longitude)
    }

    /// Forgets the page (tracking stopped; the glue removes every region).
    package mutating func reset() -> [String] {
        var ids = (current?.fences.map(\.id) ?? []) + (current == nil ? [] : [RegionPager.refreshIdentifier])
        ids += orphans.subtracting(ids).sorted()
        current = nil
        orphans = []
        return ids
    }

    private mutating func repage(latitude: Double, longitude: Double) -> RegionChange {
        let page = pager.page(latitude: latitude, longitude: longitude)
        var change = page.changes(from: current)
        let kept = Set(page.fences.map(\.id)).union([RegionPager.refreshIdentifier])
        change.remove += orphans.subtracting(kept).subtracting(change.remove).sorted()
        // A kept orphan is still in the OS but may be stale: `add` re-places every fence of a fresh page.
        orphans = []
        current = page
        return change
    }
}
