/// The paging state machine the CoreLocation provider drives: feed it positions and
/// fence sets; it returns the OS changes to make, or nil when the slots stay as they are.
package struct RegionPaging: Sendable {
    private var pager: RegionPager
    private var fences: [Geofence]
    private let slots: Int
    /// The page currently in the OS slots.
    package private(set) var current: RegionPage?
    /// The last position seen, for re-paging when the fence set changes.
    private var position: (latitude: Double, longitude: Double)?

    /// Starts with `fences` and nothing monitored.
    package init(fences: [Geofence] = [], slots: Int = RegionPager.osSlots) {
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

    /// Forgets the page (tracking stopped; the glue removes every region).
    package mutating func reset() -> [String] {
        let ids = (current?.fences.map(\.id) ?? []) + (current == nil ? [] : [RegionPager.refreshIdentifier])
        current = nil
        return ids
    }

    private mutating func repage(latitude: Double, longitude: Double) -> RegionChange {
        let page = pager.page(latitude: latitude, longitude: longitude)
        let change = page.changes(from: current)
        current = page
        return change
    }
}
