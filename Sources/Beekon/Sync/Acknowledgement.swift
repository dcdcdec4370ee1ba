import Foundation

/// An accepted batch's acknowledgement, committing while the next batch is in flight.
struct Acknowledgement: Sendable {
    let batch: UUID
    let commit: Task<BeekonError?, Never>

    init(batch: UUID, store: LocationStore, keepLocations: Bool) {
        self.batch = batch
        commit = Task {
            do throws(BeekonError) {
                _ = try await store.acknowledge(batch, keepLocations: keepLocations)
                return nil
            } catch {
                return error
            }
        }
    }
}
