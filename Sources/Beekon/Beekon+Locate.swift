import BeekonWire
import Foundation

extension Beekon {
    /// Sets the device-side guards for locate requests (BY-2): sharing on/off, the least
    /// time between answers, the fix timeout.
    public func setLocatePolicy(_ policy: LocatePolicy) {
        locateGuard.policy = policy
    }

    /// Answers one locate request (BY-2, BY-3): for a host woken by a silent push, and for
    /// the agent's command channel. Takes one fresh fix from the source (independent of
    /// tracking: the mode is not changed, so paused stays paused), stores it with trigger
    /// `manual` and the request id, bypassing the gate, and uploads at once. A refusal
    /// (sharing off, too soon, no fix within the timeout) is sent to the server with its
    /// reason when sync is configured.
    @discardableResult
    public func handleLocateRequest(id: UUID) async -> LocateAnswer {
        guard locateGuard.claim(id) else { return .refused(reason: "already_handled") }
        let answer = await answerLocate(id: id)
        switch answer {
        case .answered:
            _ = try? await sync()
        case .refused(let reason):
            logger.info("locate request refused", metadata: ["request_id": "\(id.wireString)", "reason": "\(reason)"])
            await sendLocateRefusal(id: id, reason: reason)
        }
        return answer
    }

    private func answerLocate(id: UUID) async -> LocateAnswer {
        if let reason = locateGuard.refusal(now: deps.clock.now()) { return .refused(reason: reason) }
        let timeout = Duration.milliseconds(Int(locateGuard.policy.timeoutSeconds * 1000))
        guard let raw = try? await deps.provider.currentLocation(timeout: timeout, mode: .high),
            let fix = FixSanitiser.sanitise(raw)?.fix
        else { return .refused(reason: "no_fix") }
        var location = Location(
            id: deps.makeID(), sessionId: machine.session ?? deps.makeID(), timestamp: fix.timestamp,
            latitude: fix.latitude, longitude: fix.longitude, accuracy: fix.accuracy, speed: fix.speed,
            bearing: fix.bearing, altitude: fix.altitude, trigger: .manual, motion: motion, isMock: fix.isMock)
        location.locateRequestId = id
        guard await record(location) else { return .refused(reason: "store_failed") }
        locateGuard.lastAnswered = deps.clock.now()
        return .answered(location)
    }

    /// The open locate requests for this device from the server's command channel
    /// (`GET /v1/devices/{install_id}/commands`), waiting up to `wait` for one; empty without
    /// sync or on any failure.
    package func pendingLocateRequests(wait: Duration) async -> LocatePoll {
        guard let engine = try? await applySync(), let install = try? await ready().installID(makeID: deps.makeID) else {
            return .failed
        }
        let seconds = Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18
        let path = "/v1/devices/\(install.wireString)/commands?wait=\(seconds)"
        guard let response = await engine.deviceRequest(path: path, method: "GET", body: Data(), timeout: wait + .seconds(15)) else {
            return .failed
        }
        return LocatePoll(status: response.status, body: response.body)
    }

    private func sendLocateRefusal(id: UUID, reason: String) async {
        guard let engine = try? await applySync(), let install = try? await ready().installID(makeID: deps.makeID) else { return }
        var w = WireJSONWriter(capacity: 64)
        w.raw("{\"outcome\":\"refused\",\"reason\":")
        w.string(reason)
        w.raw("}")
        let path = "/v1/devices/\(install.wireString)/locate/\(id.wireString)/answer"
        let response = await engine.deviceRequest(path: path, method: "POST", body: Data(w.bytes), timeout: .seconds(30))
        if response?.status != 200 {
            logger.warning(
                "locate refusal not delivered", metadata: ["request_id": "\(id.wireString)", "status": "\(response?.status ?? 0)"])
        }
    }
}

/// What one poll of the locate command channel found.
package enum LocatePoll: Sendable, Equatable {
    /// The server answered; the requests waiting for this device (possibly none).
    case requests([UUID])
    /// The server has no command channel (404, 405 or 501: e.g. a backend that only
    /// implements uploads); polling it again soon would only repeat the answer.
    case unsupported(status: Int)
    /// No usable answer (network error, 5xx, 401 after a refresh, sync off): try again later.
    case failed

    /// Classifies a command-channel answer.
    init(status: Int, body: Data) {
        switch status {
        case 200: self = .requests(LocateCommands.requestIDs(body))
        case 404, 405, 501: self = .unsupported(status: status)
        default: self = .failed
        }
    }

    /// The request ids found (none unless `.requests`).
    package var ids: [UUID] {
        if case .requests(let ids) = self { return ids }
        return []
    }
}

/// Reads `{"locate_requests":[{"id":…}…]}` (the command channel's answer, and the
/// must-ignore field of an ingest 2xx body).
enum LocateCommands {
    static func requestIDs(_ body: Data) -> [UUID] {
        struct Notice: Decodable { var id: String }
        struct Commands: Decodable {
            var locateRequests: [Notice]?
            enum CodingKeys: String, CodingKey { case locateRequests = "locate_requests" }
        }
        guard let commands = try? JSONDecoder().decode(Commands.self, from: body) else { return [] }
        return (commands.locateRequests ?? []).compactMap { UUID(wire: $0.id) }
    }
}
