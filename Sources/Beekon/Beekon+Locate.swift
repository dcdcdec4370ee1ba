import BeekonWire
import Foundation

extension Beekon {
    /// Sets the device-side guards for locate requests (BY-2): sharing on/off, the least
    /// time between answers (longer while the battery is low or Low Power Mode is on), the fix
    /// timeout. The policy is persisted with the database: a later process (an app relaunched
    /// in the background by a silent push) applies it before answering anything, with no call
    /// from the host. It applies to this process at once even when it could not be saved
    /// (logged).
    public func setLocatePolicy(_ policy: LocatePolicy) async {
        _ = await restoreLocateGuard()  // the last answer's time; the stored policy is replaced below
        locateGuard.policy = policy
        do {
            try await ready().saveLocatePolicy(policy)
        } catch {
            logger.error("the locate policy was not saved; it applies until the app ends", metadata: ["error": "\(error)"])
        }
    }

    /// Reads the persisted policy and last answer once per process, before the first request
    /// is judged; false when the store cannot be read (the request is then refused).
    private func restoreLocateGuard() async -> Bool {
        guard !locateGuard.restored else { return true }
        do {
            let saved = try await ready().locateGuard()
            guard !locateGuard.restored else { return true }  // another request restored it meanwhile
            if let policy = saved.policy { locateGuard.policy = policy }
            if let answered = saved.lastAnswered { locateGuard.lastAnswered = max(answered, locateGuard.lastAnswered ?? answered) }
            locateGuard.restored = true
            return true
        } catch {
            logger.error("locate guard unreadable; refusing", metadata: ["error": "\(error)"])
            return false
        }
    }

    /// Answers one locate request (BY-2, BY-3): for a host woken by a silent push, and for
    /// the agent's command channel. Takes one fresh fix from the source (independent of
    /// tracking: the mode is not changed, so paused stays paused), stores it with trigger
    /// `manual` and the request id, bypassing the gate (after the fix the admission window
    /// holds, if any), and uploads at once. A refusal
    /// (sharing off, too soon, no fix within the timeout) is sent to the server with its
    /// reason when sync is configured.
    @discardableResult
    public func handleLocateRequest(id: UUID) async -> LocateAnswer {
        await handleLocateRequest(id: id, fixTimeoutCap: nil)
    }

    /// ``handleLocateRequest(id:)`` waiting for the fix at most `fixTimeoutCap` (a push's budget).
    func handleLocateRequest(id: UUID, fixTimeoutCap: Duration?) async -> LocateAnswer {
        guard locateGuard.claim(id) else { return .refused(reason: "already_handled") }
        let answer = await answerLocate(id: id, fixTimeoutCap: fixTimeoutCap)
        switch answer {
        case .answered:
            _ = try? await sync()
        case .refused(let reason):
            logger.info("locate request refused", metadata: ["request_id": "\(id.wireString)", "reason": "\(reason)"])
            await sendLocateRefusal(id: id, reason: reason)
        }
        return answer
    }

    private func answerLocate(id: UUID, fixTimeoutCap: Duration?) async -> LocateAnswer {
        guard await restoreLocateGuard() else { return .refused(reason: "store_failed") }
        let power = await deps.powerState?.current() ?? .unknown
        if let reason = locateGuard.refusal(now: deps.clock.now(), power: power) { return .refused(reason: reason) }
        var timeout = Duration.milliseconds(Int(locateGuard.policy.timeoutSeconds * 1000))
        if let fixTimeoutCap { timeout = min(timeout, fixTimeoutCap) }
        guard let raw = try? await deps.provider.currentLocation(timeout: timeout, mode: .high),
            let answer = core.locateAnswer(raw, requestID: id, makeID: deps.makeID)
        else { return .refused(reason: "no_fix") }
        let (effects, fixID) = answer
        guard await apply(effects).stored.contains(fixID), let location = effects.storedLocation(fixID) else {
            return .refused(reason: "store_failed")
        }
        let answered = deps.clock.now()
        locateGuard.lastAnswered = answered
        do { try await ready().saveLocateAnswered(at: answered) } catch {
            logger.error("the time of the locate answer was not saved", metadata: ["error": "\(error)"])
        }
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
        let path = "/v1/devices/\(install.wireString)/locate/\(id.wireString)/answer"
        let response = await engine.deviceRequest(
            path: path, method: "POST", body: WireLocateRefusal(reason: reason).encoded(), timeout: .seconds(30))
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
        // A body that is not the contract's `WireCommands` lists nothing.
        case 200: self = .requests((try? WireCommands.decode(body))?.locateRequests.map(\.id) ?? [])
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

extension Beekon {
    /// The background time a silent push leaves by default: Apple documents for
    /// `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)` that "your app has
    /// up to 30 seconds of wall-clock time to process the notification and call the specified
    /// completion handler block"; 25 s leaves a margin for the host's own work.
    public static let remoteNotificationBudget = Duration.seconds(25)

    /// Answers a silent push (BY-2): the host forwards the payload it received, decoded with
    /// `WireLocatePush` (module `BeekonWire`) (`WireLocatePush(userInfo:)` on iOS, `WireLocatePush(json:)` elsewhere),
    /// and passes the result to the system's completion handler
    /// (``RemoteNotificationResult/newData`` → `.newData`, and so on). A locate request is
    /// answered as ``handleLocateRequest(id:)`` does, with the fix wait capped so the answer can
    /// still be uploaded; if `budget` (on the SDK's clock) runs out first the result is
    /// `.failed` while the answer goes on as long as the app keeps running. A nil push (not a
    /// Beekon payload) is ``RemoteNotificationResult/notBeekon``, at once.
    public func handleRemoteNotification(
        _ push: WireLocatePush?, budget: Duration = Beekon.remoteNotificationBudget
    ) async -> RemoteNotificationResult {
        guard let push else { return .notBeekon }
        logger.info("locate request by push", metadata: ["request_id": "\(push.locateRequestID.wireString)"])
        // The fix may use at most 60 % of the budget; the rest is for storing and uploading it.
        let fixCap = budget * 0.6
        let clock = deps.clock
        let decided = OnceFlag()
        // Two unstructured tasks, not a task group: the answer goes on after the budget ran out,
        // and a group would wait for it. Whichever ends first decides; a cancelled timer never does.
        return await withCheckedContinuation { continuation in
            let timer = Task {
                guard (try? await clock.sleep(for: budget)) != nil, decided.claim() else { return }
                continuation.resume(returning: .failed)
            }
            Task {
                let answer = await self.handleLocateRequest(id: push.locateRequestID, fixTimeoutCap: fixCap)
                timer.cancel()
                if decided.claim() { continuation.resume(returning: RemoteNotificationResult(answer)) }
            }
        }
    }
}

/// What handling a remote notification came to, for the host's completion handler
/// (`UIBackgroundFetchResult`: `.newData`, `.noData`, `.failed`).
public enum RemoteNotificationResult: Sendable, Hashable {
    /// A locate request was answered: a fresh fix was stored and handed to the upload (`.newData`).
    case newData
    /// A locate request was declined by a device-side guard (sharing off, too soon, already
    /// handled); the refusal was reported (`.noData`).
    case noData
    /// A locate request could not be answered: no fix in time, the store failed, or the
    /// background budget ran out (`.failed`).
    case failed
    /// Not a Beekon payload: the host handles it.
    case notBeekon

    /// The result of a locate answer.
    init(_ answer: LocateAnswer) {
        switch answer {
        case .answered: self = .newData
        case .refused(let reason) where reason == "no_fix" || reason == "store_failed": self = .failed
        case .refused: self = .noData
        }
    }
}
