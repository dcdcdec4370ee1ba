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
final class PushDispatcher: Service {
    private let tokens: any PushTokenStore
    private let locates: LocateService
    private let senders: [PushToken.Provider: any PushSender]
    private let client: HTTPClient?
    private let metrics: IngestMetrics
    private let retryBase: Duration
    private let maxAttempts: Int
    private let now: @Sendable () -> Date
    private let sleep: @Sendable (Duration) async throws -> Void
    private let logger: Logger
    private let queue: AsyncStream<LocateRequest>
    private let continuation: AsyncStream<LocateRequest>.Continuation

    /// Builds the senders the configuration names (none: `isEnabled` is false and nothing runs).
    init(
        _ config: PushConfiguration, tokens: any PushTokenStore, locates: LocateService, metrics: IngestMetrics,
        now: @escaping @Sendable () -> Date, logger: Logger,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
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
        guard let sender = senders[token.provider] else { return }  // that provider is not configured
        var attempt = 0
        while true {
            attempt += 1
            let outcome = await sender.send(requestId: request.id, expiresAtMillis: request.expiresAtMillis, to: token)
            switch outcome {
            case .sent:
                metrics.pushed(sender.name, "sent")
                await record(.push, request)
                return
            case .tokenInvalid(let why):
                metrics.pushed(sender.name, "token_removed")
                do {
                    // Only the token that was refused: a device may have registered a new one meanwhile.
                    try await tokens.removePushToken(installId: token.installId, ifToken: token.token)
                } catch {
                    logger.warning("push token not removed", metadata: ["error": "\(error)"])
                }
                logger.info("push token removed: the provider says it is no longer valid", metadata: ["reason": "\(why)"])
                await record(.pushFailed(reason: why + " (token removed)"), request)
                return
            case .failed(let why):
                metrics.pushed(sender.name, "failed")
                logger.warning("push failed", metadata: ["reason": "\(why)"])
                await record(.pushFailed(reason: why), request)
                return
            case .disabled(let why):
                metrics.pushed(sender.name, "disabled")
                await record(.pushFailed(reason: "\(sender.name) sender disabled: \(why)"), request)
                return
            case .retry(let why, let after):
                let backOff = retryBase * (1 << min(attempt - 1, 16))
                let delay = max(after ?? .zero, backOff)
                let remaining = Duration.milliseconds(request.expiresAtMillis - WireTimestamp(now()).millis)
                guard attempt < maxAttempts, delay < remaining else {
                    metrics.pushed(sender.name, "failed")
                    await record(.pushFailed(reason: why), request)
                    return
                }
                metrics.pushed(sender.name, "retried")
                logger.info("push retried after a back-off", metadata: ["reason": "\(why)", "delay": "\(delay)"])
                do {
                    try await sleep(delay)
                } catch {
                    return  // shutting down
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
