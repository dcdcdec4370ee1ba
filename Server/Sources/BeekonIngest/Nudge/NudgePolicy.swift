import BeekonWire
import Foundation

/// When a device that stopped reporting is nudged: a visible notification through
/// its push token asking its person to open the app, at most once a day.
///
/// A device is nudged only when it declared a reporting interval (`sync_interval_seconds` /
/// `check_in_interval_seconds`, see `DeviceStatus`) and has been silent for longer than that
/// interval allows — twice it, the `silent` rule of `DeviceStatus` — and for at least
/// `minimumSilenceSeconds`, so that a phone in a tunnel is not told it stopped. A device that
/// never declared an interval, has no push token, or was revoked is never nudged.
package struct NudgePolicy: Sendable, Equatable {
    /// What the notification says.
    package var text: WireNudgePush
    /// The least silence before a nudge, whatever the declared interval (`--nudge-after`, default 1 h).
    package var minimumSilenceSeconds: Int
    /// At most one nudge per device in this many seconds (a day).
    package var everySeconds: Int
    /// Nudges per silence: after this many (one a day) a device that stays silent is left alone
    /// (`--nudge-days`, default 3); an upload starts a new silence.
    package var limit: Int

    /// The default text: "Location sharing stopped" / "Open the app to share your location again."
    package static let defaultText = WireNudgePush(
        title: "Location sharing stopped", body: "Open the app to share your location again.")

    /// Creates a policy.
    package init(text: WireNudgePush = Self.defaultText, minimumSilenceSeconds: Int = 3600, everySeconds: Int = 86_400, limit: Int = 3) {
        self.text = text
        self.minimumSilenceSeconds = minimumSilenceSeconds
        self.everySeconds = everySeconds
        self.limit = limit
    }

    /// The time (Unix ms) from which the device's silence allows a nudge; nil for a device that
    /// declared no interval (never nudged).
    func dueMillis(_ t: DeviceTimes) -> Int64? {
        guard let expected = t.expectedSeconds else { return nil }
        let allowance = max(Int64(max(expected, 1)) * 2_000, Int64(max(minimumSilenceSeconds, 0)) * 1_000)
        return t.lastContactMillis + allowance + 1
    }

    /// What to do for a device silent since `silentSinceMillis` (its last contact) at `nowMillis`,
    /// given the nudge last recorded for it.
    func verdict(previous: NudgeRecord?, silentSinceMillis: Int64, nowMillis: Int64) -> NudgeVerdict {
        if let p = previous, nowMillis < p.sentAtMillis + Int64(everySeconds) * 1000 {
            return .wait(untilMillis: p.sentAtMillis + Int64(everySeconds) * 1000)
        }
        let count = previous.map { $0.silentSinceMillis == silentSinceMillis ? $0.count + 1 : 1 } ?? 1
        guard count <= limit else { return .done }
        return .send(NudgeRecord(silentSinceMillis: silentSinceMillis, sentAtMillis: nowMillis, count: count))
    }
}

/// The nudge last sent to a device, as stored (both stores' `nudges` table).
package struct NudgeRecord: Sendable, Equatable {
    /// The last contact the silence it was sent for followed (Unix ms).
    package var silentSinceMillis: Int64
    /// When it was sent (Unix ms).
    package var sentAtMillis: Int64
    /// Nudges sent for that silence, this one included.
    package var count: Int

    /// Creates a record.
    package init(silentSinceMillis: Int64, sentAtMillis: Int64, count: Int) {
        self.silentSinceMillis = silentSinceMillis
        self.sentAtMillis = sentAtMillis
        self.count = count
    }
}

/// What `NudgePolicy.verdict` decides.
package enum NudgeVerdict: Sendable, Equatable {
    /// Send one now and record it.
    case send(NudgeRecord)
    /// Not before this time (Unix ms): one was sent less than a day ago.
    case wait(untilMillis: Int64)
    /// This silence had its nudges.
    case done
}

/// What `NudgeStore.claimNudge` gives.
package enum NudgeClaim: Sendable, Equatable {
    /// Recorded as sent: push it to this token.
    case send(PushToken, NudgeRecord)
    /// Not before this time (Unix ms).
    case wait(untilMillis: Int64)
    /// Not for this silence: it had its nudges, or the device has no push token or was revoked.
    case never(reason: String)
}

/// Persistence of the once-a-day bookkeeping, so that it survives a restart and holds across
/// instances sharing a database.
package protocol NudgeStore: Sendable {
    /// In one transaction: refuses a revoked device or one without a push token, applies
    /// `policy.verdict` to the device's stored record and, when it says send, stores the new
    /// record — so that two instances (or a restart) never send two nudges in a day.
    func claimNudge(installId: UUID, silentSinceMillis: Int64, nowMillis: Int64, policy: NudgePolicy) async throws(StoreError)
        -> NudgeClaim
    /// The device's stored record, if it was ever nudged.
    func nudgeRecord(installId: UUID) async throws(StoreError) -> NudgeRecord?
}
