import Foundation

/// Persistence of locate requests. Lifecycle changes are conditional writes (the row
/// must still be in the state the caller read), each appending a `locate` event to the
/// event log in the same transaction, so every instance sees each change once.
public protocol LocateStore: Sendable {
    /// Stores a new request and appends its `locate` event (`payload`).
    func insertLocate(_ request: LocateRequest, payload: String) async throws(StoreError)
    /// One request.
    func locateRequest(id: UUID) async throws(StoreError) -> LocateRequest?
    /// A device's requests still open (pending or delivered), oldest first.
    func openLocateRequests(installId: UUID) async throws(StoreError) -> [LocateRequest]
    /// Open requests of any device whose expiry is at or before `nowMillis`.
    func dueLocateRequests(nowMillis: Int64) async throws(StoreError) -> [LocateRequest]
    /// Creation times (Unix ms) of a device's requests created at or after `sinceMillis` (rate limit).
    func locateCreationTimes(installId: UUID, sinceMillis: Int64) async throws(StoreError) -> [Int64]
    /// Writes `request` over the stored row if that row is still in state `from`; appends
    /// `payload` as a `locate` event when given. False when the row had moved on.
    func updateLocate(_ request: LocateRequest, from: LocateRequest.State, payload: String?) async throws(StoreError) -> Bool
}
