import Foundation

/// Persistence of locate requests. Lifecycle changes are conditional writes (the row
/// must still be in the state the caller read), each appending a `locate` event to the
/// event log in the same transaction, so every instance sees each change once.
package protocol LocateStore: Sendable {
    /// Stores a new request and appends its `locate` event (`payload`) if `limit` admits it,
    /// judged on the device's earlier requests read in the same transaction, with one device's
    /// creations serialised, so a burst never exceeds the limit, on any number of instances.
    /// Nil when stored, else the whole seconds to wait (the `Retry-After`).
    func insertLocate(_ request: LocateRequest, payload: String, limit: LocateRateLimit) async throws(StoreError) -> Int?
    /// One request.
    func locateRequest(id: UUID) async throws(StoreError) -> LocateRequest?
    /// A device's requests still open (pending or delivered), oldest first.
    func openLocateRequests(installId: UUID) async throws(StoreError) -> [LocateRequest]
    /// Open requests of any device whose expiry is at or before `nowMillis`.
    func dueLocateRequests(nowMillis: Int64) async throws(StoreError) -> [LocateRequest]
    /// Writes `request` over the stored row if that row is still in state `from`; appends
    /// `payload` as a `locate` event when given. False when the row had moved on.
    func updateLocate(_ request: LocateRequest, from: LocateRequest.State, payload: String?) async throws(StoreError) -> Bool
}
