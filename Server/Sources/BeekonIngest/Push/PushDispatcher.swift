import AsyncHTTPClient
import BeekonWire
import Foundation
import Logging
import ServiceLifecycle

/// Wakes devices for new locate requests (SPEC XR-6): looks up the device's push token,
/// sends the silent push through its provider, retries with back-off what the provider
/// says to retry (never past the request's expiry), drops tokens the provider calls
/// invalid, and records the outcome on the request (`pushed`, or `push_error`) and in
/// `/metrics`. Requests are queued (bounded) so that `POST …/locate` never waits on a
/// provider; each is pushed at most once, so the per-device locate rate limit bounds pushes.
/// The same senders carry the `DeviceNudger`'s visible nudges (`nudge`).
final class PushDispatcher: Service {
    private let tokens: any PushTokenStore
    private let locates: LocateService
    private let senders: [PushToken.Provider: any PushSender]
    private let client: HTTPClient?
    private let metrics: IngestMetrics
    private let retryBase: Duration
    private let maxAttempts: Int
    private let now: @Sendable () -> Date
    private let sleep: Sleeper
    private let logger: Logger
    private let queue: AsyncStream<LocateRequest>
    private let continuation: AsyncStream<LocateRequest>.Continuation

    /// Builds the senders the configuration names (none: `isEnabled` is false and nothing runs).
    init(
        _ config: PushConfiguration, tokens: any PushTokenStore, locates: LocateService, metrics: IngestMetrics,
        now: @escaping @Sendable () -> Date, logger: Logger,
        sleep: @escaping Sleeper = realSleep
    ) {
        var senders: [PushToken.Provider: any PushSender] = [:]
        let client = config.isEnabled ? PushHTTPClient.make(caFile: config.caFile) : nil
        if let client {
            if let apns = config.apns { senders[.apns] = APNsSender(apns, client: client, now: now, logger: logger) }
            if let fcm = config.fcm { senders[.fcm] = FCMSender(fcm, client: client, now: now, logger: logger) }
        }
        self.senders = senders
        self.client = client
        self.tokens = tokens
        self.locates = locates
        self.metrics = metrics
        retryBase = .milliseconds(Int64(max(0, config.retryBaseSeconds) * 1000))
        maxAttempts = max(1, config.maxAttempts)
        self.now = now
        self.sleep = sleep
        self.logger = logger
        (queue, continuation) = AsyncStream.makeStream(of: LocateRequest.self, bufferingPolicy: .bufferingNewest(4096))
    }

    /// Whether any provider is configured.
    var isEnabled: Bool { !senders.isEmpty }

    /// Queues a new request for its push (dropped, oldest first, beyond 4,096 waiting).
    func enqueue(_ request: LocateRequest) {
        guard isEnabled else { return }
        continuation.yield(request)
    }

    func run() async throws {
        await withDiscardingTaskGroup { group in
            for await request in queue.cancelOnGracefulShutdown() {
                group.addTask { await self.push(request) }
            }
        }
        continuation.finish()
        try? await client?.shutdown()
    }

    /// Pushes one request, retrying as its provider says; records the outcome.
    func push(_ request: LocateRequest) async {
        let token: PushToken
        do {
            guard let t = try await tokens.pushToken(installId: request.installId) else { return }  // no token: today's path
            token = t
        } catch {
            logger.warning("push token lookup failed", metadata: ["error": "\(error)"])
            return
        }
        guard senders[token.provider] != nil else { return }  // that provider is not configured
        switch await deliver(.locate(id: request.id, expiresAtMillis: request.expiresAtMillis), to: token, count: metrics.pushed) {
        case nil: return  // shutting down
        case .sent: await record(.push, request)
        case .tokenInvalid(let why): await record(.pushFailed(reason: why + " (token removed)"), request)
        case .failed(let why), .retry(let why, _): await record(.pushFailed(reason: why), request)
        case .disabled(let why): await record(.pushFailed(reason: "\(token.provider.rawValue) sender disabled: \(why)"), request)
        }
    }

    /// Sends a nudge to `token` through its provider's sender, retrying as the
    /// provider says until `expiresAtMillis`; the final outcome (`.disabled` also when the
    /// token's provider is not configured). Counted in `beekon_ingest_nudges_total`.
    func nudge(_ nudge: WireNudgePush, id: UUID, expiresAtMillis: Int64, to token: PushToken) async -> PushOutcome {
        guard senders[token.provider] != nil else { return .disabled(reason: "\(token.provider.rawValue) is not configured") }
        return await deliver(.nudge(nudge, id: id, expiresAtMillis: expiresAtMillis), to: token, count: metrics.nudged)
            ?? .retry(reason: "shutting down", after: nil)
    }

    /// Sends `message` to `token`, retrying with back-off what the provider says to retry (never
    /// past the message's expiry), removing a token the provider calls invalid; counts each
    /// attempt with `count(provider, result)` and returns the final outcome (`.retry` when the
    /// retries ran out; nil when the server began to shut down during a back-off).
    private func deliver(
        _ message: PushMessage, to token: PushToken, count: (String, String) -> Void
    ) async -> PushOutcome? {
        guard let sender = senders[token.provider] else { return .disabled(reason: "\(token.provider.rawValue) is not configured") }
        var attempt = 0
        while true {
            attempt += 1
            let outcome = await sender.send(message, to: token)
            switch outcome {
            case .sent:
                count(sender.name, "sent")
                return outcome
            case .tokenInvalid(let why):
                count(sender.name, "token_removed")
                do {
                    // Only the token that was refused: a device may have registered a new one meanwhile.
                    try await tokens.removePushToken(installId: token.installId, ifToken: token.token)
                } catch {
                    logger.warning("push token not removed", metadata: ["error": "\(error)"])
                }
                logger.info("push token removed: the provider says it is no longer valid", metadata: ["reason": "\(why)"])
                return outcome
            case .failed(let why):
                count(sender.name, "failed")
                logger.warning("push failed", metadata: ["reason": "\(why)"])
                return outcome
            case .disabled:
                count(sender.name, "disabled")
                return outcome
            case .retry(let why, let after):
                let backOff = retryBase * (1 << min(attempt - 1, 16))
                let delay = max(after ?? .zero, backOff)
                let remaining = Duration.milliseconds(message.expiresAtMillis - WireTimestamp(now()).millis)
                guard attempt < maxAttempts, delay < remaining else {
                    count(sender.name, "failed")
                    return outcome
                }
                count(sender.name, "retried")
                logger.info("push retried after a back-off", metadata: ["reason": "\(why)", "delay": "\(delay)"])
                do {
                    try await sleep(delay)
                } catch {
                    return nil
                }
            }
        }
    }

    private func record(_ change: LocateRequest.Change, _ request: LocateRequest) async {
        do {
            try await locates.apply(change, to: request.id)
        } catch {
            logger.warning("push outcome not recorded", metadata: ["error": "\(error)"])
        }
    }
}
