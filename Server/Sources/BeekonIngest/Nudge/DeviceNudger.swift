import BeekonPrimitives
import BeekonWire
import Foundation
import Logging
import ServiceLifecycle

/// Nudges devices that stopped reporting: every `interval` it looks at the devices
/// the status monitor knows, and each one whose silence `NudgePolicy` allows a nudge for is
/// read again from the store (another instance may have had its upload), claimed in the store
/// (`NudgeStore.claimNudge`: at most one a day, across restarts and instances) and sent its
/// visible notification through `PushDispatcher` — the senders of the locate pushes, with the
/// same token handling (a token the provider calls invalid is removed).
///
/// The claim is stored before the push is sent, so a crash in between loses that day's nudge
/// rather than sending two. A device whose claim says wait (or never) is not read again until
/// then, unless it reports and falls silent again.
final class DeviceNudger: Service, Sendable {
    let store: any LocationStore
    let pushes: PushDispatcher
    let policy: NudgePolicy
    /// The devices to look at: the status monitor's in-memory times (no store read per pass).
    let candidates: @Sendable () async -> [DeviceTimes]
    let interval: Duration
    let now: @Sendable () -> Date
    let sleep: Sleeper
    let makeID: @Sendable () -> UUID
    let logger: Logger
    /// Opens once the store is migrated (nil: it is).
    let ready: StoreReadiness?
    /// Per device: the contact its silence followed, and until when it needs no look.
    private let skip = Locked<[UUID: (contact: Int64, until: Int64)]>([:])

    /// A nudge that a pass sent (or tried to send).
    struct Sent: Sendable, Equatable {
        /// The device.
        var installId: UUID
        /// Its provider.
        var provider: PushToken.Provider
        /// What the provider said.
        var outcome: PushOutcome
    }

    init(
        store: any LocationStore, pushes: PushDispatcher, policy: NudgePolicy, candidates: @escaping @Sendable () async -> [DeviceTimes],
        interval: Duration, now: @escaping @Sendable () -> Date, makeID: @escaping @Sendable () -> UUID, logger: Logger,
        ready: StoreReadiness? = nil, sleep: @escaping Sleeper = realSleep
    ) {
        self.store = store
        self.pushes = pushes
        self.policy = policy
        self.candidates = candidates
        self.interval = interval
        self.now = now
        self.makeID = makeID
        self.logger = logger
        self.ready = ready
        self.sleep = sleep
    }

    func run() async throws {
        await Periodic(interval: interval, ready: ready, sleep: sleep).run { await self.pass() }
    }

    /// Devices handled at once in a pass: a claim's commit and a push's round trip overlap.
    static let concurrency = 8

    /// One pass over the candidates; returns the nudges it sent.
    @discardableResult
    func pass() async -> [Sent] {
        let nowMillis = WireTimestamp(now()).millis
        let due = await candidates().filter { times in
            guard let at = policy.dueMillis(times), at <= nowMillis else { return false }
            return !skipped(times, nowMillis)
        }
        return await withTaskGroup(of: Sent?.self, returning: [Sent].self) { group in
            var sent: [Sent] = []
            for (i, times) in due.enumerated() {
                if i >= Self.concurrency, let done = await group.next(), let nudge = done { sent.append(nudge) }
                group.addTask { await self.consider(times.installId, nowMillis: nowMillis) }
            }
            for await done in group { if let nudge = done { sent.append(nudge) } }
            return sent
        }
    }

    private func skipped(_ t: DeviceTimes, _ nowMillis: Int64) -> Bool {
        skip.withLock { s in
            guard let entry = s[t.installId], entry.contact == t.lastContactMillis else { return false }
            return nowMillis < entry.until
        }
    }

    /// Re-reads one device, claims its nudge and sends it.
    private func consider(_ id: UUID, nowMillis: Int64) async -> Sent? {
        do {
            guard let fresh = try await store.deviceTimes(installId: id).first, let due = policy.dueMillis(fresh), due <= nowMillis
            else { return nil }
            let claim = try await store.nudges.claimNudge(
                installId: id, silentSinceMillis: fresh.lastContactMillis, nowMillis: nowMillis, policy: policy)
            let day = Int64(policy.everySeconds) * 1000
            switch claim {
            case .wait(let until):
                skip.withLock { $0[id] = (fresh.lastContactMillis, until) }
                return nil
            case .never:
                skip.withLock { $0[id] = (fresh.lastContactMillis, nowMillis + day) }
                return nil
            case .send(let token, let record):
                skip.withLock { $0[id] = (fresh.lastContactMillis, nowMillis + day) }
                // Undelivered, it is worth nothing once the next one may be sent.
                let outcome = await pushes.nudge(policy.text, id: makeID(), expiresAtMillis: nowMillis + day, to: token)
                logger.info(
                    "nudged a device that stopped reporting",
                    metadata: [
                        "install_id": "\(id.wireString)", "provider": "\(token.provider.rawValue)", "outcome": "\(outcome)",
                        "silent_since": "\(WireTimestamp(millis: record.silentSinceMillis))", "nudge": "\(record.count)",
                    ])
                return Sent(installId: id, provider: token.provider, outcome: outcome)
            }
        } catch {
            logger.warning("nudge not sent", metadata: ["install_id": "\(id.wireString)", "error": "\(error)"])
            return nil
        }
    }
}
