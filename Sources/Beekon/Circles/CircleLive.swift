import BeekonPrimitives
import BeekonWire
import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a circle's live view delivers (``CircleClient/live(_:idleTimeout:)``).
public enum CircleLiveUpdate: Sendable, Hashable {
    /// An event: first `WireCircleLiveEvent/circle(_:)` (the members after the wake-up that
    /// opening the view made), then the members' fixes, device states and wake-up requests.
    case event(WireCircleLiveEvent)
    /// The server ended the stream (the circle's members or someone's sharing changed, or the
    /// connection dropped after it opened): the view reconnects at once, after the last event it
    /// got (no event is repeated or lost, and nobody is woken again), under the new rules.
    case reconnecting(String)
    /// The last update: the view stopped. ``BeekonError/serverRefused(status:code:message:)`` when
    /// you are not (or no longer) a member (`404 not_found`) or your credential is refused,
    /// ``BeekonError/serverUnavailable(_:)`` when the server could not be reached; open the view
    /// again to retry.
    case ended(BeekonError)
}

extension CircleClient {
    /// Opens circle `id`'s live view (`GET /v1/circles/{id}/live`, Server-Sent Events). Opening
    /// it asks the other members' devices for a fresh fix; each member is shown at the precision
    /// and in the hours they allow. The sequence ends after ``CircleLiveUpdate/ended(_:)``, or
    /// when the task iterating it is cancelled. `idleTimeout` (default 45 s, above twice the
    /// server's heartbeat) ends a connection on which nothing arrives; it is then reopened.
    public func live(_ id: String, idleTimeout: TimeInterval = 45) -> AsyncStream<CircleLiveUpdate> {
        AsyncStream { continuation in
            let task = Task {
                let last = await run(id, idleTimeout: idleTimeout) { continuation.yield($0) }
                continuation.yield(.ended(last))
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Connects and reconnects while each connection opened; the error that stopped it.
    private func run(_ id: String, idleTimeout: TimeInterval, yield: @escaping @Sendable (CircleLiveUpdate) -> Void) async -> BeekonError {
        let engine: SyncEngine
        let path: String
        do {
            path = try Self.path(id) + "/live"
            engine = try await self.engine()
        } catch {
            return error
        }
        guard let url = engine.deviceURL(path: path), let auth = engine.auth else {
            return .invalidConfiguration("the circle's stream URL could not be built from the sync URL")
        }
        let lastEventID = Locked<String?>(nil)
        var retriedAuthorization = false
        var authorization: String?
        switch await auth.authorization() {
        case .proceed(let value): authorization = value
        case .dead:
            return .serverRefused(status: 401, code: "credentials_dead", message: "the device's credential was refused; enrol again")
        case .wait: return .serverUnavailable("no usable device credential right now")
        }
        while !Task.isCancelled {
            var request = URLRequest(url: url)
            request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
            for (k, v) in engine.deviceHeaders(authorization: authorization) { request.setValue(v, forHTTPHeaderField: k) }
            if let last = lastEventID.value { request.setValue(last, forHTTPHeaderField: "Last-Event-ID") }
            let opened = Locked(false)
            let connection = SSEConnection { message in
                if let id = message.id { lastEventID.value = id }
                guard let event = try? WireCircleLiveEvent.decode(event: message.event, data: Data(message.data.utf8)) else { return }
                yield(.event(event))
            } onOpen: { _ in
                opened.value = true
            }
            let outcome = await connection.run(request, idleTimeout: idleTimeout)
            guard !Task.isCancelled else { break }
            switch outcome {
            case .refused(status: 401, _) where !retriedAuthorization:
                // The access token expired or was replaced: refresh once, as uploads do.
                retriedAuthorization = true
                guard case .proceed(let value) = await auth.unauthorized(rejected: authorization) else {
                    return Self.failure(HTTPResponse(status: 401))
                }
                authorization = value
            case .refused(let status, let body):
                return Self.failure(HTTPResponse(status: status, body: body))
            case .ended(let why):
                guard opened.value else { return .serverUnavailable(why) }
                retriedAuthorization = false
                yield(.reconnecting(why))
            }
        }
        return .serverUnavailable("cancelled")
    }
}
