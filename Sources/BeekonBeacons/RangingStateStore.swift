import BeekonPrimitives
import Foundation

/// Where a ranging session keeps its decision state between wakes (SPEC BY-5): the app may
/// be suspended or killed between two region events, and the next wake must continue.
public protocol RangingStateStore: Sendable {
    /// The state saved last, or nil (first wake, or unreadable: start afresh).
    func load() -> ProximityTrackerState?
    /// Saves `state` durably (replacing the previous one).
    func save(_ state: ProximityTrackerState) throws
}

/// A ``RangingStateStore`` in one JSON file, replaced atomically and durably (see
/// `DurableFile`: after a power cut it holds the old state or the new one).
public struct FileRangingStateStore: RangingStateStore {
    /// The file.
    public let url: URL

    /// Creates a store at `url`.
    public init(url: URL) {
        self.url = url
    }

    /// Reads the file; nil when it is absent or not a state.
    public func load() -> ProximityTrackerState? {
        guard let data = try? Data(contentsOf: url) else { return nil }
        return try? JSONDecoder().decode(ProximityTrackerState.self, from: data)
    }

    /// Writes the file atomically and flushes it and its directory.
    public func save(_ state: ProximityTrackerState) throws {
        try DurableFile.replace(url.path, with: JSONEncoder().encode(state))
    }
}
